"""Messages followed across connections: the `--messages` view of `amqp pcap-dump`.

A message is known by its bare message — properties, application-properties and body as
they arrived — which no node may change on the way (AMQP 1.0 Part 3 §3.2: only the
header, the annotations and the footer are the nodes' to add or alter). Every AMQP 1.0
delivery of the capture whose message splits is a *hop* of the message its bare bytes
are: a producer's transfer into a broker and the broker's transfer to a consumer are two
hops of one message, a redelivery is one more. Where the time went between them is what
a stalled consumer's capture is read for.

One node does change it: RabbitMQ 3.10 gives a message sent without a properties section
one (a `subject`, the routing key) on the way out. A delivery whose bare message, less
its properties section, is exactly the bare message of a delivery without one is a hop of
that message, marked as one whose properties a node added; the message is known by its
form without them, as it was sent. (A message sent with properties and another sent
without them, with the same application-properties and body, are then one message, as
two messages with the same bare bytes are.)

Only what the views show is kept per hop (not the record, whose payload may be large);
the messages themselves are kept to the end of the capture, so memory grows with the
number of distinct messages (the tables, `--out`, are for capture sets too large for
that).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec.decode import skip
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError
from amqpcli.dissect.records import AMQP10, DeliveryRecord, known_time, latency


@dataclass(slots=True, eq=False)
class Hop:
    """One delivery of a message: where, when, and how it ended."""

    conn: str  # the connection's label (c1)
    link: str
    address: str | None
    sender: str  # the side that sent it: "client" or "server"
    delivery_id: int | None
    first_time: float | None
    outcome: str
    state: Any  # the deciding state, for its detail (a rejection's error…)
    settled_by: str | None
    presettled: bool
    at_end: bool
    settled_time: float | None
    properties_added: bool = False  # its message has a properties section it was sent without
    txn_result: str | None = None  # in a transaction: what became of it (DeliveryRecord)
    # where its first transfer came, for hops without times (a proton log's): its
    # connection's number and the frame's number in it, as the log has them in order
    place: tuple[int, int] = (0, 0)

    @property
    def latency(self) -> float | None:
        return latency(self.first_time, self.settled_time)


@dataclass(slots=True, eq=False)
class Journey:
    """A message and its hops, in the order they were seen."""

    digest: bytes  # SHA-256 of the bare message
    size: int  # of the bare message
    message_id: Any  # properties.message-id, or None
    secret: bool  # the bare bytes hold a SASL secret: neither its hash nor its id is shown
    # with a properties section: the SHA-256 of the bare message without it (the digest of
    # the message as sent, if a node added the section); None without one
    digest_without_properties: bytes | None
    hops: list[Hop] = field(default_factory=list)
    chosen: bool = False  # a hop passed the filters

    @property
    def first_time(self) -> float | None:
        return self.hops[0].first_time

    @property
    def transit(self) -> float | None:
        """From the first hop's first transfer to the last hop's (None for one hop)."""
        first, last = self.hops[0].first_time, self.hops[-1].first_time
        if len(self.hops) < 2 or first is None or last is None:
            return None
        return last - first


class Journeys:
    """Collects the hops of every message from the delivery records, in capture order."""

    def __init__(self) -> None:
        self._by_digest: dict[bytes, Journey] = {}
        self.unreadable = 0  # AMQP 1.0 deliveries whose message did not split or was not seen
        self.cut_by_log = 0  # of those, the ones whose payload a frame-trace log cut short
        # of those, the ones of the AMQP message format whose payload is no valid message
        self.invalid = 0

    def add(self, rec: DeliveryRecord, chosen: bool = True) -> None:
        """One delivery record; `chosen`: whether it passed the view's filters. Transaction
        control (declare, discharge to a coordinator) is no message."""
        if rec.protocol != AMQP10 or _to_coordinator(rec):
            return
        payload = rec.payload
        if not payload or rec.aborted or not rec.seen_whole:
            self.unreadable += 1
            if rec.size_in_log is not None:
                self.cut_by_log += 1
            return
        try:
            msg = Message.decode(payload)
            bare = msg.bare_bytes
            props = msg.properties
        except DecodeError:
            self.unreadable += 1
            if not rec.message_format and not rec.resumed and not rec.may_be_tail:
                self.invalid += 1
            return
        if not bare:  # no properties, application-properties nor body: nothing to know it by
            self.unreadable += 1
            return
        digest = hashlib.sha256(bare).digest()
        j = self._by_digest.get(digest)
        if j is None:
            # (the properties section comes first in the bare message)
            without_properties = None if props is None else hashlib.sha256(
                bare[skip(bare):]).digest()
            j = self._by_digest[digest] = Journey(
                digest, len(bare), getattr(props, "message_id", None), _holds_secret(msg, bare),
                without_properties)
        conn = rec.conn
        j.hops.append(Hop(conn.label, rec.link, rec.address, rec.sender, rec.delivery_id,
                          known_time(conn, rec.first_time), rec.outcome, rec.state,
                          rec.settled_by, rec.presettled, rec.at_end,
                          known_time(conn, rec.settled_time),
                          # (a form a node added properties to, once joined to the
                          # message as sent: see _journeys)
                          props is not None and j.digest_without_properties is None,
                          rec.txn_result, (conn.index, _first_frame(rec))))
        j.chosen = j.chosen or chosen

    def __iter__(self) -> Iterator[Journey]:
        """The messages in the order of their first hop's first transfer, each one's hops
        in that order too (records come as deliveries end, not as they begin)."""
        journeys = self._journeys()
        for j in journeys:
            j.hops.sort(key=_when)
        journeys.sort(key=lambda j: _when(j.hops[0]))
        return iter(journeys)

    def __len__(self) -> int:
        return len(self._journeys())

    def _journeys(self) -> list[Journey]:
        """Every message, each seen with properties a node added joined to its form as sent.

        Joined once every record is in, so that the order deliveries ended in (a
        consumer's before its producer's) does not matter; a message's two forms are then
        both keys of the one message. Two forms with properties (a message-id each, say)
        are never joined to each other, only to a form without."""
        for digest, j in list(self._by_digest.items()):
            stripped = j.digest_without_properties
            sent = None if stripped is None else self._by_digest.get(stripped)
            if sent is None:
                continue
            for h in j.hops:
                h.properties_added = True
            sent.hops += j.hops
            sent.chosen = sent.chosen or j.chosen
            sent.secret = sent.secret or j.secret  # (hidden if either form holds a secret)
            self._by_digest[digest] = sent
        return list(dict.fromkeys(self._by_digest.values()))


def _when(h: Hop) -> tuple[bool, float, tuple[int, int], int]:
    # (many transfers share a packet's time: then in the order of their delivery-ids;
    # without times, in the order of the frames)
    return (h.first_time is None, h.first_time or 0.0,
            h.place if h.first_time is None else (0, 0),
            -1 if h.delivery_id is None else h.delivery_id)


def _first_frame(rec: DeliveryRecord) -> int:
    """The number of the frame of its first transfer (0: not in its timeline)."""
    for e in rec.timeline:
        if e[2] == "transfer":  # (e.kind, e.frame_no)
            return int(e[3])
    return 0


def _to_coordinator(rec: DeliveryRecord) -> bool:
    from amqpcli.codec.composites import Coordinator

    if rec.coordinator is not None:
        return True
    ls = rec.link_stats
    return ls is not None and isinstance(getattr(ls.link, "target", None), Coordinator)


def _holds_secret(msg: Message, bare: bytes) -> bool:
    """Whether the message's bare sections hold a SASL secret, as `recv --json` and
    `--deliveries --json` judge it (`"redacted": true`): its raw bytes first (a descriptor
    by code, damaged ones too), then, where a descriptor by name may stand, the sections
    as the JSON view masks them."""
    from amqpcli.render.redact import secret_spans

    if secret_spans(bare):
        return True
    if b"amqp:sasl-" not in bare:
        return False
    from amqpcli.render.message import load_sections, message_to_json

    try:
        return "redacted" in message_to_json(load_sections(msg))
    except Exception:  # noqa: BLE001 - sections that do not decode: no hash of them shown
        return True
