"""Random and mutated inputs: decoding ends in values or a DecodeError, nothing else."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.codec import DecodeError, decode_all, encode
from amqpcli.codec.message import Message

from .helpers import values

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SECTIONS = (
    "header",
    "delivery_annotations",
    "message_annotations",
    "properties",
    "application_properties",
    "body",
    "footer",
)


def _decode_everything(data: bytes) -> None:
    try:
        for v in decode_all(data):
            encode(v)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)
    try:
        m = Message.decode(data)
        for name in SECTIONS:
            getattr(m, name)
        m.encode()
        m.bare_bytes  # noqa: B018
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    _decode_everything(data)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    v: Any = draw(values(15))
    b = bytearray(encode(v))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert"]))
        i = draw(st.integers(0, max(0, len(b) - 1)))
        if op == "flip" and b:
            b[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del b[i:]
        else:
            b[i:i] = draw(st.binary(min_size=1, max_size=4))
    return bytes(b)


@SETTINGS
@given(mutated())
def test_mutated_values(data: bytes) -> None:
    _decode_everything(data)


@SETTINGS
@given(mutated().map(lambda b: b"\x00\x53\x77" + b))
def test_mutated_messages(data: bytes) -> None:
    _decode_everything(data)
