"""The link state machine: attach/detach, credit (Part 2 §2.6.7), unsettled maps, termini.

Each link has two endpoints, one per side. Per side the link is `DETACHED` →
`ATTACHED` → `DETACHED` (`ATTACH_TRANSITIONS`); the link as a whole is `attaching`
while only one side has attached, `attached`, `detaching`, `detached` or `refused`.

Credit is kept as the sender sees it, by the formulas of §2.6.7:

* a flow from the receiver sets
  `link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)`
  (with `delivery-count(rcv)` defaulting to the sender's initial-delivery-count);
* a flow from the sender sets delivery-count, link-credit and available as it says;
* every new delivery adds one to delivery-count and takes one from link-credit.

Both sides' unsettled maps (delivery-tag → last state that side reported) are kept
as deliveries are sent, disposed and settled, and compared with the `unsettled` map an
attach carries when a suspended link is resumed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from amqpcli.codec import composites as c

from . import serial
from .delivery import Delivery, TimelineEntry
from .events import Difference

if TYPE_CHECKING:
    from .session import Session

SENDER = False  # the `role` boolean of attach and disposition
RECEIVER = True

TXN_ID = c.Symbol("txn-id")

ATTACH_TRANSITIONS: dict[tuple[str, str], str] = {
    ("detached", "attach"): "attached",
    ("attached", "detach"): "detached",
}


class Link:
    """A link between the two sides, with everything both of them said about it."""

    __slots__ = (
        "__weakref__",
        "abandoned_count",
        "aborted_count",
        "attach",
        "available",
        "carried",
        "coordinator",
        "current",
        "deliveries",
        "delivery_count",
        "detach",
        "drain",
        "gap_since",
        "handle",
        "high_water",
        "implicit",
        "initiator",
        "link_credit",
        "live",
        "mms",
        "name",
        "out_queue",
        "outcomes",
        "rcv_delivery_count",
        "rcv_limit",
        "rcv_link_credit",
        "rcv_mode",
        "reattached",
        "receiver",
        "refused",
        "refusing",
        "retired",
        "sender",
        "session",
        "settled_count",
        "side_state",
        "snd_mode",
        "txn_id",
        "unsettled",
    )

    def __init__(self, name: str, session: Session, initiator: str, sender: str,
                 receiver: str) -> None:
        self.name = name
        self.session = session
        self.initiator = initiator
        self.sender = sender  # the side that sends messages on this link
        self.receiver = receiver
        self.handle: dict[str, int] = {}
        self.attach: dict[str, Any] = {}  # side -> its latest Attach
        self.detach: dict[str, Any] = {}  # side -> its Detach
        self.side_state: dict[str, str] = {sender: "detached", receiver: "detached"}
        # flow state as the sender sees it
        self.delivery_count = 0
        self.link_credit = 0
        self.available: int | None = None
        self.drain = False
        # the receiver's latest declaration
        self.rcv_delivery_count: int | None = None
        self.rcv_link_credit: int | None = None
        self.rcv_limit: int | None = None  # delivery-count + credit, as the receiver said
        self.high_water: int | None = None  # the highest such limit so far
        self.unsettled: dict[str, dict[bytes, Any]] = {sender: {}, receiver: {}}
        self.live: dict[bytes, Delivery] = {}  # tag -> delivery not yet final
        # the deliveries this attachment carried over from the earlier one (`resume`) and
        # has not sent on yet: one the receiver's attach does not list may be sent again
        # as a new delivery with the same tag (`Session._start`)
        self.carried: dict[bytes, Delivery] = {}
        self.current: Delivery | None = None  # a multi-frame delivery in progress
        # capture: the `gap` step of bytes the sender lost since this link's last transfer
        self.gap_since: TimelineEntry | None = None
        self.deliveries = 0
        self.settled_count = 0
        self.aborted_count = 0
        self.abandoned_count = 0  # final with nothing having settled them (in doubt)
        self.outcomes: dict[str, int] = {}
        self.refused = False
        self.coordinator = False
        self.out_queue: list[Any] = []  # endpoint role: deliveries waiting for credit
        self.refusing = False  # the responder attached with a null terminus
        self.snd_mode = 2  # cached from the attaches by refresh()
        self.rcv_mode = 0
        self.mms = 0
        self.implicit = False  # midstream: attached before the capture began
        # this attachment resumes an earlier one of the link seen here (detached with
        # closed=false, then attached again): what the attaches' unsettled maps are
        # compared with (`UnsettledReconciled`)
        self.reattached = False
        self.txn_id: bytes | None = None  # the receiver's credit acquires in this txn
        # both ends detached it for good (closed, refused, its connection closed, or a
        # later attachment of its name took its place): the session holds it no more and
        # no later frame can concern it (`Session._retire_link`)
        self.retired = False

    # --- views ------------------------------------------------------------------------

    @property
    def requested(self) -> Any:
        return self.attach.get(self.initiator)

    @property
    def granted(self) -> Any:
        responder = self.receiver if self.initiator == self.sender else self.sender
        return self.attach.get(responder)

    def _field(self, name: str) -> Any:
        a = self.granted or self.requested
        return getattr(a, name) if a is not None else None

    @property
    def source(self) -> Any:
        return self._field("source")

    @property
    def target(self) -> Any:
        return self._field("target")

    def refresh(self) -> None:
        """Recompute what the hot path reads from the attaches (after each attach)."""
        a = self.attach.get(self.sender)
        self.snd_mode = int(a.get("snd_settle_mode")) if a is not None else 2
        a = self.attach.get(self.receiver)
        self.rcv_mode = int(a.get("rcv_settle_mode")) if a is not None else 0
        m = a.max_message_size if a is not None else None
        self.mms = int(m) if m else 0

    @property
    def snd_settle_mode(self) -> int:
        """The sender's settle mode (its attach is authoritative, Part 2 §2.7.3)."""
        return self.snd_mode

    @property
    def rcv_settle_mode(self) -> int:
        """The receiver's settle mode (its attach is authoritative)."""
        return self.rcv_mode

    @property
    def max_message_size(self) -> int:
        """The receiver's max-message-size (0: no limit)."""
        return self.mms

    @property
    def state(self) -> str:
        if self.refused:
            return "refused"
        s = self.side_state
        n = sum(1 for v in s.values() if v == "attached")
        if n == 2:
            return "attached"
        if n == 1:
            return "detaching" if self.detach or len(self.attach) == 2 else "attaching"
        return "detached" if self.detach or self.attach else "attaching"

    @property
    def closed(self) -> bool:
        return any(bool(d.closed) for d in self.detach.values())

    @property
    def detached_with(self) -> str | None:
        """How the link detached if neither side detached it: "end" (its session ended,
        Part 2 §2.5.5: ending a session detaches its links) or "close" (the connection
        closed without either); None if detached by a detach frame, or still attached."""
        if self.state != "detached" or self.detach or not self.attach:
            return None
        return "end" if self.session.end else "close"

    def role_of(self, side: str) -> str:
        return "sender" if side == self.sender else "receiver"

    def __repr__(self) -> str:
        return (
            f"<Link {self.name!r} {self.sender}->{self.receiver} {self.state}"
            f" credit={self.link_credit} dc={self.delivery_count}>"
        )

    # --- attachments ------------------------------------------------------------------

    def resume(self, initiator: str) -> None:
        """A new attachment of this link (detached with closed=false) by `initiator`: the
        unsettled maps carry over; credit belongs to an attachment, and a half-sent
        delivery must be resumed."""
        self.initiator = initiator
        self.attach.clear()
        self.detach.clear()
        self.handle.clear()
        self.refusing = self.refused = False
        self.current = None
        self.link_credit = 0
        self.rcv_limit = self.high_water = None
        self.drain = False
        self.available = None
        self.reattached = True
        self.carried = dict(self.live)

    def successor(self, initiator: str) -> Link:
        """The next attachment of this link's name, attached by `initiator` before the
        other side has answered this one: a Link of its own, as this one still takes those
        answers. It resumes this one (`resume`, the deliveries in doubt moving to it) if
        `initiator` detached this one with closed=false; else it is a fresh link."""
        new = Link(self.name, self.session, initiator, self.sender, self.receiver)
        gone = self.detach.get(initiator)
        if gone is None or gone.closed:
            return new
        new.delivery_count = self.delivery_count
        new.coordinator = self.coordinator
        new.unsettled, self.unsettled = self.unsettled, {self.sender: {}, self.receiver: {}}
        new.live, self.live = self.live, {}
        for d in new.live.values():
            d.link = new
        new.resume(initiator)
        return new

    # --- flow -------------------------------------------------------------------------

    def initial_delivery_count(self) -> int:
        a = self.attach.get(self.sender)
        idc = a.initial_delivery_count if a is not None else None
        return int(idc) if idc is not None else 0

    def apply_flow(self, side: str, flow: Any) -> None:
        if side == self.receiver:
            dc = flow.delivery_count
            dc_rcv = int(dc) if dc is not None else self.initial_delivery_count()
            credit = int(flow.link_credit) if flow.link_credit is not None else 0
            self.rcv_delivery_count = dc_rcv
            self.rcv_link_credit = credit
            # the limit is compared in serial order, which reaches 2**31 - 1 ahead: a
            # larger grant (a uint, up to 2**32 - 1) covers as many as anyone can send
            limit = serial.add(dc_rcv, min(credit, serial.HALF - 1))
            self.rcv_limit = limit
            if self.high_water is None or serial.lt(self.high_water, limit):
                self.high_water = limit
            self.link_credit = self._credit_left(dc_rcv, credit)
            self.drain = bool(flow.drain)
            # transactional acquisition (Part 4 §4.4.3): credit granted inside a txn
            props = flow.properties
            txn = props.get(TXN_ID) if props else None
            self.txn_id = bytes(txn) if txn is not None else None
        else:
            if flow.delivery_count is not None:
                self.delivery_count = int(flow.delivery_count)
            said_dc, said_credit = self.rcv_delivery_count, self.rcv_link_credit
            if self.rcv_limit is not None and said_dc is not None and said_credit is not None:
                # the sender's credit is always limit - delivery-count; computing it from
                # the receiver's latest limit also covers a receiver flow still in flight
                self.link_credit = self._credit_left(said_dc, said_credit)
            elif flow.link_credit is not None:
                self.link_credit = int(flow.link_credit)
            if flow.available is not None:
                self.available = int(flow.available)
            if self.drain and self.link_credit == 0:
                self.drain = False  # the sender answered the drain

    def _credit_left(self, dc_rcv: int, credit: int) -> int:
        """The sender's credit by the receiver's latest flow (Part 2 §2.6.7):
        delivery-count_rcv + link-credit_rcv - delivery-count_snd, as the credit less
        what the sender sent beyond the receiver's count (exact for any uint credit)."""
        return max(0, credit - serial.diff(dc_rcv, self.delivery_count))

    def consume_credit(self) -> bool:
        """A new delivery: False if no credit the receiver ever granted covers it.

        A receiver may lower its credit while transfers are in flight, so a transfer is
        judged against the highest delivery-limit the receiver has announced.
        """
        hw = self.high_water
        ok = hw is not None and serial.lt(self.delivery_count, hw)
        self.delivery_count = serial.add(self.delivery_count, 1)
        if self.link_credit > 0:
            self.link_credit -= 1
        return ok

    # --- outcomes bookkeeping ---------------------------------------------------------

    def count_final(self, d: Delivery) -> None:
        self.live.pop(d.tag, None)
        if self.carried:
            self.carried.pop(d.tag, None)
        self.unsettled[self.sender].pop(d.tag, None)
        self.unsettled[self.receiver].pop(d.tag, None)
        if self.current is d:
            self.current = None
        if d.aborted:
            self.aborted_count += 1
        elif d.settled:
            self.settled_count += 1
        else:  # abandoned, nothing having settled it: in doubt, not settled
            self.abandoned_count += 1
        o = d.outcome
        self.outcomes[o] = self.outcomes.get(o, 0) + 1


