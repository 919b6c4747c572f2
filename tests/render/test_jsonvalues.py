"""The typed JSON encoding of AMQP values: readable where it can be, lossless always."""

from __future__ import annotations

import json
import math
import struct
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.codec.composites import Attach, Error, Open, Rejected, Source, Transfer
from amqpcli.codec.decode import decode, decode_all
from amqpcli.codec.encode import encode
from amqpcli.codec.types import (
    AmqpList,
    Array,
    Byte,
    Char,
    Decimal32,
    Decimal64,
    Decimal128,
    Described,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)
from amqpcli.render.jsonvalues import JsonValueError, from_json, to_json
from tests.paths import PROTON_VECTORS_DIR, require


def through_json(value: Any) -> Any:
    return from_json(json.loads(json.dumps(to_json(value))))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        ("text", "text"),
        (-5, -5),
        (Long(7), 7),
        ([1, "a"], [1, "a"]),
        (UByte(1), {"ubyte": 1}),
        (UShort(2), {"ushort": 2}),
        (UInt(3), {"uint": 3}),
        (ULong(4), {"ulong": 4}),
        (Byte(-1), {"byte": -1}),
        (Short(-2), {"short": -2}),
        (Int(-3), {"int": -3}),
        (Float(0.5), {"float": 0.5}),
        (1.25, {"double": 1.25}),
        (float("nan"), {"double": "NaN"}),
        (float("-inf"), {"double": "-Infinity"}),
        (Char("x"), {"char": "x"}),
        (Timestamp(1_767_225_600_123), {"timestamp": "2026-01-01T00:00:00.123Z"}),
        (uuid.UUID(int=1), {"uuid": "00000000-0000-0000-0000-000000000001"}),
        (b"hi", {"binary-text": "hi"}),
        (b"\x00\xff", {"binary": "AP8="}),
        (Symbol("amqp:x"), {"symbol": "amqp:x"}),
        (Decimal32(b"\x01\x02\x03\x04"), {"decimal32": "01020304"}),
        ({"a": 1}, {"map": {"a": 1}}),
        ({Symbol("a"): 1}, {"map": {"a": 1}, "keys": "symbol"}),
        ({UInt(1): "x", "s": None}, {"map": [[{"uint": 1}, "x"], ["s", None]]}),
        (Array([UInt(1), UInt(2)], "uint"), {"array": [1, 2], "type": "uint"}),
        (Described(Symbol("d"), 5), {"described": {"symbol": "d"}, "value": 5}),
    ],
)
def test_readable_forms(value: Any, expected: Any) -> None:
    assert to_json(value) == expected
    back = through_json(value)
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(back)
    else:
        assert back == value
        assert type(back) is type(value) or (type(value) is Long and type(back) is int)
        assert encode(back) == encode(value)


def test_composites_use_spec_names_and_plain_fields() -> None:
    t = Transfer(
        handle=UInt(0),
        delivery_id=UInt(3),
        delivery_tag=b"\x01",
        settled=True,
        state=Rejected(error=Error(condition=Symbol("amqp:not-found"), description="gone")),
    )
    j = to_json(t)
    assert j == {
        "transfer": {
            "handle": 0,
            "delivery-id": 3,
            "delivery-tag": "AQ==",
            "settled": True,
            "state": {
                "rejected": {
                    "error": {"error": {"condition": "amqp:not-found", "description": "gone"}}
                }
            },
        }
    }
    assert through_json(t) == t and encode(through_json(t)) == encode(t)
    # A field holding another type than the spec's keeps its tag.
    odd = Open(container_id="c", max_frame_size=ULong(512))
    assert to_json(odd)["open"]["max-frame-size"] == {"ulong": 512}
    assert encode(through_json(odd)) == encode(odd)


def test_non_canonical_encodings_are_kept() -> None:
    # A list in its 32-bit form, an attach whose handle is a 4-byte uint of 0.
    wide_list = bytes.fromhex("d0000000050000000140") + b""
    value, _ = decode(bytes.fromhex("d000000005000000014041")[:10] + b"")
    assert isinstance(value, AmqpList)
    raw = encode(Attach(name="n", handle=UInt(0), role=False))
    wide = raw.replace(b"\xa1\x01n\x43", b"\xa1\x01n\x70\x00\x00\x00\x00")
    wide = wide[:4] + bytes([wide[4] + 4]) + wide[5:]
    attach, end = decode(wide)
    assert end == len(wide) and isinstance(attach, Attach)
    j = json.loads(json.dumps(to_json(attach)))
    assert "encoded" in j
    assert encode(from_json(j)) == wide
    assert encode(from_json(json.loads(json.dumps(to_json(value))))) == encode(value)
    assert wide_list  # the literal above is the 32-bit list form


