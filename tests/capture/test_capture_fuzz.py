"""Damaged input of any kind ends in a CaptureError (or reads cleanly): never another
exception."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.capture import CaptureError, read_capture
from amqpcli.capture.decode import PacketDecoder
from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation


def _capture(fmt: str, linktype: int) -> bytes:
    buf = io.BytesIO()
    with CaptureWriter(buf, format=fmt, linktype=linktype) as w:
        c = TcpConversation(w, mss=60)
        c.handshake()
        c.send(C2S, b"AMQP\x00\x01\x00\x00" + bytes(range(200)), reorder=True)
        c.send(S2C, b"AMQP\x00\x01\x00\x00" + bytes(100), drop={1})
        c.close()
    return buf.getvalue()


def _odd_frames(fmt: str) -> bytes:
    """One conversation in frames the fast paths must tell apart: Ethernet padding after
    the IP packet, an IP total length of 0 (segmentation offload) or beyond the captured
    bytes, IP options, VLAN tags, fragments, IPv6 and other link types."""
    from amqpcli.capture.decode import ACK, SYN
    from amqpcli.capture.writer import fragment_ipv4, link_frame, tcp_packet

    buf = io.BytesIO()
    with CaptureWriter(buf, format=fmt, linktype=1) as w:
        t = 1_700_000_000_000_000_000
        c, s = ("10.0.0.1", 40000), ("10.0.0.2", 5672)
        seq = [1000, 9000]
        w.write(t, link_frame(1, tcp_packet(*c, *s, seq[0] - 1, 0, SYN)))
        w.write(t + 1, link_frame(1, tcp_packet(*s, *c, seq[1] - 1, seq[0], SYN | ACK)))
        data = b"AMQP\x00\x01\x00\x00" + bytes(range(256)) * 3
        for i, size in enumerate((8, 1, 30, 57, 90, 3, 120, 40, 200, 70)):
            chunk, data = data[:size], data[size:]
            ip = tcp_packet(*c, *s, seq[0], seq[1], ACK, chunk, ident=i,
                            ip_options=b"\x01\x01\x01\x01" if i == 3 else b"")
            seq[0] += len(chunk)
            kind = i % 6
            if kind == 1:
                frame = link_frame(1, ip) + b"\x00" * 17  # padding after the IP packet
            elif kind == 2:
                frame = link_frame(1, ip[:2] + b"\x00\x00" + ip[4:])  # total length 0
            elif kind == 3:
                frame = link_frame(1, ip, vlans=[5])
            elif kind == 4:
                for part in fragment_ipv4(ip, 40):
                    w.write(t + 10 + i, link_frame(1, part))
                continue
            elif kind == 5:
                frame = link_frame(1, ip[:2] + (len(ip) + 9).to_bytes(2, "big") + ip[4:])
            else:
                frame = link_frame(1, ip)
            w.write(t + 10 + i, frame)
        w.write(t + 50, link_frame(1, tcp_packet(*s, *c, seq[1], seq[0], ACK, b"AMQP")))
    return buf.getvalue()


def _holes(fmt: str) -> bytes:
    """Holes given up with segments held after them, each segment to be handed out with
    its own packet: by the other side's acknowledgement, the gap timeout, the end of
    the capture (a mid-stream flow, its roles by port), and a FIN; and a hole filled
    late."""
    from amqpcli.capture.decode import ACK, FIN, PSH

    buf = io.BytesIO()
    with CaptureWriter(buf, format=fmt) as w:
        c = TcpConversation(w, mss=40)
        c.handshake()
        c.send(C2S, b"AMQP\x00\x01\x00\x00" + bytes(range(200)), drop={2})  # acked past
        c.send(S2C, b"AMQP\x00\x01\x00\x00", ack=False)
        acked = c.seq[S2C]
        segs = c.segments(S2C, bytes(range(56, 256)))
        for i, (seq, data) in enumerate(segs):
            if i != 1:
                c.packet(S2C, seq, data, ACK | PSH, ack=c.seq[C2S])
        c.now += 31_000_000_000  # the gap timeout, seen on the client's next segment
        c.packet(C2S, c.seq[C2S], b"ping", ACK | PSH, ack=acked)
        c.seq[C2S] += 4
        segs = c.segments(C2S, bytes(range(160)))
        for seq, data in [segs[1], segs[0], segs[3]]:  # a hole filled late, one left open
            c.packet(C2S, seq, data, ACK | PSH, ack=c.seq[S2C])
        c.packet(C2S, c.seq[C2S], flags=FIN | ACK, ack=c.seq[S2C])
        m = TcpConversation(w, client=("10.0.0.3", 40001), mss=30)  # no handshake
        segs = m.segments(S2C, bytes(range(150)))
        for seq, data in segs[:1] + segs[2:]:
            m.packet(S2C, seq, data, ACK | PSH)
    return buf.getvalue()


SAMPLES = [_capture(f, lt) for f in ("pcap", "pcapng") for lt in (1, 113, 276, 0, 101)] + [
    _holes(f) for f in ("pcap", "pcapng")] + [_odd_frames(f) for f in ("pcap", "pcapng")]


def _read(data: bytes) -> None:
    try:
        for _ev in read_capture(io.BytesIO(data), all_flows=True):
            pass
    except CaptureError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                         max_size=8), st.integers(0, 10**6))
def test_mutated_captures(sample: bytes, flips: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(sample)
    for pos, val in flips:
        data[pos % len(data)] = val
    _read(bytes(data[: max(0, len(data) - cut % len(data))]))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([0, 1, 12, 14, 101, 108, 113, 228, 229, 276]))
def test_decoder_takes_any_frame(frame: bytes, linktype: int) -> None:
    PacketDecoder().decode(linktype, memoryview(frame))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_are_not_a_capture(data: bytes) -> None:
    _read(data)


def _events(data: bytes, in_place: bool) -> tuple[list[tuple[object, ...]], str | None]:
    """The events of a capture, normalised, each with the decoder's packet count when it
    was handed out (the number of the packet it belongs to: the packet read last, or the
    earlier one that carried bytes held beyond a hole given up), and the capture's error:
    read by `read_capture` (the packets read in place from each block, the usual frame
    decoded inline, `decode_at` for the others) or packet by packet (`read_packets`, a
    memoryview per packet, `decode`, each packet's number given to the tracker and the
    events numbered by `FlowTracker.event_packets`), the general path."""
    from amqpcli.capture import FlowTracker, read_packets

    out: list[tuple[object, ...]] = []
    error = None
    dec = PacketDecoder()
    if in_place:
        events = read_capture(io.BytesIO(data), all_flows=True, decoder=dec)
    else:
        def numbered(tracker: FlowTracker) -> Iterator[object]:
            count = dec.packets
            for ev, number in zip(tracker.events, tracker.event_packets(count), strict=True):
                dec.packets = number
                yield ev
            dec.packets = count
            tracker.events.clear()

        def general() -> Iterator[object]:
            tracker = FlowTracker(all_flows=True)
            try:
                for ts, lt, frame in read_packets(io.BytesIO(data)):
                    seg = dec.decode(lt, frame)
                    if seg is not None:
                        tracker.feed(ts, *seg, dec.packets)
                        yield from numbered(tracker)
            finally:
                tracker.finish()
                yield from numbered(tracker)
        events = general()
    try:
        for ev in events:
            out.append((dec.packets, type(ev).__name__, ev[0].index, *(
                bytes(x) if isinstance(x, (bytes, memoryview)) else x for x in ev[1:])))
    except CaptureError as e:
        error = str(e)
    out.append(("packets", dec.packets))
    return out, error


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                         max_size=8), st.integers(0, 10**6))
def test_reading_in_place_gives_the_events_of_the_general_path(
        sample: bytes, flips: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(sample)
    for pos, val in flips:
        data[pos % len(data)] = val
    data = data[: max(0, len(data) - cut % (len(data) + 1))]
    assert _events(bytes(data), True) == _events(bytes(data), False)


@pytest.mark.parametrize("sample", SAMPLES[-2:], ids=["pcap", "pcapng"])
def test_odd_frames_read_in_place_as_packet_by_packet(sample: bytes) -> None:
    events, error = _events(sample, True)
    assert error is None and len(events) > 5
    assert (events, error) == _events(sample, False)


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_held_segments_read_in_place_as_packet_by_packet(fmt: str) -> None:
    events, error = _events(_holes(fmt), True)
    assert error is None
    assert (events, error) == _events(_holes(fmt), False)
    # the bytes held after the holes given up went out with packets before the one read
    # when they did (each its own), and so did the gaps before them
    gaps = [e for e in events if e[1] == "Gap"]
    assert len(gaps) == 4
    late = [e for e in events if e[1] in ("Data", "Gap") and e[0] != max(
        x[0] for x in events[: events.index(e) + 1] if x[0] != "packets")]
    assert len(late) >= 8


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([0, 1, 12, 14, 101, 108, 113, 228, 229, 276]),
       st.binary(max_size=8), st.binary(max_size=8))
def test_decode_at_is_decode_of_the_slice(frame: bytes, linktype: int, before: bytes,
                                          after: bytes) -> None:
    def plain(seg: tuple[object, ...] | None) -> tuple[object, ...] | None:
        return None if seg is None else (*seg[:-1], bytes(seg[-1]))  # type: ignore[arg-type]

    dec = PacketDecoder()
    at = dec.decode_at(linktype, before + frame + after, len(before), len(before) + len(frame))
    assert plain(at) == plain(PacketDecoder().decode(linktype, memoryview(frame)))
    assert dec.packets == 1
