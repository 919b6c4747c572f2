"""Damaged input of any kind ends in a CaptureError (or reads cleanly): never another
exception."""

from __future__ import annotations

import io

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
