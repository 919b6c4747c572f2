"""In-memory nodes: queues of encoded messages, topics that fan out to subscriptions.

A `Queue` keeps its entries in arrival order. An entry is *ready* (anyone may take it),
*acquired* (sent to a consumer, outcome pending) or gone. Consumers in distribution-mode
move acquire the oldest ready entry they may have (their selector matches it and it was
not marked undeliverable-here for them); consumers in copy mode keep a cursor and see
every entry after it without acquiring anything, so browsing never consumes.

Addresses `/topic/NAME`, `topic://NAME` or a terminus with the `topic` capability name
topics: each receiver gets its own subscription queue, and a message sent to a topic
goes to every subscription (with none, it is dropped). Everything else names a queue,
created on first use — except the names of temporary (dynamic) nodes, which only a
dynamic attach creates: once deleted, such a node is not found.

A queue with a `lifetime` (a Part 3 §3.5.9 lifetime-policy name) is deleted by the broker
when that policy says so; see `Broker._expire`.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import re
from collections.abc import Iterator
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UInt
from amqpcli.selector import Fields, Selector, message_fields

__all__ = ["ACQUIRED", "READY", "Entry", "Nodes", "Queue", "is_topic"]

READY, ACQUIRED, GONE = 0, 1, 2
TOPIC_PREFIXES = ("/topic/", "topic://")
TEMPORARY_PREFIX = "amqp-serve.tmp."
# the creating link's name in a temporary node's: what is kept of it, and how much
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
LINK_NAME_CHARS = 48
# a selector's view of a message with no sections: header defaults, no properties
NO_SECTIONS: Fields = message_fields(Message())


def temporary_name(n: int, link_name: str | None) -> str:
    """`amqp-serve.tmp.N`, followed by `.` and the link's name with every character but
    ASCII letters, digits, `.`, `_` and `-` replaced by `_` and cut to LINK_NAME_CHARS
    characters (nothing follows for a link without a name): readable in a log line, and
    safe in a URL path or a shell word."""
    name = f"{TEMPORARY_PREFIX}{n}"
    safe = _UNSAFE.sub("_", link_name or "")[:LINK_NAME_CHARS]
    return f"{name}.{safe}" if safe else name


def is_topic(address: str | None, capabilities: Any = None) -> bool:
    if address is None:
        return False
    caps = capabilities if isinstance(capabilities, list) else (
        [] if capabilities is None else [capabilities])
    return address.startswith(TOPIC_PREFIXES) or any(str(x) == "topic" for x in caps)


class Entry:
    """One message in one queue: its encoded bytes and where it stands."""

    __slots__ = ("_fields", "_message", "acquired_before", "excluded", "message_format",
                 "payload", "queue", "seq", "state")

    def __init__(self, queue: Queue, seq: int, payload: bytes, message_format: int = 0) -> None:
        self.queue = queue
        self.seq = seq
        self.payload = payload  # the message as it will be sent (header and all)
        self.message_format = message_format  # of the transfer it came in, and goes out in
        self.state = READY
        self.excluded: set[Any] | None = None  # consumer keys: undeliverable-here
        self.acquired_before = False  # a link acquired it, and it came back
        self._message: Message | None = None
        self._fields: Fields | None = None

    @property
    def message(self) -> Message:
        if self._message is None:
            self._message = Message.decode(self.payload)
        return self._message

    def fields(self) -> Fields:
        """What a selector reads of it. A vendor's format has no sections a selector can
        read (its bytes are not an AMQP message, though they may decode as one): it reads
        as a message with no sections, where every property is missing."""
        if self._fields is None:
            self._fields = message_fields(self.message) if self.rewritable else NO_SECTIONS
        return self._fields

    def matches(self, selector: Selector | None, limit: int | None = None) -> bool:
        """May a consumer with this selector and max-message-size `limit` have it?"""
        if limit is not None and len(self.payload) > limit:
            return False
        if selector is None:
            return True
        try:
            return selector.matches(self.fields())
        except ValueError:  # a message whose sections do not decode matches nothing
            return False

    def too_large(self, selector: Selector | None, limit: int | None) -> bool:
        """Is it for this consumer but for its max-message-size `limit`?"""
        return limit is not None and len(self.payload) > limit and self.matches(selector)

    @property
    def rewritable(self) -> bool:
        """Whether its header and annotations may be rewritten: only the AMQP message
        format (0) has such sections (Part 2 §2.7.5); a vendor's format is bytes this peer
        does not know the layout of, kept as they came."""
        return not self.message_format

    def came_back(self) -> None:
        """It was acquired and is ready again (released, rolled back, its link gone): a
        header saying first-acquirer says so no more (Part 3 §3.2.1: true means no other
        link acquired it). Only the header is re-encoded, and only in the AMQP format."""
        if self.acquired_before:
            return
        self.acquired_before = True
        if not self.rewritable:
            return
        try:
            msg = Message.decode(self.payload)
            h = msg.header
        except ValueError:
            return  # not a message we can rewrite: it goes back as it came
        if h is None or not h.get("first_acquirer"):
            return
        h.first_acquirer = False
        msg.header = h
        self.payload = msg.encode()
        self._message = None
        self._fields = None

    def modify(self, delivery_failed: bool, annotations: Any) -> None:
        """Apply a `modified` outcome: count the failed attempt, merge the annotations.

        Only the header and message-annotations are re-encoded; the bare message keeps
        its bytes. A message of a vendor's format is kept as it came (`rewritable`)."""
        if not (delivery_failed or annotations) or not self.rewritable:
            return
        try:
            msg = Message.decode(self.payload)
            msg.header  # noqa: B018 - decoded now, so a bad header fails here
            msg.message_annotations  # noqa: B018
        except ValueError:
            return  # not a message we can rewrite: it goes back as it came
        if delivery_failed:
            h = msg.header if msg.header is not None else c.Header()
            h.delivery_count = UInt(int(h.get("delivery_count") or 0) + 1)
            msg.header = h
        if annotations:
            old = msg.message_annotations
            merged = dict(getattr(old, "value", None) or {})
            for k, v in dict(annotations).items():
                merged[Symbol(k) if type(k) is str else k] = v
            msg.message_annotations = c.MessageAnnotations(merged)
        self.payload = msg.encode()
        self._message = None
        self._fields = None


