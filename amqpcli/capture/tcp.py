"""TCP flows: per-direction reassembly, client/server roles, protocol detection.

Theory of operation
-------------------
A `FlowTracker` is fed TCP segments in capture order. Each connection is a `Flow` with two
halves (one per direction). A half knows the next sequence number it expects (`nxt`, 32
bits, compared modulo 2**32) and the stream offset of that byte (`off`, unbounded), so
streams longer than 4 GiB and sequence wrap-around are handled alike.

* A segment at `nxt` is delivered at once (its payload is passed on as it came: a
  slice of the capture's block); one that starts before `nxt` is trimmed
  (retransmission, overlap); one beyond `nxt` is copied into a small heap, with its time
  and packet number, and delivered when the hole before it fills (or, the hole given up,
  with its own time and packet).
* A hole is given up on, and reported as a `Gap` with its size, when the other side
  acknowledges bytes beyond it (the bytes were sent; the capture lost them), when the
  half's buffer exceeds `max_buffer` bytes, when the oldest buffered segment waited
  longer than `gap_timeout` seconds of capture time, and at FIN/RST/end of input.
* A half starts at the SYN (seq + 1) when one was seen, else at the first segment that
  carries data (captures that start mid-connection). A SYN with a new sequence number on
  a 4-tuple still open ends that flow (how="end") and starts a new one; segments of a
  closed flow that come late are ignored.
* Roles: the client is the SYN sender (or the receiver of a SYN-ACK when only that was
  seen); without a handshake, the side whose first bytes are a TLS ClientHello or a
  protocol header ("AMQP…") — unless that header comes from the only side on a known
  AMQP port (`ports`, 5672, 5671, 5682): the server's answer to a header the capture
  missed —; else the side not using a known AMQP port; else the side with the higher
  port; else the first sender.
* Detection: the first 8 bytes of the first direction that delivers data name the
  protocol (see `detect`). The flow is *selected* when that is an AMQP header, or when it
  is unknown and one of its ports is in `ports` (mid-stream captures), or always with
  `all_flows`. A flow that is not selected produces one `Opened` event and nothing more;
  its later packets cost a dictionary lookup. (If the first sender stays below 8 bytes
  while the other side goes on, the flow is decided on what there is.)

Events (plain tuples, in the order things became known):
`Opened(flow, time_ns)`, `Data(flow, direction, time_ns, data, offset)`,
`Gap(flow, direction, time_ns, offset, size)`, `Closed(flow, direction, time_ns, how)`
with `how` one of "fin", "rst" (that side sent the reset), "reset-by-peer" (the other
side's reset ended it: this side had sent neither FIN nor RST), "end" (input ended first). `time_ns` of a `Data` event is
the capture time at which its bytes became contiguous: the time of the packet that
carried them, or, for bytes held beyond a hole that the packet filled, of that packet.
When a hole is given up instead (by any of the causes above), the bytes held beyond it
are delivered as they came, one `Data` per segment with that segment's own time, and the
`Gap` takes the time of the first of them (the packet after the hole, where tshark says
"previous segment not captured"); a hole with nothing held after it is reported at the
time it is given up. A flow's state is dropped when both directions are closed, so
memory follows the open conversations, not the input.

Packet numbers: `feed` takes the caller's number for the packet (`packet`, 0 when not
given) and keeps it with every segment it holds. The events a `feed` (or `finish`)
appends belong to the packet fed last, except those listed in `late_packets` as
`(index in events, event, packet)`: events made of bytes (or reporting a hole before
bytes) that an earlier packet carried. Entries whose event is no longer at its index in
`events` are stale (the caller cleared `events` without reading them) and are dropped
when the next one is added; `event_packets` reads the list and clears it.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import IntEnum
from heapq import heappop, heappush
from typing import Any, NamedTuple

from amqpcli.capture.decode import (
    ACK,
    FIN,
    RST,
    SYN,
    Address,
    Segment,
    SegmentTuple,
    format_ip,
)
from amqpcli.capture.detect import (
    AMQP_PROTOCOLS,
    NEEDED,
    UNKNOWN,
    detect,
    is_client_hello,
)

_new = tuple.__new__  # builds an event tuple without the NamedTuple's Python-level __new__
_M = 0xFFFFFFFF
_H = 0x80000000

AMQP_PORTS = frozenset({5672, 5671, 5682})
MAX_EARLY_CHUNKS = 64  # chunks held for a flow whose protocol is not known yet


class Direction(IntEnum):
    CLIENT_TO_SERVER = 0
    SERVER_TO_CLIENT = 1


C2S = Direction.CLIENT_TO_SERVER
S2C = Direction.SERVER_TO_CLIENT

Endpoint = tuple[Address, int]
FlowKey = tuple[Address, int, Address, int]

_PROBING, _LIVE, _SKIP = 0, 1, 2


def flow_key(src: Address, sport: int, dst: Address, dport: int) -> FlowKey:
    """The canonical (direction-independent) key of a TCP connection: the smaller
    endpoint first."""
    if (src, sport) <= (dst, dport):  # type: ignore[operator]
        return (src, sport, dst, dport)
    return (dst, dport, src, sport)


def endpoint_text(e: Any) -> str:
    """An endpoint as every view names it: `10.0.0.1:40000`, `[::1]:5672`, a frame-trace
    log's `C3:0` (its id is text, no address), `?` when unknown."""
    if e is None:
        return "?"
    ip = e[0] if isinstance(e[0], str) else format_ip(e[0])
    return f"[{ip}]:{e[1]}" if ":" in ip else f"{ip}:{e[1]}"


