"""AMQP 1.0 codec: the type system (Part 1), every composite of Parts 2–5, the Message model.

Pure functions, no I/O. See docs/architecture.md, "Codec contract".
"""

from __future__ import annotations

from . import composites
from .decode import decode, decode_all, skip
from .encode import encode, encode_as, encode_into
from .types import (
    UUID,
    AmqpList,
    AmqpMap,
    Array,
    Byte,
    Char,
    Composite,
    Decimal32,
    Decimal64,
    Decimal128,
    DecodeError,
    Described,
    EncodeError,
    Field,
    Float,
    Int,
    Long,
    MapKey,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)

__all__ = [
    "UUID",
    "AmqpList",
    "AmqpMap",
    "Array",
    "Byte",
    "Char",
    "Composite",
    "Decimal32",
    "Decimal64",
    "Decimal128",
    "DecodeError",
    "Described",
    "EncodeError",
    "Field",
    "Float",
    "Int",
    "Long",
    "MapKey",
    "Short",
    "Symbol",
    "Timestamp",
    "UByte",
    "UInt",
    "ULong",
    "UShort",
    "composites",
    "decode",
    "decode_all",
    "encode",
    "encode_as",
    "encode_into",
    "skip",
]
