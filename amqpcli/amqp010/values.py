"""Python values for 0-10 types that plain Python types do not cover.

Fields with a declared type decode to plain values (int, str, bytes, bool, uuid.UUID,
dict, list). Values inside maps, lists and arrays carry their own type code on the wire;
they decode to the `Typed*` subclasses below, which remember the code so that
re-encoding gives the same bytes.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self

SERIAL_MASK = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class SequenceSet:
    """A set of command ids as inclusive (lower, upper) ranges, in wire order."""

    ranges: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, *ids: int) -> SequenceSet:
        return cls(tuple((i, i) for i in ids))

    def __contains__(self, n: object) -> bool:
        if not isinstance(n, int):
            return False
        # a range runs upward from lower to upper, wrapping at 2^32
        return any((n - lo) & SERIAL_MASK <= (hi - lo) & SERIAL_MASK for lo, hi in self.ranges)

    def ids(self, limit: int = 1 << 20) -> Iterator[int]:
        """Every id in the set, in order; at most `limit` of them (ranges can be huge)."""
        count = 0
        for lo, hi in self.ranges:
            for step in range(((hi - lo) & SERIAL_MASK) + 1):
                if count >= limit:
                    return
                yield (lo + step) & SERIAL_MASK
                count += 1

    def __str__(self) -> str:
        return "{" + ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.ranges) + "}"


@dataclass(frozen=True, slots=True)
class ByteRanges:
    """Inclusive (lower, upper) byte offset ranges (session.command-fragment)."""

    ranges: tuple[tuple[int, int], ...] = ()


class Array(list[Any]):
    """An array: every element has the type `code` (e.g. 0x95 for str16)."""

    def __init__(self, items: Any = (), code: int = 0x95) -> None:
        super().__init__(items)
        self.code = code

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Array) and other.code == self.code and list.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Array({list.__repr__(self)}, code=0x{self.code:02x})"


class Datetime(int):
    """Seconds since the Unix epoch (the 0-10 `datetime`)."""

    code = 0x38


class TypedInt(int):
    """An integer read from a map, list or array, with its type code."""

    code: int

    def __new__(cls, value: int, code: int) -> Self:
        obj = super().__new__(cls, value)
        obj.code = code
        return obj

    def __repr__(self) -> str:
        return f"{int(self)}"


class TypedFloat(float):
    code: int

    def __new__(cls, value: float, code: int) -> Self:
        obj = super().__new__(cls, value)
        obj.code = code
        return obj


class TypedStr(str):
    code: int

    def __new__(cls, value: str, code: int) -> Self:
        obj = super().__new__(cls, value)
        obj.code = code
        return obj

    def __repr__(self) -> str:
        return str.__repr__(self)


class TypedBytes(bytes):
    """Binary data with its type code; also holds values of unknown type codes whose
    width is known from the code's range."""

    code: int

    def __new__(cls, value: bytes, code: int) -> Self:
        obj = super().__new__(cls, value)
        obj.code = code
        return obj

    def __repr__(self) -> str:
        return bytes.__repr__(self)


class TypedDecimal(decimal.Decimal):
    code: int

    def __new__(cls, value: Any, code: int) -> Self:
        obj = super().__new__(cls, value)
        obj.code = code
        return obj
