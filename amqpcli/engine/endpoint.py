"""The endpoint roles: we are one side of the connection (client or peer).

An `Endpoint` owns a `Connection` model with `local` set to its side ("client" for the
client role, "server" for the peer). Everything it sends goes through the model exactly
as an observer would see it on the wire, so the model is the one truth for both
directions. It produces bytes (`data_to_send()`), consumes bytes (`receive_data()`) and
never touches a socket or a clock: time comes in with the data (`receive_data(data,
time)`, `handle_timer(now)`, `set_time(now)`), timers are a deadline to ask for
(`next_timer()`).

What it answers on its own (the spec requires it, or the role implies it): protocol
headers, SASL (both sides), an open / begin / detach / end / close from the peer,
echo flows, drain (once the credit is used up, by transfers or, with nothing left queued
and nothing more offered by the application, by advancing delivery-count over what is
left: one flow with delivery-count, link-credit 0 and drain, Part 2 §2.6.7), settling in
receiver-settle-mode second once the sender has settled, the incoming session window
when it runs low, heartbeats, and violations by the peer (closing the connection,
ending the session or detaching the link with the condition the spec names).
Once our end of a session has gone out nothing more is sent on it (what a caller asks
for there is dropped), and if it carried an error, what the peer sends on the session
until its own end is discarded unread (Part 2 §2.5.5, DISCARDING).
Links the peer attaches are accepted as asked (`link_policy="accept"`, the peer role's
default) or refused (`"refuse"`, the client role's default); with `"manual"` the caller
answers each `LinkAttached` with `accept_link` / `refuse_link`. A peer that detaches a link
before that answer (Part 2 §2.6.5: any time after its own attach) gets attach then detach:
`accept_link` sends our detach right after the attach; afterwards a `flow()` the caller
asks for on the link is dropped, as on every link whose detach we have sent.

Sending: `send()` queues a delivery and returns its `Delivery` at once; frames go out
as link credit and the peer's session window allow, split to fit the peer's
max-frame-size. `start_delivery()` / `send_more()` / `abort()` stream one delivery.
A flow the endpoint sends on a sender link (a drain's answer, an echo, `flow()` without
`available`) carries `available` (Part 2 §2.7.4: "the number of messages awaiting credit
at the link sender endpoint") when the application tells it: `available_for(link)` is
asked each time (None, the default, leaves the field out).

Drain on a sender link (Part 2 §2.6.7: the sender uses up the credit "after sending all
available messages"): complete once transfers used the credit up, or, with credit left,
once nothing is queued and the application has nothing more; one flow then answers it.
An application that feeds the link from the peer's flow (a broker's queue, fed before
the engine handles the flow) leaves `offering_for` unset: the answer goes as the flow is
handled. One that sends as credit comes (a client's send loop) sets `offering_for`:
`offering_for(link)` True while it has messages for the link, and the drain waits for
them; its transfers that use the credit up answer the drain at once, and `drained(link)`
answers it once it has sent what it had.

Idle timeout (Part 2 §2.4.5): `idle_timeout` is our real threshold, the silence after
which we close the connection (amqp:resource-limit-exceeded). "To avoid spurious
timeouts, the value in idle-time-out SHOULD be half the peer's actual timeout
threshold", so our open advertises half of it (at least 1 ms, and at least 1 s when the
threshold is 1 s or more: `advertised_idle_timeout`), and a peer that was silent for
longer than it was told but less than the threshold is not closed for it (the model
reports a `Violation` only past twice the advertised value).

Frame sizes (Part 2 §2.4.1, §2.7.1; Part 5 §5.3.1 for SASL frames): until the open frames
are exchanged (SASL included) a frame from the peer may be at most MIN-MAX-FRAME-SIZE (512
bytes); from our open on, or from the peer's open on (frames it sends after its open), at
most our max-frame-size. A frame header announcing more is a framing error, found from
its 8 header bytes: nothing more of the frame is read or kept. Every framing error (size,
data offset, a body that does not decode) closes the connection with
amqp:connection:framing-error once our open has gone out; before it no close can be
sent (§2.4.1: the open is the first frame), so the endpoint fails (`failed`, `failure`
says why) and its transport closes. After an error that leaves the stream unreadable
(a size past the limit or under 8) the endpoint fails in either case: the peer's close
could not be read. A stream that ends (`receive_eof`, a FIN or a reset) inside a frame
whose start is sound is no framing error: the peer went away while sending it
(`cut_short`, the codec's judgement, as pcap-dump's).

Watching the bytes: `set_tap(tap)` (or `Endpoint(..., tap=tap)`) hands a `ByteTap` every
byte both ways, exactly as given to `receive_data()` and returned by `data_to_send()`.
Without a tap those two methods are the plain ones: a tap costs nothing unless set.
"""

from __future__ import annotations

import itertools
import struct
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode_as
from amqpcli.codec.frames import (
    FRAME_TYPE_AMQP,
    FRAME_TYPE_SASL,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
    encode_frame,
    encode_protocol_header,
)
from amqpcli.codec.message import Message

from . import serial
from .connection import MIN_MAX_FRAME_SIZE, Connection
from .delivery import FINAL, Delivery, Phase
from .events import (
    ConnectionClosed,
    CreditChanged,
    DeliveriesSettled,
    DeliverySettled,
    DeliveryStarted,
    DeliveryUpdated,
    Event,
    Heartbeat,
    LinkAttached,
    LinkDetached,
    MessageReceived,
    SessionBegun,
    SessionEnded,
    Violation,
)
from .link import RECEIVER, SENDER, Link
from .sasl import AUTH, OK, SYS, SYS_PERM, SYS_TEMP, SaslConfig
from .session import Session

DEFAULT_MAX_FRAME_SIZE = 65536
DEFAULT_WINDOW = 2048


class EngineUsageError(RuntimeError):
    """The caller asked for something the connection's state does not allow (a bug)."""


class FrameTooLarge(EngineUsageError):
    """A frame of ours (not a transfer: those are split) would be larger than the peer's
    max-frame-size: a link name, address, filter or capability too long for it (an
    error's description is cut to fit instead). Nothing was sent."""

    def __init__(self, name: str, size: int, limit: int) -> None:
        super().__init__(f"our {name} would be {size} bytes, over the peer's max-frame-size "
                         f"{limit}")
        self.name, self.size, self.limit = name, size, limit


class ByteTap(Protocol):
    """What `Endpoint.set_tap` takes: told of every byte in and out, in order.

    `received(data, time)` gets the bytes given to `receive_data(data, time)` before the
    engine reads them; `sent(data)` gets each non-empty result of `data_to_send()` before
    it is returned (the endpoint's `now` is the time its frames were stamped with). The
    calls run on whichever thread drives the endpoint; the tap must not call back into it.
    """

    def received(self, data: bytes, time: float) -> None: ...

    def sent(self, data: bytes) -> None: ...


@dataclass
class _Outgoing:
    """A delivery being sent: bytes queued but not yet framed, and where it stands."""

    delivery: Delivery
    settled: bool
    state: Any
    message_format: int
    batchable: bool
    resume: bool
    data: bytearray
    complete: bool = False
    abort: bool = False
    started: bool = False


def _keeps(link: Link, side: str) -> bool:
    """Whether `side`'s end of the link is durable (a durable subscription): ended for a
    fault, it is detached without closing, for closing it would delete the terminus and
    what it holds (Part 2 §2.6.6)."""
    att = link.attach.get(side)
    if att is None:
        return False
    terminus = att.source if link.receiver == side else att.target
    return bool(getattr(terminus, "durable", None))


