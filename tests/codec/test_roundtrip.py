"""Property tests: random values and messages survive encode → decode → encode."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.codec import Array, Long, Symbol, Timestamp, UByte, UInt, decode, decode_all, encode
from amqpcli.codec.composites import (
    AmqpSequence,
    AmqpValue,
    Data,
    Header,
    Properties,
)
from amqpcli.codec.message import Message

from .helpers import PLAIN, SCALARS, ascii_text, hashable, same, text, values

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(values())
def test_value_round_trip(v: Any) -> None:
    b = encode(v)
    got, end = decode(b)
    assert end == len(b)
    assert same(got, v), (got, v)
    assert encode(got) == b


@SETTINGS
@given(st.lists(values(10), max_size=5))
def test_back_to_back(vs: list[Any]) -> None:
    b = b"".join(encode(v) for v in vs)
    got = decode_all(b)
    assert len(got) == len(vs) and all(same(g, v) for g, v in zip(got, vs, strict=True))


@SETTINGS
@given(PLAIN)
def test_plain_python_values(v: Any) -> None:
    got = decode(encode(v))[0]
    assert got == v
    assert type(got) is {int: Long, float: float, str: str}[type(v)]


@SETTINGS
@given(st.sampled_from(sorted(SCALARS)).flatmap(lambda n: st.tuples(st.just(n), SCALARS[n])))
def test_scalars_use_smallest_encoding(nv: tuple[str, Any]) -> None:
    name, v = nv
    b = encode(v)
    if name in ("uint", "ulong"):
        assert len(b) == (1 if v == 0 else 2 if v < 256 else 5 if name == "uint" else 9)
    if name in ("int", "long"):
        assert len(b) == (2 if -128 <= v <= 127 else 5 if name == "int" else 9)
    if name == "boolean":
        assert b in (b"\x41", b"\x42")


def test_noncanonical_widths_kept() -> None:
    list32 = bytes.fromhex("d0000000050000000141")
    map32 = bytes.fromhex("d100000006000000024141")
    arr = bytes.fromhex("f00000000d000000027100000001 00000002".replace(" ", ""))
    for b in (
        list32,
        map32,
        arr,
        bytes.fromhex("c00100"),
        bytes.fromhex("e0030152 01".replace(" ", "")),
    ):
        assert encode(decode(b)[0]) == b
    # once changed, an Array keeps its element constructor
    a = decode(arr)[0]
    a.append(3)
    assert encode(a)[9] == 0x71


def test_arrays_pick_element_codes_and_widen() -> None:
    # numbers in their full width, however small (as proton writes them; RabbitMQ 3.x
    # resets the connection at an array of smallint, smalllong, smalluint or smallulong)
    assert encode(Array([1, 2], "int")) == bytes.fromhex("e00a02710000000100000002")
    assert encode(Array([1, 300], "int"))[3] == 0x71
    for name, code in (("uint", 0x70), ("ulong", 0x80), ("long", 0x81)):
        assert encode(Array([1, 2], name))[3] == code
    # a small form decoded is kept (its constructor is the array's `code`)
    small = bytes.fromhex("e00402540102")
    assert encode(decode(small)[0]) == small
    small = encode(Array(["a", "b"], "symbol"))
    assert small[0] == 0xE0 and small[3] == 0xA3
    big = encode(Array(["x" * 300, "b"], "symbol"))
    assert big[0] == 0xF0 and big[9] == 0xB3
    assert same(decode(big)[0], Array([Symbol("x" * 300), Symbol("b")], "symbol"))
    nested = Array([Array([UInt(1)], "uint"), Array([UInt(2)] * 200, "uint")], "array")
    assert same(decode(encode(nested))[0], nested)


# --- messages ----------------------------------------------------------------------------

headers = st.builds(
    Header,
    durable=st.none() | st.booleans(),
    priority=st.none() | st.integers(0, 255).map(UByte),
    ttl=st.none() | st.integers(0, 2**32 - 1).map(UInt),
    first_acquirer=st.none() | st.booleans(),
    delivery_count=st.none() | st.integers(0, 2**32 - 1).map(UInt),
)
message_ids = st.none() | text | st.uuids() | st.binary(max_size=20) | SCALARS["ulong"]
properties = st.builds(
    Properties,
    message_id=message_ids,
    user_id=st.none() | st.binary(max_size=10),
    to=st.none() | text,
    subject=st.none() | text,
    reply_to=st.none() | text,
    correlation_id=message_ids,
    content_type=st.none() | ascii_text.map(Symbol),
    content_encoding=st.none() | ascii_text.map(Symbol),
    absolute_expiry_time=st.none() | SCALARS["timestamp"],
    creation_time=st.none() | st.integers(0, 2**45).map(Timestamp),
    group_id=st.none() | text,
    group_sequence=st.none() | SCALARS["uint"],
    reply_to_group_id=st.none() | text,
)
annotations = st.none() | st.dictionaries(ascii_text.map(Symbol), values(5), max_size=4)
app_props = st.none() | st.dictionaries(text, st.one_of(*SCALARS.values()), max_size=6)
bodies = (
    st.none()
    | st.binary(max_size=300)
    | st.lists(st.binary(max_size=50).map(Data), min_size=1, max_size=3)
    | st.lists(st.lists(values(5), max_size=3).map(AmqpSequence), min_size=1, max_size=3)
    | values(10).map(AmqpValue)
    | text
)
messages = st.builds(
    Message,
    bodies,
    header=st.none() | headers,
    delivery_annotations=annotations,
    message_annotations=annotations,
    properties=st.none() | properties,
    application_properties=app_props,
    footer=annotations,
)


def _section_same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, list):
        return len(a) == len(b) and all(_section_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    return all(same(getattr(a, n), getattr(b, n)) for n in a._SLOTS)


NAMES = (
    "header",
    "delivery_annotations",
    "message_annotations",
    "properties",
    "application_properties",
    "body",
    "footer",
)


@SETTINGS
@given(messages, st.data())
def test_message_round_trip(m: Message, data: st.DataObject) -> None:
    b = m.encode()
    got = Message.decode(b)
    # untouched: the same bytes back, without decoding anything
    assert got.encode() == b
    # read a random subset of sections, the rest stays lazy; bytes are still the same
    touched = data.draw(st.sets(st.sampled_from(NAMES)))
    for n in touched:
        getattr(got, n)
    assert got.encode() == b
    for n in NAMES:
        assert _section_same(getattr(got, n), getattr(m, n)), n
    assert Message.decode(b).bare_bytes == m.bare_bytes
    full = Message.decode(b)
    for n in NAMES:
        getattr(full, n)
    assert full.bare_bytes == m.bare_bytes


@SETTINGS
@given(hashable)
def test_hashable_keys_round_trip_in_maps(k: Any) -> None:
    assert same(decode(encode({k: 1}))[0], {k: Long(1)})


@settings(max_examples=100, deadline=None)
@given(values(10))
def test_values_pickle_and_memoryview_input(v: Any) -> None:
    # the pipeline ships decoded values between processes; frames arrive as memoryviews
    assert same(pickle.loads(pickle.dumps(decode(encode(v))[0])), v)
    b = encode(v)
    assert same(decode(memoryview(b))[0], v) and same(decode(bytearray(b))[0], v)
