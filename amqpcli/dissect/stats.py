"""The end-of-capture summary: counts by performative and outcome, latency percentiles
per link, credit stalls, violations. Fed the records that passed the filters; links come
from the dissector's connections at the end (`Passed`: only those the passed records
belong to, when the filters pick records inside them)."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from amqpcli.dissect.filters import (
    Filter,
    frame_links,
    link_addresses,
    notice_links,
    performative_name,
)
from amqpcli.dissect.records import (
    AMQP010,
    Conn,
    DeliveryRecord,
    FrameRecord,
    LinkStats,
    Notice,
    ViolationRecord,
)
from amqpcli.percentiles import percentile  # pipeline/ and render/ take it from here too

MAX_LISTED_VIOLATIONS = 50


def micros(t: float) -> int:
    """Seconds → whole microseconds: how the tables keep times, and so the resolution at
    which the summaries order violations."""
    return round(t * 1_000_000)


ViolationKey = tuple[int, int, int, str, str, str, str, int, str]


def violation_order(rec: ViolationRecord, conn_no: int,
                    time_us: int | None = None) -> ViolationKey:
    """Where a violation goes in the summary's list: the one order of the summary of
    captures and the summary of tables. By time (to the microsecond, as the tables keep
    it: `time_us` when the caller has it so, else `micros(rec.time)`), then connection
    (`conn_no`: n of its label cn), then frame, then what its line says (side, kind,
    link, detail, packet, the packet's file): violations of one frame in one order too."""
    packet = rec.packet or 0
    return (micros(rec.time) if time_us is None else time_us, conn_no, rec.frame_no or 0,
            rec.side or "", rec.kind or "", rec.link or "", rec.detail or "", int(packet),
            getattr(packet, "file", ""))


@dataclass(slots=True)
class LinkSummary:
    conn: str
    name: str
    address: str | None
    sender: str
    deliveries: int
    outcomes: dict[str, int]
    latency: dict[str, float] | None  # p50, p90, p99, max (seconds)
    stalls: list[tuple[float, float]]
    flows: int
    drains: int
    # a coordinator link's requests (not among `outcomes`: they are no messages)
    transactions: dict[str, int] = field(default_factory=dict)
    # its connection has times (`Conn.timed`): without, `latency` is None, not known
    timed: bool = True


def transaction_kind(rec: DeliveryRecord) -> str:
    """What a coordinator's request came to: declared, committed, rolled-back, failed
    (the coordinator rejected the discharge), or `request` (not answered, not read)."""
    if rec.coordinator == "declare" and rec.outcome == "declared":
        return "declared"
    result = rec.txn_result
    if rec.coordinator == "discharge" and result is not None and result != "active":
        return "failed" if result.startswith("failed") else result
    return "request"


@dataclass
class Summary:
    """Counters over the records given to `add`; `finish(conns, filter)` adds the links."""

    connections: int = 0
    frames: int = 0
    bytes: int = 0
    by_performative: dict[str, int] = field(default_factory=dict)
    by_outcome: dict[str, int] = field(default_factory=dict)
    deliveries: int = 0  # messages: a coordinator's requests are `transactions`
    # a transaction coordinator's requests by what they came to (`transaction_kind`)
    transactions: dict[str, int] = field(default_factory=dict)
    # the first MAX_LISTED_VIOLATIONS in `violation_order` (`list_violation`)
    violations: list[ViolationRecord] = field(default_factory=list)
    by_violation: dict[str, int] = field(default_factory=dict)
    notices: dict[str, int] = field(default_factory=dict)
    links: list[LinkSummary] = field(default_factory=list)
    # addresses several links share, each over all its links' deliveries (the summary of
    # a tables folder: amqpcli.pipeline.summary); not links, so not counted with them
    addresses: list[LinkSummary] = field(default_factory=list)
    protocols: dict[str, int] = field(default_factory=dict)
    # the span of the frames of the connections that have times (`Conn.timed`)
    first_time: float | None = None
    last_time: float | None = None
    untimed_frames: int = 0  # frames of connections without times
    from_log: bool = False  # its connections were read from frame-trace logs
    unsettled_at_end: int = 0
    # deliveries whose message was not seen whole (a gap took transfers, it was
    # abandoned with transfers still to come, or a log cut its payload short)
    incomplete: int = 0
    _violation_keys: list[ViolationKey] = field(default_factory=list, repr=False)

    def add(self, rec: Any) -> None:
        cls = rec.__class__
        if cls is FrameRecord:
            # a 0-10 record is an assembly: count the frames that carried it
            self.frames += getattr(rec.item, "frames", 1) if rec.protocol == AMQP010 else 1
            name = performative_name(rec.item)
            self.by_performative[name] = self.by_performative.get(name, 0) + 1
            if not rec.conn.timed:
                self.untimed_frames += 1
                return
            t = rec.time
            if self.first_time is None or t < self.first_time:
                self.first_time = t
            if self.last_time is None or t > self.last_time:
                self.last_time = t
        elif cls is DeliveryRecord:
            if rec.coordinator is not None:
                kind = transaction_kind(rec)
                self.transactions[kind] = self.transactions.get(kind, 0) + 1
                return
            self.deliveries += 1
            self.by_outcome[rec.outcome] = self.by_outcome.get(rec.outcome, 0) + 1
            if rec.at_end:
                self.unsettled_at_end += 1
            if not rec.seen_whole:
                self.incomplete += 1
        elif cls is ViolationRecord:
            self.by_violation[rec.kind] = self.by_violation.get(rec.kind, 0) + 1
            self.list_violation(rec, rec.conn.index)
        elif cls is Notice:
            self.notices[rec.kind] = self.notices.get(rec.kind, 0) + 1

    def list_violation(self, rec: ViolationRecord, conn_no: int,
                       time_us: int | None = None) -> None:
        """List `rec` if it is among the first `MAX_LISTED_VIOLATIONS` in
        `violation_order` (its arguments), whatever order they come in; not counted."""
        keys = self._violation_keys
        key = violation_order(rec, conn_no, time_us)
        if len(keys) >= MAX_LISTED_VIOLATIONS and key >= keys[-1]:
            return  # (the usual case once the list is full: violations come in time order)
        i = bisect_right(keys, key)
        keys.insert(i, key)
        self.violations.insert(i, rec)
        if len(keys) > MAX_LISTED_VIOLATIONS:
            keys.pop()
            self.violations.pop()

    def finish(self, conns: list[Conn], flt: Filter | None = None,
               passed: Passed | None = None) -> None:
        """The connections and links the filters select; with `passed`, only those the
        records that passed belong to, each link counted over those records."""
        for c in conns:
            if flt is not None and not flt.chosen_conn(c):
                continue
            if passed is not None and not passed.conn(c):
                continue
            self.connections += 1
            if c.source == "log":  # (logs and captures are not read in one run)
                self.from_log = True
            self.protocols[c.protocol] = self.protocols.get(c.protocol, 0) + 1
            for ls in c.links:
                if flt is not None and not flt.link_stats(ls):
                    continue
                if passed is None:
                    self.links.append(link_summary(c, ls))
                    continue
                part = passed.link(ls)
                if part is not None:
                    self.links.append(link_summary(c, ls, part, flt))


def link_summary(c: Conn, ls: LinkStats, part: PassedLink | None = None,
                 flt: Filter | None = None) -> LinkSummary:
    """A link's line of the summary: its whole history, or with `part` (see `Passed`)
    what the filters let through: those deliveries, the stalls that began in the time
    range."""
    latencies = ls.latencies if part is None else part.latencies
    lat = None
    if latencies and c.timed:
        v = sorted(latencies)
        lat = {"p50": percentile(v, 50), "p90": percentile(v, 90), "p99": percentile(v, 99),
               "max": v[-1]}
    address = node_address(ls)
    # (a connection without times has no stalls to tell: its times are not its own)
    own_stalls = ls.stalls if c.timed else []
    if part is None:
        return LinkSummary(c.label, ls.name, address, str(ls.link.sender),
                           ls.deliveries, dict(ls.outcomes), lat, list(own_stalls), ls.flows,
                           ls.drains, dict(ls.transactions), c.timed)
    stalls = [st for st in own_stalls if flt is None or flt.time(st[0])]
    return LinkSummary(c.label, ls.name, address, str(ls.link.sender), part.deliveries,
                       dict(part.outcomes), lat, stalls, ls.flows, ls.drains,
                       dict(part.transactions), c.timed)


def node_address(ls: LinkStats) -> str | None:
    """A link's node address (the summary's, and the links table's `address`): the
    answer's, else the ask's (`link_addresses`), the node's terminus first. A link
    refused (answered with a null terminus): the one it asked for, as `--address` matches
    it and `--links` draws it; not the other terminus the answer gave back (a sender's
    own source)."""
    link = ls.link
    asked = link_addresses(link)[2:]  # (the ask's source, target; none if unanswered)
    if link.sender == link.initiator:
        asked = asked[::-1]
    found = next((a for a in asked if a), None) if link.refused else None
    if found is None:
        found = ls.address()
    if found is None:
        found = next((a for a in asked if a), None)
    return found


@dataclass(slots=True)
class PassedLink:
    """The deliveries of one link that passed the filters."""

    deliveries: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    transactions: dict[str, int] = field(default_factory=dict)
    latencies: array[float] = field(default_factory=lambda: array("d"))


class Passed:
    """With filters that pick records inside connections and links (`--state`,
    `--selector`, `--performative`, `--since`, `--until`: `Filter.within`), the
    connections and links (0-10: destinations) the records that passed belong to, and
    those deliveries per link: the end views
    (`--links`, `--connections`, the summary's links) then agree with the lines.

    A notice or a violation chooses its connection only where the filters judged it: not
    with criteria on what frames and deliveries carry (`Filter.by_content`: performative,
    state, message), which it passes unjudged, nor, with `--address` or `--link`, a notice
    that names no link; a link note (a refused link) is judged by its link then, and
    chooses it and its connection. `flt`: the filters (None: every record chooses its
    connection)."""

    def __init__(self, flt: Filter | None = None) -> None:
        by_content = flt is not None and flt.by_content
        by_link = flt is not None and flt.by_link
        self.notices = not by_content and not by_link
        self.link_notes = flt if by_link and not by_content else None
        self.violations = not by_content
        self.conns: set[int] = set()
        self.links: dict[int, PassedLink] = {}  # id(LinkStats) ->
        # 0-10: (connection index, destination, the side that sends to it)
        self.destinations: set[tuple[int, str, str]] = set()

    def add(self, rec: Any) -> None:
        conn = rec.conn
        if conn is None:
            return
        cls = rec.__class__
        if cls is Notice:
            if self.notices:
                self.conns.add(conn.index)
            elif self.link_notes is not None:
                about = [ls for ls in notice_links(rec) if self.link_notes.link_stats(ls)]
                if about:
                    self.conns.add(conn.index)
                    for ls in about:
                        self._link(ls)
            return
        if cls is ViolationRecord:
            if self.violations:
                self.conns.add(conn.index)
            return
        self.conns.add(conn.index)
        if cls is DeliveryRecord:
            if rec.protocol == AMQP010:
                self.destinations.add((conn.index, rec.link, rec.sender))
                return
            ls = rec.link_stats
            if ls is None:
                return
            part = self._link(ls)
            part.deliveries += 1
            if rec.coordinator is not None:
                kind = transaction_kind(rec)
                part.transactions[kind] = part.transactions.get(kind, 0) + 1
            else:
                part.outcomes[rec.outcome] = part.outcomes.get(rec.outcome, 0) + 1
            lat = rec.latency
            if lat is not None and not rec.presettled:
                part.latencies.append(lat)
        elif cls is FrameRecord and rec.protocol == "amqp-1.0":
            for link in frame_links(rec):
                ls = conn.link_for(link)
                if ls is not None:
                    self._link(ls)
        elif cls is FrameRecord:  # 0-10
            self.destinations.update((conn.index, d, s) for d, s in _destinations_010(rec))

    def _link(self, ls: LinkStats) -> PassedLink:
        part = self.links.get(id(ls))
        if part is None:
            part = self.links[id(ls)] = PassedLink()
        return part

    def conn(self, c: Conn) -> bool:
        return c.index in self.conns

    def link(self, ls: LinkStats) -> PassedLink | None:
        return self.links.get(id(ls))

    def destination(self, c: Conn, name: str, sender: str) -> bool:
        """Whether what `sender` sent to 0-10 destination `name` on connection `c` had a
        record that passed."""
        return (c.index, name, sender) in self.destinations


def _destinations_010(rec: FrameRecord) -> list[tuple[str, str]]:
    """(destination, the side that sends to it) of each 0-10 destination a record
    concerns: a message.transfer's own; the one a subscription or flow command names
    (the other side sends to it); the messages an outcome or completion names."""
    out = []
    method = getattr(rec.item, "method", None)
    dest = method.fields.get("destination") if method is not None else None
    if method is not None and dest is not None:
        other = "server" if rec.side == "client" else "client"
        out.append((str(dest), rec.side if method.qname == "message.transfer" else other))
    for ev in rec.events:
        m = getattr(ev, "message", None)
        if m is not None:
            out.append((m.destination or "", m.sender))
    return out