# --- terminus comparison -------------------------------------------------------------

_TERMINUS_FIELDS = (
    "durable", "expiry_policy", "timeout", "dynamic", "dynamic_node_properties",
    "distribution_mode", "default_outcome", "capabilities",
)


def _as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def compare_termini(requested: Any, granted: Any) -> list[Difference]:
    """Every field where the responder's attach differs from what the initiator asked."""
    out: list[Difference] = []
    role_req = bool(requested.role)
    # The remote node's terminus is the one the responder decides on.
    kind = "source" if role_req == RECEIVER else "target"
    req_t = getattr(requested, kind)
    got_t = getattr(granted, kind)
    # Each side's settle mode is the actual one for its own role (Part 2 §2.7.3): the
    # responder decides snd-settle-mode if it sends, rcv-settle-mode if it receives.
    mode = "snd_settle_mode" if bool(granted.role) == SENDER else "rcv_settle_mode"
    a, b = getattr(requested, mode), granted.get(mode)
    if a is not None and int(a) != int(b):  # only when it was asked for
        name = mode.replace("_", "-")
        out.append(Difference(name, a, b, f"{name} changed"))
    if req_t is None or got_t is None:
        return out
    if type(req_t) is not type(got_t):
        out.append(Difference(kind, type(req_t).__name__, type(got_t).__name__,
                              f"{kind} type changed"))
        return out
    if isinstance(req_t, c.Coordinator):
        a, b = _as_list(req_t.capabilities), _as_list(got_t.capabilities)
        if a != b:
            out.append(Difference("target.capabilities", a, b, "capabilities changed"))
        return out
    ra, ga = req_t.address, got_t.address
    if ra != ga:
        if ra is None and req_t.get("dynamic"):
            out.append(Difference(f"{kind}.address", ra, ga, "dynamic address assigned"))
        else:
            out.append(Difference(f"{kind}.address", ra, ga, "address changed"))
    for f in _TERMINUS_FIELDS:
        if f == "capabilities":
            a, b = _as_list(req_t.capabilities), _as_list(got_t.capabilities)
            missing = [x for x in a if x not in b]
            if missing:
                out.append(Difference(f"{kind}.capabilities", a, b, "capabilities dropped: "
                                      + ", ".join(map(str, missing))))
            continue
        # only what was asked for: a field left out takes whatever the node has
        if getattr(req_t, f, None) is None:
            continue
        a, b = req_t.get(f), got_t.get(f)
        if a != b:
            name = f.replace("_", "-")
            out.append(Difference(f"{kind}.{name}", a, b, f"{name} changed"))
    if kind == "source":
        rf, gf = req_t.filter or {}, got_t.filter or {}
        for k, v in rf.items():
            if k not in gf:
                out.append(Difference(f"source.filter.{k}", v, None, f"filter dropped: {k}"))
            elif gf[k] != v:
                out.append(Difference(f"source.filter.{k}", v, gf[k], f"filter changed: {k}"))
        for k, v in gf.items():
            if k not in rf:
                out.append(Difference(f"source.filter.{k}", None, v, f"filter added: {k}"))
    ro = _as_list(getattr(req_t, "outcomes", None))
    go = _as_list(getattr(got_t, "outcomes", None))
    if ro and set(map(str, ro)) != set(map(str, go)):
        missing = [o for o in ro if o not in go]
        note = f"outcomes narrowed: {', '.join(map(str, missing))}" if missing else "outcomes changed"
        out.append(Difference(f"{kind}.outcomes", ro, go, note))
    return out
