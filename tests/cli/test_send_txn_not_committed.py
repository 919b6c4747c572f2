"""`amqp send --txn-size`: a transaction the run ends without committing is rolled back by
the peer (AMQP 1.0 Part 4: a transaction still open when its controller's link or
connection ends is rolled back), so its messages were not delivered: they are counted
"not committed", not in doubt, and the exit is what ended the run (3 for a lost
connection), not 7. So is a commit the peer refused. A commit sent and not answered may
have committed: its messages stay in doubt (exit 7). A rollback sent and not answered
rolls back either way."""

from __future__ import annotations

import json
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import Event, LinkAttached, MessageReceived
from amqpcli.errors import Exit, UserError
from amqpcli.net.sending import SendSummary, summary_exit, summary_text
from tests.net.clirun import amqp_in_process
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def _peer(drop_on: str) -> tuple[int, threading.Thread]:
    """Takes transactional sends: declares a transaction, accepts the first two messages
    in it, and drops the connection without a word when the third message comes
    (`message`) or when the discharge comes (`discharge`), or refuses the discharge
    (`refuse`: rejected, amqp:transaction:rollback)."""
    received = 0

    def script(peer: PeerConnection, e: Event) -> None:
        nonlocal received
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            ep.flow(e.link, 10)
        elif isinstance(e, MessageReceived) and e.delivery.link.coordinator:
            if isinstance(e.delivery.txn_request, c.Declare):
                ep.settle(e.delivery, c.Declared(txn_id=b"t1"))
            elif drop_on == "discharge":
                peer.hang_up()
            elif drop_on == "refuse":
                ep.settle(e.delivery, c.Rejected(error=c.Error(
                    condition=Symbol("amqp:transaction:rollback"))))
        elif isinstance(e, MessageReceived):
            received += 1
            if received == 3 and drop_on == "message":
                peer.hang_up()
                return
            ep.settle(e.delivery, c.TransactionalState(txn_id=b"t1", outcome=c.Accepted()))

    return engine_peer(script)


def _send(port: int, *args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = amqp_in_process(
        "send", f"amqp://127.0.0.1:{port}/q", "x", "--sasl-mechanism", "none", "--count", "3",
        "--txn-size", "5", "--message-id", "m{n}", "--json", *args)
    return code, json.loads(out), err


def test_a_transaction_never_discharged_leaves_its_messages_not_committed() -> None:
    port, th = _peer("message")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 3, err  # the connection was lost: the run did not complete
    assert (s["in-doubt"], s["not-committed"], s["accepted"]) == (0, 3, 0), s
    assert s["not-committed-messages"] == [
        {"number": n, "message-id": f"m{n}"} for n in (1, 2, 3)]
    assert s["exit"] == 3 and "in-doubt-messages" not in s
    assert "amqp: error: 3 message(s) not committed: " in err, err


def test_a_commit_refused_is_not_committed() -> None:
    port, th = _peer("refuse")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 4, err  # refused
    assert (s["in-doubt"], s["not-committed"], s["accepted"]) == (0, 3, 0), s
    assert "the peer did not commit the transaction" in err, err


def test_a_commit_sent_and_not_answered_stays_in_doubt() -> None:
    port, th = _peer("discharge")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 7, err
    assert (s["in-doubt"], s.get("not-committed"), s["accepted"]) == (3, None, 0), s


def test_a_rollback_not_answered_rolls_back_all_the_same() -> None:
    port, th = _peer("discharge")
    code, s, err = _send(port, "--rollback")
    th.join(HANG_GUARD)
    assert code == 3, err
    assert (s["in-doubt"], s["not-committed"]) == (0, 3), s


def test_the_text_summary_and_the_exit() -> None:
    s = SendSummary(sent=3, messages=3, not_committed=[(1, "a"), (2, "b"), (3, "c")],
                    failure=UserError("interrupted", Exit.INTERRUPTED))
    first, second = summary_text(s).splitlines()
    assert first.startswith("sent 3, accepted 0, in doubt 0, not committed 3 in "), first
    assert second == ("not committed: messages 1-3: sent in a transaction the run ended "
                      "without committing, which the peer rolls back: not delivered")
    assert summary_exit(s) == (Exit.INTERRUPTED, "3 message(s) not committed: interrupted")
