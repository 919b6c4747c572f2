"""Shared by the codec tests: a type-exact comparison and hypothesis strategies for values."""

from __future__ import annotations

import math
import uuid
from typing import Any

from hypothesis import strategies as st

from amqpcli.codec import (
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


def same(a: Any, b: Any) -> bool:
    """Equal values of the same Python types, all the way down (AmqpList is a list, etc.)."""
    if isinstance(a, list) and isinstance(b, list):
        if isinstance(a, Array) != isinstance(b, Array):
            return False
        if isinstance(a, Array) and (a.type != b.type or not same(a.descriptor, b.descriptor)):
            return False
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        keys_b = {k: k for k in b}
        return all(k in keys_b and same(k, keys_b[k]) and same(v, b[k]) for k, v in a.items())
    if type(a) is not type(b):
        return False
    if isinstance(a, Described):
        return same(a.descriptor, b.descriptor) and same(a.value, b.value)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _int(cls: type, lo: int, hi: int) -> st.SearchStrategy[Any]:
    return st.integers(lo, hi).map(cls)


text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
ascii_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)

# (AMQP type name, strategy of its Python values): the scalar types, one entry each.
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "ubyte": _int(UByte, 0, 2**8 - 1),
    "ushort": _int(UShort, 0, 2**16 - 1),
    "uint": _int(UInt, 0, 2**32 - 1) | st.sampled_from([UInt(0), UInt(255), UInt(256)]),
    "ulong": _int(ULong, 0, 2**64 - 1) | st.sampled_from([ULong(0), ULong(255)]),
    "byte": _int(Byte, -(2**7), 2**7 - 1),
    "short": _int(Short, -(2**15), 2**15 - 1),
    "int": _int(Int, -(2**31), 2**31 - 1) | _int(Int, -128, 127),
    "long": _int(Long, -(2**63), 2**63 - 1) | _int(Long, -128, 127),
    "float": st.floats(width=32, allow_nan=False).map(Float),
    "double": st.floats(allow_nan=False),
    "decimal32": st.binary(min_size=4, max_size=4).map(Decimal32),
    "decimal64": st.binary(min_size=8, max_size=8).map(Decimal64),
    "decimal128": st.binary(min_size=16, max_size=16).map(Decimal128),
    "char": st.characters(exclude_categories=("Cs",)).map(Char),
    "timestamp": _int(Timestamp, -(2**63), 2**63 - 1),
    "uuid": st.uuids(),
    "binary": st.binary(max_size=300) | st.binary(max_size=8),
    "string": text | st.text(st.characters(exclude_categories=("Cs",)), min_size=250, max_size=300),
    "symbol": ascii_text.map(Symbol),
}
# Plain Python values the encoder accepts, and what they decode to.
PLAIN = st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | text

scalar = st.one_of(*SCALARS.values())
hashable = st.one_of(*(s for n, s in SCALARS.items() if n not in ("null",)))


def arrays(elements: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Array]:
    """Arrays of one scalar type (elements of null excepted), sometimes described."""

    def build(name: str) -> st.SearchStrategy[Array]:
        items = st.lists(SCALARS[name], max_size=20)
        desc = st.none() | st.sampled_from([ULong(0x1234), Symbol("x:y")])
        return st.builds(lambda xs, d: Array(xs, name, descriptor=d), items, desc)

    names = [n for n in SCALARS if n != "null"]
    return st.sampled_from(names).flatmap(build)


def values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """Any AMQP value: scalars, lists, maps, arrays (also of arrays), described values."""

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return (
            st.lists(children, max_size=8)
            | st.dictionaries(hashable, children, max_size=6)
            | st.builds(
                Described,
                st.sampled_from([ULong(0x77777), Symbol("vendor:thing"), Int(12)]),
                children,
            )
            | arrays()
            | st.lists(arrays(), min_size=1, max_size=3).map(lambda xs: Array(xs, "array"))
            | st.lists(st.lists(children, max_size=3), max_size=3).map(lambda xs: Array(xs, "list"))
            | st.lists(st.dictionaries(hashable, children, max_size=3), max_size=3).map(
                lambda xs: Array(xs, "map")
            )
        )

    return st.recursive(scalar, extend, max_leaves=max_leaves)


def uuid_of(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)