class Flow:
    """One TCP connection. `client`/`server` are (address, port); `protocol` is a name from
    `detect` (None until decided); `index` counts flows in order of their first packet;
    `retransmitted` and `reordered` tell how clean the capture of it was."""

    __slots__ = (
        "_early",
        "_halves",
        "_probe",
        "_state",
        "by_port",
        "client",
        "first_ns",
        "handshake",
        "index",
        "key",
        "last_ns",
        "protocol",
        "reordered",
        "retransmitted",
        "rtt_ns",
        "selected",
        "server",
        "syn_ns",
    )

    def __init__(self, index: int, key: FlowKey, first_ns: int) -> None:
        self.index = index
        self.key = key
        self.client: Endpoint | None = None
        self.server: Endpoint | None = None
        self.protocol: str | None = None
        self.selected = False
        self.by_port = False
        self.handshake = False
        self.first_ns = first_ns
        # the time of its last packet with payload, for a flow whose bytes nobody reads:
        # set here for one not reassembled (not selected: TLS, another protocol), which no
        # event carries, and by the dissector for one it reads no bytes of (AMQP over TLS)
        self.last_ns = first_ns
        self.retransmitted = 0  # payload bytes seen again (retransmissions, overlaps)
        self.reordered = 0  # segments that arrived ahead of a hole
        # the handshake's round trip as the capture saw it: from the client's (last) SYN
        # to its first segment after the SYN-ACK, both legs of the path through the
        # capture point; None without a whole handshake
        self.rtt_ns: int | None = None
        self.syn_ns: int | None = None  # that SYN's time, until the handshake completes
        self._state = _PROBING
        self._halves: tuple[_Half, _Half] | None = None
        # (half, time, bytes or None for a hole, offset, size, packet)
        self._early: list[tuple[_Half, int, bytes | None, int, int, int]] = []
        self._probe: _Half | None = None

    @property
    def client_ip(self) -> str:
        return format_ip(self.client[0]) if self.client else ""

    @property
    def server_ip(self) -> str:
        return format_ip(self.server[0]) if self.server else ""

    @property
    def client_port(self) -> int:
        return self.client[1] if self.client else 0

    @property
    def server_port(self) -> int:
        return self.server[1] if self.server else 0

    def describe(self) -> str:
        return f"{endpoint_text(self.client)} -> {endpoint_text(self.server)}"

    def __repr__(self) -> str:
        return f"<Flow #{self.index} {self.describe()} {self.protocol}>"


class Opened(NamedTuple):
    flow: Flow
    time_ns: int


class Data(NamedTuple):
    flow: Flow
    direction: Direction
    time_ns: int
    data: memoryview | bytes
    offset: int  # stream offset of data[0] in this direction (0 = first byte after SYN)


class Gap(NamedTuple):
    flow: Flow
    direction: Direction
    time_ns: int
    offset: int
    size: int


class Closed(NamedTuple):
    flow: Flow
    direction: Direction
    time_ns: int
    how: str  # "fin", "rst", "reset-by-peer" or "end"


Event = Opened | Data | Gap | Closed


