"""Map keys that are distinct AMQP values (Part 1 §1.6.23) but equal in Python (int 1,
long 1, true, 1.0; "a" and char 'a') or unhashable (a list, a map, an array) decode with
every entry, in order, and re-encode to the bytes they came from: the later colliding or
unhashable key is held in a `MapKey`. Such maps merged their entries (an entry lost) or
were a decode error ("expected a hashable map key, found AmqpList")."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.codec import (
    Array,
    Char,
    DecodeError,
    Int,
    Long,
    MapKey,
    Symbol,
    UByte,
    decode,
    encode,
)
from amqpcli.codec.composites import MessageAnnotations
from amqpcli.codec.message import Message
from amqpcli.codec.types import add_map_entry, key_value

from .helpers import same, values

# (hex of a map, its keys as AMQP values in order)
MAPS = {
    # map32 {int 1: "a", long 1: "b"}, as in the QA report
    "d10000000e000000045401a101615501a10162": [Int(1), Long(1)],
    # int 1, long 1, true, ubyte 1, double 1.0
    "c1200a5401a101615501a10162" "41a101635001a10164" "823ff0000000000000a10165":
        [Int(1), Long(1), True, UByte(1), 1.0],
    # "a" and char 'a'
    "c10b04a1016140" "730000006140": ["a", Char("a")],
    # a list key: map32 {[int 1]: "a"}
    "d10000001200000002d000000006000000015401a10161": [[Int(1)]],
    # list0 as a key
    "c1030245" "40": [[]],
    # a map key, an array key
    "c10f04" "c10302404054 01" "e00402540102 40".replace(" ", ""):
        [{None: None}, Array([Int(1), Int(2)], "int")],
    # the same key twice (not a valid map, but its bytes come back)
    "c10b04a1016b5201a1016b5202": ["k", "k"],
    # two NaNs
    "c1150482 7ff8000000000000 4082 7ff8000000000000 40".replace(" ", ""):
        [float("nan"), float("nan")],
}


def _entries(m: dict[Any, Any]) -> list[list[Any]]:
    """A map's entries in order, keys unwrapped (`same` looks keys up: NaN keys fail)."""
    return [[key_value(k), v] for k, v in m.items()]


def test_every_entry_is_kept_in_order_and_the_bytes_come_back() -> None:
    for h, keys in MAPS.items():
        raw = bytes.fromhex(h)
        m, end = decode(raw)
        assert end == len(raw)
        assert len(m) == len(keys), h
        got = [key_value(k) for k in m]
        assert all(same(a, b) for a, b in zip(got, keys, strict=True)), (h, got)
        assert encode(m) == raw, h
        again, _ = decode(encode(m))
        assert same(_entries(again), _entries(m))
        assert same(_entries(pickle.loads(pickle.dumps(m))), _entries(m))


def test_the_first_key_stays_plain_for_lookups() -> None:
    m, _ = decode(bytes.fromhex("d10000000e000000045401a101615501a10162"))
    assert m[Int(1)] == "a" and m.get(1) == "a"
    assert list(m) == [Int(1), MapKey(Long(1))]
    assert m[MapKey(Long(1))] == "b"
    # an ordinary map holds no MapKey
    plain, _ = decode(encode({Symbol("x"): 1, "x": 2, Int(2): 3}))
    assert not any(type(k) is MapKey for k in plain)


def test_a_message_body_map_keeps_every_entry() -> None:
    raw = bytes.fromhex("005377d100000012000000065401a101615501a1016241a10163")
    msg = Message.decode(raw)
    assert [key_value(k) for k in msg.value] == [Int(1), Long(1), True]
    assert list(msg.value.values()) == ["a", "b", "c"]
    assert msg.encode() == raw
    # and when the section is decoded and encoded again from its value
    fresh = Message(body=dict(msg.value))
    assert fresh.encode() == raw.replace(bytes.fromhex("d1000000120000000654"),
                                         bytes.fromhex("c10f0654"))


def test_annotations_with_such_keys_encode_as_built() -> None:
    ann = MessageAnnotations({Symbol("x-opt-a"): 1, Int(1): "i", MapKey(Long(1)): "l",
                              MapKey([1]): "list"})
    back, _ = decode(encode(ann))
    assert back == ann and len(back.value) == 4
    assert [key_value(k) for k in back.value][1:] == [Int(1), Long(1), [Long(1)]]


def test_map_keys_compare_by_amqp_type_and_value() -> None:
    assert MapKey(Long(1)) == MapKey(Long(1)) and hash(MapKey(Long(1))) == hash(MapKey(Long(1)))
    assert MapKey(Long(1)) != MapKey(Int(1))
    assert MapKey(Long(1)) != MapKey(Long(1), 1)
    assert MapKey([1]) == MapKey([1]) and MapKey([Int(1)]) != MapKey([Long(1)])
    assert MapKey(Long(1)) != Long(1) and Long(1) != MapKey(Long(1))
    out: dict[Any, Any] = {}
    for k in (Int(1), Long(1), Long(1), [1], [1]):
        add_map_entry(out, k, None)
    assert list(out) == [Int(1), MapKey(Long(1)), MapKey(Long(1), 1), MapKey([1]),
                         MapKey([1], 1)]


def test_still_a_decode_error_when_the_map_is_damaged() -> None:
    # a list key whose bytes end early, in a map that would need the kept path
    for h in ("c1050245 5401 40", "c10604 5401 40 5501 40"):
        try:
            v, end = decode(bytes.fromhex(h.replace(" ", "")))
        except DecodeError as e:
            assert "hashable" not in e.expected and "Amqp" not in str(e)
        else:
            raise AssertionError((h, v, end))


_KEYS = st.sampled_from([Int(1), Long(1), True, UByte(1), 1.0, "a", Char("a"), Symbol("a"),
                         None]) | values(6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_KEYS, values(6)), max_size=8))
def test_any_keys_round_trip(pairs: list[tuple[Any, Any]]) -> None:
    m: dict[Any, Any] = {}
    for k, v in pairs:
        add_map_entry(m, k, v)
    assert len(m) == len(pairs)
    raw = encode(m)
    back, _ = decode(raw)
    assert len(back) == len(pairs)
    assert encode(back) == raw
    assert same(back, decode(raw)[0])


def test_a_wrapped_key_names_its_value_as_text() -> None:
    """A caller that names keys as text (`str(k)`) gets the value, not the wrapper."""
    assert str(MapKey(Long(1))) == "1" and str(MapKey([1, 2])) == "[1, 2]"
