"""`amqp decode --json` items re-encode to the very bytes they were decoded from: a value
or a performative field in a wider encoding than needed, or a NaN whose payload or sign
"NaN" does not keep, is written with those bytes (`"encoded"`), read back by
`item_bytes_from_json`; canonical items carry nothing more."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from amqpcli.codec.composites import Open
from amqpcli.codec.decode import decode
from amqpcli.codec.frames import encode_frame
from amqpcli.render.items import ValueItem, item_bytes_from_json, item_to_json
from amqpcli.render.jsonvalues import JsonValueError
from tests.net.clirun import amqp_in_process, json_lines

# Values whose JSON alone encodes to other bytes (smaller forms, the NaN "NaN" reads as).
WIDE_VALUES = [
    "71ffffffff",  # int -1 as int32 (54ff)
    "7000000005",  # uint 5 as uint32 (5205)
    "800000000000000005",  # ulong 5 as ulong64 (5305)
    "b10000000161",  # str32 "a"
    "b30000000161",  # sym32 "a"
    "c0060171ffffffff",  # a list holding an int32 -1
    "c10902a101617100000001",  # a map holding an int32 1
    "008000000000000000055401",  # a described value, its descriptor an ulong64
    "727fc00001",  # float NaN with a payload
    "82fff8000000000000",  # double NaN with its sign bit
    "72ffc00000",  # float NaN with its sign bit
    "727f800001",  # float signalling NaN
    "827ff0000000000001",  # double signalling NaN
    "5600",  # boolean false as a byte (42)
    "5200",  # uint 0 as smalluint (43)
    "5300",  # ulong 0 as smallulong (44)
]

# Canonical values: written as they always were, with no bytes.
CANONICAL_VALUES = ["54ff", "5205", "5305", "a10161", "a30161", "c0030154ff",
                    "c10602a101615401", "0053055401", "727fc00000", "827ff8000000000000",
                    "45", "40", "a103616263", "7000000100", "71ffffff7f", "5201",
                    "b1" + f"{300:08x}" + "61" * 300, "c0060171ffffff7f",
                    # wider forms their JSON keeps ("code", "fmt"): a list32, an int32 array
                    "d0000000080000000254015402", "e00a0271ffffffff00000002"]


def _frame(body: bytes, payload: bytes = b"", type: int = 0) -> bytes:
    """A frame (channel 0) around `body` bytes (a performative), as they are."""
    rest = body + payload
    return (8 + len(rest)).to_bytes(4, "big") + bytes([2, type, 0, 0]) + rest


def _open_with_properties(value: bytes) -> bytes:
    """An open whose properties map is {sym "a": value}: container-id "c", then 8 nulls."""
    entry = b"\xa3\x01a" + value
    props = bytes([0xC1, 1 + len(entry), 2]) + entry
    fields = b"\xa1\x01c" + b"\x40" * 8 + props
    return b"\x00\x53\x10" + bytes([0xC0, 1 + len(fields), 10]) + fields


WIDE_FRAMES = [
    # a performative field wider than needed: str32 container-id; uint32 max-frame-size
    _frame(bytes.fromhex("005310c00901b100000003616263")),
    _frame(bytes.fromhex("005310c00a03a10161407000000005")),
    # a performative holding NaNs "NaN" does not keep
    _frame(_open_with_properties(bytes.fromhex("727fc00001"))),
    _frame(_open_with_properties(bytes.fromhex("727f800001"))),
    _frame(_open_with_properties(bytes.fromhex("82fff8000000000000"))),
    # a descriptor wider than needed
    _frame(bytes.fromhex("00800000000000000010c00401a10163")),
    # an odd NaN and a wide field at once, and a payload after the performative
    _frame(bytes.fromhex("005310c01a0ab100000001634040404040404040c10902a30161727fc00001"),
           b"\x00\x53\x77\x45"),
]


def _decode_json(data: bytes, *args: str) -> list[dict[str, Any]]:
    code, out, err = amqp_in_process("decode", "--json", *args, stdin=data)
    assert code == 0, err
    return json_lines(out)


def _bytes(items: list[dict[str, Any]]) -> bytes:
    return b"".join(item_bytes_from_json(json.loads(json.dumps(i))) for i in items)


@pytest.mark.parametrize("hexed", WIDE_VALUES)
def test_a_value_in_a_wider_encoding_round_trips(hexed: str) -> None:
    data = bytes.fromhex(hexed)
    items = _decode_json(data, "--input", "raw", "--as", "values")
    assert [i["item"] for i in items] == ["value"]
    assert base64.b64decode(items[0]["encoded"]) == data
    assert _bytes(items) == data


def test_values_back_to_back_round_trip() -> None:
    data = bytes.fromhex("".join(WIDE_VALUES + CANONICAL_VALUES))
    items = _decode_json(data, "--input", "raw", "--as", "values")
    assert len(items) == len(WIDE_VALUES) + len(CANONICAL_VALUES)
    assert _bytes(items) == data
    # as hex text, the way the CLI takes it as an argument, too
    code, out, err = amqp_in_process("decode", "--json", *WIDE_VALUES[:3])
    assert code == 0, err
    assert _bytes(json_lines(out)) == bytes.fromhex("".join(WIDE_VALUES[:3]))


@pytest.mark.parametrize("hexed", CANONICAL_VALUES)
def test_a_canonical_value_carries_no_bytes(hexed: str) -> None:
    data = bytes.fromhex(hexed)
    items = _decode_json(data, "--input", "raw", "--as", "values")
    assert "encoded" not in items[0]
    assert _bytes(items) == data


@pytest.mark.parametrize("frame", WIDE_FRAMES, ids=range(len(WIDE_FRAMES)))
def test_a_frame_in_a_wider_encoding_round_trips(frame: bytes) -> None:
    data = b"AMQP\x00\x01\x00\x00" + frame
    items = _decode_json(data, "--input", "raw")
    assert [i["item"] for i in items] == ["protocol-header", "frame"]
    assert "encoded" in items[1]["performative"]
    assert _bytes(items) == data


def test_a_canonical_frame_carries_no_bytes() -> None:
    data = (b"AMQP\x00\x01\x00\x00" + encode_frame(Open(container_id="c"))
            + _frame(_open_with_properties(bytes.fromhex("727fc00000"))))
    items = _decode_json(data, "--input", "raw")
    assert all("encoded" not in i["performative"] for i in items[1:])
    assert _bytes(items) == data


def test_an_edited_value_wins_over_its_bytes() -> None:
    (item,) = _decode_json(bytes.fromhex("71ffffffff"), "--input", "raw", "--as", "values")
    assert item["value"] == {"int": -1}
    assert item_bytes_from_json(item) == bytes.fromhex("71ffffffff")
    assert item_bytes_from_json({**item, "value": {"int": 5}}) == bytes.fromhex("5405")
    assert item_bytes_from_json({**item, "value": {"long": -1}}) == bytes.fromhex("55ff")
    (nan,) = _decode_json(bytes.fromhex("727fc00001"), "--input", "raw", "--as", "values")
    assert item_bytes_from_json({**nan, "value": {"double": "NaN"}}) == bytes.fromhex(
        "827ff8000000000000")
    # map members reordered: an edit (its bytes would say otherwise)
    m = bytes.fromhex("c1 0e 04 a1 01 61 71 00000001 a1 01 62 54 02")
    (item,) = _decode_json(m, "--input", "raw", "--as", "values")
    assert item_bytes_from_json(item) == m
    entries = item["value"]["map"]
    reordered = {**item, "value": {**item["value"], "map": dict(reversed(entries.items()))}}
    assert item_bytes_from_json(reordered) == bytes.fromhex("c10b04a101625402a101615401")


def test_bytes_that_are_no_one_value_are_an_error() -> None:
    item = {"item": "value", "offset": 0, "type": "int", "value": {"int": -1}}
    for bad in ("71ff", "71ffffffff54ff"):
        obj = {**item, "encoded": base64.b64encode(bytes.fromhex(bad)).decode()}
        with pytest.raises(JsonValueError) as e:
            item_bytes_from_json(obj)
        assert e.value.path == "encoded"


def test_a_masked_value_carries_no_bytes() -> None:
    # a sasl-init as a value, its mechanism a sym32 (wider than needed)
    fields = b"\xb3\x00\x00\x00\x05PLAIN" + b"\xa0\x0c\x00bob\x00hunter2"
    data = b"\x00\x53\x41" + bytes([0xC0, 1 + len(fields), 2]) + fields
    (item,) = _decode_json(data, "--input", "raw", "--as", "values")
    assert item["redacted"] is True and "encoded" not in item
    assert "hunter2" not in json.dumps(item)
    (item,) = _decode_json(data, "--input", "raw", "--as", "values", "--show-secrets")
    assert "redacted" not in item
    assert item_bytes_from_json(item) == data


def test_a_sasl_frame_masked_carries_no_bytes() -> None:
    fields = b"\xb3\x00\x00\x00\x05PLAIN" + b"\xa0\x0c\x00bob\x00hunter2"
    init = b"\x00\x53\x41" + bytes([0xC0, 1 + len(fields), 2]) + fields
    wide = b"AMQP\x03\x01\x00\x00" + _frame(init, type=1)
    items = _decode_json(wide, "--input", "raw")
    assert "hunter2" not in json.dumps(items)
    assert items[1]["redacted"] is True and "encoded" not in items[1]["performative"]
    items = _decode_json(wide, "--input", "raw", "--show-secrets")
    assert _bytes(items) == wide


def test_not_exact_writes_no_bytes() -> None:
    data = bytes.fromhex("71ffffffff")
    value, size = decode(data)
    item = ValueItem(0, value, size, data)
    assert "encoded" in item_to_json(item)
    assert "encoded" not in item_to_json(item, exact=False)
    assert "encoded" not in item_to_json(ValueItem(0, value, size))  # bytes not known