class Queue:
    """Entries in arrival order; see the module doc for who may take what."""

    def __init__(self, name: str, kind: str = "queue") -> None:
        self.name = name
        self.kind = kind  # queue, temporary, subscription
        self.lifetime: str | None = None  # a lifetime-policy name; None: lives for good
        self.creator: Any = None  # the link whose attach created it, while attached
        self.senders: list[Any] = []  # the broker's links sending to it
        self.deleted = False
        self.entries: dict[int, Entry] = {}
        self._seqs: list[int] = []  # sorted; may hold seqs of entries already gone
        self._ready: list[int] = []  # heap of seqs that were ready when pushed
        self._seq = itertools.count(1)
        self.ready_count = 0
        self.excluded_count = 0
        self.consumers: list[Any] = []  # the broker's consumer objects, in turn order
        self.turn = 0
        self.enqueued = 0
        self.dequeued = 0

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"<Queue {self.name!r} {self.kind} {len(self.entries)} entries>"

    def put(self, payload: bytes, message_format: int = 0) -> Entry:
        e = Entry(self, next(self._seq), payload, message_format)
        self.entries[e.seq] = e
        self._seqs.append(e.seq)
        heapq.heappush(self._ready, e.seq)
        self.ready_count += 1
        self.enqueued += 1
        return e

    # --- taking --------------------------------------------------------------------

    def take(self, key: Any, selector: Selector | None, limit: int | None = None,
             oversized: list[Entry] | None = None) -> Entry | None:
        """The oldest ready entry this consumer may acquire (not acquired yet).

        `oversized` collects the entries passed over only for being larger than `limit`
        (the consumer's max-message-size): they stay for another consumer."""
        if selector is None and limit is None and not self.excluded_count:
            heap = self._ready
            while heap:
                e = self.entries.get(heap[0])
                if e is not None and e.state == READY:
                    return e
                heapq.heappop(heap)  # stale: taken, gone, or pushed twice
            return None
        for e in self._scan(0):
            if e.state == READY and (e.excluded is None or key not in e.excluded):
                if e.matches(selector, limit):
                    return e
                if oversized is not None and e.too_large(selector, limit):
                    oversized.append(e)
        return None

    def browse(self, after: int, selector: Selector | None, limit: int | None = None,
               oversized: list[Entry] | None = None) -> Entry | None:
        """The first entry after seq `after` a copy consumer may see (`oversized`: as for
        `take`)."""
        for e in self._scan(after):
            if e.matches(selector, limit):
                return e
            if oversized is not None and e.too_large(selector, limit):
                oversized.append(e)
        return None

    def _scan(self, after: int) -> Iterator[Entry]:
        seqs = self._seqs
        i = bisect.bisect_right(seqs, after)
        entries = self.entries
        while i < len(seqs):
            e = entries.get(seqs[i])
            i += 1
            if e is not None:
                yield e

    def count_for(self, key: Any, selector: Selector | None, copy_after: int | None,
                  limit: int | None = None) -> int:
        """How many entries this consumer could still get (the `available` of a flow)."""
        if copy_after is not None:
            return sum(1 for e in self._scan(copy_after) if e.matches(selector, limit))
        if selector is None and limit is None and not self.excluded_count:
            return self.ready_count
        return sum(1 for e in self._scan(0) if e.state == READY and (
            e.excluded is None or key not in e.excluded) and e.matches(selector, limit))

    # --- state changes ---------------------------------------------------------------

    def acquire(self, e: Entry) -> None:
        if e.state == READY:
            e.state = ACQUIRED
            self.ready_count -= 1

    def release(self, e: Entry, exclude: Any = None) -> None:
        """Back to ready (at its old place); `exclude`: never again to that consumer."""
        if e.state == GONE or e.seq not in self.entries:
            return
        if exclude is not None:
            if e.excluded is None:
                e.excluded = set()
                self.excluded_count += 1
            e.excluded.add(exclude)
        if e.state == ACQUIRED:
            e.state = READY
            e.came_back()
            self.ready_count += 1
            heapq.heappush(self._ready, e.seq)

    def remove(self, e: Entry) -> None:
        if self.entries.pop(e.seq, None) is None:
            return
        if e.state == READY:
            self.ready_count -= 1
        if e.excluded is not None:
            self.excluded_count -= 1
        e.state = GONE
        self.dequeued += 1
        seqs = self._seqs
        if seqs and seqs[0] == e.seq:
            del seqs[0]
        elif len(seqs) > 64 and len(seqs) > 2 * len(self.entries):
            self._seqs = [s for s in seqs if s in self.entries]  # drop the gone ones
        if not self.entries:
            self._seqs.clear()
            self._ready.clear()

    def clear(self) -> None:
        for e in list(self.entries.values()):
            self.remove(e)


