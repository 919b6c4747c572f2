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


SAMPLES = [_capture(f, lt) for f in ("pcap", "pcapng") for lt in (1, 113, 276, 0, 101)] + [
    _odd_frames(f) for f in ("pcap", "pcapng")]


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
    """The events of a capture, normalised, each with the number of packets read when it
    was handed out, and the capture's error: read by `read_capture` (the packets read in
    place from each block, the usual frame decoded inline, `decode_at` for the others)
    or packet by packet (`read_packets`, a memoryview per packet, `decode`), the general
    path."""
    from amqpcli.capture import FlowTracker, read_packets

    out: list[tuple[object, ...]] = []
    error = None
    dec = PacketDecoder()
    if in_place:
        events = read_capture(io.BytesIO(data), all_flows=True, decoder=dec)
    else:
        def general() -> Iterator[object]:
            tracker = FlowTracker(all_flows=True)
            try:
                for ts, lt, frame in read_packets(io.BytesIO(data)):
                    seg = dec.decode(lt, frame)
                    if seg is not None:
                        tracker.feed(ts, *seg)
                        yield from tracker.events
                        tracker.events.clear()
            finally:
                tracker.finish()
                yield from tracker.events
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
