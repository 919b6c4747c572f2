"""The delivery state machine and its timeline (Part 2 §2.6.12, Part 3 §3.4).

A delivery is born with its first transfer frame and dies (leaves the live maps, is
handed out in a `DeliverySettled` event) when it is settled for good, aborted, or
abandoned with its link. Every step is appended to `timeline` (and, where a capture lost
bytes while it was being sent, a `gap` step: it is then `incomplete`).

Phases and the steps that move between them (`TRANSITIONS`):

    QUEUED ──frame──► TRANSFERRING ──last──► UNSETTLED ──rcv-settle──► SETTLED
                         │    ▲                 │ └──snd-settle──► SETTLED
                         │    └──frame          └──snd-settle-2──► WAIT_RECEIVER
                         └──abort──► ABORTED                  (rcv-settle-mode second)
    WAIT_RECEIVER ──rcv-settle──► SETTLED

`last-settled` (the final frame of a pre-settled delivery, or of one the sender settled
while it was still being transferred) goes straight to SETTLED. States carried by
dispositions (`rcv-state`, `snd-state`) do not change the phase; they are recorded and
checked for conflicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from amqpcli.codec import composites as c

if TYPE_CHECKING:
    from .link import Link
    from .session import Session


class Phase:
    """Delivery phases: plain strings, so the per-frame table lookups hash fast."""

    QUEUED = "queued"  # endpoint role: waiting for credit or session window
    TRANSFERRING = "transferring"
    UNSETTLED = "unsettled"
    WAIT_RECEIVER = "wait-receiver"
    SETTLED = "settled"
    ABORTED = "aborted"
    ABANDONED = "abandoned"  # its link or session went away while it was unsettled


P = Phase
TRANSITIONS: dict[tuple[str, str], str] = {
    (P.QUEUED, "frame"): P.TRANSFERRING,
    (P.QUEUED, "last"): P.UNSETTLED,
    (P.QUEUED, "last-settled"): P.SETTLED,
    (P.QUEUED, "abort"): P.ABORTED,
    (P.TRANSFERRING, "frame"): P.TRANSFERRING,
    (P.TRANSFERRING, "last"): P.UNSETTLED,
    (P.TRANSFERRING, "last-settled"): P.SETTLED,
    (P.TRANSFERRING, "abort"): P.ABORTED,
    (P.TRANSFERRING, "rcv-settle"): P.TRANSFERRING,  # settled early: ends at its last frame
    (P.TRANSFERRING, "snd-settle"): P.TRANSFERRING,
    (P.TRANSFERRING, "snd-settle-2"): P.TRANSFERRING,
    (P.UNSETTLED, "rcv-settle"): P.SETTLED,
    (P.UNSETTLED, "snd-settle"): P.SETTLED,
    (P.UNSETTLED, "snd-settle-2"): P.WAIT_RECEIVER,
    (P.UNSETTLED, "abandon"): P.ABANDONED,
    (P.UNSETTLED, "resume"): P.UNSETTLED,
    # a resumed delivery: the remainder of its payload, or just its settlement
    (P.UNSETTLED, "frame"): P.TRANSFERRING,
    (P.UNSETTLED, "last"): P.UNSETTLED,
    (P.UNSETTLED, "last-settled"): P.SETTLED,
    (P.UNSETTLED, "abort"): P.ABORTED,  # a resumed delivery aborted
    (P.TRANSFERRING, "abandon"): P.ABANDONED,
    (P.TRANSFERRING, "resume"): P.TRANSFERRING,
    (P.WAIT_RECEIVER, "rcv-settle"): P.SETTLED,
    (P.WAIT_RECEIVER, "abandon"): P.ABANDONED,
    (P.WAIT_RECEIVER, "resume"): P.WAIT_RECEIVER,
}
FINAL = frozenset({P.SETTLED, P.ABORTED, P.ABANDONED})

# Delivery states that end a delivery's life at the receiver (Part 3 §3.4).
TERMINAL_TYPES: tuple[type, ...] = (
    c.Accepted, c.Rejected, c.Released, c.Modified, c.Declared,
)


def state_name(state: Any) -> str | None:
    """`accepted`, `rejected`, … (`transactional-state:accepted` inside a transaction)."""
    if state is None:
        return None
    if isinstance(state, c.TransactionalState):
        inner = state_name(state.outcome)
        return f"transactional-state:{inner}" if inner else "transactional-state"
    name = getattr(state, "NAME", None)
    return name if name else type(state).__name__


_TERMINAL = frozenset(TERMINAL_TYPES)


def outcome_of(state: Any) -> Any:
    """The terminal outcome a state carries, or None (a transactional state's outcome)."""
    t = state.__class__
    if t in _TERMINAL:
        return state
    if t is c.TransactionalState:
        inner = state.outcome
        return inner if inner.__class__ in _TERMINAL else None
    return None


# the name of each terminal outcome, by class (state_name of one)
_TERMINAL_NAMES: dict[type, str] = {t: getattr(t, "NAME", None) or t.__name__
                                    for t in TERMINAL_TYPES}


class TimelineEntry(NamedTuple):
    """One step of a delivery. A tuple: the hot paths make one per frame without a
    Python-level constructor call (`new_entry`)."""

    time: float
    # the side whose frame (or end of stream) it was; None for what no side did: an
    # `abandon` by the connection's close (both sides closed it)
    side: str | None
    kind: str  # "transfer", "disposition", "settle", "abort", "resume", "abandon", "gap", "carried"
    frame_no: int
    state: Any = None  # the delivery state the frame carried
    settled: bool = False
    more: bool = False
    size: int = 0  # payload bytes carried by this frame (transfers)
    detail: str = ""


# TimelineEntry from all nine fields in order, made by tuple.__new__ directly (no Python frame)
new_entry = tuple.__new__


class Delivery:
    """One delivery: identity, payload, both sides' states, settlement and timeline."""

    __slots__ = (
        "__weakref__",
        "_chunks",
        "aborted",
        "batchable",
        "delivery_id",
        "first_time",
        "frames",
        "link",
        "message_format",
        "origin",
        "payload_ready",
        "phase",
        "presettled",
        "rcv_settle_mode",
        "receiver",
        "receiver_settled",
        "receiver_state",
        "resumed",
        "sender",
        "sender_settled",
        "sender_state",
        "session",
        "settled_by",
        "settled_time",
        "size",
        "tag",
        "timeline",
        "txn_id",
        "txn_request",
    )

    def __init__(self, link: Link, sender: str, receiver: str, tag: bytes) -> None:
        self.link = link
        self.session: Session | None = link.session
        self.sender = sender
        self.receiver = receiver
        self.delivery_id: int | None = None
        self.tag = tag
        self.message_format: int = 0
        self.phase: str = Phase.QUEUED
        self.timeline: list[TimelineEntry] = []
        self.frames = 0
        self.size = 0
        self._chunks: list[bytes] = []
        self.batchable = False
        self.presettled = False
        self.sender_settled = False
        self.receiver_settled = False
        self.sender_state: Any = None
        self.receiver_state: Any = None
        self.first_time: float | None = None
        self.settled_time: float | None = None
        self.settled_by: str | None = None  # first side to settle (None: aborted/abandoned)
        self.txn_id: bytes | None = None
        self.txn_request: Any = None  # Declare / Discharge on a coordinator link
        self.resumed = False
        self.aborted = False
        self.rcv_settle_mode: int | None = None  # per-delivery override from the transfer
        self.payload_ready = False
        # the connection (its label) a delivery carried over to this one was first sent
        # on (`LinkShelf`); None for one sent on this connection
        self.origin: str | None = None

    # --- the state machine --------------------------------------------------------

    def step(self, event: str) -> bool:
        """Apply one step; False when the table has no such transition (a violation)."""
        new = TRANSITIONS.get((self.phase, event))
        if new is None:
            return False
        self.phase = new
        return True

    @property
    def done(self) -> bool:
        return self.phase in FINAL

    # --- payload ------------------------------------------------------------------

    @property
    def payload(self) -> bytes:
        """The assembled message bytes. Kept by observers (unless `keep_payload=False`) and
        by endpoints for what they receive; empty for what an endpoint sent."""
        if len(self._chunks) != 1:
            self._chunks = [b"".join(self._chunks)]
        return self._chunks[0]

    def head(self, n: int) -> bytes:
        """The payload's first `n` bytes, without joining the rest (a view of a large
        message in the middle of its transfer need not copy it all)."""
        out: list[bytes] = []
        got = 0
        for chunk in self._chunks:
            if got >= n:
                break
            out.append(chunk[: n - got])
            got += len(out[-1])
        return b"".join(out)

    def message(self) -> Any:
        """The payload decoded as a `Message` (decoding is lazy in the codec)."""
        return _message_decode(self.payload)

    def drop_payload(self) -> None:
        """Forget the payload (a caller that has handled the message saves memory)."""
        self._chunks = []

    # --- derived views ------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The latest state known: the receiver's if any, else the sender's."""
        return self.receiver_state if self.receiver_state is not None else self.sender_state

    @property
    def outcome(self) -> str:
        """What became of it: accepted, rejected, … or aborted / abandoned / settled /
        unsettled / in-progress. Abandoned with nothing having settled it, it is
        `abandoned` even when the receiver had given a terminal outcome: the sender never
        settled it, so whether the sender applied that outcome is not known (on a resume
        it applies it, or says which one it applied instead, Part 3 §3.4.6; its link
        closed, it may give the message out again). `state` keeps what was given. Not so
        for a transactional outcome: it takes effect when its transaction is discharged,
        settled or not (Part 4 §4.4.2), so the transaction's end decides it."""
        if self.phase == Phase.ABORTED:
            return "aborted"
        if self.phase == Phase.ABANDONED and not self.settled and not (
                isinstance(self.receiver_state, c.TransactionalState)
                or isinstance(self.sender_state, c.TransactionalState)):
            return "abandoned"
        for s in (self.receiver_state, self.sender_state):
            if s is None:
                continue
            name = _TERMINAL_NAMES.get(s.__class__)  # a terminal outcome itself
            if name is not None:
                return name
            o = outcome_of(s)
            if o is not None:
                return state_name(o) or "settled"
        if self.phase == Phase.ABANDONED:
            return "abandoned"
        if self.phase == Phase.SETTLED:
            return "settled"
        if self.phase in (Phase.QUEUED, Phase.TRANSFERRING):
            return "in-progress"
        return "unsettled"

    @property
    def incomplete(self) -> bool:
        """Some of its transfers are missing from the capture it was read from: a gap hit
        the stream while it was being sent (`Connection.on_gap` put a `gap` step in its
        timeline). Its size and frames are what was seen. Looks through the timeline: a
        caller asks only where the capture had gaps."""
        for e in self.timeline:
            if e[2] == "gap":  # (e.kind)
                return True
        return False

    @property
    def settled(self) -> bool:
        """Whether a side settled it: a disposition or a transfer of either side said
        settled (`settled_by` names the first). Not one that nothing settled, that was
        given up: abandoned while unsettled (its link or connection went away), aborted
        (an abort transfer may say settled: it gives the delivery up, with no outcome)."""
        return (self.settled_by is not None or self.presettled) and not self.aborted

    @property
    def first_settled_time(self) -> float | None:
        """The time of the first frame, from either side, that settled it: the one
        `settled_by` names (a disposition, or a transfer, that said settled). In
        receiver-settle-mode second the sender's settlement, not the receiver's final one
        after it; a pre-settled delivery's first transfer, in one frame or several; a
        receiver's that settled it before its last transfer. None for one never settled
        (see `settled`). `settled_time` is when it became final."""
        if not self.settled:
            return None
        for e in self.timeline:
            if e[5]:  # (e.settled)
                return e[0]  # (e.time)
        return self.settled_time

    @property
    def latency(self) -> float | None:
        """Seconds from the first transfer frame to the first frame that settled it
        (`first_settled_time`), as `pcap-dump` has it; None for one never settled (see
        `settled`), though it is final (`settled_time`) when abandoned."""
        settled = self.first_settled_time
        if settled is None or self.first_time is None:
            return None
        return settled - self.first_time

    def __repr__(self) -> str:
        return (
            f"<Delivery id={self.delivery_id} tag={self.tag!r} {self.phase}"
            f" outcome={self.outcome} link={self.link.name!r}>"
        )


def _message_decode(payload: bytes) -> Any:
    # Bound on first use: the message module is not needed to follow deliveries.
    global _message_decode
    from amqpcli.codec.message import Message

    _message_decode = Message.decode  # type: ignore[assignment]
    return Message.decode(payload)
