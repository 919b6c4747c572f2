"""What the dissector hands out: records, and the per-connection and per-link facts it
keeps for the end-of-capture views.

Records come in capture order: a `FrameRecord` for every protocol header, frame and frame
error (0-10: every assembly), followed by what that frame caused — `DeliveryRecord`s for
deliveries that became final, `ViolationRecord`s, `Notice`s (link notes such as a
terminus granted differently). Notices also say what the capture itself did: a TCP gap,
a resynchronisation, an encrypted or non-AMQP flow.

Deliveries of both protocols are `DeliveryRecord`s (a snapshot, so renderers never touch
the engine's live objects); links and connections are summarised by `LinkStats` and
`Conn` (which keep the engine's objects for the fields only the engine knows; once a
connection closed, for a view that reads them at the end, only `LinkFacts` and
`ConnectionFacts`: what those views read of them, so the engine's model can go).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Self

AMQP10 = "amqp-1.0"
AMQP010 = "amqp-0-10"


@dataclass(slots=True, eq=False)
class LinkStats:
    """One link of a connection, with what the dissector counted on it."""

    link: Any  # the engine Link (1.0), or its `LinkFacts` once it can change no more
    session_no: int  # index of its session in the connection (1-based)
    handles: dict[str, int] = field(default_factory=dict)  # side -> handle
    attached: float | None = None
    detached: float | None = None
    deliveries: int = 0
    settled: int = 0
    bytes: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    # a coordinator link's requests, which are no messages (not among `outcomes`):
    # declared, committed, rolled-back, failed (a discharge the coordinator rejected),
    # and `request` for one not answered or not understood
    transactions: dict[str, int] = field(default_factory=dict)
    # settlement latencies (s) of its deliveries not sent pre-settled: 8 bytes each, not a
    # float object
    latencies: array[float] = field(default_factory=lambda: array("d"))
    flows: int = 0
    drains: int = 0
    echoes: int = 0
    max_credit: int = 0
    credit_zero_since: float | None = None  # credit ran out at this time
    # the sender had messages while stalled: its `available`, less the deliveries it sent
    # since the flow that said it, was above 0 at some time without credit
    stall_available: bool = False
    # the `available` of the sender's latest flow that said it, and `deliveries` then:
    # each delivery since used one of them up (Part 2 §2.6.7)
    sender_available: int | None = None
    available_at: int = 0
    # a wait that ended with a grant, with no word of the sender having anything to send:
    # (start, seconds, time of the grant); a stall if a delivery starts at once
    # (`stall_prompt` seconds, dissect.pipeline)
    stall_unproven: tuple[float, float, float] | None = None
    stalls: list[tuple[float, float]] = field(default_factory=list)  # (start, seconds)
    # a link attached before the capture began (joined mid-stream): its first delivery,
    # until it ends (`DeliveryRecord.may_be_tail`; only where delivery records are made)
    first_unseen: Any = field(default=None, repr=False, compare=False)
    # (time, side, credit, delivery-count, available, drain, echo) of every flow: kept only
    # where asked for (`Dissector(credit_timeline=True)`), as it grows with the capture
    credit_timeline: list[tuple[float, str, int | None, int | None, int | None, bool, bool]] = field(
        default_factory=list)
    notes: list[str] = field(default_factory=list)
    _address: tuple[str | None] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.link.name)

    def address(self) -> str | None:
        """The node address: the target's for a sender the client attached, else the
        source's (whichever terminus names a node). Worked out again after an attach."""
        if self._address is None:
            self._address = (self._find_address(),)
        return self._address[0]

    def _find_address(self) -> str | None:
        for t in (self.link.target, self.link.source) if self._client_sends() else (
                self.link.source, self.link.target):
            a = getattr(t, "address", None)
            if a is not None:
                return str(a)
        return None

    def _client_sends(self) -> bool:
        return bool(self.link.sender == self.link.initiator)


