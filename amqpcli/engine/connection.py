"""The connection state machine: headers, SASL, open/close, channels, frame dispatch.

`Connection` is the model every role shares. It is fed what one side put on the wire
(`on_header`, `on_frame`, `on_frame_error`, `on_transport_closed`) with a timestamp,
updates connection →
sessions → links → deliveries, and returns the events that caused. It never produces
frames; endpoints (`endpoint.py`) decide what to answer.

Per side the connection moves through (`CONNECTION_TRANSITIONS`):

    start ──sasl-header──► sasl ──sasl-outcome──► sasl-done ──amqp-header──► header
    start ──amqp-header──► header ──open──► opened ──close──► closed

A SASL outcome, sent by the server, ends the SASL phase for both sides. A performative
that the table does not allow in the sender's state is an `out-of-order` violation; any
frame after that side's close is `frame-after-close` and is otherwise ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from amqpcli.codec import composites as c

from .delivery import TimelineEntry
from .events import (
    ConnectionClosed,
    ConnectionOpened,
    Event,
    Heartbeat,
    ProtocolHeaderSeen,
    SaslMechanismChosen,
    SaslMechanismsOffered,
    SaslOutcome,
    SessionBegun,
    SessionEnded,
    TransportClosed,
    Violation,
)
from .session import Session
from .shelf import shelf_key

if TYPE_CHECKING:
    from .delivery import Delivery
    from .link import Link
    from .shelf import LinkShelf

CONNECTION_TRANSITIONS: dict[tuple[str, str], str] = {
    ("start", "sasl-header"): "sasl",
    ("start", "amqp-header"): "header",
    ("start", "tls-header"): "tls",
    ("sasl", "sasl"): "sasl",
    ("sasl", "sasl-outcome"): "sasl-done",
    ("sasl", "amqp-header"): "header",  # a client pipelining its AMQP header
    ("sasl-done", "amqp-header"): "header",
    ("header", "open"): "opened",
    ("opened", "frame"): "opened",
    ("opened", "close"): "closed",
}

MIN_MAX_FRAME_SIZE = 512  # Part 2 §2.7.1: what every peer must accept before open
_TRANSFER = c.Transfer
_DISPOSITION = c.Disposition
_SASL_TYPES = (c.SaslMechanisms, c.SaslInit, c.SaslChallenge, c.SaslResponse, c.SaslOutcome)


class Connection:
    """Connection → sessions → links → deliveries, as seen from both sides.

    `sides` names the two sides (the first is the one that connected). `local` is the
    side this process plays in the endpoint roles (None for an observer). With
    `keep_payload=False` transfer payloads are counted but not kept. With
    `midstream=True` (a capture that starts after the connection was set up) frames for
    channels, handles and deliveries that were never seen being set up create them
    implicitly instead of being violations.
    """

    def __init__(self, sides: tuple[str, str] = ("client", "server"), *,
                 local: str | None = None, keep_payload: bool = True,
                 midstream: bool = False) -> None:
        a, b = sides
        self.sides = sides
        self.other = {a: b, b: a}
        self.local = local
        self.keep_payload = keep_payload
        # A capture that starts mid-connection: what was set up before it began is
        # created on first sight instead of being reported (see `_implicit_session`).
        self.midstream = midstream
        self.side_state: dict[str, str] = {a: "start", b: "start"}
        self.open: dict[str, Any] = {}
        self.close: dict[str, Any] = {}
        # how each side's byte stream ended: "fin", "rst", "reset-by-peer" (a capture's:
        # the other side's reset ended it), "end" (the capture stopped: not the
        # connection's end), "" (not said)
        self.stream_ends: dict[str, str] = {}
        self.sasl_mechanisms: tuple[str, ...] = ()
        self.sasl_mechanism: str | None = None
        self.sasl_code: int | None = None
        self._sasl_owed: str | None = None  # the side a sasl-challenge awaits a response from
        self.channels: dict[str, dict[int, Session]] = {a: {}, b: {}}
        # sessions a side began and ended before the other side's begin answered them, by
        # that side's channel: the answer may have been in flight, and maps the session
        # when it comes (then the other side's end ends it)
        self.unanswered: dict[str, dict[int, Session]] = {a: {}, b: {}}
        self.sessions: list[Session] = []
        self.suspended: dict[tuple[str, str], Link] = {}
        # link recovery across connections (`LinkShelf`): the shelf this connection's
        # ends of links are left on and taken from, and its name for the deliveries it
        # leaves there (the dissector's "c1")
        self.shelf: LinkShelf | None = None
        self.label: str | None = None
        self.transactions: dict[bytes, str] = {}  # txn-id -> active / committed / …
        self.frames: dict[str, int] = {a: 0, b: 0}
        self.frame_no = 0
        self.time = 0.0
        self.side = a
        self.last_frame_time: dict[str, float | None] = {a: None, b: None}
        self.violations = 0
        self._events: list[Event] = []
        self._adopt: Delivery | None = None
        # Endpoint roles (`Endpoint(lean_events=True)`): no DeliveryStarted for the
        # one-frame deliveries the local side sends (the caller holds the Delivery) or
        # receives (MessageReceived reports them; no DeliverySettled either when they
        # arrive settled), and no DeliveryUpdated for a disposition that makes a delivery
        # final (its DeliverySettled follows at once).
        self.lean = False
        # Observers whose caller never reads them (`Observer(updates=False)`): no
        # DeliveryUpdated at all; the delivery's timeline has every step all the same.
        self.updates = True
        # ... and no DeliverySettled either (`Observer(settled=False)`): for callers that
        # count deliveries and read the model, not the settled ones one by one
        self.settled_events = True
        # the largest frame each side may send (known once the other side has opened)
        self._frame_limit: dict[str, int] = {a: 1 << 32, b: 1 << 32}
        # the longest silence each side is allowed (seconds; None: no limit)
        self._silence_limit: dict[str, float | None] = {a: None, b: None}
        self._silence_judged: dict[str, float] = {}  # side -> start of a silence flagged

    def __repr__(self) -> str:
        return (f"<Connection {self.state} sessions={len(self.sessions)}"
                f" frames={self.frame_no} violations={self.violations}>")

    # --- small helpers used by the other state machines -------------------------------

    def emit(self, event: Event) -> None:
        self._events.append(event)

    def violation(self, kind: str, detail: str, *, session: Session | None = None,
                  link: Link | None = None, side: str | None = None) -> None:
        """`side`: the side that broke the rule, when not the one whose input shows it."""
        self.violations += 1
        self._events.append(Violation(kind, side or self.side, detail, self.frame_no,
                                      self.time, session, link))

    def adopt(self, link: Link, tag: bytes) -> Delivery | None:
        """Endpoint role: the Delivery object created by `send()` for this transfer."""
        d = self._adopt
        if d is not None and d.link is link and d.tag == tag:
            self._adopt = None
            return d
        return None

    @property
    def closing(self) -> bool:
        return bool(self.close)

    @property
    def lost(self) -> bool:
        """The connection ended without its close exchange: a side's byte stream ended
        (FIN or reset; not the end of a capture) after an open, before both sides had
        sent their close (a peer killed, a network cut). A transport that ends before any
        open (a login refused) is no lost connection."""
        return bool(self.open) and len(self.close) < 2 and any(
            how != "end" for how in self.stream_ends.values())

    @property
    def state(self) -> str:
        s = set(self.side_state.values())
        if s == {"opened"}:
            return "opened"
        if "closed" in s:
            return "closed" if s == {"closed"} else "closing"
        return "opening"

    def max_frame_size(self, side: str) -> int:
        """The largest frame `side` accepts (what it said in its open)."""
        o = self.open.get(side)
        if o is None:
            return MIN_MAX_FRAME_SIZE
        return int(o.get("max_frame_size"))

    def channel_max(self, side: str) -> int:
        o = self.open.get(side)
        return int(o.get("channel_max")) if o is not None else 0

    def idle_timeout(self, side: str) -> float | None:
        """The side's idle-timeout in seconds (None: none)."""
        o = self.open.get(side)
        v = o.idle_time_out if o is not None else None
        return int(v) / 1000.0 if v else None

    def _take(self) -> list[Event]:
        ev = self._events
        self._events = []
        return ev

    def _move(self, side: str, what: str) -> bool:
        new = CONNECTION_TRANSITIONS.get((self.side_state[side], what))
        if new is None:
            return False
        self.side_state[side] = new
        return True

    # --- input ------------------------------------------------------------------------

    def on_header(self, side: str, header: Any, time: float) -> list[Event]:
        """A protocol header from `side` (a codec `ProtocolHeader`: `kind`, `version`)."""
        self.time = time
        self.side = side
        kind = header.kind if header.kind in ("amqp", "sasl", "tls") else "other"
        version = tuple(header.version[1:])
        self.emit(ProtocolHeaderSeen(side, kind, version, time))  # type: ignore[arg-type]
        if not self._move(side, f"{kind}-header"):
            self.violation("out-of-order", f"{header.name} header in state {self.side_state[side]}")
        return self._take()

    def on_transport_closed(self, side: str, time: float, how: str = "") -> list[Event]:
        """The byte stream from `side` ended (`how`: "fin", "rst", "end" of a capture, ""
        not said)."""
        self.time = time
        self.side = side
        if (how in ("fin", "rst") and not self.close and side not in self.stream_ends
                and self.local is None):
            # dropped without a close: the other side's silence up to it may be why
            other = self.other[side]
            if other not in self.stream_ends:
                self._judge_silence(other, self.last_frame_time[other], time)
        self.stream_ends.setdefault(side, how)
        clean = len(self.close) == 2
        self.emit(TransportClosed(self, side, clean, time))
        if not clean:
            self._abandon_all()
        return self._take()

    def shelve(self, link: Link) -> None:
        """`link` goes away (its connection ends, or it is closed or refused): one
        neither closed nor refused, with deliveries unsettled, goes onto the shelf
        (before they are abandoned here) for a later connection between the same
        containers to attach again (`LinkShelf`); this connection's claim on it ends."""
        shelf = self.shelf
        if shelf is None:
            return
        key = shelf_key(self, link.name, link.sender)
        if key is None:
            return
        if not (link.closed or link.refused or link.coordinator) and (
                link.live or any(link.unsettled.values())):
            shelf.put(key, link, self.label, self)
        shelf.release(self, (key,))

    def claim(self, link: Link) -> None:
        """`link` is attached on this connection: its latest attachment (`LinkShelf`)."""
        key = shelf_key(self, link.name, link.sender)
        if key is not None and self.shelf is not None:
            self.shelf.claim(key, self)

    def _abandon_all(self) -> None:
        for s in self.sessions:
            for link in s.all_links():  # (an attachment still owed its answers too)
                if not link.retired:
                    self.shelve(link)
                for d in list(link.live.values()):
                    s._abandon(d, "transport ended")
        for link in list(self.suspended.values()):
            self.shelve(link)
            for d in list(link.live.values()):
                link.session._abandon(d, "transport ended")

    def _judge_silence(self, side: str, last: float | None, time: float) -> None:
        """`side` sent nothing from `last` to `time`: past the threshold the other side's
        idle-timeout stands for, an idle-timeout violation of `side` (once per silence:
        judged at its next frame, or at the other side's close or drop, whichever is
        first)."""
        limit = self._silence_limit[side]
        if (not limit or last is None or time - last <= limit or side == self.local
                or self._silence_judged.get(side) == last):
            return
        self._silence_judged[side] = last
        self.violation("idle-timeout", f"{side} was silent for {time - last:.3f} s;"
                       f" {self.other[side]}'s idle-timeout of {limit / 2:g} s stands"
                       f" for a {limit:g} s threshold", side=side)

    def on_gap(self, side: str, size: int, time: float) -> None:
        """`size` bytes from `side` are missing from a capture (a TCP gap); the caller's
        frame reader looks for the next frame. From now on what was set up in the frames
        lost is taken as it comes (`midstream`), and every delivery `side` was in the
        middle of sending (a transfer with more=true seen, not its last) lost some of its
        transfers: a `gap` step in its timeline says so (`Delivery.incomplete`). The next
        transfer on each link `side` sends on is looked at for the boundary between
        deliveries the gap may have hidden (`Session.on_transfer`)."""
        self.midstream = True
        detail = f"{size} bytes from the {side} missing from the capture"
        gap = TimelineEntry(time, side, "gap", self.frame_no, detail=detail)
        for s in self.sessions:
            for link in s.all_links():
                if link.sender == side:
                    # the next transfer on it may be another delivery's, or not a first
                    link.gap_since = gap
                    d = link.current
                    if d is not None:
                        d.timeline.append(gap)

    def on_frame_error(self, side: str, detail: str, time: float,
                       kind: str = "framing-error") -> list[Event]:
        """Bytes from `side` that are not a valid frame (counted as one frame); `kind`:
        the violation ("frame-too-large" for a size past the reader's limit)."""
        self.time = time
        self.side = side
        self.frame_no += 1
        self.frames[side] += 1
        self.violation(kind, detail)
        return self._take()

    def on_frame(self, side: str, frame: Any, time: float) -> list[Event]:
        """One frame from `side` (a codec `Frame`: type, channel, body, payload, size)."""
        self.time = time
        self.side = side
        self.frame_no += 1
        self.frames[side] += 1
        times = self.last_frame_time
        last = times[side]
        times[side] = time
        if not self.close:
            limit = self._silence_limit[side]
            if limit and last is not None and time - last > limit:
                self._judge_silence(side, last, time)
            if frame.body.__class__ is c.Close and self.local is None:
                # the other side's silence up to this close: often why it closes (an
                # endpoint has its own timer for the peer's silence)
                other = self.other[side]
                self._judge_silence(other, times[other], time)
        state = self.side_state[side]
        if state != "opened":
            if state == "start" and self.midstream:
                # joined mid-connection: its header (and what followed) came before the
                # capture
                state = self.side_state[side] = (
                    "sasl" if frame.type == 1 else
                    "header" if isinstance(frame.body, c.Open) else "opened")
            if state == "closed":
                self.violation("frame-after-close", f"{side} sent a frame after its close")
                return self._take()
        limit = self._frame_limit[side]
        if frame.size > limit:
            self.violation("frame-too-large",
                           f"{frame.size}-byte frame > max-frame-size {limit}")
        body = frame.body
        cls = body.__class__
        try:
            # transfers and dispositions, most of the frames, without the table look-up
            if cls is _TRANSFER:
                self._transfer(side, frame, body)
            elif cls is _DISPOSITION:
                self._disposition(side, frame, body)
            elif body is None:
                if frame.type == 1:
                    # Part 5 §5.3.1: "Receipt of an empty frame is an irrecoverable error."
                    self.violation("framing-error", "an empty SASL frame (Part 5 §5.3.1: an "
                                   "irrecoverable error)")
                else:
                    self._events.append(Heartbeat(side, time))
            else:
                handler = _HANDLERS.get(cls)
                if handler is None:
                    self.violation("framing-error", f"{cls.__name__} is not a performative")
                else:
                    handler(self, side, frame, body)
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            # The codec does not type-check fields: a wrong type is the sender's fault.
            # (Not the value for a SASL frame: a damaged one may hold a password.)
            why = "" if cls in _SASL_TYPES else f" ({exc})"
            self.violation("invalid-field", f"{body.NAME}: a field has the wrong type{why}")
        events = self._events  # (_take)
        self._events = []
        return events

    def on_discarded_frame(self, side: str, time: float) -> None:
        """Endpoint roles: a frame from `side` that the local side discards unread (one on
        a session it ended with an error: Part 2 §2.5.5, state DISCARDING). It is counted, so
        frame numbers stay those of the wire, and changes nothing else."""
        self.time = time
        self.side = side
        self.frame_no += 1
        self.frames[side] += 1
        self.last_frame_time[side] = time

    def on_local_transfer(self, side: str, s: Session, link: Link, d: Delivery, did: int,
                          settled: bool, message_format: int, n: int, size: int,
                          time: float) -> list[Event]:
        """Endpoint roles: the one-frame transfer that starts and completes `d`, just sent
        by `side` (the local side) on `link`. The same model changes as `on_frame` with
        that transfer; the caller has checked what only a peer can get wrong (the
        connection and session are open on our side, the link attached, the frame within
        the peer's max-frame-size)."""
        self.time = time
        self.side = side
        self.frame_no += 1
        self.frames[side] += 1
        self.last_frame_time[side] = time
        s.local_transfer(side, link, d, did, settled, message_format, n)
        return self._take()

    # --- SASL -------------------------------------------------------------------------

    def _sasl(self, side: str, frame: Any, body: Any) -> None:
        what = "sasl-outcome" if isinstance(body, c.SaslOutcome) else "sasl"
        if not self._move(side, what):
            self.violation("out-of-order", f"{body.NAME} in state {self.side_state[side]}")
        elif isinstance(body, c.SaslChallenge):
            self._sasl_owed = self.other[side]
        elif isinstance(body, c.SaslResponse):
            # Part 5 §5.3.3.4: a response answers a challenge
            if self._sasl_owed != side and not self.midstream:
                self.violation("out-of-order", "sasl-response without a sasl-challenge")
            self._sasl_owed = None
        t = self.time
        if isinstance(body, c.SaslMechanisms):
            mechs = body.sasl_server_mechanisms
            mechs = [mechs] if isinstance(mechs, str) else list(mechs or [])
            self.sasl_mechanisms = tuple(str(m) for m in mechs)
            self.emit(SaslMechanismsOffered(side, self.sasl_mechanisms, t))
        elif isinstance(body, c.SaslInit):
            mech = body.mechanism
            if not isinstance(mech, str):  # damaged: perhaps a response, password and all
                self.violation("invalid-field", "sasl-init: the mechanism is not a symbol")
                return
            self.sasl_mechanism = str(mech)
            self.emit(SaslMechanismChosen(side, self.sasl_mechanism, body.hostname, t))
        elif isinstance(body, c.SaslOutcome):
            other = self.other[side]
            if self.side_state[other] == "sasl":
                self.side_state[other] = "sasl-done"
            self.sasl_code = int(body.code) if body.code is not None else 0
            self.emit(SaslOutcome(side, self.sasl_code, self.sasl_mechanism, t))

    # --- open / close -----------------------------------------------------------------

    def _open(self, side: str, frame: Any, body: Any) -> None:
        if not self._move(side, "open"):
            self.violation("out-of-order", f"open in state {self.side_state[side]}")
            self.side_state[side] = "opened"
        self.open[side] = body
        # frames *to* this side are checked against what it accepts, and the silences of
        # the other side against the threshold its idle-timeout stands for: twice it (Part 2
        # §2.4.5: the value sent "SHOULD be half the peer's actual timeout threshold"). A
        # peer that heartbeats at the advertised interval (proton does) is a little late
        # at every beat; only a silence past the threshold broke anything.
        self._frame_limit[self.other[side]] = self.max_frame_size(side)
        advertised = self.idle_timeout(side)
        self._silence_limit[self.other[side]] = 2 * advertised if advertised else None
        self.emit(ConnectionOpened(self, side, body, self.time))

    def _close(self, side: str, frame: Any, body: Any) -> None:
        if not self._move(side, "close"):
            self.violation("out-of-order", f"close in state {self.side_state[side]}")
            self.side_state[side] = "closed"
        self.close[side] = body
        for ch, s in list(self.channels[side].items()):
            s.on_end(side, body.error)
        self.channels[side].clear()
        self.unanswered[self.other[side]].clear()  # no begin of `side` can answer them now
        self.emit(ConnectionClosed(self, side, body.error, self.time))
        if len(self.close) == 2:
            for s in self.sessions:
                for link in list(s.links.values()):
                    s._retire_link(link)
            for link in list(self.suspended.values()):
                link.retired = True
                self.shelve(link)
                for d in list(link.live.values()):
                    link.session._abandon(d, "connection closed")
            self.suspended.clear()
            self.sessions.clear()

    # --- sessions ---------------------------------------------------------------------

    def _check_open(self, side: str, body: Any) -> bool:
        if self.side_state[side] != "opened":
            self.violation("out-of-order", f"{body.NAME} before open")
            return False
        return True

    def _session(self, side: str, frame: Any, body: Any) -> Session | None:
        if not self._check_open(side, body):
            return None
        s = self.channels[side].get(frame.channel)
        if s is None:
            if self.midstream:
                return self._implicit_session(side, frame.channel)
            self.violation("unknown-channel", f"{body.NAME} on unmapped channel {frame.channel}")
        return s

    def _implicit_session(self, side: str, channel: int) -> Session:
        """Midstream: a session begun before the capture. Both sides are assumed to use
        the same channel number for it until a begin says otherwise."""
        other = self.other[side]
        s = self.channels[other].get(channel)
        if s is None or side in s.channel:
            s = Session(self)
            self.sessions.append(s)
        s.channel[side] = channel
        s.side_state[side] = "begun"
        self.channels[side][channel] = s
        return s

    def _begin(self, side: str, frame: Any, body: Any) -> None:
        if not self._check_open(side, body):
            return
        ch = frame.channel
        other = self.other[side]
        if ch in self.channels[side]:
            self.violation("channel-in-use", f"begin on channel {ch}, already in use")
            return
        if other in self.open and ch > self.channel_max(other):
            self.violation("channel-max-exceeded",
                           f"channel {ch} > channel-max {self.channel_max(other)}")
        # the channel begins a new session: an answer naming it is for this one
        self.unanswered[side].pop(ch, None)
        rc = body.remote_channel
        if rc is None:
            s = Session(self)
            self.sessions.append(s)
        else:
            s2 = self.channels[other].get(int(rc))
            if s2 is None:
                # the answer to a session `other` ended before this begin reached it
                # (Part 2 §2.5: the frames crossed); it is mapped, for `side`'s end to come
                s2 = self.unanswered[other].pop(int(rc), None)
            if s2 is None or side in s2.channel:
                if not self.midstream:
                    self.violation("unknown-channel", f"begin answers unknown channel {rc}")
                    return
                s2 = Session(self)  # the begin it answers was before the capture
                self.sessions.append(s2)
            s = s2
        s.channel[side] = ch
        self.channels[side][ch] = s
        s.on_begin(side, body)
        self.emit(SessionBegun(s, side, self.time))

    def _end(self, side: str, frame: Any, body: Any) -> None:
        s = self._session(side, frame, body)
        if s is None:
            return
        del self.channels[side][frame.channel]
        if self.other[side] not in s.channel:
            self.unanswered[side][frame.channel] = s  # its begin may be on its way
        s.end[side] = body
        s.on_end(side, body.error)
        self.emit(SessionEnded(s, side, body.error, self.time))
        if s.state == "ended" and s in self.sessions:
            self.sessions.remove(s)

    def _attach(self, side: str, frame: Any, body: Any) -> None:
        s = self._session(side, frame, body)
        if s is not None:
            s.on_attach(side, body)

    def _flow(self, side: str, frame: Any, body: Any) -> None:
        s = self._session(side, frame, body)
        if s is not None:
            s.on_flow(side, body)

    def _transfer(self, side: str, frame: Any, body: Any) -> None:
        s = self.channels[side].get(frame.channel)
        if s is None:  # the hot path checks the state only when something is wrong
            s = self._session(side, frame, body)
            if s is None:
                return
        s.on_transfer(side, body, frame.payload)

    def _disposition(self, side: str, frame: Any, body: Any) -> None:
        s = self.channels[side].get(frame.channel)
        if s is None:
            s = self._session(side, frame, body)
            if s is None:
                return
        s.on_disposition(side, body)

    def _detach(self, side: str, frame: Any, body: Any) -> None:
        s = self._session(side, frame, body)
        if s is not None:
            s.on_detach(side, body)


_HANDLERS: dict[type, Any] = {
    c.Open: Connection._open,
    c.Close: Connection._close,
    c.Begin: Connection._begin,
    c.End: Connection._end,
    c.Attach: Connection._attach,
    c.Flow: Connection._flow,
    c.Transfer: Connection._transfer,
    c.Disposition: Connection._disposition,
    c.Detach: Connection._detach,
}
for _t in _SASL_TYPES:
    _HANDLERS[_t] = Connection._sasl
