"""Damaged input of any kind ends in a CaptureError (or reads cleanly): never another
exception."""

from __future__ import annotations

import io
from collections.abc import Iterator

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


SAMPLES = [_capture(f, lt) for f in ("pcap", "pcapng") for lt in (1, 113, 276, 0, 101)]


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
    """The events of a capture, normalised, and its error: read by `read_capture` (the
    packets read in place from each block, `decode_at`) or packet by packet
    (`read_packets`, a memoryview per packet, `decode`), the general path."""
    from amqpcli.capture import FlowTracker, read_packets

    out: list[tuple[object, ...]] = []
    error = None
    if in_place:
        events = read_capture(io.BytesIO(data), all_flows=True)
    else:
        def general() -> Iterator[object]:
            tracker = FlowTracker(all_flows=True)
            dec = PacketDecoder()
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
            out.append((type(ev).__name__, ev[0].index, *(
                bytes(x) if isinstance(x, (bytes, memoryview)) else x for x in ev[1:])))
    except CaptureError as e:
        error = str(e)
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