class Nodes:
    """Every queue by address, the subscriptions of each topic, durable subscriptions."""

    def __init__(self) -> None:
        self.queues: dict[str, Queue] = {}
        self.topics: dict[str, list[Queue]] = {}
        self.durable: dict[tuple[str, str], tuple[str, Queue]] = {}
        self._tmp = itertools.count(1)

    def queue(self, address: str) -> Queue | None:
        """The queue at `address`, created on first use; None for a temporary node's
        name that is not there (never created implicitly, nor re-created once deleted)."""
        q = self.queues.get(address)
        if q is None:
            if address.startswith(TEMPORARY_PREFIX):
                return None
            q = self.queues[address] = Queue(address)
        return q

    def temporary(self, lifetime: str, link_name: str | None = None) -> Queue:
        """A new temporary (dynamic) node, `amqp-serve.tmp.N.LINK`: N makes it unique,
        LINK is the creating link's name in a safe form (`temporary_name`)."""
        name = temporary_name(next(self._tmp), link_name)
        q = self.queues[name] = Queue(name, kind="temporary")
        q.lifetime = lifetime
        return q

    def subscribe(self, topic: str, durable_key: tuple[str, str] | None = None) -> tuple[Queue, bool]:
        """A subscription queue on `topic` and whether it existed (a durable one resumed).
        A durable subscription attached again on another topic is a new one: the old one
        goes, with what it held, as JMS has it for a subscription whose topic changes."""
        if durable_key is not None and durable_key in self.durable:
            was, q = self.durable[durable_key]
            if was == topic:
                return q, True
            self.delete(q)
        q = Queue(f"{topic}#sub.{next(self._tmp)}", kind="subscription")
        self.topics.setdefault(topic, []).append(q)
        if durable_key is not None:
            self.durable[durable_key] = (topic, q)
        return q, False

    def delete(self, q: Queue) -> None:
        q.clear()
        q.deleted = True
        if self.queues.get(q.name) is q:
            del self.queues[q.name]
        for subs in self.topics.values():
            if q in subs:
                subs.remove(q)
        for key, (_, dq) in list(self.durable.items()):
            if dq is q:
                del self.durable[key]

    def destinations(self, address: str, capabilities: Any = None) -> list[Queue]:
        """Where a message sent to `address` goes."""
        if is_topic(address, capabilities):
            return list(self.topics.get(address, []))
        q = self.queue(address)
        return [] if q is None else [q]
