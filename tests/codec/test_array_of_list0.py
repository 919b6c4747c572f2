"""An array whose element constructor is list0 (0x45: every element an empty list, no
bytes each) decodes, and encodes back to its bytes: it was an EncodeError ("no array
element format 0x45"), so such an array could not be written again once anything around
it changed (a composite's field assigned, a JSON item edited)."""

from __future__ import annotations

import pytest

from amqpcli.codec import Array, EncodeError, decode, encode
from amqpcli.codec.composites import Open
from amqpcli.render.items import item_bytes_from_json
from amqpcli.render.jsonvalues import to_json


@pytest.mark.parametrize("hexed", ["e0020345", "f0000000050000000345", "e0020045"])
def test_an_array_of_list0_re_encodes_to_its_bytes(hexed: str) -> None:
    raw = bytes.fromhex(hexed)
    value, end = decode(raw)
    assert end == len(raw) and isinstance(value, Array) and all(x == [] for x in value)
    assert encode(value) == raw


def test_in_a_composite_whose_other_field_changed() -> None:
    entry = b"\xa3\x01a" + bytes.fromhex("e0020345")
    props = bytes([0xC1, 1 + len(entry), 2]) + entry
    fields = b"\xa1\x01c" + b"\x40" * 8 + props
    raw = b"\x00\x53\x10" + bytes([0xC0, 1 + len(fields), 10]) + fields
    value, _ = decode(raw)
    assert isinstance(value, Open)
    value.container_id = "c"  # assigned: encoded from its fields now
    assert encode(value) == raw


def test_a_json_value_item_without_its_bytes() -> None:
    item = {"item": "value", "value": to_json(decode(bytes.fromhex("e0020345"))[0])}
    assert item_bytes_from_json(item) == bytes.fromhex("e0020345")


@pytest.mark.parametrize("element", [[1], {}, Array([], "int")])
def test_only_empty_lists_are_list0_elements(element: object) -> None:
    with pytest.raises(EncodeError, match="array element 0x45 holds only"):
        encode(Array([element], "list", code=0x45))
