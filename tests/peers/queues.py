"""The broker's storage: queues of encoded messages, topics fanning out to subscription
queues, and the registry that names them. No proton links here: the handler decides who
gets what; this module keeps order, acquisition and redelivery counts."""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field
from typing import Any

from proton import Message

from tests.peers import sections
from tests.peers.selector import Selector

TOPIC_PREFIXES = ("/topic/", "topic://")
TOPIC_CAPABILITY = "topic"


@dataclass(eq=False)
class Entry:
    """One message in one queue."""

    seq: int
    raw: bytes
    delivery_count: int = 0
    annotations: dict[str, Any] | None = None  # merged in by modified{message-annotations}
    acquired_by: int | None = None  # consumer id holding it (move), None when available
    excluded: set[int] = field(default_factory=set)  # consumers that said undeliverable-here
    _message: Message | None = None

    @property
    def message(self) -> Message:
        """Decoded once and kept: proton's binary values are views into the message."""
        if self._message is None:
            self._message = sections.decode(self.raw)
        return self._message

    def outgoing(self) -> bytes:
        """The bytes to send: the stored message with this queue's delivery count and any
        annotations a consumer added; the bare message unchanged."""
        if self.delivery_count == 0 and not self.annotations:
            return self.raw
        return sections.rewrite(
            self.raw,
            delivery_count=self.delivery_count or None,
            first_acquirer=False if self.delivery_count else None,
            annotations=self.annotations,
        )


@dataclass(eq=False)
class Consumer:
    """What a queue needs to know about a receiver: who it is and what it may see."""

    id: int
    browse: bool = False  # distribution-mode copy: sees messages without acquiring them
    selector: Selector | None = None
    cursor: int = -1  # browse position: the last seq seen

    def wants(self, entry: Entry) -> bool:
        if self.id in entry.excluded:
            return False
        return self.selector is None or self.selector.matches(entry.message)


class Queue:
    """Messages in arrival order. The available ones are also kept in a sorted list of
    sequence numbers, so handing out the next message does not rescan acquired ones."""

    def __init__(self, name: str, kind: str = "queue") -> None:
        self.name = name
        self.kind = kind  # queue, temporary, subscription
        self._entries: dict[int, Entry] = {}  # by seq, in arrival order
        self._seqs: list[int] = []  # every seq, sorted: browse cursors bisect it
        self._available: list[int] = []  # seqs not acquired by anyone, sorted
        self._seq = itertools.count()

    def __repr__(self) -> str:
        return f"Queue({self.name!r}, {self.kind}, {len(self._entries)} messages)"

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[Entry]:
        """Every message, acquired or not, in order."""
        return list(self._entries.values())

    def put(self, raw: bytes) -> Entry:
        entry = Entry(next(self._seq), bytes(raw))
        self._entries[entry.seq] = entry
        self._seqs.append(entry.seq)
        self._available.append(entry.seq)
        return entry

    def next_for(self, consumer: Consumer) -> Entry | None:
        """The next message ``consumer`` should get, or None."""
        if consumer.browse:
            start = bisect.bisect_right(self._seqs, consumer.cursor)
            candidates = self._seqs[start:]
        else:
            candidates = self._available
        for seq in candidates:
            entry = self._entries[seq]
            if consumer.wants(entry):
                return entry
        return None

    def take(self, entry: Entry, consumer: Consumer) -> None:
        """Record that ``entry`` went to ``consumer``: acquired (move) or passed (copy)."""
        if consumer.browse:
            consumer.cursor = entry.seq
        else:
            self._acquire(entry, consumer.id)

    def _acquire(self, entry: Entry, owner: int) -> None:
        if entry.acquired_by is None:
            _discard(self._available, entry.seq)
        entry.acquired_by = owner

    def hold_for(self, entry: Entry, owner: int) -> None:
        """Keep ``entry`` acquired under another owner (a transaction)."""
        self._acquire(entry, owner)

    def remove(self, entry: Entry) -> None:
        if self._entries.pop(entry.seq, None) is None:
            return
        _discard(self._seqs, entry.seq)
        if entry.acquired_by is None:
            _discard(self._available, entry.seq)

    def release(
        self,
        entry: Entry,
        *,
        failed: bool = False,
        undeliverable_for: int | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        """Make ``entry`` available again (released, modified, or its consumer went away)."""
        if failed:
            entry.delivery_count += 1
        if undeliverable_for is not None:
            entry.excluded.add(undeliverable_for)
        if annotations:
            entry.annotations = {**(entry.annotations or {}), **annotations}
        if entry.acquired_by is not None and entry.seq in self._entries:
            entry.acquired_by = None
            bisect.insort(self._available, entry.seq)

    def release_all(self, consumer_id: int) -> None:
        for entry in self._entries.values():
            if entry.acquired_by == consumer_id:
                self.release(entry)

    def bodies(self) -> list[Any]:
        """Message bodies in order; binary ones copied out of proton's memory as bytes."""
        return [sections.owned(e.message.body) for e in self._entries.values()]


def _discard(seqs: list[int], seq: int) -> None:
    i = bisect.bisect_left(seqs, seq)
    if i < len(seqs) and seqs[i] == seq:
        del seqs[i]


def is_topic(address: str | None, capabilities: list[str] | None = None) -> bool:
    """Topic-like: ``/topic/NAME``, ``topic://NAME``, or a terminus with the topic capability."""
    if capabilities and TOPIC_CAPABILITY in capabilities:
        return True
    return bool(address) and address.startswith(TOPIC_PREFIXES)  # type: ignore[union-attr]


class Registry:
    """Every queue by name, the subscription queues of each topic, durable subscriptions."""

    def __init__(self) -> None:
        self.queues: dict[str, Queue] = {}
        self.topics: dict[str, list[Queue]] = {}
        self.durable: dict[tuple[str, str], tuple[str, Queue]] = {}
        self._tmp = itertools.count(1)

    def queue(self, name: str) -> Queue:
        """The queue called ``name``, created on first use."""
        q = self.queues.get(name)
        if q is None:
            q = self.queues[name] = Queue(name)
        return q

    def temporary(self) -> Queue:
        name = f"amqpcli.tmp.{next(self._tmp)}"
        q = self.queues[name] = Queue(name, kind="temporary")
        return q

    def subscribe(self, topic: str, durable_key: tuple[str, str] | None = None) -> Queue:
        """A subscription queue on ``topic``; a durable one is found again by its key."""
        if durable_key is not None and durable_key in self.durable:
            return self.durable[durable_key][1]
        name = f"{topic}#sub.{next(self._tmp)}"
        q = self.queues[name] = Queue(name, kind="subscription")
        self.topics.setdefault(topic, []).append(q)
        if durable_key is not None:
            self.durable[durable_key] = (topic, q)
        return q

    def delete(self, q: Queue) -> None:
        self.queues.pop(q.name, None)
        for subs in self.topics.values():
            if q in subs:
                subs.remove(q)
        for key, (_, dq) in list(self.durable.items()):
            if dq is q:
                del self.durable[key]

    def route(self, address: str, capabilities: list[str] | None = None) -> list[Queue]:
        """Where a message sent to ``address`` goes: one queue, or every subscription of a
        topic (none if nobody subscribes: the message is dropped, as topics do)."""
        if is_topic(address, capabilities):
            return list(self.topics.get(address, []))
        return [self.queue(address)]