class LinkFacts:
    """What the end-of-capture views (`--links`, the summary, the address and link
    filters' notes) read of an AMQP 1.0 engine Link, under the Link's own names: in its
    place in `LinkStats.link` once it was retired or its connection closed both ways
    (`Conn.keep_facts`). The attaches are the decoded frames themselves; of the detaches,
    only whether there were any (`detached_with`: a view reads no more of them). (A
    plain class: a dataclass would cost every start-up its making.)"""

    __slots__ = ("attach", "delivery_count", "detached_with", "granted", "initiator",
                 "link_credit", "name", "receiver", "refused", "requested", "sender",
                 "source", "state", "target")

    def __init__(self, link: Any) -> None:
        self.name: str = link.name
        self.sender: str = link.sender
        self.receiver: str = link.receiver
        self.initiator: str = link.initiator
        self.state: str = link.state
        self.detached_with: str | None = link.detached_with
        self.refused: bool = link.refused
        self.attach: dict[str, Any] = link.attach
        self.requested = link.requested
        self.granted = link.granted
        self.source = link.source
        self.target = link.target
        self.delivery_count: int = link.delivery_count
        self.link_credit: int = link.link_credit


class ConnectionFacts:
    """What `--connections` reads of an AMQP 1.0 connection's engine model, under the
    model's own names: in its place once the connection closed both ways
    (`Conn.keep_facts`)."""

    __slots__ = ("close", "open", "sasl_code", "sasl_mechanism", "sasl_mechanisms")

    def __init__(self, model: Any) -> None:
        self.sasl_mechanisms: tuple[str, ...] = model.sasl_mechanisms
        self.sasl_mechanism: str | None = model.sasl_mechanism
        self.sasl_code: int | None = model.sasl_code
        self.open: dict[str, Any] = model.open
        self.close: dict[str, Any] = model.close


@dataclass(slots=True, eq=False)
class Conn:
    """One TCP flow and what it carried."""

    index: int  # 1-based, in order of the flow's first packet
    label: str  # "c1"
    client: str  # "10.0.0.1:40000"
    server: str
    protocol: str  # amqp-1.0, amqp-0-10, tls, amqp-tls, amqp-0-9-1, unknown, ...
    first_time: float
    last_time: float = 0.0
    observer: Any = None  # engine Observer (1.0) or amqp010 ConnectionObserver
    midstream: bool = False
    links: list[LinkStats] = field(default_factory=list)
    sessions: int = 0
    frames: dict[str, int] = field(default_factory=lambda: {"client": 0, "server": 0})
    bytes: dict[str, int] = field(default_factory=lambda: {"client": 0, "server": 0})
    gaps: int = 0
    gap_bytes: int = 0
    resyncs: int = 0
    skipped_bytes: int = 0
    frame_errors: int = 0
    violations: int = 0
    deliveries: int = 0
    closed: dict[str, str] = field(default_factory=dict)  # side -> fin / rst / reset-by-peer / end
    sasl_outcome: int | None = None
    notes: list[str] = field(default_factory=list)
    # its input said when each frame came: false for a frame-trace log's connection
    # whose lines have no time (proton's), whose times are then unknown (`known_time`)
    timed: bool = True
    # what it was read from: "capture", or "log" (a frame-trace log: no TCP, and frames
    # as the logging process encoded them)
    source: str = "capture"
    # a log's payloads it cut short: the size each line gives, by frame number
    # (`DeliveryRecord.size_in_log`)
    cut_payloads: dict[int, int] | None = None
    # 1.0, closed: what the views read of its engine model, kept in its place
    # (`keep_facts`)
    facts: ConnectionFacts | None = None
    _by_link: dict[int, LinkStats] = field(default_factory=dict, repr=False)

    @property
    def endpoints(self) -> str:
        return f"{self.client} -> {self.server}"

    @property
    def model(self) -> Any:
        """Its AMQP 1.0 engine model (open, close, SASL), or once closed its
        `ConnectionFacts`; None for 0-10 and where no engine ran."""
        if self.facts is not None:
            return self.facts
        return getattr(self.observer, "connection", None)

    def release(self) -> None:
        """Closed, for a view that reads no connection's model or links at the end: let
        them go, keep the figures (`Dissector(closed="release")`, and "forget" before it
        lets the connection go too)."""
        self.observer = None
        self.links = []
        self._by_link = {}

    def keep_facts(self) -> None:
        """Closed both ways, for a view that reads its model and links at the end (the
        link and connection views, the summary, the link and address filters): keep what
        they read (`ConnectionFacts`, `LinkFacts`), let the engine's model go
        (`Dissector(closed="facts")`). A 0-10 connection keeps its model."""
        model = getattr(self.observer, "connection", None)
        if model is None:
            return
        self.facts = ConnectionFacts(model)
        self.observer = None
        for ls in self.links:
            if ls.link.__class__ is not LinkFacts:
                ls.link = LinkFacts(ls.link)
            ls.first_unseen = None
        self._by_link = {}

    def link_for(self, link: Any) -> LinkStats | None:
        return self._by_link.get(id(link))

    def add_link(self, ls: LinkStats) -> None:
        self.links.append(ls)
        self._by_link[id(ls.link)] = ls  # the Link is kept by `ls`, so its id stays its own


