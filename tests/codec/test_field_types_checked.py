"""A plain Python value of a type a composite field's primitive cannot take is an
EncodeError that names the field's type: not a TypeError from deep in the encoder (a str
in a uint field), and not a value silently made another (a str in a boolean field read
as true)."""

from __future__ import annotations

import pytest

from amqpcli.codec import EncodeError, decode, encode, encode_as
from amqpcli.codec.composites import Data, Header, Open, Properties, Transfer


@pytest.mark.parametrize(("value", "said"), [
    (Header(priority="high"), "a ubyte field cannot hold str 'high'"),
    (Header(durable="no"), "a boolean field cannot hold str 'no'"),
    (Header(ttl=b"x"), "a uint field cannot hold bytes b'x'"),
    (Open(idle_time_out="x"), "a uint field cannot hold str 'x'"),
    (Transfer(handle=0, delivery_tag=5), "a binary field cannot hold int 5"),
    (Properties(absolute_expiry_time=1.5), "a timestamp field cannot hold float 1.5"),
    (Data(5), "a binary field cannot hold int 5"),
])
def test_a_plain_value_its_field_cannot_take_is_an_encode_error(value: object, said: str) -> None:
    with pytest.raises(EncodeError, match=f"^{said}$".replace("(", r"\(")):
        encode(value)


def test_encode_as_a_spec_type_says_so_too() -> None:
    with pytest.raises(EncodeError, match="a uint field cannot hold str 'x'"):
        encode_as(bytearray(), "handle", "x")


def test_values_a_field_takes_still_encode_as_its_type() -> None:
    assert encode(Header(durable=1, priority=4, ttl=5)) == bytes.fromhex("005370c006034150045205")
    assert encode(Header(durable=True)) == bytes.fromhex("005370c0020141")
    # a bool is the AMQP boolean: in a field of another type, as a peer may send it
    assert encode(Header(priority=True)) == bytes.fromhex("005370c003024041")
    assert encode(Open(container_id="c", idle_time_out=5)) == bytes.fromhex("005310c00905a101634040405205")
    assert encode(Data(bytearray(b"x"))) == bytes.fromhex("005375a00178")


def test_a_decoded_field_of_another_type_still_encodes_as_it_came() -> None:
    # a peer's open with a string as idle-time-out: kept, and written back as it came
    raw = bytes.fromhex("005310c00a05a10178404040a10178")
    value, _ = decode(raw)
    assert value.idle_time_out == "x"
    assert encode(value) == raw
