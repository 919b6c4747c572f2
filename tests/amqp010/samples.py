"""Field values made from a field's type, for encode/decode round trips of every
control, command and struct in the spec."""

from __future__ import annotations

import decimal
import uuid
from typing import Any

from amqpcli.amqp010 import (
    STRUCTS,
    Array,
    ByteRanges,
    Command,
    Control,
    Datetime,
    FieldDef,
    MethodDef,
    SequenceSet,
    Struct,
    StructDef,
    TypedBytes,
    TypedDecimal,
    TypedFloat,
    TypedInt,
    TypedStr,
)

_INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
               "uint16": (0, 65535), "int32": (-(1 << 31), (1 << 31) - 1),
               "uint32": (0, (1 << 32) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
               "uint64": (0, (1 << 64) - 1), "sequence-no": (0, (1 << 32) - 1)}


# map value types Wireshark 4.0 gives the wrong width (dec64: 5 octets, not 9; void: 5, not 0)
WIRESHARK_WIDTH_BUGS = ("dec64", "void")


def sample_map(k: int, tame: bool = False) -> dict[str, Any]:
    """A map holding one value of many type codes (as they decode: typed); `tame` leaves
    out the types Wireshark 4.0 misreads."""
    m = {
        "bool": k % 2 == 0,
        "i8": TypedInt(-5 - k, 0x01), "u8": TypedInt(200, 0x02),
        "i16": TypedInt(-300, 0x11), "u16": TypedInt(60000, 0x12),
        "i32": TypedInt(-(1 << 30), 0x21), "u32": TypedInt(4_000_000_000, 0x22),
        "i64": TypedInt(-(1 << 62) + k, 0x31), "u64": TypedInt((1 << 64) - 1, 0x32),
        "f": TypedFloat(1.5, 0x23), "d": TypedFloat(-2.25, 0x33),
        "dt": Datetime(1_700_000_000 + k), "uuid": uuid.UUID(int=0x1234 + k),
        "s8": TypedStr("kurz ü", 0x85), "s16": TypedStr("lang ü" * 3, 0x95),
        "latin": TypedStr("caf\xe9", 0x84), "u16s": TypedStr("wide ☃", 0x96),
        "char": TypedStr("x", 0x04), "c32": TypedStr("☃", 0x27),
        "vb8": TypedBytes(b"\x00\x01", 0x80), "vb16": TypedBytes(b"ab" * 10, 0x90),
        "vb32": TypedBytes(b"\xff" * 3, 0xA0), "bin8": TypedBytes(b"\x07", 0x00),
        "bin128": TypedBytes(bytes(range(16)), 0x40), "bin40": TypedBytes(b"12345", 0xC0),
        "dec32": TypedDecimal(decimal.Decimal("12.34"), 0xC8),
        "dec64": TypedDecimal(decimal.Decimal("-0.000001"), 0xD8),
        "void": None,
        "unknown-fixed": TypedBytes(b"\x01\x02", 0x1F),  # width known from the code's range
        "unknown-var": TypedBytes(b"opaque", 0x8F),
        "nested": {"a": TypedInt(1, 0x31), "l": [TypedStr("x", 0x95), TypedInt(2, 0x21)]},
        "list": [TypedInt(k, 0x31), {"m": TypedStr("v", 0x95)}, Array([], 0x95)],
        "array": Array([TypedInt(1, 0x21), TypedInt(2, 0x21)], 0x21),
        "struct32": Struct.make("message.delivery-properties", priority=4, routing_key="rk"),
    }
    for key in WIRESHARK_WIDTH_BUGS if tame else ():
        del m[key]
    return m


def sample_value(f: FieldDef, k: int, tame: bool = False) -> Any:
    t = f.type
    if t == "bit":
        return True
    if t.startswith("struct:"):
        return sample_struct(STRUCTS[t[7:]], k, tame)
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        return (lo, hi, 0, 1)[k % 4] if f.choices == {} else sorted(f.choices)[k % len(f.choices)]
    if t == "datetime":
        return Datetime(1_700_000_000 + k)
    if t in ("str8", "str16"):
        return f"{f.name}-{k}-é"
    if t in ("vbin8", "vbin16", "vbin32"):
        return bytes([k % 256, 0, 255]) + f.name.encode()
    if t == "uuid":
        return uuid.UUID(int=(k + 1) * 0x1000100010001)
    if t == "map":
        return sample_map(k, tame)
    if t == "array":
        return Array([TypedStr(f"e{i}", 0x95) for i in range(k % 3 + 1)], 0x95)
    if t == "list":
        return [TypedInt(k, 0x31), TypedStr("x", 0x95)]
    if t == "sequence-set":
        return SequenceSet(((k, k + 2), (0xFFFFFFFE, 1)))
    if t == "byte-ranges":
        return ByteRanges(((0, 99), (1 << 40, (1 << 64) - 1)))
    if t == "struct32":
        return Struct.make("queue.queue-query-result", queue="q", durable=True,
                           arguments={"x": TypedInt(1, 0x31)}, message_count=k,
                           subscriber_count=0)
    raise AssertionError(f"no sample for type {t}")


def sample_fields(d: MethodDef | StructDef, k: int, mask: int = -1,
                  tame: bool = False) -> dict[str, Any]:
    """Fields whose index bit is set in `mask` get a value; others are absent."""
    return {f.name: sample_value(f, k, tame) for f in d.fields
            if mask >> f.index & 1 or not d.pack}


def sample_struct(sd: StructDef, k: int, tame: bool = False) -> Struct:
    return Struct(sd, sample_fields(sd, k, tame=tame))


def sample_method(md: MethodDef, k: int, mask: int = -1, tame: bool = False
                  ) -> Control | Command:
    fields = sample_fields(md, k, mask, tame)
    if md.kind == "control":
        return Control(md, fields)
    return Command(md, fields, sync=k % 2 == 1)


def frames_of(data: bytes) -> list[bytes]:
    """Encoded 0-10 frames (`encode_assembly`'s bytes) one by one: each frame's size is
    in its header's bytes 2-3."""
    out = []
    while data:
        n = data[2] * 256 + data[3]
        out.append(data[:n])
        data = data[n:]
    return out