def known_time(conn: Conn | None, t: float | None) -> float | None:
    """A time of `conn` (a record's, a delivery's, a link's) or a span between two (a
    latency), or None (unknown) where its input had no times: what every view shows of
    one, as `-` or null."""
    return t if conn is None or conn.timed else None


class FilePacket(int):
    """A packet's number in its own capture file (tshark's frame number), and that
    file's name: the packet of a record when several files are read (`Dissector.read`;
    of one file, a plain int)."""

    file: str

    def __new__(cls, number: int, file: str) -> Self:
        packet = super().__new__(cls, number)
        packet.file = file
        return packet


@dataclass(slots=True, eq=False)
class FrameRecord:
    """One item read from one direction: a protocol header, frame or frame error (1.0),
    or a protocol header, assembly or stream error (0-10), with the engine's events."""

    conn: Conn
    side: str  # the sender: "client" or "server"
    time: float
    packet: int  # capture packet that completed it (0: unknown, e.g. decrypted TLS)
    # the engine's per-connection frame number (0 for headers); 0-10: that of the last
    # frame of the assembly, 0-10 frames counted on the wire from both sides
    frame_no: int
    item: Any
    events: list[Any]
    protocol: str = AMQP10


# the outcomes a transaction decides (Part 4 §4.4): they take effect when it commits
TXN_DECIDED = frozenset({"accepted", "rejected", "released", "modified", "settled"})
ROLLED_BACK = "rolled-back"  # its transaction was rolled back, or its discharge failed
UNDECIDED = "undecided"  # its transaction was not discharged in the capture


def txn_outcome(outcome: str, result: str | None) -> str:
    """A delivery's outcome once its transaction is known: `result` is the
    transaction's ("committed", "rolled-back", "failed: CONDITION" for a discharge the
    coordinator rejected, or None: not discharged). Committed, it keeps its outcome."""
    if outcome not in TXN_DECIDED or result == "committed":
        return outcome
    return UNDECIDED if result is None else ROLLED_BACK


ABANDONED = "abandoned"  # its link or connection went away while nothing had settled it
UNSETTLED = "unsettled"  # still unsettled when the capture ended
# the terminal delivery states (Part 3 §3.4; Part 4 §4.5: declared)
_OUTCOME_NAMES = frozenset({"accepted", "rejected", "released", "modified", "declared"})


def replaced_outcome(outcome: str, state: Any, result: str | None) -> str | None:
    """The outcome another took the place of: for a transaction not committed (rolled
    back, undecided), the one its transactional state carries (`accepted`; `settled`
    for none); for a delivery nothing settled (abandoned, or unsettled when the capture
    ended), the terminal outcome a side had given it, not final until settled (a
    receiver's `accepted` the sender never settled). None for a delivery whose outcome
    is its own."""
    if outcome in (ABANDONED, UNSETTLED):
        return given_outcome(state)
    if result is None or outcome not in (ROLLED_BACK, UNDECIDED):
        return None
    return getattr(getattr(state, "outcome", None), "NAME", None) or "settled"


def given_outcome(state: Any) -> str | None:
    """The name of the terminal outcome `state` is or carries (a transactional state's),
    None for a state that is none (`received`) or no state."""
    name = getattr(state, "NAME", None)
    if name == "transactional-state":
        name = getattr(getattr(state, "outcome", None), "NAME", None)
    return name if name in _OUTCOME_NAMES else None


def latency(first_time: float | None, settled_time: float | None) -> float | None:
    """A delivery's settlement latency: from its first transfer to its settlement, when
    both were seen."""
    if first_time is None or settled_time is None:
        return None
    return settled_time - first_time


