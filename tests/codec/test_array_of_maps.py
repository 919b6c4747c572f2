"""An array of maps whose element (after the first) has keys Python merges (int 1 and
long 1) or cannot hash (a list) decodes: the entries were read again from an offset
worked out from the byte before the element, taken for its constructor, which an
array's elements do not have (`expected a format code, found 0x01`)."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

from amqpcli.codec import Array, decode, encode
from amqpcli.codec.types import DecodeError, MapKey

PLAIN = bytes.fromhex("a101615401")  # "a": int 1
ENDS_IN_C1 = bytes.fromhex("a1016150c1")  # "a": ubyte 0xc1 (map8's constructor)
MERGED = bytes.fromhex("5401a101615501a10162")  # int 1: "a", long 1: "b"
LIST_KEY = bytes.fromhex("c0030154 01a10178".replace(" ", ""))  # [int 1]: "x"


def _map8(entries: bytes, count: int) -> bytes:
    return bytes([len(entries) + 1, count]) + entries


def _map32(entries: bytes, count: int) -> bytes:
    return struct.pack(">II", len(entries) + 4, count) + entries


@pytest.mark.parametrize(("constructor", "element"), [(0xC1, _map8), (0xD1, _map32)],
                         ids=["map8", "map32"])
@pytest.mark.parametrize("first", [PLAIN, ENDS_IN_C1], ids=["plain", "ends-in-c1"])
@pytest.mark.parametrize("second", [MERGED, LIST_KEY], ids=["merged-keys", "list-key"])
def test_a_later_map_element_with_kept_keys_decodes(
        constructor: int, element: Callable[[bytes, int], bytes], first: bytes,
        second: bytes) -> None:
    elements = [element(first, 2), element(second, 4 if second is MERGED else 2)]
    body = bytes([constructor]) + b"".join(elements)
    raw = b"\xf0" + struct.pack(">II", len(body) + 4, 2) + body
    value, end = decode(raw)
    assert end == len(raw) and isinstance(value, Array) and len(value) == 2
    assert list(value[0]) == ["a"]
    assert any(isinstance(k, MapKey) for k in value[1])
    assert encode(value) == raw


@pytest.mark.parametrize(("hex_", "at"), [
    ("e00802c1010002010140", 7),  # the second map element's count, in an array
    ("c1020140", 2),  # a map8's count
    ("d1000000050000000140", 5),  # a map32's count
])
def test_an_odd_map_count_is_said_where_the_count_is(hex_: str, at: int) -> None:
    """It was said at the byte before the map's size: the constructor of a map on its
    own, but in an array the last byte of the element before."""
    with pytest.raises(DecodeError) as e:
        decode(bytes.fromhex(hex_))
    assert e.value.offset == at and "even map count" in str(e.value)