def test_proton_interop_vectors_round_trip_to_the_same_bytes() -> None:
    files = sorted(require(PROTON_VECTORS_DIR / "interop").glob("*.amqp"))
    assert len(files) >= 9
    for f in files:
        data = f.read_bytes()
        values = decode_all(data)
        back = [through_json(v) for v in values]
        assert b"".join(encode(v) for v in back) == data, f.name


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=8),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(0, 255).map(UByte),
    st.integers(0, 2**16 - 1).map(UShort),
    st.integers(0, 2**32 - 1).map(UInt),
    st.integers(0, 2**64 - 1).map(ULong),
    st.integers(-128, 127).map(Byte),
    st.integers(-(2**15), 2**15 - 1).map(Short),
    st.integers(-(2**31), 2**31 - 1).map(Int),
    st.floats(width=32, allow_nan=False).map(
        lambda x: Float(struct.unpack(">f", struct.pack(">f", x))[0])
    ),
    st.floats(allow_nan=False),
    st.characters().map(Char),
    st.integers(-(2**63), 2**63 - 1).map(Timestamp),
    st.uuids(),
    st.binary(max_size=8),
    st.text(alphabet="abcxyz:-", max_size=8).map(Symbol),
    st.binary(min_size=8, max_size=8).map(Decimal64),
    st.binary(min_size=16, max_size=16).map(Decimal128),
)
_keys = st.one_of(
    st.text(max_size=4), st.text(alphabet="ab", max_size=3).map(Symbol), st.integers(0, 9).map(UInt)
)
_arrays = st.one_of(
    st.lists(st.integers(0, 2**32 - 1).map(UInt), max_size=4).map(lambda xs: Array(xs, "uint")),
    st.lists(st.text(alphabet="ab", max_size=3).map(Symbol), min_size=1, max_size=4).map(
        lambda xs: Array(xs, "symbol")
    ),
    st.lists(st.integers(-(2**63), 2**63 - 1).map(Timestamp), min_size=1, max_size=3).map(
        lambda xs: Array(xs, "timestamp")
    ),
    st.lists(st.binary(max_size=3), min_size=1, max_size=3).map(lambda xs: Array(xs, "binary")),
)
_values = st.recursive(
    st.one_of(_scalars, _arrays),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_keys, inner, max_size=4),
        st.tuples(
            st.one_of(
                st.integers(0, 2**64 - 1).map(ULong),
                st.text(alphabet="ab:", min_size=1, max_size=5).map(Symbol),
            ),
            inner,
        )
        .filter(
            lambda t: (
                not (type(t[0]) is ULong and t[0] < 0x100) and not str(t[0]).startswith("amqp:")
            )
        )
        .map(lambda t: Described(*t)),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_value_survives_json_byte_for_byte(value: Any) -> None:
    raw = encode(value)
    back = through_json(value)
    assert encode(back) == raw
    # And from its decoded form (with whatever the decoder keeps) too.
    decoded, _ = decode(raw)
    assert encode(through_json(decoded)) == raw


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        ({"uint": "x"}, "$.uint"),
        ({"nope": 1}, "$"),
        ({"uint": 1, "int": 2}, "$"),
        ({"binary": "***"}, "$.binary"),
        ({"map": 5}, "$.map"),
        ({"array": [1], "type": "uint", "x": 1}, "$"),
        ({"transfer": {"handel": 0}}, "$.transfer"),
        ([{"timestamp": "yesterday"}], "[0].timestamp"),
    ],
)
def test_bad_json_says_where(obj: Any, where: str) -> None:
    with pytest.raises(JsonValueError) as e:
        from_json(obj)
    assert str(e.value).startswith(where.lstrip("$") or "$") or str(e.value).startswith(where)


def test_source_field_in_attach_round_trips() -> None:
    a = Attach(
        name="x",
        handle=UInt(1),
        role=True,
        source=Source(
            address="q",
            filter={Symbol("jms-selector"): Described(ULong(0x0000468C00000004), "a = 1")},
        ),
    )
    j = to_json(a)
    assert j["attach"]["source"]["source"]["filter"]["keys"] == "symbol"
    assert encode(through_json(a)) == encode(a)


def test_value_holding_composites() -> None:
    from amqpcli.codec.composites import AmqpSequence, AmqpValue, Data

    for c in (AmqpSequence([UInt(1), "a"]), AmqpValue({"k": 1}), Data(b"\x00\x01")):
        j = to_json(c)
        assert list(j) == [c.NAME]
        assert through_json(c) == c and encode(through_json(c)) == encode(c)
    assert to_json(AmqpSequence([UInt(1)])) == {"amqp-sequence": [{"uint": 1}]}


def test_encoded_bytes_yield_to_edits() -> None:
    raw = encode(Attach(name="n", handle=UInt(0), role=False))
    wide = raw.replace(b"\xa1\x01n\x43", b"\xa1\x01n\x70\x00\x00\x00\x00")
    wide = wide[:4] + bytes([wide[4] + 4]) + wide[5:]
    j = to_json(decode(wide)[0])
    assert encode(from_json(j)) == wide
    j["attach"]["name"] = "edited"
    edited = from_json(j)
    assert edited.name == "edited" and encode(edited) == encode(
        Attach(name="edited", handle=UInt(0), role=False)
    )


_COMPOSITE_CODES = st.sampled_from([0x10, 0x12, 0x13, 0x14, 0x15, 0x41, 0x70, 0x73, 0x28, 0x1D])


@settings(max_examples=300, deadline=None)
@given(_COMPOSITE_CODES, st.lists(st.one_of(st.none(), _values), max_size=14))
def test_composites_with_any_field_values_survive_json(code: int, items: list[Any]) -> None:
    # Built as bytes, so fields may hold types the spec does not allow: a peer may send them.
    raw = encode(Described(ULong(code), items))
    decoded, end = decode(raw)
    assert end == len(raw)
    assert encode(through_json(decoded)) == raw


@settings(max_examples=500, deadline=None)
@given(st.integers(-(2**63), 2**63 - 1) | st.integers(-30_610_224_000_100, -30_610_223_999_900)
       | st.integers(253_402_300_799_000, 253_402_300_800_999) | st.integers(-5000, 5000))
def test_timestamps_read_as_iso_time_writes_them(ms: int) -> None:
    """The per-second cache of timestamp texts gives what `iso_time` gives, or the number."""
    from amqpcli.render.types import iso_time

    iso = iso_time(ms)
    for _ in range(2):  # the second time from the cache
        assert to_json(Timestamp(ms)) == {"timestamp": iso if iso is not None else ms}
