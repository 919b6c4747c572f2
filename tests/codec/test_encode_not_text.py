"""A value that is not text where a string or symbol belongs (bytes from a trace log's
b"x", a number) is the codec's EncodeError, not a Python AttributeError."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import EncodeError, encode
from amqpcli.codec.composites import Open, SaslMechanisms
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Array


@pytest.mark.parametrize("value", [b"x", bytearray(b"x"), memoryview(b"x"), 7, 2.5])
@pytest.mark.parametrize("make", [
    lambda v: Open(container_id=v),
    lambda v: Open(container_id="a", hostname=v),
    lambda v: Open(container_id="a", offered_capabilities=v),
    lambda v: Open(container_id="a", offered_capabilities=[v]),
    lambda v: SaslMechanisms(sasl_server_mechanisms=v),
])
def test_a_non_text_string_or_symbol_field_is_an_encode_error(make: Any, value: Any) -> None:
    with pytest.raises(EncodeError, match=rf"(string|symbol).* got {type(value).__name__}"):
        encode(make(value))
    with pytest.raises(EncodeError):
        encode_frame(make(value), 0)


def test_an_array_of_symbols_with_bytes_is_an_encode_error() -> None:
    with pytest.raises(EncodeError):
        encode(Array([b"x"], "symbol"))


def test_text_still_encodes() -> None:
    assert encode(Open(container_id="a", offered_capabilities="b")).startswith(b"\x00\x53\x10")
