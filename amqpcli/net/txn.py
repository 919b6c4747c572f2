"""What `amqp send` and `amqp recv` both say of their transactions (``--txn-size N``) in
their summaries: the text, the JSON's "transactions", and the rule that messages in doubt
decide the exit code before anything else (the one thing a script must act on)."""

from __future__ import annotations

from typing import Any, Protocol

from amqpcli.errors import Exit, UserError

__all__ = ["TxnCounts", "in_doubt_exit", "txn_json", "txn_parts"]


class TxnCounts(Protocol):
    committed: int
    rolled_back: int
    rolled_back_messages: int  # the messages of the transactions rolled back


def txn_json(s: TxnCounts) -> dict[str, Any]:
    """The JSON summary's "transactions" entry; nothing for a run without any."""
    if not (s.committed or s.rolled_back):
        return {}
    return {"transactions": {"committed": s.committed, "rolled-back": s.rolled_back,
                             "rolled-back-messages": s.rolled_back_messages}}


def txn_parts(s: TxnCounts) -> list[str]:
    """The text summary's part for the transactions; none for a run without any."""
    if not (s.committed or s.rolled_back):
        return []
    text = (f"transactions committed {s.committed}, rolled back {s.rolled_back} "
            f"({s.rolled_back_messages} messages)")
    return [text]


def in_doubt_exit(in_doubt: int, failure: UserError | None) -> tuple[Exit, str] | None:
    """The exit code and its reason when messages are in doubt (whatever else ended the
    run, said after it), or None when none are."""
    if not in_doubt:
        return None
    why = f"{in_doubt} message(s) in doubt"
    return Exit.IN_DOUBT, why + (f": {failure}" if failure is not None else "")