class Endpoint:
    """One end of an AMQP 1.0 connection, without I/O. `role` is "client" or "peer"."""

    def __init__(
        self,
        role: str = "client",
        *,
        container_id: str | None = None,
        hostname: str | None = None,
        sasl: SaslConfig | None = None,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        channel_max: int = 255,
        idle_timeout: float | None = None,
        properties: dict[Any, Any] | None = None,
        offered_capabilities: list[Any] | None = None,
        desired_capabilities: list[Any] | None = None,
        incoming_window: int = DEFAULT_WINDOW,
        link_policy: str | None = None,
        keep_payload: bool = True,
        sides: tuple[str, str] = ("client", "server"),
        lean_events: bool = False,
        tap: ByteTap | None = None,
    ) -> None:
        if role not in ("client", "peer"):
            raise ValueError(f"role must be 'client' or 'peer', not {role!r}")
        self.role = role
        self.local = sides[0] if role == "client" else sides[1]
        self.remote = sides[1] if role == "client" else sides[0]
        self.connection = Connection(sides, local=self.local, keep_payload=keep_payload)
        # lean_events: leave out the events a caller holding its own Delivery objects does
        # not need (see Connection.lean)
        self.connection.lean = lean_events
        self.sasl = sasl
        self.container_id = container_id or f"amqpcli-{role}"
        self.hostname = hostname
        self.max_frame_size = max_frame_size
        self.channel_max = channel_max
        if idle_timeout:
            # No threshold under twice what the open advertises (1 s to 2 s advertise 1000
            # ms): a peer that heartbeats at the advertised interval, as proton does, would
            # be dropped at every beat that came a millisecond late.
            idle_timeout = max(idle_timeout, 2 * advertised_idle_timeout(idle_timeout) / 1000)
        self.idle_timeout = idle_timeout
        self.properties = properties
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.incoming_window = incoming_window
        if link_policy is None:
            link_policy = "accept" if role == "peer" else "refuse"
        if link_policy not in ("accept", "refuse", "manual"):
            raise ValueError(f"link_policy must be accept, refuse or manual, not {link_policy!r}")
        self.link_policy = link_policy
        self.now = 0.0
        self._reader = FrameReader(MIN_MAX_FRAME_SIZE)
        self._reader.set_max_frame_size(MIN_MAX_FRAME_SIZE, _BEFORE_OPEN)
        self._reader.limit_after_open(max(max_frame_size, MIN_MAX_FRAME_SIZE), "max-frame-size")
        self._out = bytearray()
        self._events: list[Event] = []
        self._last_sent: float | None = None
        self._last_recv: float | None = None
        self._silence = 0.0  # the silence the latest input ended (or the timer found)
        self._pending_open: Any = None
        self._amqp_header_sent = False
        self._sasl_header_sent = False
        self._sasl_done = sasl is None
        # a server: where the client's AMQP header after SASL is in its stream, the
        # origin of the offsets its framing errors are told with from then on
        self._amqp_from: int | None = None
        self._failed = False
        # why the endpoint failed, for a log line ("framing error: ...", "bad sasl-init:
        # ..."); None when it did not, or failed on the peer's protocol header
        self.failure: str | None = None
        # the end of the peer's stream inside a frame, as pcap-dump's notice says it ("the
        # stream ended (FIN) inside frame 9 from the client (transfer, ...)"), if it did
        self.cut_short: str | None = None
        self.no_sasl_offered = False  # the server answered our SASL header with AMQP's
        # the number of the next delivery-tag we make ("1", "2", ...): it moves on only
        # when a delivery takes the tag, so each delivery has the next one
        self._next_tag = 1
        self._dynamic = itertools.count(1)
        self._next_delivery_id: dict[Session, int] = {}
        self._windows: dict[Session, tuple[int, int]] = {}
        self._outgoing: dict[Link, deque[_Outgoing]] = {}
        # (handle, message-format, settled) -> the constant parts of a one-frame transfer
        self._transfer_parts: dict[tuple[int, int, bool], tuple[bytes, bytes]] = {}
        # the peer's channels of the sessions we ended with an error, until its end comes:
        # what it sends on them meanwhile is discarded unread (`_discards`)
        self._discarding: set[int] = set()
        # the application's count of messages awaiting credit on a sender link, for the
        # `available` of the flows we send on it (None: not known, the field is left out)
        self.available_for: Callable[[Link], int | None] | None = None
        # whether the application has more messages for a sender link, to send as credit
        # allows: a drain with credit left waits for them (`drained`); unset: it has none
        self.offering_for: Callable[[Link], bool] | None = None
        self.tap: ByteTap | None = None
        if tap is not None:
            self.set_tap(tap)

    # --- watching the bytes -------------------------------------------------------------

    def set_tap(self, tap: ByteTap | None) -> None:
        """Hand every byte both ways to `tap` from now on (None: stop). One tap at a time:
        a new one replaces the last. Set it before the first `data_to_send()` to see the
        connection from its protocol header on."""
        self.tap = tap
        if tap is None:
            # Back to the class's own methods: the untapped paths stay as fast as before.
            self.__dict__.pop("receive_data", None)
            self.__dict__.pop("data_to_send", None)
        else:
            # Only this instance takes the tapping variants; they call the class's methods
            # (a subclass's overrides included).
            self.receive_data = self._tapped_receive_data  # type: ignore[method-assign]
            self.data_to_send = self._tapped_data_to_send  # type: ignore[method-assign]

    @property
    def reader(self) -> FrameReader:
        """The frame reader the received bytes go through (a tap reads with its limits)."""
        return self._reader

    def _tapped_receive_data(self, data: bytes, time: float) -> list[Event]:
        tap = self.tap
        if tap is not None:
            tap.received(data, time)
        return type(self).receive_data(self, data, time)

    def _tapped_data_to_send(self) -> bytes:
        out = type(self).data_to_send(self)
        tap = self.tap
        if out and tap is not None:
            tap.sent(out)
        return out

    # --- driving it ---------------------------------------------------------------------

    def set_time(self, now: float) -> None:
        """Tell the engine the time; frames sent from now on are stamped with it."""
        self.now = now

    def data_to_send(self) -> bytes:
        """Bytes to write to the transport (and forget)."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[Event]:
        """Events caused by API calls and input since the last call."""
        ev = self._events
        self._events = []
        return ev

    def receive_data(self, data: bytes, time: float) -> list[Event]:
        """Bytes from the peer, received at `time`; returns every pending event."""
        self.now = time
        if data:
            last = self._last_recv
            if last is None and not b"AMQP".startswith(bytes(data[:4])):
                self._last_recv = time
                self._not_amqp(bytes(data[:64]))
                return self.take_events()
            self._silence = time - last if last is not None else 0.0
            self._last_recv = time
        conn = self.connection
        remote = self.remote
        windows: dict[Session, None] = {}
        discarding = self._discarding
        for item in self._reader.feed(data):
            body = item.body if item.__class__ is Frame else None
            if body.__class__ is c.Transfer:
                if discarding and self._discards(item):  # type: ignore[arg-type]
                    conn.on_discarded_frame(remote, time)
                    continue
                # The hot path: a transfer's events rarely need an answer, and the
                # incoming window is looked at once per read, not once per transfer.
                evs = conn.on_frame(remote, item, time)
                self._events.extend(evs)
                for ev in evs:
                    if ev.__class__ not in _NO_ANSWER:
                        self._react(None, evs)
                        break
                ts = conn.channels[remote].get(item.channel)  # type: ignore[union-attr,arg-type]
                if ts is not None:
                    windows[ts] = None
            else:
                self._receive_item(item, time)
                if self._failed:
                    break  # the rest is not read (see `_on_frame_error`, `_answer_violation`)
        for ts in windows:
            self._refresh_window(ts)
        return self.take_events()

    def receive_eof(self, time: float, how: str = "fin") -> list[Event]:
        """The peer's stream ended: it closed the transport (`how` "fin"), or the transport
        failed ("rst"). A frame whose start is sound that the end cut short is no framing
        error, only the peer going away mid-frame (`cut_short` says so); bytes that cannot
        start one are. Then `TransportClosed`, and unless both closes were exchanged, every
        unsettled delivery is abandoned (in doubt)."""
        self.now = time
        errors, cut = self._reader.close_stream()
        if cut is not None:
            # numbered as the frame it would have been, as pcap-dump numbers it
            self.cut_short = cut.text(self.remote, how, self.connection.frame_no + 1)
        for item in errors:
            self._receive_item(item, time)
        self._collect(self.connection.on_transport_closed(self.remote, time, how))
        for link in list(self._outgoing):
            self._drop_outgoing(link)
        return self.take_events()

    def next_timer(self) -> float | None:
        """When `handle_timer` must next be called (None: no timer is running)."""
        conn = self.connection
        if self.local not in conn.open or conn.closing or self._failed:
            return None
        deadlines = []
        remote_idle = conn.idle_timeout(self.remote)
        if remote_idle and self._last_sent is not None:
            deadlines.append(self._last_sent + remote_idle / 2)
        if self.idle_timeout and self._last_recv is not None:
            deadlines.append(self._last_recv + self.idle_timeout)
        return min(deadlines) if deadlines else None

    def handle_timer(self, now: float) -> list[Event]:
        """Heartbeats and the idle-timeout check, at `now`."""
        self.now = now
        conn = self.connection
        if self.local in conn.open and not conn.closing and not self._failed:
            if (self.idle_timeout and self._last_recv is not None
                    and now >= self._last_recv + self.idle_timeout):
                conn.time = now
                conn.side = self.remote
                self._silence = now - self._last_recv
                conn.violation("idle-timeout",
                               f"nothing received for {now - self._last_recv:.3f} s"
                               f" (idle-timeout {self.idle_timeout} s)")
                evs = conn._take()
                self._collect(evs)
                self._react(None, evs)
            else:
                remote_idle = conn.idle_timeout(self.remote)
                if (remote_idle and self._last_sent is not None
                        and now >= self._last_sent + remote_idle / 2):
                    self._send(None)
        return self.take_events()

    # --- input ------------------------------------------------------------------------

    def _receive_item(self, item: Any, time: float) -> None:
        conn = self.connection
        if isinstance(item, ProtocolHeader):
            self._collect(conn.on_header(self.remote, item, time))
            self._on_remote_header(item)
        elif isinstance(item, Frame):
            if self._discarding and self._discards(item):
                conn.on_discarded_frame(self.remote, time)
                return
            evs = conn.on_frame(self.remote, item, time)
            self._collect(evs)
            self._react(item, evs)
        elif isinstance(item, FrameError):
            self._on_frame_error(item, time)

    def _discards(self, frame: Frame) -> bool:
        """Whether `frame` is on a session we ended with an error and the peer has not
        ended yet (Part 2 §2.5.5, state DISCARDING: "any incoming frames on the session
        MUST be silently discarded until the peer's end frame is received"). The peer
        may have sent them before it saw our end: they are neither answered nor
        violations. Its end frees the channel."""
        ch = frame.channel
        if ch not in self._discarding or frame.type != FRAME_TYPE_AMQP:
            return False
        cls = frame.body.__class__
        if cls is c.End:
            self._discarding.discard(ch)
            return False
        return cls in _SESSION_FRAMES

    def _collect(self, evs: list[Event]) -> None:
        self._events.extend(evs)

    def _on_frame_error(self, err: FrameError, time: float) -> None:
        """Bytes from the peer that are no frame: a framing error (Part 2 §2.3.1: a size
        under 8 or a doff under 2 is a malformed frame; §2.7.1: a frame larger than we
        accept). Closed with amqp:connection:framing-error once our open has gone out
        (and read on for the peer's close, unless the stream can no longer be read);
        before it the transport is simply closed, as no close can precede our open."""
        conn = self.connection
        kind = "framing-error" if err.limit is None else "frame-too-large"
        said = str(err) if self._amqp_from is None else _after_sasl(err, self._amqp_from)
        evs = conn.on_frame_error(self.remote, said, time, kind)
        self._collect(evs)
        self._react(None, evs)
        if err.fatal or self.local not in conn.open:
            self._failed = True
            if self.failure is None:
                self.failure = f"framing error: {said}"
            self._reader.opaque = "error"  # nothing after it is read

    def _on_remote_header(self, h: ProtocolHeader) -> None:
        if self.role != "peer":
            if h.kind == "sasl" and self.sasl is None:
                self._fail("amqp:unauthorized-access",
                           "the server requires SASL authentication")
            elif h.kind == "amqp" and not self._sasl_done:
                self.no_sasl_offered = True
                self._fail("amqp:unauthorized-access",
                           "the server does not offer SASL (it answered with the AMQP "
                           "header)")
            elif h.kind not in ("amqp", "sasl"):
                self._fail("amqp:not-implemented", f"the server answered with {h.name}")
            return
        if h.kind == "sasl":
            if self.sasl is None:
                self._send_header("amqp")  # we do not do SASL: say what we speak
                self._failed = True
                return
            self._send_header("sasl")
            self._send(c.SaslMechanisms(sasl_server_mechanisms=[
                c.Symbol(m) for m in self.sasl.offer]), type=FRAME_TYPE_SASL)
        elif h.kind == "amqp":
            if not self._sasl_done:
                self._send_header("sasl")  # SASL is required here
                self._failed = True
                return
            if self.sasl is not None:
                self._amqp_from = h.offset
            self._send_header("amqp")
            self._send_pending_open()
        else:
            self._send_header("amqp")
            self._failed = True

    def _not_amqp(self, first: bytes) -> None:
        """The peer's `first` bytes are not a protocol header: it speaks something else
        (TLS, HTTP, SSH, ...), and nothing more it sends is read. A server answers with
        the header it speaks and closes (as for a header it does not support); a client
        gives up at once rather than wait for an open that will not come."""
        self._reader.opaque = "not-amqp"
        if self.role == "peer":
            self._send_header("amqp" if self.sasl is None else "sasl")
            self._failed = True
        else:
            self._fail("amqp:not-implemented",
                       f"the peer does not speak AMQP: {not_amqp_bytes(first)}")

    def _send_pending_open(self) -> None:
        if self._pending_open is not None:
            op, self._pending_open = self._pending_open, None
            self._send_header("amqp")
            self._send_open(op)

    def _send_open(self, op: Any) -> None:
        """Our open: from now on the peer may send frames up to the max-frame-size it
        advertises (Part 2 §2.7.1), and no more."""
        self._send(op)
        if self._reader.opaque is None:
            size = max(int(op.get("max_frame_size")), MIN_MAX_FRAME_SIZE)
            self._reader.set_max_frame_size(size, "max-frame-size")

    def _react(self, frame: Frame | None, evs: list[Event]) -> None:
        body = frame.body if frame is not None else None
        if body is not None and frame is not None and frame.type == FRAME_TYPE_SASL:
            self._react_sasl(body)
        for ev in evs:
            if ev.__class__ in _NO_ANSWER:
                continue
            if isinstance(ev, Violation):
                if ev.side == self.remote:
                    self._answer_violation(ev)
            elif ev.__class__ is ConnectionClosed:
                if ev.side == self.remote and self.local not in self.connection.close and (
                        self.local in self.connection.open and not self._failed):
                    self._send(c.Close())
            elif ev.__class__ is SessionBegun:
                s = ev.session
                if ev.side == self.remote:
                    if self.local not in s.channel:
                        self._begin_reply(s)
                    elif self.local in s.end:
                        self._late_begin(s)
            elif ev.__class__ is SessionEnded:
                s = ev.session
                if ev.side == self.remote and self.local in s.channel and (
                        self.local not in s.end):
                    self.end(s)
            elif ev.__class__ is LinkAttached:
                self._on_remote_attach(ev.link, ev.side)
            elif ev.__class__ is LinkDetached:
                link = ev.link
                if ev.side == self.remote and self.local in link.handle:
                    self.detach(link, closed=ev.closed)
            elif ev.__class__ is CreditChanged:
                if ev.side == self.remote:
                    self._on_remote_flow(ev)
            elif ev.__class__ is DeliveryUpdated:
                d = ev.delivery
                if d.phase == Phase.WAIT_RECEIVER and d.receiver == self.local:
                    self._dispose_one(d, None, True)
        if body is not None and body.__class__ is c.Open and not self._failed:
            self._on_remote_open()

    def _react_sasl(self, body: Any) -> None:
        conn = self.connection
        cfg = self.sasl
        if cfg is None:
            return
        if self.role == "client":
            if isinstance(body, c.SaslMechanisms):
                mech = cfg.choose(conn.sasl_mechanisms)
                if mech is None:
                    self._fail("amqp:unauthorized-access",
                               "no usable SASL mechanism: the server offers "
                               + (", ".join(conn.sasl_mechanisms) or "none"))
                    return
                self._send(c.SaslInit(mechanism=c.Symbol(mech),
                                      initial_response=cfg.initial_response(mech),
                                      hostname=cfg.hostname or self.hostname),
                           type=FRAME_TYPE_SASL)
            elif isinstance(body, c.SaslChallenge):
                self._send(c.SaslResponse(response=b""), type=FRAME_TYPE_SASL)
            elif isinstance(body, c.SaslOutcome):
                if int(body.code) == OK:
                    self._sasl_done = True
                    self._send_pending_open()
                else:
                    self._failed = True
        elif isinstance(body, c.SaslInit) and conn.sasl_code is None:
            # (a sasl-init after our outcome is not answered: its violation ends it)
            bad = _bad_sasl_init(body)
            if bad is not None:
                # Part 5 §5.3.3.6 has no code for a malformed frame. Not auth ("an
                # unspecified problem with the supplied credentials": none could be read)
                # nor sys-temp ("a transient system error": the same client would send the
                # same frame again): sys-perm, "a system error that is unlikely to be
                # corrected without intervention", tells the client not to retry as is.
                self._send(c.SaslOutcome(code=SYS_PERM), type=FRAME_TYPE_SASL)
                self._failed = True
                self.failure = f"bad sasl-init: {bad}"
                return
            resp = body.initial_response
            mech = str(body.mechanism)
            code = cfg.check(mech, bytes(resp) if resp is not None else None)
            self._send(c.SaslOutcome(code=code), type=FRAME_TYPE_SASL)
            if code == OK:
                self._sasl_done = True
            else:
                self._failed = True
                said = _SASL_CODES.get(code, str(code))
                self.failure = f"SASL {mech} refused (sasl-outcome {said})"

    def _fail(self, condition: str, description: str) -> None:
        """A local failure before the connection opened (no usable SASL mechanism)."""
        self._failed = True
        err = c.Error(condition=c.Symbol(condition), description=description)
        self._events.append(ConnectionClosed(self.connection, self.local, err, self.now))

    def _on_remote_open(self) -> None:
        if self.local not in self.connection.open and self._pending_open is None:
            self.open()
        for s in list(self._next_delivery_id):
            self._pump(s)

    def _on_remote_flow(self, ev: CreditChanged) -> None:
        s = ev.session
        link = ev.link
        if link is None:
            if ev.echo:
                self._session_flow(s)
            # the window may have held back deliveries of a link being drained
            self._pump(s, answer_drains=True)
            return
        if self.local not in link.handle:
            return
        if link.sender == self.local:
            self._pump(s, answer_drains=True)
            self._answer_drain(s, link)
            if ev.echo and (link.drain or not ev.drain):
                # (unless this flow's drain was answered: that flow is the state asked for)
                self._link_flow(link)
        elif ev.echo:
            self._link_flow(link)

    def _answer_drain(self, s: Session, link: Link, *, offered_all: bool = False) -> None:
        """Answer a drain on a sender link once it is complete (Part 2 §2.6.7: the sender
        sends all available messages, then advances delivery-count "until link-credit is
        zero, and send[s] its updated flow state to the receiver"). Complete: the
        transfers used the credit up, or nothing is left queued (deliveries held back by
        the session window go first) and the application offers nothing more
        (`offering_for`; `offered_all`: it said so, `drained`); the credit left is used
        up by advancing delivery-count.

        One flow answers it: delivery-count, link-credit 0, drain (our drain mode, §2.7.4)
        and `available` when the application knows it (`available_for`). The flow clears
        the link's drain in the model, so a drain is answered once."""
        if not link.drain or self.local not in link.handle:
            return
        credit = link.link_credit
        if credit > 0:
            if self._outgoing.get(link):
                return  # answered when what is queued has gone out (`_pump`)
            offering = self.offering_for
            if not offered_all and offering is not None and offering(link):
                return  # answered when the application's sends use the credit up, or
                # when it has sent what it had (`drained`)
        iw, ow = self._windows.get(s, (self.incoming_window, self.incoming_window))
        self._send(self._flow_body(
            s, iw, ow, handle=link.handle[self.local], link_credit=0, drain=True,
            delivery_count=serial.add(link.delivery_count, max(credit, 0)),
            available=self._available(link)),
            channel=s.channel[self.local])

    def _credit_used_up(self, s: Session, link: Link) -> None:
        """Our transfers used up the credit of a link being drained: the drain is complete.
        Answered at once for an application that sends as credit comes (`offering_for`
        set); one that feeds the link from the peer's flow (a broker, before the engine
        handles the flow) has it answered with the flow, its own bookkeeping done (the
        `available` of the answer counts what it has left)."""
        if self.offering_for is not None:
            self._answer_drain(s, link)

    def _available(self, link: Link) -> int | None:
        """`available` for a flow we send on sender `link`: the application's count."""
        ask = self.available_for
        return ask(link) if ask is not None else None

    def _answer_violation(self, v: Violation) -> None:
        scope, cond = v.scope, v.condition
        if scope is None or cond is None:
            return
        if v.kind == "idle-timeout" and self.idle_timeout and self._silence < self.idle_timeout:
            # past twice what we advertised, not past our threshold itself (the advertised
            # milliseconds were rounded down): that is the slack the advertisement leaves
            return
        if self.local not in self.connection.open:
            if v.kind in _FAIL_BEFORE_OPEN:
                # No close can precede our open (Part 2 §2.4.1): the transport closes.
                # (A server sends its open only once the client's has come.)
                self._failed = True
                if self.failure is None:
                    what = "protocol" if v.kind == "out-of-order" else "framing"
                    self.failure = f"{what} error: {v.detail}"
                self._reader.opaque = "error"  # nothing after it is read
            return
        err = c.Error(condition=c.Symbol(cond), description=v.detail)
        if scope == "connection" or (scope == "session" and v.session is None):
            if self.local in self.connection.open and self.local not in self.connection.close:
                self.close(err)
        elif scope == "session" and v.session is not None:
            if self.local in v.session.channel and self.local not in v.session.end:
                self.end(v.session, err)
        elif scope == "link" and v.link is not None and self.local in v.link.handle:
            self.detach(v.link, closed=not _keeps(v.link, self.local), error=err)

    def _refresh_window(self, s: Session) -> None:
        if self.local not in s.channel or self.local in s.end:
            return
        rw = s.remote_incoming_window(self.remote)
        full = self._windows.get(s, (self.incoming_window, self.incoming_window))[0]
        if rw is not None and rw <= full // 2:
            self._session_flow(s)

    # --- output -----------------------------------------------------------------------

    def _send_header(self, kind: str) -> None:
        if kind == "amqp":
            if self._amqp_header_sent:
                return
            self._amqp_header_sent = True
        elif kind == "sasl":
            if self._sasl_header_sent:
                return
            self._sasl_header_sent = True
        raw = encode_protocol_header(kind)
        self._out += raw
        self._last_sent = self.now
        self._collect(self.connection.on_header(self.local, ProtocolHeader(0, raw), self.now))

    def _send(self, body: Any, channel: int = 0, payload: bytes = b"",
              type: int = FRAME_TYPE_AMQP) -> None:
        if body.__class__ in _SESSION_FRAMES and (
                channel not in self.connection.channels[self.local]):
            # Our end (or close) went out: nothing more is sent on that session (Part 2
            # §2.5.5). A caller answering events that came before it (accepting a link the
            # peer attached, settling) cannot know; what it asked for is moot.
            return
        raw = encode_frame(body, channel, payload, type)
        conn = self.connection
        if len(raw) > MIN_MAX_FRAME_SIZE and self.remote in conn.open and (
                len(raw) > conn.max_frame_size(self.remote)):
            # the peer would end the connection with a framing error, blaming nobody. An
            # error's description (free text, quoting a name or an address the peer
            # chose) is cut to fit instead: the error itself must reach the peer
            limit = conn.max_frame_size(self.remote)
            cut = _description_cut(body, len(raw) - limit)
            shorter = encode_frame(cut, channel, payload, type) if cut is not None else raw
            if len(shorter) > limit:
                raise FrameTooLarge(body.NAME, len(raw), limit)
            body, raw = cut, shorter
        self._out += raw
        self._last_sent = self.now
        frame = Frame(0, len(raw), 2, type, channel, b"", body, payload)
        self._collect(self.connection.on_frame(self.local, frame, self.now))

    def _require_open(self) -> None:
        conn = self.connection
        if self.local not in conn.open:
            raise EngineUsageError("the connection is not open yet (call open() and wait"
                                   " for SASL to finish)")
        if self.local in conn.close:
            raise EngineUsageError("the connection is closed")

    # --- connection ---------------------------------------------------------------------

    def open_frame(self, **open_fields: Any) -> Any:
        """The open `open()` sends: this endpoint's settings, `open_fields` over them (a
        client may measure it: one over MIN-MAX-FRAME-SIZE before the peer's open is more
        than a peer must accept, Part 2 §2.7.1)."""
        fields: dict[str, Any] = {
            "container_id": self.container_id,
            "hostname": self.hostname,
            "max_frame_size": self.max_frame_size,
            "channel_max": self.channel_max,
            "idle_time_out": (advertised_idle_timeout(self.idle_timeout)
                              if self.idle_timeout else None),
            "offered_capabilities": self.offered_capabilities,
            "desired_capabilities": self.desired_capabilities,
            "properties": self.properties,
        }
        fields.update(open_fields)
        return c.Open(**fields)

    def open(self, **open_fields: Any) -> None:
        """Send our open (after the protocol header and SASL, if configured).

        A client calls this first; a peer answers the client's open by itself.
        """
        if self.local in self.connection.open or self._pending_open is not None:
            raise EngineUsageError("open() was already called")
        op = self.open_frame(**open_fields)
        if not self._sasl_done:
            self._pending_open = op
            if self.role == "client":
                self._send_header("sasl")
            return
        self._send_header("amqp")
        self._send_open(op)

    def close(self, error: Any = None) -> None:
        """Send close (with an optional `Error`); the peer's close answers it."""
        if self.local in self.connection.close:
            return
        for link in list(self._outgoing):
            self._drop_outgoing(link)
        self._send(c.Close(error=error))

    # --- sessions -----------------------------------------------------------------------

    def begin(self, *, incoming_window: int | None = None, outgoing_window: int | None = None,
              handle_max: int | None = None, next_outgoing_id: int = 0,
              first_delivery_id: int = 0, properties: dict[Any, Any] | None = None) -> Session:
        """Begin a session; returns it at once (it is mapped when the peer answers)."""
        self._require_open()
        ch = self._free_channel()
        iw = self.incoming_window if incoming_window is None else incoming_window
        ow = self.incoming_window if outgoing_window is None else outgoing_window
        self._send(c.Begin(remote_channel=None, next_outgoing_id=next_outgoing_id,
                           incoming_window=iw, outgoing_window=ow, handle_max=handle_max,
                           properties=properties), channel=ch)
        s = self.connection.channels[self.local][ch]
        self._next_delivery_id[s] = first_delivery_id
        self._windows[s] = (iw, ow)
        return s

    def _begin_reply(self, s: Session) -> None:
        if self.local in self.connection.close:
            return
        ch = self._free_channel()
        iw = ow = self.incoming_window
        self._send(c.Begin(remote_channel=s.channel[self.remote], next_outgoing_id=0,
                           incoming_window=iw, outgoing_window=ow), channel=ch)
        self._next_delivery_id[s] = 0
        self._windows[s] = (iw, ow)

    def _free_channel(self) -> int:
        """The lowest channel not in use: not mapped, and not one of a session we ended
        before the peer's begin answered it (that begin names the channel when it comes)."""
        used = self.connection.channels[self.local].keys() | (
            self.connection.unanswered[self.local].keys())
        limit = min(self.channel_max, self.connection.channel_max(self.remote)
                    if self.remote in self.connection.open else self.channel_max)
        for ch in range(limit + 1):
            if ch not in used:
                return ch
        raise EngineUsageError(f"no free channel (channel-max {limit})")

    def end(self, session: Session, error: Any = None) -> None:
        if self.local not in session.channel or self.local in session.end:
            return
        self._send(c.End(error=error), channel=session.channel[self.local])
        if error is not None and self.remote in session.channel and (
                self.remote not in session.end):
            self._discarding.add(session.channel[self.remote])

    def _late_begin(self, s: Session) -> None:
        """The peer's begin answering a session we had already ended: it was in flight
        when our end went out (Part 2 §2.5: frames cross), and the model mapped it. It
        needs no answer (our end is out; the peer's end will follow), and if our end
        carried an error, what the peer sends on the session until its end is discarded
        (§2.5.5, DISCARDING) as for a session whose begin had come before."""
        ours = s.end[self.local]
        if getattr(ours, "error", None) is not None and self.remote not in s.end:
            self._discarding.add(s.channel[self.remote])

    def _session_flow(self, s: Session) -> None:
        iw, ow = self._windows.get(s, (self.incoming_window, self.incoming_window))
        self._send(self._flow_body(s, iw, ow), channel=s.channel[self.local])

    def _flow_body(self, s: Session, iw: int, ow: int, **link_fields: Any) -> Any:
        nid = s.next_outgoing_id[self.remote] if self.remote in s.begin else None
        return c.Flow(next_incoming_id=nid, incoming_window=iw,
                      next_outgoing_id=s.next_outgoing_id[self.local], outgoing_window=ow,
                      **link_fields)

    # --- links --------------------------------------------------------------------------

    def attach_sender(self, session: Session, name: str, source: Any = None,
                      target: Any = None, **kw: Any) -> Link:
        """Attach a link on which we send; returns it at once."""
        return self._attach(session, name, SENDER, source, target, **kw)

    def attach_receiver(self, session: Session, name: str, source: Any = None,
                        target: Any = None, **kw: Any) -> Link:
        """Attach a link on which we receive (grant credit with `flow()`)."""
        return self._attach(session, name, RECEIVER, source, target, **kw)

    def attach_coordinator(self, session: Session, name: str = "txn-coordinator",
                           capabilities: list[Any] | None = None, **kw: Any) -> Link:
        """Attach a sender to the peer's transaction coordinator (Part 4 §4.2)."""
        caps = capabilities if capabilities is not None else [c.Symbol("amqp:local-transactions")]
        return self._attach(session, name, SENDER, c.Source(),
                            c.Coordinator(capabilities=caps), **kw)

    def _attach(self, session: Session, name: str, role: bool, source: Any, target: Any, *,
                snd_settle_mode: int | None = None, rcv_settle_mode: int | None = None,
                initial_delivery_count: int = 0, **kw: Any) -> Link:
        if self.local not in session.channel or self.local in session.end:
            raise EngineUsageError("the session is not begun")
        h = self._free_handle(session)
        att = c.Attach(name=name, handle=h, role=role, snd_settle_mode=snd_settle_mode,
                       rcv_settle_mode=rcv_settle_mode, source=source, target=target,
                       initial_delivery_count=initial_delivery_count if role == SENDER else None,
                       **kw)
        self._send(att, channel=session.channel[self.local])
        return session.handles[self.local][h]

    def _free_handle(self, s: Session) -> int:
        used = s.handles[self.local]
        h = 0
        while h in used:
            h += 1
        if h > s.handle_max[self.remote]:
            raise EngineUsageError(f"no free handle (handle-max {s.handle_max[self.remote]})")
        return h

    def _on_remote_attach(self, link: Link, side: str) -> None:
        if side != self.remote or self.local in link.attach:
            return
        s = link.session
        if self.local not in s.channel or self.local in s.end or self.connection.closing:
            return
        if link.initiator != self.remote:
            return
        if self.link_policy == "accept":
            self.accept_link(link)
        elif self.link_policy == "refuse":
            self.refuse_link(link, c.Error(condition=c.Symbol("amqp:not-allowed"),
                                           description="this endpoint does not accept links"))

    def accept_link(self, link: Link, source: Any = None, target: Any = None,
                    **kw: Any) -> None:
        """Answer a link the peer attached (by default echoing its source and target).

        If the peer has detached it meanwhile (its attach and detach came together, before
        this answer), our detach follows the attach at once (Part 2 §2.6.5): the link is
        then detached both ways, and what is asked for on it afterwards is dropped."""
        req = link.attach[self.remote]
        src = source if source is not None else req.source
        tgt = target if target is not None else req.target
        we_send = link.sender == self.local
        node = src if we_send else tgt
        if isinstance(node, (c.Source, c.Target)) and node.dynamic and node.address is None:
            node = _copy(node)
            node.address = f"dynamic-{next(self._dynamic)}"
            if we_send:
                src = node
            else:
                tgt = node
        self._reply_attach(link, src, tgt, **kw)
        gone = link.detach.get(self.remote)
        if gone is not None and self.remote not in link.handle:
            self.detach(link, closed=bool(gone.closed))

    def refuse_link(self, link: Link, error: Any = None, *, echo: bool = True) -> None:
        """Refuse a link the peer attached: null terminus, then detach with `error`.

        The peer's other terminus is echoed; with `echo=False` it is null too: an answer
        whose size does not depend on the peer's termini (for one whose echo would not
        fit the peer's max-frame-size)."""
        req = link.attach[self.remote]
        if not echo:
            self._reply_attach(link, None, None)
        elif link.sender == self.local:  # the peer receives: no source here
            self._reply_attach(link, None, req.target)
        else:
            self._reply_attach(link, req.source, None)
        self.detach(link, closed=True, error=error)

    def _reply_attach(self, link: Link, source: Any, target: Any, **kw: Any) -> None:
        s = link.session
        req = link.attach[self.remote]
        h = self._free_handle(s)
        we_send = link.sender == self.local
        fields: dict[str, Any] = {
            "snd_settle_mode": req.snd_settle_mode,
            "rcv_settle_mode": req.rcv_settle_mode,
            "initial_delivery_count": 0 if we_send else None,
        }
        fields.update(kw)
        self._send(c.Attach(name=link.name, handle=h, role=SENDER if we_send else RECEIVER,
                            source=source, target=target, **fields),
                   channel=s.channel[self.local])

    def detach(self, link: Link, *, closed: bool = True, error: Any = None) -> None:
        if self.local not in link.handle:
            return
        self._drop_outgoing(link)
        s = link.session
        self._send(c.Detach(handle=link.handle[self.local], closed=closed, error=error),
                   channel=s.channel[self.local])

    def flow(self, link: Link, credit: int | None = None, *, drain: bool = False,
             echo: bool = False, available: int | None = None,
             txn_id: bytes | None = None) -> None:
        """Grant `credit` (receiver), or announce `available` (sender); optionally drain.

        With `txn_id` the credit acquires messages inside that transaction (Part 4
        §4.4.3: the flow's properties carry `txn-id`).
        """
        if self.local not in link.handle:
            if self.local in link.session.end:
                return  # ended with its session by us: see `_send`
            if self.local in link.detach:
                # detached by us (perhaps answering the peer's detach, which a caller
                # handling earlier events cannot know of yet): nothing more goes on it
                return
            raise EngineUsageError(f"link {link.name!r} is not attached here")
        props = {c.Symbol("txn-id"): txn_id} if txn_id is not None else None
        self._link_flow(link, credit=credit, drain=drain, echo=echo, available=available,
                        properties=props)

    def drain(self, link: Link, credit: int | None = None) -> None:
        """Receiver: ask the sender to use up the credit (or give it back) now."""
        self.flow(link, credit if credit is not None else link.link_credit, drain=True)

    def drained(self, link: Link) -> None:
        """Sender: the application has sent what it had for `link` for now (call it when
        `offering_for(link)` turns False). A drain the peer asked for is answered: at once,
        or once what is queued here has gone out. Nothing happens without a drain."""
        if link.drain and self.local in link.handle:
            self._answer_drain(link.session, link, offered_all=True)

    def _link_flow(self, link: Link, *, credit: int | None = None, drain: bool = False,
                   echo: bool = False, available: int | None = None,
                   properties: dict[Any, Any] | None = None) -> None:
        s = link.session
        iw, ow = self._windows.get(s, (self.incoming_window, self.incoming_window))
        if link.receiver == self.local:
            lc = credit if credit is not None else (link.rcv_link_credit or 0)
            dc = link.delivery_count
        else:
            lc = link.link_credit
            dc = link.delivery_count
            drain = drain or link.drain
            if available is None:
                available = self._available(link)
        self._send(self._flow_body(s, iw, ow, handle=link.handle[self.local],
                                   delivery_count=dc, link_credit=lc, available=available,
                                   drain=drain, echo=echo, properties=properties),
                   channel=s.channel[self.local])

    # --- deliveries: sending ------------------------------------------------------------

    def send(self, link: Link, message: Message | bytes, *, tag: bytes | None = None,
             settled: bool | None = None, message_format: int = 0, state: Any = None,
             txn_id: bytes | None = None, batchable: bool = False) -> Delivery:
        """Queue a message; returns its delivery (frames go out as credit allows).

        `settled` defaults to the link's sender-settle-mode (pre-settled when `settled`).
        With `txn_id` the transfer carries a transactional-state (Part 4 §4.4.1).
        """
        payload = message.encode() if isinstance(message, Message) else bytes(message)
        if tag is not None and tag.__class__ is not bytes:
            tag = bytes(tag)
        if (state is None and txn_id is None and not batchable and link not in self._outgoing
                and link.sender == self.local):
            d = self._send_one_frame(link, payload, tag, settled, message_format)
            if d is not None:
                return d
        d = self.start_delivery(link, tag=tag, settled=settled, message_format=message_format,
                                state=state, txn_id=txn_id, batchable=batchable)
        self.send_more(d, payload, more=False)
        return d

    def _send_one_frame(self, link: Link, payload: bytes, tag: bytes | None,
                        settled: bool | None, message_format: int) -> Delivery | None:
        """The common case of `send()`: nothing queued on the link, credit and window to
        spare, and the message fits in one frame. The transfer is encoded once, from
        cached constant parts (the same bytes `encode_frame` gives), and the model is
        updated from what we know (`Session.local_transfer`) instead of going through
        the generic frame path. Returns None, having taken no tag, when it is not the
        common case: the caller queues the delivery."""
        local = self.local
        conn = self.connection
        s = link.session
        handle = link.handle.get(local)
        ch = s.channel.get(local)
        remote = self.remote
        if (handle is None or ch is None or link.link_credit <= 0 or link.current is not None
                or link.coordinator or local in s.end or local in conn.close
                or conn.side_state[local] != "opened" or remote not in conn.open):
            return None
        lim = s.in_limit[remote]  # the peer's incoming window has room (serial arithmetic)
        if lim is not None and not 0 < ((lim - s.next_outgoing_id[local]) & serial.MASK) < (
                serial.HALF):
            return None
        auto = tag is None
        if tag is None:
            tag = self._new_tag(link)
        elif tag.__class__ is not bytes:
            tag = bytes(tag)
        if tag in link.live or len(tag) > 0xFF:
            return None
        if settled is None:
            settled = link.snd_mode == 1
        did = self._next_delivery_id.get(s, 0)
        if not 0 <= did <= 0xFFFFFFFF or not 0 <= message_format <= 0xFFFFFFFF:
            return None
        key = (handle, message_format, settled)
        parts = self._transfer_parts.get(key)
        if parts is None:
            parts = self._transfer_parts[key] = _transfer_parts(handle, message_format, settled)
        head, tail = parts
        # the list's body: handle | delivery-id | delivery-tag | message-format settled more
        idb = _uint_bytes(did)
        body_len = len(head) + len(idb) + 2 + len(tag) + len(tail)
        if body_len + 1 > 0xFF:
            return None
        size = 14 + body_len + len(payload)
        if size > conn._frame_limit[local]:  # the peer's max-frame-size, once it opened
            return None
        raw = b"".join((_pHEADER(size, 2, 0, ch, b"\x00\x53\x14", 0xC0, body_len + 1, 6),
                        head, idb, _pBB(0xA0, len(tag)), tag, tail, payload))
        self._next_delivery_id[s] = (did + 1) & serial.MASK
        if auto:
            self._next_tag += 1
        d = Delivery(link, local, remote, tag)
        self._out += raw
        now = self.now
        self._last_sent = now
        evs = conn.on_local_transfer(local, s, link, d, did, settled, message_format,
                                     len(payload), size, now)
        if evs:
            self._events.extend(evs)
        if link.drain and link.link_credit <= 0:
            self._credit_used_up(s, link)
        return d

    def _new_tag(self, link: Link) -> bytes:
        """The next tag of our numbering, skipping any still live on `link` (one the caller
        chose, or a resumed delivery's). Not taken yet: whoever uses it moves
        `_next_tag` on, so a delivery that went another way after all leaves no gap."""
        live = link.live
        while True:
            tag = str(self._next_tag).encode()
            if tag not in live:
                return tag
            self._next_tag += 1

    def send_many(self, link: Link, payloads: Sequence[bytes], *,
                  settled: bool | None = None) -> tuple[int, list[Delivery]]:
        """Send a run of messages, each in one frame, as far as credit, the peer's window
        and frame sizes allow: (how many of `payloads`, from the first, went out; their
        deliveries). The caller keeps the rest for later (or for `send()`).

        The wire bytes and the model are what `send()` one at a time gives, except that a
        lean endpoint (`lean_events=True`) sending pre-settled keeps no Delivery for them
        (nothing can happen to one any more): the link and session count them, and the
        list is empty. Outside that case every delivery is made and returned."""
        local = self.local
        conn = self.connection
        if not conn.lean:
            out_ds = []
            for payload in payloads:
                d = self._send_one_frame(link, payload, None, settled, 0)
                if d is None:
                    break
                out_ds.append(d)
            return len(out_ds), out_ds
        s = link.session
        remote = self.remote
        handle = link.handle.get(local)
        ch = s.channel.get(local)
        if (handle is None or ch is None or link.sender != local or link.current is not None
                or link.coordinator or link in self._outgoing or local in s.end
                or local in conn.close or conn.side_state[local] != "opened"
                or remote not in conn.open):
            return 0, []
        k = min(len(payloads), link.link_credit)
        hw = link.high_water  # credit the receiver granted covers each delivery
        if hw is None:
            return 0, []
        room = (hw - link.delivery_count) & serial.MASK
        k = min(k, room if room < serial.HALF else 0)
        lim = s.in_limit[remote]  # the peer's incoming window
        if lim is not None:
            room = (lim - s.next_outgoing_id[local]) & serial.MASK
            k = min(k, room if room < serial.HALF else 0)
        if k <= 0 or k >= serial.HALF:
            return 0, []
        if settled is None:
            settled = link.snd_mode == 1
        key = (handle, 0, settled)
        parts = self._transfer_parts.get(key)
        if parts is None:
            parts = self._transfer_parts[key] = _transfer_parts(handle, 0, settled)
        head, tail = parts
        fixed = len(head) + 2 + len(tail)
        frame_limit = conn._frame_limit[local]
        mms = link.mms
        live = link.live
        seq = self._next_tag
        header = _pHEADER
        pBB = _pBB
        uint_bytes = _uint_bytes
        did0 = did = self._next_delivery_id.get(s, 0)
        chunks: list[bytes] = []
        sent: list[tuple[int, bytes, int]] = []  # (delivery-id, tag, payload size)
        for i in range(k):
            payload = payloads[i]
            n = len(payload)
            tag = str(seq).encode()
            idb = uint_bytes(did)
            body_len = fixed + len(idb) + len(tag)
            size = 14 + body_len + n
            if (tag in live or body_len + 1 > 0xFF or size > frame_limit
                    or (mms and n > mms)):
                break  # not the common case: send() takes it
            chunks += (header(size, 2, 0, ch, b"\x00\x53\x14", 0xC0, body_len + 1, 6),
                       head, idb, pBB(0xA0, len(tag)), tag, tail, payload)
            sent.append((did, tag, n))
            did = (did + 1) & serial.MASK
            seq += 1  # taken only by a delivery that goes out here (not by one left over)
        if not sent:
            return 0, []
        self._next_tag = seq
        self._next_delivery_id[s] = did
        self._out += b"".join(chunks)
        now = self.now
        self._last_sent = now
        ds = s.local_transfers(local, link, sent, did0, settled, now)
        if link.drain and link.link_credit <= 0:
            self._credit_used_up(s, link)
        return len(sent), ds

    def start_delivery(self, link: Link, *, tag: bytes | None = None,
                       settled: bool | None = None, message_format: int = 0,
                       state: Any = None, txn_id: bytes | None = None,
                       batchable: bool = False, resume: bool = False) -> Delivery:
        """Start a delivery whose bytes come through `send_more()` (or `abort()` it).

        With `resume=True` and the tag of a delivery still unsettled from an earlier
        attachment of this link, that delivery is resumed (Part 3 §3.4.6).
        """
        if link.sender != self.local:
            raise EngineUsageError(f"we are not the sender on link {link.name!r}")
        if self.local not in link.handle:
            raise EngineUsageError(f"link {link.name!r} is not attached here")
        if tag is None:
            tag = self._new_tag(link)
            self._next_tag += 1
        if txn_id is not None:
            state = c.TransactionalState(txn_id=txn_id)
        if settled is None:
            settled = link.snd_settle_mode == 1
        d = link.live.get(tag) if resume else None
        if d is None:
            d = Delivery(link, self.local, self.remote, tag)
        self._outgoing.setdefault(link, deque()).append(_Outgoing(
            d, settled, state, message_format, batchable, resume, bytearray()))
        return d

    def send_more(self, d: Delivery, data: bytes, *, more: bool = True) -> None:
        """Add bytes to a delivery started with `start_delivery()`; `more=False` ends it."""
        out = self._find_outgoing(d)
        out.data += data
        if not more:
            out.complete = True
        self._pump(d.link.session)

    def abort(self, d: Delivery) -> None:
        """Abort a delivery that is still being sent (Part 2 §2.7.5 `aborted`)."""
        out = self._find_outgoing(d)
        out.abort = True
        if not out.started:
            self._outgoing[d.link].remove(out)
            d.phase = Phase.ABORTED
            d.aborted = True
            return
        self._pump(d.link.session)

    def _drop_outgoing(self, link: Link) -> None:
        """The link goes away: deliveries that never left are abandoned (and reported);
        half-sent ones stay with the model, which abandons or keeps them for a resume."""
        for out in self._outgoing.pop(link, ()):
            d = out.delivery
            if not out.started and d.phase == Phase.QUEUED:
                d.phase = Phase.ABANDONED
                d.settled_time = self.now
                self._events.append(DeliverySettled(d, self.now))

    def _find_outgoing(self, d: Delivery) -> _Outgoing:
        for out in reversed(self._outgoing.get(d.link, ())):  # usually the newest
            if out.delivery is d:
                return out
        raise EngineUsageError(f"delivery {d.tag!r} is not being sent")

    def _pump(self, s: Session, *, answer_drains: bool = False) -> None:
        """Frame as much of the queued deliveries as credit and windows allow.

        With `answer_drains` (a flow from the peer let them go), a link being drained
        whose credit this uses up, or whose queue it empties, answers the drain
        (`_answer_drain`). Not when the caller's own send() pumps: it may have more to put
        on the link (a broker feeding a drain) and the drain is answered once the flow
        has been handled — or, for an application that sends as credit comes, once its
        sends use the credit up (`_credit_used_up`) or it has none left to send
        (`drained`)."""
        conn = self.connection
        if self.local not in s.channel or self.local in s.end or self.local in conn.close:
            return
        for link, queue in list(self._outgoing.items()):
            if link.session is not s or self.local not in link.handle:
                continue
            while queue:
                out = queue[0]
                if not self._send_frames(s, link, out):
                    break
                queue.popleft()
            if not queue:
                self._outgoing.pop(link, None)
            if answer_drains:
                self._answer_drain(s, link)
            elif link.drain and link.link_credit <= 0:
                self._credit_used_up(s, link)

    def _send_frames(self, s: Session, link: Link, out: _Outgoing) -> bool:
        """Send what can be sent of `out`; True when it is completely sent."""
        conn = self.connection
        d = out.delivery
        ch = s.channel[self.local]
        handle = link.handle[self.local]
        max_frame = conn.max_frame_size(self.remote)
        while True:
            if not out.started and link.link_credit <= 0:
                return False
            rw = s.remote_incoming_window(self.local)
            if rw is not None and rw <= 0:
                return False
            if out.abort:
                self._send(c.Transfer(handle=handle, more=False, aborted=True), channel=ch)
                return True
            if not out.data and not out.complete and out.started:
                return False  # waiting for send_more()
            if out.started:
                t = c.Transfer(handle=handle, more=True)
            else:
                did = self._next_delivery_id.get(s, 0)
                t = c.Transfer(handle=handle, delivery_id=did, delivery_tag=d.tag,
                               message_format=out.message_format, settled=out.settled,
                               more=True, state=out.state, resume=out.resume or None,
                               batchable=out.batchable or None)
            if len(out.data) + 256 + len(d.tag) <= max_frame and out.state is None:
                room = len(out.data)  # fits with room to spare: no need to measure
            else:
                room = max_frame - len(encode_frame(t, ch))
                if room <= 0:
                    raise EngineUsageError(
                        f"max-frame-size {max_frame} leaves no room for payload")
            chunk = bytes(out.data[:room])
            del out.data[:room]
            more = bool(out.data) or not out.complete
            t.more = more
            if not out.started:
                out.started = True
                self._next_delivery_id[s] = serial.add(self._next_delivery_id.get(s, 0), 1)
                conn._adopt = d
            self._send(t, ch, chunk)
            conn._adopt = None
            if not more:
                return True

    # --- deliveries: outcomes -----------------------------------------------------------

    def dispose(self, deliveries: Delivery | list[Delivery], state: Any = None, *,
                settled: bool = False) -> None:
        """Send dispositions for deliveries (contiguous delivery-ids share one frame).

        In receiver-settle-mode second a receiver's settlement waits for the sender's:
        the state goes out now, the settlement when the sender has settled.
        """
        ds = [deliveries] if isinstance(deliveries, Delivery) else deliveries
        groups: dict[tuple[Session, bool, bool], list[int]] = {}
        local = self.local
        last: list[int] = []
        last_s = None
        last_role = last_settle = False
        for d in ds:
            s = d.session
            if d.phase in FINAL or s is None or d.delivery_id is None:
                continue
            role = d.receiver == local  # RECEIVER (True) or SENDER (False)
            settle = settled
            if settle and role and not d.sender_settled and not d.presettled:
                # Session._waits_rcv: mode second, we settle once the sender has (automatic)
                mode = d.rcv_settle_mode
                if (d.link.rcv_mode if mode is None else mode) == 1 and not d.receiver_settled:
                    settle = False
            if s is not last_s or role is not last_role or settle is not last_settle:
                last_s, last_role, last_settle = s, role, settle
                key = (s, role, settle)
                last = groups.setdefault(key, [])
            last.append(d.delivery_id)
        for (s, role, settle), ids in groups.items():
            first = ids[0]
            n = len(ids)
            if first + n - 1 <= serial.MASK and ids[-1] == first + n - 1 and (
                    ids == list(range(first, first + n))):
                # the common case: one run of consecutive ids, in order
                self._send(c.Disposition(role=role, first=first,
                                         last=ids[-1] if n > 1 else None,
                                         settled=settle, state=state),
                           channel=s.channel[self.local])
                continue
            base = ids[0]
            ids.sort(key=lambda i: serial.diff(base, i))
            first = prev = ids[0]
            for i in ids[1:] + [None]:
                if i is not None and i == serial.add(prev, 1):
                    prev = i
                    continue
                self._send(c.Disposition(role=role, first=first,
                                         last=prev if prev != first else None,
                                         settled=settle, state=state),
                           channel=s.channel[self.local])
                if i is not None:
                    first = prev = i

    def _dispose_one(self, d: Delivery, state: Any, settled: bool) -> None:
        if d.session is not None and self.local in d.session.channel:
            self.dispose(d, state, settled=settled)

    def settle(self, d: Delivery | list[Delivery], state: Any = None) -> None:
        self.dispose(d, state, settled=True)

    def accept(self, d: Delivery | list[Delivery], *, settled: bool = True) -> None:
        self.dispose(d, c.Accepted(), settled=settled)

    def reject(self, d: Delivery | list[Delivery], error: Any = None, *,
               settled: bool = True) -> None:
        self.dispose(d, c.Rejected(error=error), settled=settled)

    def release(self, d: Delivery | list[Delivery], *, settled: bool = True) -> None:
        self.dispose(d, c.Released(), settled=settled)

    def modify(self, d: Delivery | list[Delivery], *, delivery_failed: bool | None = None,
               undeliverable_here: bool | None = None,
               message_annotations: dict[Any, Any] | None = None,
               settled: bool = True) -> None:
        self.dispose(d, c.Modified(delivery_failed=delivery_failed,
                                   undeliverable_here=undeliverable_here,
                                   message_annotations=message_annotations), settled=settled)

    # --- transactions (Part 4) ----------------------------------------------------------

    def declare(self, coordinator: Link, global_id: Any = None) -> Delivery:
        """Ask the coordinator for a transaction; `TransactionDeclared` gives its id."""
        return self.send(coordinator, Message(c.Declare(global_id=global_id)), settled=False)

    def discharge(self, coordinator: Link, txn_id: bytes, *, fail: bool = False) -> Delivery:
        """Commit (`fail=False`) or roll back a transaction."""
        return self.send(coordinator, Message(c.Discharge(txn_id=txn_id, fail=fail)),
                         settled=False)

    def accept_in(self, d: Delivery | list[Delivery], txn_id: bytes, *,
                  settled: bool = True) -> None:
        """Transactional accept: the outcome takes effect when the transaction commits."""
        self.dispose(d, c.TransactionalState(txn_id=txn_id, outcome=c.Accepted()),
                     settled=settled)

    # --- state --------------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        conn = self.connection
        return len(conn.open) == 2 and not conn.close

    @property
    def failed(self) -> bool:
        """SASL failed or the peer speaks another protocol: the transport should close."""
        return self._failed

    def outgoing(self, link: Link) -> list[Delivery]:
        """Deliveries queued on `link` and not completely sent."""
        return [o.delivery for o in self._outgoing.get(link, ())]

    def queued(self, link: Link) -> int:
        """How many deliveries are queued on `link` (`len(outgoing(link))`, cheaply)."""
        q = self._outgoing.get(link)
        return len(q) if q else 0


def _bad_sasl_init(body: Any) -> str | None:
    """What makes a sasl-init malformed (Part 5 §5.3.3.2: a mechanism symbol, mandatory;
    an optional binary initial-response and string hostname), or None. A string where a
    symbol belongs passes, as elsewhere in the engine: the text is what counts."""
    mech = body.mechanism
    if mech is None:
        return "no mechanism (a mandatory field)"
    if not isinstance(mech, str):
        return f"the mechanism is {type(mech).__name__}, not a symbol"
    resp = body.initial_response
    if resp is not None and not isinstance(resp, bytes | bytearray | memoryview):
        return f"the initial-response is {type(resp).__name__}, not binary"
    host = body.hostname
    if host is not None and not isinstance(host, str):
        return f"the hostname is {type(host).__name__}, not a string"
    return None


def advertised_idle_timeout(seconds: float) -> int:
    """The idle-time-out (milliseconds) an open advertises for a real threshold of
    `seconds`: half of it, as Part 2 §2.4.5 asks ("the value in idle-time-out SHOULD be
    half the peer's actual timeout threshold"), at least 1 (0 would mean none). With a
    threshold of 1 s or more, not under 1000: "there is no requirement for peers to support
    arbitrarily short or long idle timeouts" (same section), and RabbitMQ refuses one under
    1000 ms (4.x) or sends no heartbeats for it (3.x). Never more than the threshold."""
    half = max(1, int(seconds * 500))
    return max(half, 1000) if seconds >= 1 else half


def not_amqp_bytes(data: bytes) -> str:
    """What a peer's first bytes, which are no AMQP protocol header, look like."""
    if len(data) >= 3 and data[0] in (0x15, 0x16) and data[1] == 0x03:
        return "it answered with TLS (an amqps:// port?)"
    text = data.split(b"\r")[0].split(b"\n")[0][:60]
    if len(text) >= 4 and all(32 <= b < 127 for b in text):
        return f"it sent {text.decode('ascii')!r}"
    return "it sent " + data[:8].hex(" ")


def _copy(node: Any) -> Any:
    return type(node)(**node.fields())


_ELLIPSIS = "…"


def _description_cut(body: Any, over: int) -> Any | None:
    """A copy of performative `body` whose error description (a close's, end's or
    detach's; a rejected outcome's, in a transaction too) is at least `over` bytes
    shorter: cut at a character, "…" at its end (none left if that is all of it). None
    when `body` carries no error description."""
    path: list[tuple[Any, str]] = []  # (holder, its field) down to the error
    node = body
    while not isinstance(node, c.Error):
        field = next((f for f in ("error", "state", "outcome")
                      if getattr(node, f, None) is not None), None)
        if field is None:
            return None
        path.append((node, field))
        node = getattr(node, field)
    if not node.description:
        return None
    text = str(node.description).encode()
    keep = len(text) - over - len(_ELLIPSIS.encode())
    node = _copy(node)
    node.description = text[:keep].decode(errors="ignore") + _ELLIPSIS if keep > 0 else None
    for holder, field in reversed(path):
        holder = _copy(holder)
        setattr(holder, field, node)
        node = holder
    return node


# sasl-code names (Part 5 §5.3.3.6), for a log line
_SASL_CODES = {OK: "ok", AUTH: "auth", SYS: "sys", SYS_PERM: "sys-perm", SYS_TEMP: "sys-temp"}

# violations that end the connection before our open (no close can be sent yet): a frame
# the peer's state does not allow (a begin before its open, a sasl-init after the outcome,
# a sasl-response without a challenge), a framing error (an empty SASL frame, a bad size)
def _after_sasl(err: FrameError, start: int) -> str:
    """`err` told with its offsets counted from the client's AMQP header at `start`:
    counted from the stream's first byte they would hold the size of its sasl-init, and
    so its password's length."""
    moved = FrameError(err.offset - start, err.expected, err.found,
                       None if err.frame_offset is None else err.frame_offset - start)
    return f"{moved} (offsets from the AMQP header after SASL)"


_FAIL_BEFORE_OPEN = frozenset({"out-of-order", "framing-error", "frame-too-large"})

# what the frame-size limit is called in an error until the open frames are exchanged
_BEFORE_OPEN = "MIN-MAX-FRAME-SIZE, the limit until the open frames are exchanged"

# events an endpoint never answers (the common ones: skipped first in `_react`)
_NO_ANSWER = frozenset({DeliverySettled, DeliveriesSettled, DeliveryStarted, MessageReceived,
                        Heartbeat})

# the performatives of a begun session, its end aside (the end is what frees its channel)
_SESSION_FRAMES = frozenset({c.Attach, c.Flow, c.Transfer, c.Disposition, c.Detach})

_pBB = struct.Struct(">BB").pack
_pBI = struct.Struct(">BI").pack
# frame header (size, doff, type, channel), the transfer's descriptor, list8 size and count
_pHEADER = struct.Struct(">IBBH3sBBB").pack


def _uint_bytes(v: int) -> bytes:
    """A uint in its smallest encoding (as the codec writes a delivery-id)."""
    if v == 0:
        return b"\x43"
    if v <= 0xFF:
        return _pBB(0x52, v)
    return _pBI(0x70, v)


def _transfer_parts(handle: int, message_format: int, settled: bool) -> tuple[bytes, bytes]:
    """The encoded fields around delivery-id and delivery-tag of a one-frame transfer:
    (handle, message-format settled more=false), as `encode_frame` writes them."""
    head = bytearray()
    encode_as(head, "uint", handle)
    tail = bytearray()
    encode_as(tail, "uint", message_format)
    tail.append(0x41 if settled else 0x42)
    tail.append(0x42)
    return bytes(head), bytes(tail)

