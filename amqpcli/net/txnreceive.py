"""The transactions of `amqp recv --txn-size N`: the outcomes of every N messages are sent
inside one transaction (`transactional-state`, Part 4 §4.4.2) and take effect when it is
discharged — committed, or rolled back with ``--rollback``, which leaves the messages on
the node. Still written before their outcome is sent. A transaction cannot outlive its
connection: what was written in one not yet discharged comes again. A commit sent and not
answered leaves its messages in doubt (the node may or may not have removed them).
Messages that the transaction gives back to the node (all of them on rollback; those
released or modified on commit) come again on this link: like those of a lost link, they
are known when they do, held unwritten and released at the end (the receive loop,
amqpcli/net/receiving.py, does that with what `discharge` returns).

What the summaries say of transactions, for send and recv alike, is amqpcli/net/txn.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from amqpcli.codec import composites as c
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Client, Incoming
from amqpcli.net.txn import TxnCounts

__all__ = ["ReceiveTransactions", "RecvTxnCounts"]


class RecvTxnCounts(TxnCounts, Protocol):
    """What the transactions count in the receive summary."""

    outcomes: dict[str, int]  # outcome name -> messages: counted once committed
    in_doubt: int  # written in a transaction whose commit was not confirmed


class ReceiveTransactions:
    """The open transaction of a receive with --txn-size (at most one at a time), its
    messages, and what becomes of them when it is discharged or its connection ends.

    `identity` tells a message from others however often it is delivered (the receive
    loop's notion, so that what a discharge gives back is known when it comes again)."""

    def __init__(self, size: int, rollback: bool, summary: RecvTxnCounts,
                 warn: Callable[[str], None], identity: Callable[[Incoming], int]) -> None:
        self.size = size
        self.rollback = rollback  # discharge with fail=true: the messages stay
        self.s = summary
        self.warn = warn
        self.identity = identity
        # The open transaction: its id, and per message settled in it (outcome name,
        # identity when the discharge gives the message back, else None).
        self.txn_id: bytes | None = None
        self.msgs: list[tuple[str, int | None]] = []
        self.states: dict[int, Any] = {}  # id(outcome state) -> its transactional state
        self.committing = 0  # messages of a commit sent and not yet answered
        # The discharge sent and not answered yet: an interrupt waits for its answer
        # rather than sending a second one for the same transaction.
        self.pending: asyncio.Future[None] | None = None

    @property
    def discharged(self) -> int:
        """The transactions discharged so far: what a connection has done for good (a
        message received in a transaction that never ends comes again, so it is no
        progress; or a peer that drops every connection before the commit has the run
        write the same messages for ever)."""
        return self.s.committed + self.s.rolled_back

    @property
    def undischarged(self) -> bool:
        """Messages were settled in the open transaction: it still needs the peer."""
        return bool(self.msgs)

    @property
    def full(self) -> bool:
        """The open transaction holds --txn-size messages: time to discharge it."""
        return len(self.msgs) >= self.size

    @property
    def room(self) -> int:
        """How many more messages the open transaction takes before it is full."""
        return max(self.size - len(self.msgs), 0)

    @property
    def to_discharge(self) -> bool:
        """A transaction is open with messages settled in it (an empty one is left open:
        nothing to commit)."""
        return self.txn_id is not None and bool(self.msgs)

    async def declare(self, client: Client) -> None:
        self.txn_id = await client.declare()
        self.states.clear()

    async def state_for(self, client: Client, inc: Incoming, name: str, state: Any) -> Any:
        """The state to settle `inc` with to give it outcome `state` (named `name`) inside
        the open transaction, declared now if none is; the message is counted in it. Its
        outcome counts once the transaction commits (`discharge`)."""
        if self.txn_id is None:
            await self.declare(client)
        assert self.txn_id is not None
        tstate = self.states.get(id(state))
        if tstate is None:  # one object per outcome: consecutive ones share a disposition
            tstate = self.states[id(state)] = c.TransactionalState(
                txn_id=self.txn_id, outcome=state)
        gives_back = self.rollback or isinstance(state, c.Released) or (
            isinstance(state, c.Modified) and not state.undeliverable_here)
        self.msgs.append((name, self.identity(inc) if gives_back else None))
        return tstate

    async def discharge(self, client: Client) -> list[int]:
        """End the open transaction (commit, or roll back with --rollback), its outcomes
        sent already (`to_discharge` says whether there is one); then its outcomes count.
        Returns the identities of the messages it gave back to the node: they come again."""
        assert self.txn_id is not None
        fail = self.rollback
        msgs = self.msgs
        if self.pending is None:
            if not fail:
                self.committing = len(msgs)
            self.pending = asyncio.ensure_future(client.discharge(self.txn_id, fail=fail))
            # (its failure is taken here, or by the next call; never left unretrieved)
            self.pending.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            # shielded: an interrupt stops this wait, not the discharge, whose answer a
            # second call (the interrupt's) waits for
            await asyncio.shield(self.pending)
        except asyncio.CancelledError:
            raise
        except UserError as e:
            self.pending = None
            if e.code == Exit.REFUSED:  # answered: the transaction did not commit
                self.committing = 0
            raise
        except BaseException:
            self.pending = None
            raise
        self.pending = None
        self.committing = 0
        self.txn_id = None
        self.msgs = []
        s = self.s
        if fail:
            s.rolled_back += 1
            s.rolled_back_messages += len(msgs)
        else:
            s.committed += 1
            for name, _ in msgs:
                s.outcomes[name] = s.outcomes.get(name, 0) + 1
        return [ident for _, ident in msgs if ident is not None]

    def lost(self, again: bool) -> None:
        """The connection (or the run) ended with a transaction not discharged, or its
        commit not answered: say what becomes of its messages, written already. Before a
        reconnect (`again`) nothing is in doubt: whichever way it went, a message is
        either gone or comes again, to be written again (at least once)."""
        n, doubt = len(self.msgs), self.committing
        if self.pending is not None:
            self.pending.cancel()  # (its connection is gone: no answer comes)
            self.pending = None
        self.txn_id = None
        self.msgs = []
        self.states.clear()
        self.committing = 0
        again_text = ", and they are written again" if again else ""
        if doubt:
            if again:
                self.warn(f"{doubt} message(s) written in a transaction whose commit was not "
                          "confirmed: if it did not commit, the node delivers them again"
                          + again_text)
            else:
                self.s.in_doubt += doubt
                self.warn(f"{doubt} message(s) in doubt: written, and their transaction's "
                          "commit was not confirmed (the node may still hold them)")
        elif n and not self.rollback:
            self.warn(f"{n} message(s) written in a transaction that was not committed "
                      "(it cannot outlive its connection): the node keeps them and delivers "
                      "them again" + again_text)