@dataclass(slots=True, eq=False)
class DeliveryRecord:
    """A delivery (0-10: a message.transfer) that reached its end, or the end of input."""

    conn: Conn
    protocol: str
    link: str  # link name (0-10: the destination)
    address: str | None
    sender: str  # the side that sent the message
    delivery_id: int | None
    tag: bytes | None
    size: int
    frames: int
    outcome: str  # accepted, rejected, released, modified, settled, aborted, abandoned, unsettled, ...
    state: Any  # the deciding delivery state (1.0 composite), for details such as an error
    settled_by: str | None  # "sender", "receiver" or None
    presettled: bool
    second_mode: bool
    first_time: float | None
    settled_time: float | None
    txn_id: bytes | None = None
    resumed: bool = False
    aborted: bool = False
    at_end: bool = False  # still unsettled when the capture ended
    timeline: list[Any] = field(default_factory=list)
    payload: bytes | None = None  # 1.0: the message bytes when kept; 0-10: the body
    link_stats: LinkStats | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # 0-10: header structs etc.
    # 1.0: its message was not seen whole: a gap in the capture took some of its
    # transfers, or it was abandoned with transfers still to come (its stream, link or
    # session ended, or the capture stopped); size and frames are what was seen, its
    # outcome and latency hold
    incomplete: bool = False
    # in a transaction (`txn_id`): what became of it, "committed", "rolled-back",
    # "failed: CONDITION" (its discharge rejected) or "undecided" (not discharged in the
    # capture); a coordinator's discharge: the transaction it discharged
    txn_result: str | None = None
    # on a coordinator link: "declare", "discharge" (no message: its `txn_id` is the
    # transaction's), or "request" (not read as either)
    coordinator: str | None = None
    # 1.0: its first transfer's message-format (0: an AMQP message; another is a
    # vendor's, its payload opaque)
    message_format: int = 0
    # 1.0: the first delivery seen on a link attached before the capture began (joined
    # mid-stream): its first frames may be missing, so its payload is never called an
    # invalid message (`render.deliveries`, `dissect.journeys`)
    may_be_tail: bool = False
    # 1.0: resumed here from the link's attachment on an earlier connection (its label),
    # whose end carried it over (`amqpcli.engine.shelf`): its bytes, frames and first
    # time include that connection's
    resumed_from: str | None = None

    @property
    def latency(self) -> float | None:
        return latency(self.first_time, self.settled_time)

    @property
    def size_in_log(self) -> int | None:
        """Where a frame-trace log cut the payload of some of its transfers short (proton
        shows about 1 KiB of a frame): its size as the log's lines give it, `size` being
        what they show; None for any other delivery."""
        cut = getattr(self.conn, "cut_payloads", None)  # (a stand-in conn may lack it)
        if not cut:
            return None
        said = cut_sizes(self.timeline, self.conn.label, self.resumed_from is not None, cut)
        if not any(n is not None for n in said):
            return None
        return sum(e[7] if n is None else n  # (e.size)
                   for e, n in zip(self.timeline, said, strict=True) if e[2] == "transfer")

    @property
    def seen_whole(self) -> bool:
        """Its message was all there: neither `incomplete` nor cut short by a log."""
        return not self.incomplete and self.size_in_log is None


@dataclass(slots=True, eq=False)
class ViolationRecord:
    conn: Conn
    protocol: str
    kind: str
    side: str  # who broke the protocol
    detail: str
    frame_no: int
    packet: int
    time: float
    link: str | None = None


@dataclass(slots=True, eq=False)
class Notice:
    """Something about the capture or the conversation that is not a frame."""

    conn: Conn | None
    side: str | None
    time: float
    packet: int
    kind: str  # gap, resync, encrypted, not-amqp, skipped, link, truncated, capture-error
    text: str


def cut_sizes(timeline: list[Any], here: str, carried_over: bool,
              cut: dict[int, int]) -> list[int | None]:
    """For each step of a delivery's timeline, the size a frame-trace log gives the
    payload it cut short (`Conn.cut_payloads`, by frame number: `cut`), or None: not a
    transfer, not cut, or a step brought from another connection (`carried_over`: read
    through `step_connections`), whose frame numbers are not this log's (`here`)."""
    where = [here] * len(timeline)
    if carried_over:
        from amqpcli.engine.shelf import step_connections

        where = step_connections(timeline, here)
    return [cut.get(e[3]) if e[2] == "transfer" and conn == here else None  # (frame_no)
            for e, conn in zip(timeline, where, strict=True)]
