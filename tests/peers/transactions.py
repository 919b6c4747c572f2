"""Local transactions for the broker (AMQP 1.0 Part 4): what a transaction holds until it is
discharged, and what commit and rollback do to the queues."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from tests.peers.outcomes import Accept, Modify, Outcome, Reject, Release
from tests.peers.queues import Entry, Queue


@dataclass(eq=False)
class Transaction:
    id: bytes
    owner: int  # stands in for a consumer id while the transaction holds acquired messages
    controller: object  # the coordinator link that declared it
    sends: list[tuple[list[Queue], bytes]] = field(default_factory=list)
    retirements: list[tuple[Queue, Entry, Outcome]] = field(default_factory=list)


class Coordinator:
    """Every open transaction of one broker."""

    def __init__(self) -> None:
        self.open: dict[bytes, Transaction] = {}
        self.committed = 0
        self.rolled_back = 0
        self._ids = itertools.count(1)

    def declare(self, controller: object) -> Transaction:
        n = next(self._ids)
        txn = Transaction(id=f"txn-{n}".encode(), owner=-n, controller=controller)
        self.open[txn.id] = txn
        return txn

    def get(self, txn_id: bytes) -> Transaction | None:
        return self.open.get(bytes(txn_id))

    def hold(self, txn: Transaction, queue: Queue, entry: Entry, outcome: Outcome) -> None:
        """A transactional outcome for a message we sent: kept acquired until discharge."""
        queue.hold_for(entry, txn.owner)
        txn.retirements.append((queue, entry, outcome))

    def discharge(self, txn: Transaction, fail: bool) -> set[Queue]:
        """Commit (``fail`` false) or roll back; returns the queues that changed."""
        del self.open[txn.id]
        touched: set[Queue] = set()
        if fail:
            self.rolled_back += 1
            for queue, entry, _ in txn.retirements:
                queue.release(entry)
                touched.add(queue)
            return touched
        self.committed += 1
        for queues, raw in txn.sends:
            for q in queues:
                q.put(raw)
                touched.add(q)
        for queue, entry, outcome in txn.retirements:
            settle_entry(queue, entry, outcome, consumer_id=txn.owner)
            touched.add(queue)
        return touched

    def abandon(self, controller: object) -> set[Queue]:
        """The coordinator link went away: its open transactions roll back."""
        touched: set[Queue] = set()
        for txn in [t for t in self.open.values() if t.controller is controller]:
            touched |= self.discharge(txn, fail=True)
        return touched


def settle_entry(queue: Queue, entry: Entry, outcome: Outcome, consumer_id: int) -> None:
    """Apply a consumer's outcome to a message it acquired."""
    if isinstance(outcome, Accept | Reject):
        queue.remove(entry)  # rejected messages are dropped: there is no dead-letter queue
    elif isinstance(outcome, Release):
        queue.release(entry)
    elif isinstance(outcome, Modify):
        queue.release(
            entry,
            failed=outcome.failed,
            undeliverable_for=consumer_id if outcome.undeliverable else None,
            annotations=outcome.annotations,
        )