class _Half:
    __slots__ = (
        "closed",
        "dir",
        "ep",
        "fin",
        "flow",
        "isn",
        "nxt",
        "off",
        "pbytes",
        "peer",
        "pending",
        "since",
        "started",
    )

    def __init__(self, flow: Flow, ep: Endpoint) -> None:
        self.flow = flow
        self.peer: _Half = self
        self.ep = ep
        self.dir = C2S
        self.started = False
        self.isn: int | None = None  # sequence number of the SYN, when seen
        self.nxt = 0
        self.off = 0
        # (stream offset, bytes, time, packet) of segments held beyond a hole
        self.pending: list[tuple[int, bytes, int, int]] = []
        self.pbytes = 0
        self.since = 0
        self.fin: int | None = None
        self.closed = False


class FlowTracker:
    """Reassembles the TCP flows of one capture (or of one flow's packets, in time order).

    `feed(time_ns, src, sport, dst, dport, seq, ack, flags, payload, packet)` appends
    events to `self.events`; the caller takes them and clears the list. `finish(time_ns)`
    closes what is still open. `feed_segment(time_ns, segment, packet)` takes a `Segment`
    tuple. `packet` (optional) is the caller's number for the packet: the events of
    bytes an earlier packet carried are listed with it in `late_packets` (see the
    module's docstring and `event_packets`).
    """

    def __init__(self, ports: Collection[int] = (), *, all_flows: bool = False,
                 max_buffer: int = 4 << 20, gap_timeout: float = 30.0,
                 closed_memory: int = 4096) -> None:
        self.ports = frozenset(ports)
        self.all_flows = all_flows
        self.max_buffer = max_buffer
        self.gap_timeout_ns = int(gap_timeout * 1e9)
        self.closed_memory = closed_memory
        self.events: list[Event] = []
        # (index in events, event, packet) of the events of an earlier packet's bytes
        self.late_packets: list[tuple[int, Event, int]] = []
        self.flow_count = 0
        self._halves: dict[FlowKey, _Half] = {}
        self._recent: dict[FlowKey, None] = {}
        self._last_ns = 0

    # -- input -------------------------------------------------------------------------

    def feed_segment(self, time_ns: int, s: Segment | SegmentTuple, packet: int = 0) -> None:
        src, sport, dst, dport, seq, ack, flags, payload = s
        self.feed(time_ns, src, sport, dst, dport, seq, ack, flags, payload, packet)

    def event_packets(self, current: int) -> list[int]:
        """The packet of each event in `events`: `current` (the packet fed last, or the
        last one before `finish`) but for those in `late_packets`, which this clears."""
        out = self.events
        numbers = [current] * len(out)
        for i, ev, packet in self.late_packets:
            if i < len(out) and out[i] is ev:
                numbers[i] = packet
        self.late_packets.clear()
        return numbers

    def _late(self, packet: int) -> None:
        """The event appended last carries bytes (or a hole before bytes) of `packet`."""
        out = self.events
        late = self.late_packets
        if late:
            i, ev = late[0][0], late[0][1]
            if i >= len(out) or out[i] is not ev:  # the caller cleared events unread
                late.clear()
        late.append((len(out) - 1, out[-1], packet))

    def feed(self, ts: int, src: Address, sport: int, dst: Address, dport: int, seq: int,
             ack: int, flags: int, payload: memoryview | bytes,
             packet: int = 0) -> bool | None:
        """Take one segment (`packet`: the caller's number for its packet). Returns None
        when it took the in-order path, which adds no event of an earlier packet (none
        to `late_packets`), else True: a caller that numbers events need look at
        `late_packets` only then."""
        self._last_ns = ts
        dkey = (src, sport, dst, dport)
        h = self._halves.get(dkey)
        # Fast path: a known, selected, open flow; no SYN/FIN/RST; the segment is the next
        # one expected (or carries nothing) and acknowledges nothing we did not see.
        if (h is not None and not flags & 7 and h.flow._state == _LIVE and h.started
                and not h.closed and (ack == h.peer.nxt or not flags & ACK)):
            n = len(payload)
            if not n:
                if not h.pending and not h.peer.pending:
                    return None
            elif seq == h.nxt:
                off = h.off
                h.off = off + n
                h.nxt = (seq + n) & _M
                self.events.append(_new(Data, (h.flow, h.dir, ts, payload, off)))
                if h.pending or h.fin is not None:  # (drain also closes at the FIN)
                    self._drain(h, ts, packet)
                if h.peer.pending and ts - h.peer.since > self.gap_timeout_ns:
                    self._skip_hole(h.peer, ts)
                    return True
                return None
        self._feed(ts, src, sport, dst, dport, seq, ack, flags, payload, dkey, h, packet)
        return True

    def _feed(self, ts: int, src: Address, sport: int, dst: Address, dport: int, seq: int,
              ack: int, flags: int, payload: memoryview | bytes, dkey: FlowKey,
              h: _Half | None, packet: int) -> None:
        n = len(payload)
        if h is not None and flags & SYN and not flags & ACK and seq != h.isn:
            self._end_flow(h.flow, ts)  # the 4-tuple is reused by a new connection
            h = None
        if h is None:
            if not (flags & SYN or n) or flags & RST:
                return  # a bare ACK/FIN/RST of a connection we know nothing of
            if not flags & SYN and dkey in self._recent:
                return  # a straggler of a connection already closed
            h = self._new_flow(ts, src, sport, dst, dport, flags)
        flow = h.flow
        if flow._state == _SKIP:
            if n:
                flow.last_ns = ts
            if flags & (FIN | RST):
                self._skip_close(h, flags)
            return
        if flags & RST:
            self._reset(h, ts)
            return
        peer = h.peer
        if ack != peer.nxt and flags & ACK and peer.started and not peer.closed:
            d = ((ack - peer.nxt + _H) & _M) - _H
            if d > 0:
                self._acked_past(peer, ts, d, packet)
                if flow._state == _SKIP:  # decided while filling the hole
                    return
        if h.closed:
            return
        if not h.started:
            if flags & SYN:
                h.isn = seq
                h.nxt = (seq + 1) & _M
            elif n or flags & FIN:
                h.nxt = seq
            else:
                return
            h.started = True
        if flags & SYN:
            seq = (seq + 1) & _M  # data on a SYN starts after it
            if not flags & ACK and flow.rtt_ns is None:
                flow.syn_ns = ts  # (a SYN sent again starts the round trip again)
        elif flow.syn_ns is not None and h.dir == C2S and peer.isn is not None:
            # the client's first segment after the server's SYN-ACK (the slow path only
            # sees it: a flow is not live before its first bytes)
            flow.rtt_ns = ts - flow.syn_ns
            flow.syn_ns = None
        delta = ((seq - h.nxt + _H) & _M) - _H
        if n:
            if delta == 0 and flow._state == _LIVE:  # the common case, inlined
                off = h.off
                h.off = off + n
                h.nxt = (h.nxt + n) & _M
                self.events.append(_new(Data, (flow, h.dir, ts, payload, off)))
                if h.pending:
                    self._drain(h, ts, packet)
            elif delta <= 0:
                flow.retransmitted += min(n, -delta)
                if n + delta > 0:
                    self._deliver(h, ts, payload[-delta:] if delta else payload, packet)
                    if h.pending:
                        self._drain(h, ts, packet)
            else:
                flow.reordered += 1
                if not h.pending:
                    h.since = ts
                heappush(h.pending, (h.off + delta, bytes(payload), ts, packet))
                h.pbytes += n
                if h.pbytes > self.max_buffer:
                    self._skip_hole(h, ts)
        if flags & FIN and h.fin is None and not h.closed:
            h.fin = h.off + delta + n
        if h.fin is not None and h.off >= h.fin and not h.closed:
            self._close(h, ts, "fin")
            return
        if h.pending and ts - h.since > self.gap_timeout_ns:
            self._skip_hole(h, ts)
        if peer.pending and ts - peer.since > self.gap_timeout_ns:
            self._skip_hole(peer, ts)

    def finish(self, time_ns: int | None = None) -> None:
        """End of input: report holes and close every open direction (how="end", or "fin"
        when the FIN was seen)."""
        ts = self._last_ns if time_ns is None else time_ns
        for flow in {id(h.flow): h.flow for h in self._halves.values()}.values():
            self._end_flow(flow, ts)
        self._halves.clear()

    def _end_flow(self, flow: Flow, ts: int) -> None:
        if flow._state == _PROBING:
            self._decide(flow, ts)
        if flow._state == _SKIP:
            self._forget(flow)
            return
        for half in flow._halves or ():
            if not half.closed:
                self._flush(half, ts, half.fin)
                self._close(half, ts, "fin" if half.fin is not None else "end")

    def open_flows(self) -> int:
        """Connections currently tracked (selected or not)."""
        return len(self._halves) // 2

    def buffered_bytes(self) -> int:
        """Bytes held out of order, waiting for a hole to fill."""
        return sum(h.pbytes for h in self._halves.values())

    # -- flows ---------------------------------------------------------------------------

    def _new_flow(self, ts: int, src: Address, sport: int, dst: Address, dport: int,
                  flags: int) -> _Half:
        flow = Flow(self.flow_count, flow_key(src, sport, dst, dport), ts)
        self.flow_count += 1
        a = _Half(flow, (src, sport))
        b = _Half(flow, (dst, dport))
        a.peer, b.peer = b, a
        flow._halves = (a, b)
        if flags & SYN:
            flow.handshake = True
            self._set_client(flow, b if flags & ACK else a)
        self._halves[(src, sport, dst, dport)] = a
        self._halves[(dst, dport, src, sport)] = b
        return a

    @staticmethod
    def _set_client(flow: Flow, client: _Half) -> None:
        flow.client, flow.server = client.ep, client.peer.ep
        client.dir, client.peer.dir = C2S, S2C

    def _decide(self, flow: Flow, ts: int) -> None:
        """Name the flow's protocol and roles, then emit what waited for that."""
        probe = flow._probe
        first = b"".join(
            e[2] for e in flow._early if e[0] is probe and e[2] is not None
        )[:NEEDED]
        proto = detect(first)
        a, b = flow._halves  # type: ignore[misc]
        if flow.client is None:
            known = self.ports | AMQP_PORTS
            first_half = probe or a
            pa, pb = first_half.ep[1], first_half.peer.ep[1]
            on_port = (pb in known) != (pa in known)  # exactly one side on an AMQP port
            if probe is not None and (is_client_hello(first) or (
                    first[:4] == b"AMQP" and not (on_port and pa in known))):
                # a header says client, unless it comes from the AMQP port: then it is
                # the server's answer to a client header the capture missed
                self._set_client(flow, probe)
            elif on_port:
                self._set_client(flow, first_half if pb in known else first_half.peer)
            elif pa != pb:
                self._set_client(flow, first_half if pa > pb else first_half.peer)
            else:
                self._set_client(flow, first_half)
        by_port = a.ep[1] in self.ports or b.ep[1] in self.ports
        flow.protocol = proto
        flow.by_port = by_port and proto not in AMQP_PROTOCOLS
        flow.selected = self.all_flows or proto in AMQP_PROTOCOLS or (
            proto == UNKNOWN and by_port
        )
        out = self.events
        out.append(Opened(flow, ts))
        early = flow._early
        flow._early = []
        if flow.selected:
            flow._state = _LIVE
            for h, t, data, off, size, packet in early:
                if data is None:
                    out.append(Gap(flow, h.dir, t, off, size))
                else:
                    out.append(Data(flow, h.dir, t, data, off))
                self._late(packet)  # (held until now: perhaps an earlier packet's)
        else:
            flow._state = _SKIP
            for h in (a, b):
                h.pending.clear()
                h.pbytes = 0

    def _skip_close(self, h: _Half, flags: int) -> None:
        if flags & RST:
            h.closed = h.peer.closed = True
        else:
            h.closed = True
        if h.closed and h.peer.closed:
            self._forget(h.flow)

    def _forget(self, flow: Flow) -> None:
        a, b = flow._halves  # type: ignore[misc]
        for k in ((*a.ep, *b.ep), (*b.ep, *a.ep)):
            if self._halves.get(k) is a or self._halves.get(k) is b:  # type: ignore[call-overload]
                del self._halves[k]  # type: ignore[arg-type]
            self._recent[k] = None  # type: ignore[index]
        while len(self._recent) > self.closed_memory:
            del self._recent[next(iter(self._recent))]

    # -- reassembly ----------------------------------------------------------------------

    def _deliver(self, h: _Half, ts: int, data: memoryview | bytes, packet: int,
                 late: bool = False) -> None:
        """Pass on `data`, the next bytes of `h`, with the time and packet they go with;
        `late`: those of the segment that carried them, not of the packet fed last."""
        off = h.off
        n = len(data)
        h.off = off + n
        h.nxt = (h.nxt + n) & _M
        flow = h.flow
        if flow._state == _LIVE:
            self.events.append(_new(Data, (flow, h.dir, ts, data, off)))
            if late:
                self._late(packet)
        elif flow._state == _PROBING:
            if flow._probe is None:
                flow._probe = h
            early = flow._early
            early.append((h, ts, bytes(data), off, n, packet))
            if h is flow._probe:
                if sum(e[4] for e in early if e[0] is h and e[2] is not None) >= NEEDED:
                    self._decide(flow, ts)
            elif len(early) > MAX_EARLY_CHUNKS:
                # the first sender stays below 8 bytes while the other side talks on:
                # decide with what there is rather than hold the other side's bytes
                self._decide(flow, ts)

    def _gap(self, h: _Half, ts: int, size: int, packet: int, late: bool = False) -> None:
        """Report `size` bytes lost, at `ts` and `packet`: those of the packet fed last
        (the hole has nothing held after it), or with `late` those of the segment held
        that the hole ends at."""
        off = h.off
        h.off = off + size
        h.nxt = (h.nxt + size) & _M
        flow = h.flow
        if flow._state == _LIVE:
            self.events.append(Gap(flow, h.dir, ts, off, size))
            if late:
                self._late(packet)
        elif flow._state == _PROBING:
            flow._early.append((h, ts, None, off, size, packet))

    def _drain(self, h: _Half, ts: int, packet: int, own: bool = False) -> None:
        """Deliver the segments held that have become contiguous: at `ts` and `packet`
        (a packet filled the hole before them), or with `own`, each at its own time and
        packet (the hole was given up)."""
        pend = h.pending
        while pend and pend[0][0] <= h.off:
            off, data, t, p = heappop(pend)
            h.pbytes -= len(data)
            end = off + len(data)
            h.flow.retransmitted += min(end, h.off) - off
            if end > h.off:
                if own:
                    self._deliver(h, t, memoryview(data)[h.off - off :], p, True)
                else:
                    self._deliver(h, ts, memoryview(data)[h.off - off :], packet)
        if pend:
            h.since = ts
        if h.fin is not None and h.off >= h.fin and not h.closed:
            self._close(h, ts, "fin")

    def _skip_hole(self, h: _Half, ts: int) -> None:
        """Give up on the hole before the first buffered segment: the segments held
        after it go out with their own times and packets."""
        if h.pending:
            first, _data, t, p = h.pending[0]
            if first > h.off:
                self._gap(h, t, first - h.off, p, True)
            self._drain(h, ts, 0, True)

    def _flush(self, h: _Half, ts: int, upto: int | None) -> None:
        """Deliver everything buffered, reporting holes; then a hole up to `upto`."""
        while h.pending and not h.closed:
            self._skip_hole(h, ts)
        if upto is not None and upto > h.off and not h.closed:
            self._gap(h, ts, upto - h.off, 0)  # (live: finish and reset decide first)

    def _acked_past(self, h: _Half, ts: int, d: int, packet: int) -> None:
        """The other side acknowledged `d` bytes beyond what `h` delivered (in `packet`,
        at `ts`)."""
        target = h.off + d
        if h.fin is not None and target > h.fin:
            target = h.fin  # the FIN takes one sequence number
        while h.off < target and not h.closed:
            if h.pending and h.pending[0][0] <= h.off:
                self._drain(h, ts, 0, True)
                continue
            if h.pending and h.pending[0][0] <= target:  # the hole ends at a segment held
                first, _data, t, p = h.pending[0]
                self._gap(h, t, first - h.off, p, True)
            else:
                self._gap(h, ts, target - h.off, packet)
            self._drain(h, ts, 0, True)

    def _close(self, h: _Half, ts: int, how: str) -> None:
        flow = h.flow
        if flow._state == _PROBING:
            self._decide(flow, ts)
        h.closed = True
        h.pending.clear()
        h.pbytes = 0
        if flow._state == _LIVE:
            self.events.append(Closed(flow, h.dir, ts, how))
        if h.peer.closed:
            self._forget(flow)

    def _reset(self, h: _Half, ts: int) -> None:
        """`h`'s side sent a RST: it ends both directions. The RST is `h`'s; the other
        side's direction, if still open, ends with it ("reset-by-peer"), or as its FIN
        said when one was seen (the bytes before it not all captured)."""
        for half, how in ((h, "rst"), (h.peer, "reset-by-peer")):
            if not half.closed:
                if half.flow._state == _PROBING:
                    self._decide(half.flow, ts)
                if half.flow._state == _LIVE:
                    self._flush(half, ts, None)  # (which closes a half its FIN ends)
                if not half.closed:
                    self._close(half, ts, "fin" if half is not h and half.fin is not None
                                else how)
