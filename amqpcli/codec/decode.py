"""Decode AMQP 1.0 encoded bytes into Python values (see docs/architecture.md, "Codec contract").

Every decoder takes (buf, pos, depth) where pos is just past the format code, and returns
(value, new_pos). Dispatch is a 256-entry table indexed by the format code. Reads past the
end of the input surface as IndexError/struct.error inside and become a DecodeError at the
public entry points; sizes are checked against the input before anything is built, so a
huge declared size costs nothing.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from . import composites as _c
from .types import (
    UUID,
    AmqpList,
    AmqpMap,
    Array,
    Byte,
    Char,
    Decimal32,
    Decimal64,
    Decimal128,
    DecodeError,
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
    add_map_entry,
)

__all__ = ["MAX_DEPTH", "TYPE_NAMES", "decode", "decode_all", "skip"]

Buf = bytes | bytearray | memoryview
Decoder = Callable[[Any, int, int], tuple[Any, int]]

# Nesting deeper than this is refused (a DecodeError, never a RecursionError).
MAX_DEPTH = 100

_u8 = struct.Struct(">B").unpack_from
_u16 = struct.Struct(">H").unpack_from
_u32 = struct.Struct(">I").unpack_from
_u64 = struct.Struct(">Q").unpack_from
_i8 = struct.Struct(">b").unpack_from
_i16 = struct.Struct(">h").unpack_from
_i32 = struct.Struct(">i").unpack_from
_i64 = struct.Struct(">q").unpack_from
_f32 = struct.Struct(">f").unpack_from
_f64 = struct.Struct(">d").unpack_from
_u8u8 = struct.Struct(">BB").unpack_from
_u32u32 = struct.Struct(">II").unpack_from

TYPE_NAMES: dict[int, str] = {
    0x40: "null",
    0x56: "boolean",
    0x41: "boolean",
    0x42: "boolean",
    0x50: "ubyte",
    0x60: "ushort",
    0x70: "uint",
    0x52: "uint",
    0x43: "uint",
    0x80: "ulong",
    0x53: "ulong",
    0x44: "ulong",
    0x51: "byte",
    0x61: "short",
    0x71: "int",
    0x54: "int",
    0x81: "long",
    0x55: "long",
    0x72: "float",
    0x82: "double",
    0x74: "decimal32",
    0x84: "decimal64",
    0x94: "decimal128",
    0x73: "char",
    0x83: "timestamp",
    0x98: "uuid",
    0xA0: "binary",
    0xB0: "binary",
    0xA1: "string",
    0xB1: "string",
    0xA3: "symbol",
    0xB3: "symbol",
    0x45: "list",
    0xC0: "list",
    0xD0: "list",
    0xC1: "map",
    0xD1: "map",
    0xE0: "array",
    0xF0: "array",
}

# Fixed widths, for skipping values and for sizing arrays (0 = no bytes after the code).
_FIXED: dict[int, int] = {
    0x40: 0, 0x41: 0, 0x42: 0, 0x43: 0, 0x44: 0, 0x45: 0,
    0x50: 1, 0x51: 1, 0x52: 1, 0x53: 1, 0x54: 1, 0x55: 1, 0x56: 1,
    0x60: 2, 0x61: 2,
    0x70: 4, 0x71: 4, 0x72: 4, 0x73: 4, 0x74: 4,
    0x80: 8, 0x81: 8, 0x82: 8, 0x83: 8, 0x84: 8,
    0x94: 16, 0x98: 16,
}  # fmt: skip


def _short(buf: Any, p: int, what: str) -> DecodeError:
    return DecodeError(p, what, f"end of input at {len(buf)}")


# --- fixed width -----------------------------------------------------------------------


def _d_null(b: Any, p: int, d: int) -> tuple[Any, int]:
    return None, p


def _d_true(b: Any, p: int, d: int) -> tuple[Any, int]:
    return True, p


def _d_false(b: Any, p: int, d: int) -> tuple[Any, int]:
    return False, p


def _d_bool(b: Any, p: int, d: int) -> tuple[Any, int]:
    v = b[p]
    if v > 1:
        raise DecodeError(p, "boolean 0x00 or 0x01", f"0x{v:02x}")
    return v == 1, p + 1


def _d_ubyte(b: Any, p: int, d: int) -> tuple[Any, int]:
    return UByte(b[p]), p + 1


def _d_ushort(b: Any, p: int, d: int) -> tuple[Any, int]:
    return UShort(_u16(b, p)[0]), p + 2


def _d_uint(b: Any, p: int, d: int) -> tuple[Any, int]:
    return UInt(_u32(b, p)[0]), p + 4


def _d_smalluint(b: Any, p: int, d: int) -> tuple[Any, int]:
    return UInt(b[p]), p + 1


_UINT0 = UInt(0)
_ULONG0 = ULong(0)


def _d_uint0(b: Any, p: int, d: int) -> tuple[Any, int]:
    return _UINT0, p


def _d_ulong(b: Any, p: int, d: int) -> tuple[Any, int]:
    return ULong(_u64(b, p)[0]), p + 8


def _d_smallulong(b: Any, p: int, d: int) -> tuple[Any, int]:
    return ULong(b[p]), p + 1


def _d_ulong0(b: Any, p: int, d: int) -> tuple[Any, int]:
    return _ULONG0, p


def _d_byte(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Byte(_i8(b, p)[0]), p + 1


def _d_short(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Short(_i16(b, p)[0]), p + 2


def _d_int(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Int(_i32(b, p)[0]), p + 4


def _d_smallint(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Int(_i8(b, p)[0]), p + 1


def _d_long(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Long(_i64(b, p)[0]), p + 8


def _d_smalllong(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Long(_i8(b, p)[0]), p + 1


def _d_float(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Float(_f32(b, p)[0]), p + 4


def _d_double(b: Any, p: int, d: int) -> tuple[Any, int]:
    return _f64(b, p)[0], p + 8


def _fixed_bytes(b: Any, p: int, n: int, what: str) -> bytes:
    e = p + n
    if e > len(b):
        raise _short(b, p, what)
    return bytes(b[p:e])


def _d_dec32(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Decimal32(_fixed_bytes(b, p, 4, "decimal32")), p + 4


def _d_dec64(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Decimal64(_fixed_bytes(b, p, 8, "decimal64")), p + 8


def _d_dec128(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Decimal128(_fixed_bytes(b, p, 16, "decimal128")), p + 16


def _d_char(b: Any, p: int, d: int) -> tuple[Any, int]:
    v = _u32(b, p)[0]
    if v > 0x10FFFF or 0xD800 <= v <= 0xDFFF:
        raise _not_a_char(p, v)
    return Char(chr(v)), p + 4


def _not_a_char(p: int, v: int) -> DecodeError:
    # A char is "a single Unicode character": a scalar value, so no surrogate (UTF-32
    # cannot carry one either), and nothing past U+10FFFF.
    found = f"surrogate U+{v:04X}" if v <= 0xDFFF else f"0x{v:x} (past U+10FFFF)"
    return DecodeError(p, "char holding a Unicode scalar value", found)


def _d_timestamp(b: Any, p: int, d: int) -> tuple[Any, int]:
    return Timestamp(_i64(b, p)[0]), p + 8


def _d_uuid(b: Any, p: int, d: int) -> tuple[Any, int]:
    return UUID(bytes=_fixed_bytes(b, p, 16, "uuid")), p + 16


# --- variable width --------------------------------------------------------------------


def _d_vbin8(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 1 + b[p]
    if e > len(b):
        raise _short(b, p - 1, f"binary of {e - p - 1} bytes")
    return bytes(b[p + 1 : e]), e


def _d_vbin32(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 4 + _u32(b, p)[0]
    if e > len(b):
        raise _short(b, p - 1, f"binary of {e - p - 4} bytes")
    return bytes(b[p + 4 : e]), e


def _utf8(b: Any, p: int, e: int) -> str:
    try:
        return str(b[p:e], "utf-8")
    except UnicodeDecodeError as x:
        raise DecodeError(p + x.start, "UTF-8 string", f"byte 0x{b[p + x.start]:02x}") from None


def _d_str8(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 1 + b[p]
    if e > len(b):
        raise _short(b, p - 1, f"string of {e - p - 1} bytes")
    try:  # inline: short strings are the commonest value of all
        return str(b[p + 1 : e], "utf-8"), e
    except UnicodeDecodeError:
        return _utf8(b, p + 1, e), e


def _d_str32(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 4 + _u32(b, p)[0]
    if e > len(b):
        raise _short(b, p - 1, f"string of {e - p - 4} bytes")
    return _utf8(b, p + 4, e), e


# A symbol is seven-bit ASCII (Part 1 §1.6.21): other bytes are refused as a string's bad
# UTF-8 is; the "ascii" codec checks that at no cost beyond the decoding itself.
def _ascii(b: Any, p: int, e: int) -> str:
    try:
        return str(b[p:e], "ascii")
    except UnicodeDecodeError as x:
        raise DecodeError(p + x.start, "ASCII symbol", f"byte 0x{b[p + x.start]:02x}") from None


def _d_sym8(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 1 + b[p]
    if e > len(b):
        raise _short(b, p - 1, f"symbol of {e - p - 1} bytes")
    try:  # inline, as for strings: symbols are map keys, descriptors, capabilities
        return Symbol(str(b[p + 1 : e], "ascii")), e
    except UnicodeDecodeError:
        return _ascii(b, p + 1, e), e


def _d_sym32(b: Any, p: int, d: int) -> tuple[Any, int]:
    e = p + 4 + _u32(b, p)[0]
    if e > len(b):
        raise _short(b, p - 1, f"symbol of {e - p - 4} bytes")
    return Symbol(_ascii(b, p + 4, e)), e


# --- compound --------------------------------------------------------------------------


def _d_list0(b: Any, p: int, d: int) -> tuple[Any, int]:
    return [], p


def _list_items(b: Any, p: int, end: int, count: int, d: int, start: int, out: Any) -> int:
    """Decode `count` items into `out` (a list); return the end offset."""
    if end > len(b):
        raise _short(b, start, f"list of {end - start} bytes")
    if count > end - p:
        raise DecodeError(start, f"at most {end - p} list items", f"count {count}")
    if d >= MAX_DEPTH:
        raise DecodeError(start, f"nesting depth under {MAX_DEPTH}", "deeper nesting")
    d += 1
    t = _T
    append = out.append
    for _ in range(count):
        v, p = t[b[p]](b, p + 1, d)
        append(v)
    if p != end:
        raise DecodeError(p, f"list items ending at {end}", f"items ending at {p}")
    return p


# A list or map decoded from a wider encoding than needed is made an AmqpList/AmqpMap up front
# (the sizes say so before any item is read), so it re-encodes byte for byte.
def _wide_list(code: int) -> Any:
    out = _new_list(AmqpList)
    out.code = code
    return out


def _wide_map(code: int) -> Any:
    out = _new_dict(AmqpMap)
    out.code = code
    return out


_new_list = list.__new__
_new_dict = dict.__new__


def _d_list8(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u8u8(b, p)
    if size < 1:
        raise DecodeError(p, "list8 size >= 1", f"size {size}")
    out = [] if count else _wide_list(0xC0)
    return out, _list_items(b, p + 2, p + 1 + size, count, d, p - 1, out)


def _d_list32(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    if size < 4:
        raise DecodeError(p, "list32 size >= 4", f"size {size}")
    # list8 would have held it: keep the wide form
    out = _wide_list(0xD0) if count == 0 or (size - 3 <= 255 and count <= 255) else []
    return out, _list_items(b, p + 8, p + 4 + size, count, d, p - 1, out)


def _map_items(b: Any, p: int, end: int, count: int, d: int, start: int, out: Any) -> int:
    """Decode `count` keys and values into `out` (a dict); return the end offset."""
    if end > len(b):
        raise _short(b, start, f"map of {end - start} bytes")
    if count & 1 or count > end - p:
        # at its count (map8's a byte before the items, map32's four): an array's map
        # elements have no constructor of their own at `start`
        at = p - 1 if p - start == 3 else p - 4
        if count & 1:
            raise DecodeError(at, "an even map count", f"count {count}")
        raise DecodeError(at, f"at most {end - p} map items", f"count {count}")
    if d >= MAX_DEPTH:
        raise DecodeError(start, f"nesting depth under {MAX_DEPTH}", "deeper nesting")
    d += 1
    t = _T
    first = p
    try:
        for _ in range(count >> 1):
            k, p = t[b[p]](b, p + 1, d)
            v, p = t[b[p]](b, p + 1, d)
            out[k] = v
    except TypeError:  # an unhashable key (a list, a map, an array)
        p = _map_items_kept(b, first, count, d, out)
    else:
        if len(out) << 1 != count:  # keys equal in Python, distinct in AMQP: Int(1), Long(1)
            p = _map_items_kept(b, first, count, d, out)
    if p != end:
        raise DecodeError(p, f"map items ending at {end}", f"items ending at {p}")
    return p


def _map_items_kept(b: Any, p: int, count: int, d: int, out: Any) -> int:
    """`_map_items`'s loop again from the map's first key, at `p`, for a map whose keys
    Python merges or cannot hash: such keys are kept wrapped (`add_map_entry`), so no
    entry is lost. The usual map pays nothing for it but a length check. (`p` is where
    the first loop began: an array's map elements have no constructor byte to tell a
    map8 from a map32 by.)"""
    out.clear()
    t = _T
    for _ in range(count >> 1):
        k, p = t[b[p]](b, p + 1, d)
        v, p = t[b[p]](b, p + 1, d)
        add_map_entry(out, k, v)
    return p  # type: ignore[no-any-return]


def _d_map8(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u8u8(b, p)
    if size < 1:
        raise DecodeError(p, "map8 size >= 1", f"size {size}")
    out: dict[Any, Any] = {}
    return out, _map_items(b, p + 2, p + 1 + size, count, d, p - 1, out)


def _d_map32(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    if size < 4:
        raise DecodeError(p, "map32 size >= 4", f"size {size}")
    out = _wide_map(0xD1) if size - 3 <= 255 and count <= 255 else {}
    return out, _map_items(b, p + 8, p + 4 + size, count, d, p - 1, out)


_FIXED_ARRAY: dict[int, tuple[str, Any]] = {
    0x50: ("B", UByte),
    0x60: ("H", UShort),
    0x70: ("I", UInt),
    0x80: ("Q", ULong),
    0x51: ("b", Byte),
    0x61: ("h", Short),
    0x71: ("i", Int),
    0x81: ("q", Long),
    0x72: ("f", Float),
    0x82: ("d", float),
    0x83: ("q", Timestamp),
}


def _array_items(
    b: Any, p: int, end: int, count: int, d: int, start: int, fmt: int
) -> tuple[Array, int]:
    if end > len(b):
        raise _short(b, start, f"array of {end - start} bytes")
    if d >= MAX_DEPTH:
        raise DecodeError(start, f"nesting depth under {MAX_DEPTH}", "deeper nesting")
    d += 1
    descriptor = None
    cp = p
    code = b[p]
    p += 1
    if code == 0x00:
        descriptor, p = _T[b[p]](b, p + 1, d)
        cp = p
        code = b[p]
        p += 1
    name = TYPE_NAMES.get(code)
    if name is None:
        raise DecodeError(cp, "an array element constructor", f"0x{code:02x}")
    width = _FIXED.get(code)
    if width == 0:
        # zero-width elements: the count is not bounded by the size, so bound it by the input
        if count > len(b):
            raise DecodeError(start, f"at most {len(b)} zero-width elements", f"count {count}")
    elif count > end - p:
        raise DecodeError(start, f"at most {end - p} array elements", f"count {count}")
    fixed = _FIXED_ARRAY.get(code)
    if fixed is not None:
        n = count * width  # type: ignore[operator]
        if p + n > end:
            raise _short(b, p, f"{count} array elements")
        cls = fixed[1]
        items = [cls(x) for x in struct.unpack_from(f">{count}{fixed[0]}", b, p)]
        p += n
    else:
        dec = _T[code]
        items = []
        append = items.append
        for _ in range(count):
            v, p = dec(b, p, d)
            append(v)
    if p != end:
        raise DecodeError(p, f"array elements ending at {end}", f"elements ending at {p}")
    return Array(items, name, code, descriptor, fmt), p


def _d_array8(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u8u8(b, p)
    if size < 2:
        raise DecodeError(p, "array8 size >= 2", f"size {size}")
    return _array_items(b, p + 2, p + 1 + size, count, d, p - 1, 0xE0)


def _d_array32(b: Any, p: int, d: int) -> tuple[Any, int]:
    size, count = _u32u32(b, p)
    if size < 5:
        raise DecodeError(p, "array32 size >= 5", f"size {size}")
    arr, e = _array_items(b, p + 8, p + 4 + size, count, d, p - 1, 0xF0)
    return arr, e


# --- described -------------------------------------------------------------------------

_BY_CODE = _c.BY_CODE
_BY_SMALL_CODE: list[Any] = [_BY_CODE.get(i) for i in range(256)]
# Symbol and str hash apart (distinct map keys), so the lookup table is keyed by Symbol.
_BY_SYMBOL = {Symbol(k): c for k, c in _c.BY_SYMBOL.items()}
_new = object.__new__

# What a section's value must be for its composite class to hold it.
_VALUE_OK: dict[str, Callable[[Any], bool]] = {
    "map": lambda v: isinstance(v, dict),
    "binary": lambda v: type(v) is bytes,
    "list": lambda v: isinstance(v, list) and not isinstance(v, Array),
    "*": lambda v: True,
}


for _cls in _c.ALL:
    _cls._VALUE_OK = _VALUE_OK[_cls.SOURCE]  # type: ignore[attr-defined]


def _build(cls: Any, value: Any, raw: bytes) -> Any:
    """A composite from its decoded value, or None when the value does not fit.

    `_raw` keeps the bytes and the decoded value: encode compares fields by identity with
    it to know whether the bytes still stand (see Composite)."""
    if not cls.HAS_VALUE:
        if type(value) is not list and type(value) is not AmqpList:
            return None
        o = _new(cls)
        o._raw = (raw, value)
        n = len(value)
        want = cls._N
        if n == want:
            cls._fill(o, value)
        elif n < want:
            cls._fill(o, value + [None] * (want - n))
        else:  # items beyond the spec's fields stay in the raw bytes only
            cls._fill(o, value[:want])
        return o
    if not cls._VALUE_OK(value):
        return None
    o = _new(cls)
    o._raw = (raw, value)
    o.value = value
    return o


def _d_described(b: Any, p: int, d: int) -> tuple[Any, int]:
    start = p - 1
    if d >= MAX_DEPTH:
        raise DecodeError(start, f"nesting depth under {MAX_DEPTH}", "deeper nesting")
    d += 1
    c = b[p]
    cls: Any
    if c == 0x53:
        descriptor: Any = b[p + 1]  # made a ULong only if it ends in a Described
        cls = _BY_SMALL_CODE[descriptor]
        p += 2
    else:
        if c == 0x00:
            raise DecodeError(p, "a descriptor", "another described-type constructor")
        descriptor, p = _T[c](b, p + 1, d)
        if type(descriptor) is ULong:
            cls = _BY_CODE.get(descriptor)
        elif type(descriptor) is Symbol:
            cls = _BY_SYMBOL.get(descriptor)
        else:
            cls = None
    value, p = _T[b[p]](b, p + 1, d)
    if cls is not None:
        o = _build(cls, value, bytes(b[start:p]))
        if o is not None:
            return o, p
    if c == 0x53:
        descriptor = ULong(descriptor)
    return Described(descriptor, value), p


def _d_bad(b: Any, p: int, d: int) -> tuple[Any, int]:
    raise DecodeError(p - 1, "a format code", f"0x{b[p - 1]:02x}")


_T: list[Decoder] = [_d_bad] * 256
for _code, _fn in {
    0x00: _d_described,
    0x40: _d_null,
    0x41: _d_true,
    0x42: _d_false,
    0x56: _d_bool,
    0x50: _d_ubyte,
    0x60: _d_ushort,
    0x70: _d_uint,
    0x52: _d_smalluint,
    0x43: _d_uint0,
    0x80: _d_ulong,
    0x53: _d_smallulong,
    0x44: _d_ulong0,
    0x51: _d_byte,
    0x61: _d_short,
    0x71: _d_int,
    0x54: _d_smallint,
    0x81: _d_long,
    0x55: _d_smalllong,
    0x72: _d_float,
    0x82: _d_double,
    0x74: _d_dec32,
    0x84: _d_dec64,
    0x94: _d_dec128,
    0x73: _d_char,
    0x83: _d_timestamp,
    0x98: _d_uuid,
    0xA0: _d_vbin8,
    0xB0: _d_vbin32,
    0xA1: _d_str8,
    0xB1: _d_str32,
    0xA3: _d_sym8,
    0xB3: _d_sym32,
    0x45: _d_list0,
    0xC0: _d_list8,
    0xD0: _d_list32,
    0xC1: _d_map8,
    0xD1: _d_map32,
    0xE0: _d_array8,
    0xF0: _d_array32,
}.items():
    _T[_code] = _fn
DECODERS: tuple[Decoder, ...] = tuple(_T)


# --- public ----------------------------------------------------------------------------


def decode(buf: Buf, offset: int = 0) -> tuple[Any, int]:
    """Decode one value at `offset`; return (value, offset just past it)."""
    try:
        return _T[buf[offset]](buf, offset + 1, 0)
    except (IndexError, struct.error):
        raise DecodeError(len(buf), "more bytes", "end of input") from None


def decode_all(buf: Buf) -> list[Any]:
    """Decode values back to back until the input ends."""
    out = []
    p = 0
    n = len(buf)
    t = _T
    try:
        while p < n:
            v, p = t[buf[p]](buf, p + 1, 0)
            out.append(v)
    except (IndexError, struct.error):
        raise DecodeError(n, "more bytes", "end of input") from None
    return out


def skip(buf: Buf, offset: int = 0, depth: int = 0) -> int:
    """The offset just past the value at `offset`, found from sizes alone (nothing built)."""
    try:
        return _skip(buf, offset, depth)
    except (IndexError, struct.error):
        raise DecodeError(len(buf), "more bytes", "end of input") from None


def _skip(b: Any, p: int, depth: int) -> int:
    code = b[p]
    w = _FIXED.get(code)
    if w is not None:
        e = p + 1 + w
    elif code == 0x00:
        if depth >= MAX_DEPTH:
            raise DecodeError(p, f"nesting depth under {MAX_DEPTH}", "deeper nesting")
        return _skip(b, _skip(b, p + 1, depth + 1), depth + 1)
    elif code in (0xA0, 0xA1, 0xA3, 0xC0, 0xC1, 0xE0):
        e = p + 2 + b[p + 1]
    elif code in (0xB0, 0xB1, 0xB3, 0xD0, 0xD1, 0xF0):
        e = p + 5 + _u32(b, p + 1)[0]
    else:
        raise DecodeError(p, "a format code", f"0x{code:02x}")
    if e > len(b):
        raise _short(b, p, f"a value of {e - p} bytes")
    return e
