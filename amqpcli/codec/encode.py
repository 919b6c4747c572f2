"""Encode Python values as AMQP 1.0 (see docs/architecture.md, "Codec contract").

Everything is written into one bytearray. The encoder for a value is found by its exact
type in a dict (subclasses are resolved once through the MRO and cached). Values encode in
their smallest form, except where a decoded value remembers a wider one (AmqpList, AmqpMap,
Array.code/fmt) and composites that still hold the bytes they were decoded from.
"""

from __future__ import annotations

import datetime as _dt
import operator
import struct
import uuid
from collections.abc import Callable
from typing import Any

from . import composites as _c
from .types import (
    AmqpList,
    AmqpMap,
    Array,
    Byte,
    Char,
    Composite,
    Decimal32,
    Decimal64,
    Decimal128,
    Described,
    EncodeError,
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

__all__ = ["Encoder", "array_form", "encode", "encode_as", "encode_fields", "encode_into",
           "encodes_as_decoded"]

Encoder = Callable[[bytearray, Any], None]

_p32 = struct.Struct(">I").pack
_p64 = struct.Struct(">Q").pack
_pBBB = struct.Struct(">BBB").pack
_pBII = struct.Struct(">BII").pack
_pII = struct.Struct(">II").pack
_pBI = struct.Struct(">BI").pack
_pBB = struct.Struct(">BB").pack
_pBH = struct.Struct(">BH").pack
_pBb = struct.Struct(">Bb").pack
_pBh = struct.Struct(">Bh").pack
_pBi = struct.Struct(">Bi").pack
_pBq = struct.Struct(">Bq").pack
_pBQ = struct.Struct(">BQ").pack
_pBf = struct.Struct(">Bf").pack
_pBd = struct.Struct(">Bd").pack


def _range(v: Any, t: str) -> EncodeError:
    return EncodeError(f"{v!r} is out of range for {t}")


# --- primitives ------------------------------------------------------------------------


def _e_null(out: bytearray, v: Any) -> None:
    out.append(0x40)


def _e_bool(out: bytearray, v: Any) -> None:
    out.append(0x41 if v else 0x42)


def _e_ubyte(out: bytearray, v: Any) -> None:
    if not 0 <= v <= 0xFF:
        raise _range(v, "ubyte")
    out += _pBB(0x50, v)


def _e_ushort(out: bytearray, v: Any) -> None:
    if not 0 <= v <= 0xFFFF:
        raise _range(v, "ushort")
    out += _pBH(0x60, v)


def _e_uint(out: bytearray, v: Any) -> None:
    if v == 0:
        out.append(0x43)
    elif 0 < v <= 0xFF:
        out += _pBB(0x52, v)
    elif 0 < v <= 0xFFFFFFFF:
        out += _pBI(0x70, v)
    else:
        raise _range(v, "uint")


def _e_ulong(out: bytearray, v: Any) -> None:
    if v == 0:
        out.append(0x44)
    elif 0 < v <= 0xFF:
        out += _pBB(0x53, v)
    elif 0 < v <= 0xFFFFFFFFFFFFFFFF:
        out += _pBQ(0x80, v)
    else:
        raise _range(v, "ulong")


def _e_byte(out: bytearray, v: Any) -> None:
    if not -0x80 <= v <= 0x7F:
        raise _range(v, "byte")
    out += _pBb(0x51, v)


def _e_short(out: bytearray, v: Any) -> None:
    if not -0x8000 <= v <= 0x7FFF:
        raise _range(v, "short")
    out += _pBh(0x61, v)


def _e_int(out: bytearray, v: Any) -> None:
    if -0x80 <= v <= 0x7F:
        out += _pBb(0x54, v)
    elif -0x80000000 <= v <= 0x7FFFFFFF:
        out += _pBi(0x71, v)
    else:
        raise _range(v, "int")


def _e_long(out: bytearray, v: Any) -> None:
    if -0x80 <= v <= 0x7F:
        out += _pBb(0x55, v)
    elif -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        out += _pBq(0x81, v)
    else:
        raise _range(v, "long")


def _e_float(out: bytearray, v: Any) -> None:
    out += _pBf(0x72, v)


def _e_double(out: bytearray, v: Any) -> None:
    out += _pBd(0x82, v)


def _e_dec32(out: bytearray, v: Any) -> None:
    out.append(0x74)
    out += v.raw


def _e_dec64(out: bytearray, v: Any) -> None:
    out.append(0x84)
    out += v.raw


def _e_dec128(out: bytearray, v: Any) -> None:
    out.append(0x94)
    out += v.raw


def _e_char(out: bytearray, v: Any) -> None:
    if len(v) != 1:
        raise EncodeError(f"char needs exactly one code point, got {v!r}")
    n = ord(v)
    if 0xD800 <= n <= 0xDFFF:  # (the decoder refuses one too)
        raise EncodeError(f"char {str(v)!r} is surrogate U+{n:04X}, not a Unicode scalar value")
    out += _pBI(0x73, n)


def _e_timestamp(out: bytearray, v: Any) -> None:
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise EncodeError("a timestamp from a datetime needs a timezone")
        v = int(v.timestamp() * 1000)
    if not -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        raise _range(v, "timestamp")
    out += _pBq(0x83, v)


def _e_uuid(out: bytearray, v: Any) -> None:
    out.append(0x98)
    out += v.bytes


def _e_binary(out: bytearray, v: Any) -> None:
    n = len(v)
    if n <= 0xFF:
        out += _pBB(0xA0, n)
    elif n <= 0xFFFFFFFF:
        out += _pBI(0xB0, n)
    else:
        raise _range(n, "binary length")
    out += v


def _not_text(v: Any, what: str) -> EncodeError:
    """A value that is not text where a string or symbol belongs (bytes, a number...)."""
    return EncodeError(f"a {what} needs text, got {type(v).__name__} {v!r:.40}")


def _e_string(out: bytearray, v: Any) -> None:
    try:
        b = v.encode("utf-8")
    except UnicodeEncodeError as x:
        raise EncodeError(f"string is not valid Unicode: {x}") from None
    except AttributeError:
        raise _not_text(v, "string") from None
    n = len(b)
    if n <= 0xFF:
        out += _pBB(0xA1, n)
    else:
        out += _pBI(0xB1, n)
    out += b


def _symbol_bytes(v: str) -> bytes:
    """A symbol's bytes: seven-bit ASCII only (Part 1 §1.6.21; the decoder refuses others)."""
    try:
        return v.encode("ascii")
    except AttributeError:
        raise _not_text(v, "symbol") from None
    except UnicodeEncodeError as x:
        bad = v[x.start]
        raise EncodeError(f"symbol {str(v)!r:.60} is not ASCII: {bad!r} (U+{ord(bad):04X}) at "
                          f"index {x.start}") from None


def _e_symbol(out: bytearray, v: Any) -> None:
    b = _symbol_bytes(v)
    n = len(b)
    if n <= 0xFF:
        out += _pBB(0xA3, n)
    else:
        out += _pBI(0xB3, n)
    out += b


# --- compound --------------------------------------------------------------------------


def _compound(out: bytearray, start: int, count: int, small: int, wide: int, force: int) -> None:
    """Insert the size/count header in front of the body written from `start`."""
    n = len(out) - start
    if force != wide and n + 1 <= 0xFF and count <= 0xFF:
        out[start:start] = _pBBB(small, n + 1, count)
    else:
        out[start:start] = _pBII(wide, n + 4, count)


def _e_list(out: bytearray, v: Any) -> None:
    if not v:
        out.append(0x45)
        return
    start = len(out)
    for x in v:
        enc = _ENC.get(type(x)) or _resolve(x)
        enc(out, x)
    _compound(out, start, len(v), 0xC0, 0xD0, 0)


def _e_amqp_list(out: bytearray, v: Any) -> None:
    code = v.code
    if not v and code == 0x45:
        out.append(0x45)
        return
    start = len(out)
    for x in v:
        enc = _ENC.get(type(x)) or _resolve(x)
        enc(out, x)
    _compound(out, start, len(v), 0xC0, 0xD0, code)


def _map_body(out: bytearray, v: Any, key_enc: Encoder | None) -> None:
    for k, x in v.items():
        if key_enc is not None and type(k) is str:
            key_enc(out, k)
        else:
            (_ENC.get(type(k)) or _resolve(k))(out, k)
        (_ENC.get(type(x)) or _resolve(x))(out, x)


def _e_map_key(out: bytearray, k: MapKey) -> None:
    """A map key kept apart from an equal-in-Python one: its value by its own type."""
    v = k.value
    (_ENC.get(type(v)) or _resolve(v))(out, v)


def _e_map(out: bytearray, v: Any) -> None:
    start = len(out)
    _map_body(out, v, None)
    _compound(out, start, 2 * len(v), 0xC1, 0xD1, 0)


def _e_amqp_map(out: bytearray, v: Any) -> None:
    start = len(out)
    _map_body(out, v, None)
    _compound(out, start, 2 * len(v), 0xC1, 0xD1, v.code)


def _e_symbol_keyed_map(out: bytearray, v: Any) -> None:
    """A map whose plain-str keys are symbols (fields, annotations, filter-set)."""
    if type(v) is not dict and not isinstance(v, dict):
        (_ENC.get(type(v)) or _resolve(v))(out, v)
        return
    start = len(out)
    _map_body(out, v, _e_symbol)
    _compound(out, start, 2 * len(v), 0xC1, 0xD1, getattr(v, "code", 0))


# --- arrays ----------------------------------------------------------------------------

# Element bodies (no constructor) per element format code.
_ELEM_FIXED: dict[int, tuple[str, int, int]] = {
    # code: (struct format, min, max)
    0x50: ("B", 0, 0xFF),
    0x60: ("H", 0, 0xFFFF),
    0x70: ("I", 0, 0xFFFFFFFF),
    0x80: ("Q", 0, 0xFFFFFFFFFFFFFFFF),
    0x52: ("B", 0, 0xFF),
    0x53: ("B", 0, 0xFF),
    0x51: ("b", -0x80, 0x7F),
    0x61: ("h", -0x8000, 0x7FFF),
    0x71: ("i", -0x80000000, 0x7FFFFFFF),
    0x81: ("q", -0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    0x54: ("b", -0x80, 0x7F),
    0x55: ("b", -0x80, 0x7F),
    0x83: ("q", -0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
}

# Element code for a type name when nothing was decoded: the smallest that fits every element.
_TYPE_CODES: dict[str, tuple[int, ...]] = {
    "null": (0x40,),
    "boolean": (0x56,),
    "ubyte": (0x50,),
    "ushort": (0x60,),
    "uint": (0x52, 0x70),
    "ulong": (0x53, 0x80),
    "byte": (0x51,),
    "short": (0x61,),
    "int": (0x54, 0x71),
    "long": (0x55, 0x81),
    "float": (0x72,),
    "double": (0x82,),
    "decimal32": (0x74,),
    "decimal64": (0x84,),
    "decimal128": (0x94,),
    "char": (0x73,),
    "timestamp": (0x83,),
    "uuid": (0x98,),
    "binary": (0xA0, 0xB0),
    "string": (0xA1, 0xB1),
    "symbol": (0xA3, 0xB3),
    "list": (0xC0, 0xD0),
    "map": (0xC1, 0xD1),
    "array": (0xE0, 0xF0),
}

TYPE_OF_CODE: dict[int, str] = {c: n for n, cs in _TYPE_CODES.items() for c in cs}

# Python type → AMQP type name: infers an array's element type here, and names values'
# types in `render`.
PYTHON_TYPE_NAMES: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    UByte: "ubyte",
    UShort: "ushort",
    UInt: "uint",
    ULong: "ulong",
    Byte: "byte",
    Short: "short",
    Int: "int",
    Long: "long",
    int: "long",
    Float: "float",
    float: "double",
    Decimal32: "decimal32",
    Decimal64: "decimal64",
    Decimal128: "decimal128",
    Char: "char",
    Timestamp: "timestamp",
    uuid.UUID: "uuid",
    bytes: "binary",
    bytearray: "binary",
    memoryview: "binary",
    str: "string",
    Symbol: "symbol",
    list: "list",
    AmqpList: "list",
    dict: "map",
    AmqpMap: "map",
    Array: "array",
}


class _Overflow(Exception):
    """An element does not fit the array's narrow constructor; retry with the wide one."""


_WIDE = {0xA0: 0xB0, 0xA1: 0xB1, 0xA3: 0xB3, 0xC0: 0xD0, 0xC1: 0xD1, 0xE0: 0xF0}
# Zero-width element constructors: each element is the one value its code stands for
# (list0's an empty list, which the decoder reads such arrays as).
_ZERO_WIDTH: dict[int, Any] = {0x40: None, 0x41: True, 0x42: False, 0x43: 0, 0x44: 0, 0x45: []}
# Other fixed-width codes: a writer of the element *with* its code byte (dropped after).
_ONE: dict[int, tuple[Encoder, type | tuple[type, ...]]] = {
    0x56: (lambda o, x: o.extend(_pBB(0x56, 1 if x else 0)), bool),
    0x72: (lambda o, x: _e_float(o, x), (int, float)),
    0x82: (lambda o, x: _e_double(o, x), (int, float)),
    0x74: (lambda o, x: _e_dec32(o, x), Decimal32),
    0x84: (lambda o, x: _e_dec64(o, x), Decimal64),
    0x94: (lambda o, x: _e_dec128(o, x), Decimal128),
    0x73: (lambda o, x: _e_char(o, x), str),
    0x98: (lambda o, x: _e_uuid(o, x), uuid.UUID),
}


def _payload(x: Any, code: int) -> bytes:
    if code in (0xA0, 0xB0):
        if not isinstance(x, (bytes, bytearray, memoryview)):
            raise EncodeError(f"array of binary got {type(x).__name__}")
        return bytes(x)
    if not isinstance(x, str):
        raise EncodeError(f"array of {TYPE_OF_CODE[code]} got {type(x).__name__}")
    if code in (0xA3, 0xB3):
        return _symbol_bytes(x)
    return x.encode("utf-8")


def _elements(out: bytearray, code: int, items: Any) -> None:
    """Write array elements without constructors, all in the format `code`."""
    fx = _ELEM_FIXED.get(code)
    if fx is not None:
        lo, hi = fx[1], fx[2]
        for x in items:
            if not isinstance(x, int) or not lo <= x <= hi:
                raise _range(x, f"array element 0x{code:02x}")
        out += struct.pack(f">{len(items)}{fx[0]}", *items)
    elif code in (0xA0, 0xA1, 0xA3, 0xB0, 0xB1, 0xB3):
        small = code < 0xB0
        for x in items:
            b = _payload(x, code)
            if small:
                if len(b) > 0xFF:
                    raise _Overflow
                out.append(len(b))
            else:
                out += _p32(len(b))
            out += b
    elif code in (0xC0, 0xD0, 0xC1, 0xD1):
        is_map = code in (0xC1, 0xD1)
        for x in items:
            if is_map != isinstance(x, dict) or isinstance(x, Array):
                raise EncodeError(f"array of {TYPE_OF_CODE[code]} got {type(x).__name__}")
            tmp = bytearray()
            if is_map:
                _map_body(tmp, x, None)
                count = 2 * len(x)
            else:
                for y in x:
                    (_ENC.get(type(y)) or _resolve(y))(tmp, y)
                count = len(x)
            if code < 0xD0:
                if len(tmp) + 1 > 0xFF or count > 0xFF:
                    raise _Overflow
                out += _pBB(len(tmp) + 1, count)
            else:
                out += _pII(len(tmp) + 4, count)
            out += tmp
    elif code in (0xE0, 0xF0):
        for x in items:
            inner = x if isinstance(x, Array) else Array(x)
            tmp = bytearray()
            _e_array(tmp, inner, code)
            out += tmp[1:]
    elif code in _ZERO_WIDTH:
        want = _ZERO_WIDTH[code]
        for x in items:
            if (x != want or (want is None) != (x is None) or type(x) is bool and code > 0x42
                    or code == 0x45 and type(x) is not list and type(x) is not AmqpList):
                raise EncodeError(f"array element 0x{code:02x} holds only {want!r}, got {x!r}")
    elif code in _ONE:
        w, t = _ONE[code]
        tmp = bytearray()
        for x in items:
            if not isinstance(x, t):
                raise EncodeError(f"array of {TYPE_OF_CODE[code]} got {type(x).__name__}")
            del tmp[:]
            w(tmp, x)
            out += tmp[1:]
    else:
        raise EncodeError(f"no array element format 0x{code:02x}")


def _pick_code(arr: Any, name: str) -> int:
    codes = _TYPE_CODES.get(name)
    if codes is None:
        raise EncodeError(f"no array encoding for element type {name!r}")
    if len(codes) == 1:
        return codes[0]
    small, wide = codes
    if name in ("uint", "ulong", "int", "long"):
        # the full width, as proton writes them, however small the numbers: RabbitMQ 3.x
        # resets the connection at an array of smalluint, smallulong, smallint or smalllong
        return wide
    return small  # variable and compound widths: widened on _Overflow


def _e_array(out: bytearray, v: Any, fmt: int | None = None) -> None:
    name = v.type
    if name is None:
        if not v:
            raise EncodeError("an empty Array needs its element type")
        name = PYTHON_TYPE_NAMES.get(type(v[0]))
        if name is None:
            raise EncodeError(f"no array encoding for {type(v[0]).__name__}")
    code = v.code
    if code is None:
        code = _pick_code(v, name)
    strict = fmt is not None  # an inner array must take the outer array's element format
    if fmt is None:
        fmt = v.fmt
    start = len(out)
    while True:
        if v.descriptor is not None:
            out.append(0x00)
            encode_into(out, v.descriptor)
        out.append(code)
        try:
            _elements(out, code, v)
            break
        except _Overflow:
            del out[start:]
            code = _WIDE[code]
    n = len(out) - start
    count = len(v)
    if fmt != 0xF0 and n + 1 <= 0xFF and count <= 0xFF:
        out[start:start] = _pBBB(0xE0, n + 1, count)
    elif strict and fmt == 0xE0:
        raise _Overflow
    else:
        out[start:start] = _pBII(0xF0, n + 4, count)


def array_form(v: Array) -> tuple[int, int] | None:
    """(element constructor, 0xe0 or 0xf0) that `encode` writes for the elements of `v`
    when it picks them itself (no `code` or `fmt` given), or None for elements it cannot
    write. A decoded array in this form needs neither to encode to the same bytes."""
    out = bytearray()
    try:
        _e_array(out, Array(v, v.type, descriptor=v.descriptor))
    except (EncodeError, OverflowError, struct.error):
        return None
    p = 3 if out[0] == 0xE0 else 9  # past the size and count
    if v.descriptor is not None:
        p += 1 + len(encode(v.descriptor))  # 0x00, then the descriptor
    return out[p], out[0]


# --- described and composites -----------------------------------------------------------


def _e_described(out: bytearray, v: Any) -> None:
    out.append(0x00)
    d = v.descriptor
    (_ENC.get(type(d)) or _resolve(d))(out, d)
    x = v.value
    (_ENC.get(type(x)) or _resolve(x))(out, x)


def _unchanged(v: Any) -> bool:
    """True while `v` and the composites in its fields hold exactly what was decoded."""
    raw = v._raw
    if raw is None:
        return False
    decoded = raw[1]
    if v.HAS_VALUE:
        x = v.value
        return x is decoded and (not isinstance(x, Composite) or _unchanged(x))
    n = len(decoded)
    i = 0
    for x in type(v)._GET(v):  # every field at once
        if i < n:
            if x is not decoded[i]:
                return False
        elif x is not None:
            return False
        i += 1  # noqa: SIM113 - a counter runs fewer steps than enumerate here
        if x is not None and isinstance(x, Composite) and not _unchanged(x):
            return False
    return True


def _e_composite(out: bytearray, v: Any) -> None:
    if v._raw is not None and _unchanged(v):
        out += v._raw[0]
        return
    _e_composite_fields(out, v)


def _e_composite_fields(out: bytearray, v: Any) -> None:
    """`v` encoded from its fields, whatever bytes it was decoded from (nested composites
    as `_e_composite` writes them)."""
    cls = type(v)
    out += cls._PREFIX
    if cls.HAS_VALUE:
        cls._FIELD_ENCODERS[0](out, v.value)
        return
    values = cls._GET(v)
    n = len(values)
    while n and values[n - 1] is None:
        n -= 1
    if n == 0:
        out.append(0x45)
        return
    start = len(out)
    encs = cls._FIELD_ENCODERS
    for i in range(n):
        x = values[i]
        if x is None:
            out.append(0x40)
        else:
            encs[i](out, x)
    _compound(out, start, n, 0xC0, 0xD0, 0)


# --- field encoders: a composite field's declared type decides how plain values encode --

_PRIM_ENC: dict[str, Encoder] = {
    "boolean": _e_bool,
    "ubyte": _e_ubyte,
    "ushort": _e_ushort,
    "uint": _e_uint,
    "ulong": _e_ulong,
    "byte": _e_byte,
    "short": _e_short,
    "int": _e_int,
    "long": _e_long,
    "float": _e_float,
    "double": _e_double,
    "char": _e_char,
    "timestamp": _e_timestamp,
    "binary": _e_binary,
    "string": _e_string,
    "symbol": _e_symbol,
}
# Plain Python types a field encoder may coerce; an AMQP-typed value keeps its own type.
_PLAIN = frozenset((int, float, str, bytes, bytearray, memoryview, _dt.datetime))
_SYMBOL_KEYED = {"fields", "annotations", "filter-set", "node-properties"}


def _field_type(name: str) -> tuple[str, bool]:
    """(primitive or '*', symbol-keyed map?) for a field's spec type."""
    keyed = False
    while name in _c.RESTRICTED:
        keyed = keyed or name in _SYMBOL_KEYED
        name = _c.RESTRICTED[name]
    if name in _c.BY_NAME:
        return "*", False
    return name, keyed


def _any(out: bytearray, x: Any) -> None:
    (_ENC.get(type(x)) or _resolve(x))(out, x)


# The plain Python types a field's primitive takes. Another plain value in such a field
# has no encoding there: a str in a uint field would end in a TypeError, in a boolean
# field it would be read as true. (Strings and symbols say so themselves.)
_INTEGER_TYPES = ("ubyte", "ushort", "uint", "ulong", "byte", "short", "int", "long")
_TAKES: dict[str, tuple[type, ...]] = {
    **{name: (int,) for name in _INTEGER_TYPES},
    "boolean": (int,),
    "float": (float, int),
    "double": (float, int),
    "timestamp": (int, _dt.datetime),
    "char": (str,),
    "binary": (bytes, bytearray, memoryview),
}


def _typed(prim: Encoder, name: str) -> Encoder:
    # what its primitive writes (one lookup in the usual case), and the other plain types,
    # which it refuses. (A bool is the AMQP boolean, written as one: a field of another
    # type holds it as a peer sent it, and encodes it back so.)
    takes = frozenset(_TAKES.get(name, _PLAIN))
    refused = _PLAIN - takes

    def w(out: bytearray, x: Any) -> None:
        t = type(x)
        if t in takes:
            prim(out, x)
        elif t in refused:
            raise EncodeError(f"a {name} field cannot hold {t.__name__} {x!r:.60}")
        else:
            (_ENC.get(t) or _resolve(x))(out, x)

    return w


def _multiple(single: Encoder, name: str) -> Encoder:
    def w(out: bytearray, x: Any) -> None:
        if type(x) is list or type(x) is tuple:
            _e_array(out, Array(x, name))
        else:
            single(out, x)

    return w


def field_encoder(type_name: str, multiple: bool = False) -> Encoder:
    """The encoder for a value of a composite field of the given spec type."""
    prim, keyed = _field_type(type_name)
    enc: Encoder
    if keyed:
        enc = _e_symbol_keyed_map
    elif prim in _PRIM_ENC:
        enc = _typed(_PRIM_ENC[prim], prim)
    else:
        enc = _any
    if multiple and prim in _TYPE_CODES:
        enc = _multiple(enc, prim)
    return enc


def _prefix(code: int) -> bytes:
    return bytes((0x00, 0x53, code)) if code <= 0xFF else bytes((0x00, 0x80)) + _p64(code)


# --- dispatch ---------------------------------------------------------------------------

_ENC: dict[type, Encoder] = {
    type(None): _e_null,
    bool: _e_bool,
    UByte: _e_ubyte,
    UShort: _e_ushort,
    UInt: _e_uint,
    ULong: _e_ulong,
    Byte: _e_byte,
    Short: _e_short,
    Int: _e_int,
    Long: _e_long,
    int: _e_long,
    Float: _e_float,
    float: _e_double,
    Decimal32: _e_dec32,
    Decimal64: _e_dec64,
    Decimal128: _e_dec128,
    Char: _e_char,
    Timestamp: _e_timestamp,
    uuid.UUID: _e_uuid,
    bytes: _e_binary,
    bytearray: _e_binary,
    memoryview: _e_binary,
    str: _e_string,
    Symbol: _e_symbol,
    list: _e_list,
    tuple: _e_list,
    AmqpList: _e_amqp_list,
    dict: _e_map,
    AmqpMap: _e_amqp_map,
    MapKey: _e_map_key,
    Array: _e_array,
    Described: _e_described,
    _dt.datetime: _e_timestamp,
}
for _cls in _c.ALL:
    _ENC[_cls] = _e_composite


def _resolve(v: Any) -> Encoder:
    t = type(v)
    for base in t.__mro__[1:]:
        enc = _ENC.get(base)
        if enc is not None and base is not object:
            _ENC[t] = enc
            return enc
    if isinstance(v, Composite):
        _ENC[t] = _e_composite
        return _e_composite
    raise EncodeError(f"no AMQP encoding for {t.__name__}: {v!r:.60}")


def encode_into(out: bytearray, value: Any) -> None:
    """Append the encoding of `value` to `out`."""
    enc = _ENC.get(type(value)) or _resolve(value)
    try:
        enc(out, value)
    except struct.error as x:
        raise EncodeError(f"cannot encode {value!r:.60}: {x}") from None


def encode(value: Any) -> bytes:
    """The AMQP encoding of `value`."""
    out = bytearray()
    encode_into(out, value)
    return bytes(out)


def encode_fields(value: Any) -> bytes:
    """The encoding of composite `value` from its fields alone, ignoring the bytes it was
    decoded from (nested composites still use theirs while unchanged)."""
    out = bytearray()
    try:
        _e_composite_fields(out, value)
    except struct.error as x:
        raise EncodeError(f"cannot encode {value!r:.60}: {x}") from None
    return bytes(out)


# --- does a decoded composite encode from its fields to the bytes it came from? ---------
#
# `encode_fields` rebuilds a composite from its fields; a JSON writer compares that with the
# bytes it was decoded from to know whether the fields alone give them back. Most decoded
# composites were written the way the encoder writes them, and for those the answer can be
# read from the bytes without encoding: `encodes_as_decoded` walks them next to the values
# and says True only when each value is in the very form the encoder gives it. Anything it
# does not know (floats, lists, arrays, a changed field, another descriptor form) is False:
# the caller then encodes and compares, as before.

_u16 = struct.Struct(">H").unpack_from
_u32 = struct.Struct(">I").unpack_from
_u32u32 = struct.Struct(">II").unpack_from
_u64 = struct.Struct(">Q").unpack_from
_i8 = struct.Struct(">b").unpack_from
_i16 = struct.Struct(">h").unpack_from
_i32 = struct.Struct(">i").unpack_from
_i64 = struct.Struct(">q").unpack_from
_DECIMAL_WIDTHS = {0x74: (Decimal32, 4), 0x84: (Decimal64, 8), 0x94: (Decimal128, 16)}


def encodes_as_decoded(v: Any) -> bool:
    """True when `encode_fields(v)` is sure to give exactly the bytes composite `v` was
    decoded from: every field still holds what was decoded, and each is written as the
    encoder writes it (smallest integer and size forms, no trailing nulls, the short
    descriptor). False means "not known": encode and compare."""
    raw = v._raw
    if raw is None:
        return False
    b, decoded = raw
    cls = type(v)
    prefix = cls._PREFIX
    p = len(prefix)
    if b[:p] != prefix:
        return False
    if cls.HAS_VALUE:
        x = v.value
        if x is not decoded:
            return False
        return _field_end(b, p, x, cls._CANON[0]) == len(b)
    code = b[p]
    if code == 0xC0:
        count = b[p + 2]
        p += 3
    elif code == 0xD0:
        size, count = _u32u32(b, p + 1)
        if size - 3 <= 0xFF and count <= 0xFF:  # list8 would have held it
            return False
        p += 9
    elif code == 0x45:
        count = 0
        p += 1
    else:
        return False
    values = cls._GET(v)
    if count > len(values) or count > len(decoded):
        return False
    if count:
        if values[count - 1] is None:  # a trailing null the encoder leaves out
            return False
    elif code != 0x45:
        return False
    for x in values[count:]:
        if x is not None:
            return False
    canon = cls._CANON
    for i in range(count):
        x = values[i]
        if x is not decoded[i]:
            return False
        c = b[p]
        if c == 0x40 or c == 0x43 or c == 0x41 or c == 0x42 or c == 0x44:
            p += 1
        elif c == 0x52 or c == 0x53:  # smalluint, smallulong: not for 0
            if not b[p + 1]:
                return False
            p += 2
        elif c == 0x83:  # a timestamp has one form
            p += 9
        elif c == 0xA0 or c == 0xA1:
            if not canon[i] & (1 if c == 0xA0 else 2):
                return False
            p += 2 + b[p + 1]
        elif c == 0xA3:
            p += 2 + b[p + 1]
        elif c == 0x70:  # uint, ulong: only above 255
            if x <= 0xFF:
                return False
            p += 5
        elif c == 0x80:
            if x <= 0xFF:
                return False
            p += 9
        else:
            p = _field_end(b, p, x, canon[i])
            if p < 0:
                return False
    return p == len(b)


def _field_end(b: Any, p: int, x: Any, canon: int) -> int:
    """Where the field value `x` written at `p` ends, if its field's encoder writes it as
    it is there (`canon`: bit 1 a bytes value is written as binary, bit 2 a str as a
    string, bit 4 a dict's str keys as symbols, bit 8 a dict as a map at all); else -1."""
    t = type(x)
    if t is bytes:
        return _value_end(b, p, x) if canon & 1 else -1
    if t is str:
        return _value_end(b, p, x) if canon & 2 else -1
    if t is dict or t is AmqpMap:
        return _map_end(b, p, x, bool(canon & 4)) if canon & 8 else -1
    if t is list or t is tuple or t is float:  # multiple fields make lists arrays
        return -1
    return _value_end(b, p, x)


def _value_end(b: Any, p: int, x: Any) -> int:
    """Where `x` written at `p` ends, if `encode` writes `x` (by its own type) as exactly
    those bytes; else -1. The value is checked against the bytes, type included."""
    c = b[p]
    t = type(x)
    if c == 0x40:
        return p + 1 if x is None else -1
    if c == 0x41:
        return p + 1 if x is True else -1
    if c == 0x42:
        return p + 1 if x is False else -1
    if c == 0xA1:
        e = p + 2 + b[p + 1]
        if t is not str:
            return -1
        try:
            return e if x.encode("utf-8") == b[p + 2 : e] else -1
        except UnicodeEncodeError:
            return -1
    if c == 0xA3:
        e = p + 2 + b[p + 1]
        return e if _text_at(b, p + 2, e, x, t, c) else -1
    if c == 0x52:
        return p + 2 if t is UInt and x and x == b[p + 1] else -1
    if c == 0x43:
        return p + 1 if t is UInt and x == 0 else -1
    if c == 0x55:
        return p + 2 if t is Long and x == _i8(b, p + 1)[0] else -1
    if c == 0xB1 or c == 0xB3:
        n = _u32(b, p + 1)[0]
        e = p + 5 + n
        return e if n > 0xFF and _text_at(b, p + 5, e, x, t, c - 0x10) else -1
    if c == 0xA0:
        e = p + 2 + b[p + 1]
        return e if t is bytes and x == b[p + 2 : e] else -1
    if c == 0xB0:
        n = _u32(b, p + 1)[0]
        e = p + 5 + n
        return e if t is bytes and n > 0xFF and x == b[p + 5 : e] else -1
    if c == 0x70:
        return p + 5 if t is UInt and x > 0xFF and x == _u32(b, p + 1)[0] else -1
    if c == 0x44:
        return p + 1 if t is ULong and x == 0 else -1
    if c == 0x53:
        return p + 2 if t is ULong and x and x == b[p + 1] else -1
    if c == 0x80:
        return p + 9 if t is ULong and x > 0xFF and x == _u64(b, p + 1)[0] else -1
    if c == 0x50:
        return p + 2 if t is UByte and x == b[p + 1] else -1
    if c == 0x60:
        return p + 3 if t is UShort and x == _u16(b, p + 1)[0] else -1
    if c == 0x51:
        return p + 2 if t is Byte and x == _i8(b, p + 1)[0] else -1
    if c == 0x61:
        return p + 3 if t is Short and x == _i16(b, p + 1)[0] else -1
    if c == 0x54:
        return p + 2 if t is Int and x == _i8(b, p + 1)[0] else -1
    if c == 0x71:
        return p + 5 if t is Int and not -0x80 <= x <= 0x7F and x == _i32(b, p + 1)[0] else -1
    if c == 0x81:
        return p + 9 if t is Long and not -0x80 <= x <= 0x7F and x == _i64(b, p + 1)[0] else -1
    if c == 0x83:
        return p + 9 if t is Timestamp and x == _i64(b, p + 1)[0] else -1
    if c == 0x98:
        return p + 17 if t is uuid.UUID and x.bytes == b[p + 1 : p + 17] else -1
    if c == 0x73:
        return p + 5 if t is Char and len(x) == 1 and ord(x) == _u32(b, p + 1)[0] else -1
    if c in _DECIMAL_WIDTHS:
        cls, n = _DECIMAL_WIDTHS[c]
        return p + 1 + n if t is cls and x.raw == b[p + 1 : p + 1 + n] else -1
    if c == 0xC1 or c == 0xD1:
        return _map_end(b, p, x, False) if t is dict or t is AmqpMap else -1
    if c == 0x00:
        if not isinstance(x, Composite) or x._raw is None or not _unchanged(x):
            return -1
        r = x._raw[0]
        e = p + len(r)
        return e if b[p:e] == r else -1
    return -1  # floats, lists, arrays, described values of no composite


def _text_at(b: Any, p: int, e: int, x: Any, t: type, c: int) -> bool:
    """`x` is the string (0xA1) whose UTF-8 or the symbol (0xA3) whose ASCII is `b[p:e]`."""
    try:
        if c == 0xA1:
            return t is str and x.encode("utf-8") == b[p:e]
        return t is Symbol and x.encode("ascii") == b[p:e]
    except UnicodeEncodeError:
        return False


def _map_end(b: Any, p: int, m: Any, symbol_keys: bool) -> int:
    """Where the map `m` written at `p` ends, if it is written as `encode` writes it (its
    str keys as symbols with `symbol_keys`); else -1."""
    c = b[p]
    if c == 0xC1:
        count = b[p + 2]
        end = p + 2 + b[p + 1]
        p += 3
        if type(m) is not dict:
            return -1
    elif c == 0xD1:
        size, count = _u32u32(b, p + 1)
        end = p + 5 + size
        p += 9
        if type(m) is dict:
            if size - 3 <= 0xFF and count <= 0xFF:  # map8 would have held it
                return -1
        elif m.code != 0xD1:
            return -1
    else:
        return -1
    if count != 2 * len(m):
        return -1
    for k, x in m.items():
        if symbol_keys and type(k) is str:
            return -1
        if type(k) is MapKey:
            k = k.value
        p = _value_end(b, p, k)
        if p < 0:
            return -1
        p = _value_end(b, p, x)
        if p < 0:
            return -1
    return p if p == end else -1


def _canon_bits(enc: Encoder) -> int:
    """How a field's encoder writes a str, a bytes and a dict: the bits of `_field_end`."""

    def writes(x: Any) -> bytes | None:
        out = bytearray()
        try:
            enc(out, x)
        except Exception:  # noqa: BLE001 - a value the field cannot take
            return None
        return bytes(out)

    bits = 0
    long = "x" * 300
    if writes(b"x") == b"\xa0\x01x" and writes(long.encode()) == b"\xb0" + _p32(300) + long.encode():
        bits |= 1
    if writes("x") == b"\xa1\x01x" and writes(long) == b"\xb1" + _p32(300) + long.encode():
        bits |= 2
    m = writes({"k": UInt(1)})
    if m == b"\xc1\x06\x02\xa3\x01k\x52\x01":
        bits |= 4 | 8
    elif m == b"\xc1\x06\x02\xa1\x01k\x52\x01":
        bits |= 8
    return bits


def encode_as(out: bytearray, type_name: str, value: Any) -> None:
    """Append `value` encoded as the given AMQP or spec type ("uint", "handle", "fields")."""
    field_encoder(type_name)(out, value)


for _cls in _c.ALL:
    _cls._PREFIX = _prefix(_cls.CODE)  # type: ignore[attr-defined]
    if not _cls.HAS_VALUE:
        # all fields at once, as a tuple (attrgetter of one name gives the bare value)
        _get = operator.attrgetter(*_cls._SLOTS) if _cls._SLOTS else (lambda o: ())
        _cls._GET = _get if len(_cls._SLOTS) != 1 else (lambda o, g=_get: (g(o),))  # type: ignore[attr-defined]
        _cls._FIELD_ENCODERS = tuple(field_encoder(f.type, f.multiple) for f in _cls.FIELDS)
    elif _cls.NAME in ("delivery-annotations", "message-annotations", "footer"):
        _cls._FIELD_ENCODERS = (_e_symbol_keyed_map,)
    elif _cls.SOURCE == "binary":
        _cls._FIELD_ENCODERS = (_typed(_e_binary, "binary"),)
    else:
        _cls._FIELD_ENCODERS = (_any,)
    _cls._CANON = tuple(_canon_bits(e) for e in _cls._FIELD_ENCODERS)  # type: ignore[attr-defined]
