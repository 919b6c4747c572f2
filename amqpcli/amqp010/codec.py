"""Encoding and decoding of 0-10 types, structs, controls and commands.

Decoders take `(buf, off, end)` and return `(value, new_off)`; they read only
`buf[off:end]` and raise `DecodeError` with an absolute offset on malformed input.
Encoders append to a `bytearray`.
"""

from __future__ import annotations

import decimal
import struct
import uuid
from collections.abc import Callable
from typing import Any

from amqpcli.amqp010.errors import DecodeError, EncodeError
from amqpcli.amqp010.model import (
    COMMANDS,
    CONTROLS,
    SESSION_HEADER,
    STRUCTS,
    STRUCTS_BY_CODE,
    TYPES_BY_CODE,
    Command,
    Control,
    FieldDef,
    MethodDef,
    Struct,
    StructDef,
)
from amqpcli.amqp010.values import (
    Array,
    ByteRanges,
    Datetime,
    SequenceSet,
    TypedBytes,
    TypedDecimal,
    TypedFloat,
    TypedInt,
    TypedStr,
)

Buf = bytes | bytearray | memoryview
Decoder = Callable[[Buf, int, int], tuple[Any, int]]
Encoder = Callable[[bytearray, Any], None]

_U8, _U16, _U32, _U64 = (struct.Struct(f) for f in (">B", ">H", ">I", ">Q"))

# how a type code's range tells a value's width (for codes this spec does not define)
_FIXED_BY_RANGE = {0x0: 1, 0x1: 2, 0x2: 4, 0x3: 8, 0x4: 16, 0x5: 32, 0x6: 64, 0x7: 128,
                   0xC: 5, 0xD: 9, 0xF: 0}
_VAR_BY_RANGE = {0x8: 1, 0x9: 2, 0xA: 4}
# zero-width array elements cost no bytes; cap their count so input cannot make us loop
MAX_EMPTY_ELEMENTS = 65536


def _need(buf: Buf, off: int, n: int, end: int, what: str) -> None:
    if off + n > end:
        raise DecodeError(off, f"{n} octet(s) of {what}", f"{max(end - off, 0)} left")


def _fixed(fmt: str, what: str, wrap: Callable[[Any], Any] | None = None) -> tuple[Decoder, Encoder]:
    st = struct.Struct(fmt)
    n = st.size

    def dec(buf: Buf, off: int, end: int) -> tuple[Any, int]:
        _need(buf, off, n, end, what)
        v = st.unpack_from(buf, off)[0]
        return (wrap(v) if wrap else v), off + n

    def enc(out: bytearray, value: Any) -> None:
        try:
            out += st.pack(value)
        except (struct.error, TypeError) as e:
            raise EncodeError(f"{what}: cannot encode {value!r} ({e})") from None

    return dec, enc


def _binary(n: int) -> tuple[Decoder, Encoder]:
    def dec(buf: Buf, off: int, end: int) -> tuple[Any, int]:
        _need(buf, off, n, end, f"bin{n * 8}")
        return bytes(buf[off:off + n]), off + n

    def enc(out: bytearray, value: Any) -> None:
        if len(value) != n:
            raise EncodeError(f"bin{n * 8} needs {n} octets, got {len(value)}")
        out += value

    return dec, enc


def _sized(width: int, what: str, codec: str | None) -> tuple[Decoder, Encoder]:
    size_st = {1: _U8, 2: _U16, 4: _U32}[width]
    limit = (1 << (8 * width)) - 1

    def dec(buf: Buf, off: int, end: int) -> tuple[Any, int]:
        _need(buf, off, width, end, f"{what} size")
        size = size_st.unpack_from(buf, off)[0]
        off += width
        _need(buf, off, size, end, what)
        raw = bytes(buf[off:off + size])
        if codec is None:
            return raw, off + size
        try:
            return raw.decode(codec, "surrogateescape" if codec != "utf-16-be" else
                              "surrogatepass"), off + size
        except UnicodeDecodeError as e:
            raise DecodeError(off + e.start, f"{what} text", f"bad {codec}: {e.reason}") from None

    def enc(out: bytearray, value: Any) -> None:
        if isinstance(value, str):
            raw = value.encode(codec or "utf-8", "surrogatepass" if codec == "utf-16-be"
                               else "surrogateescape")
        else:
            raw = bytes(value)
        if len(raw) > limit:
            raise EncodeError(f"{what} holds at most {limit} octets, got {len(raw)}")
        out += size_st.pack(len(raw))
        out += raw

    return dec, enc


def _dec_char(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    _need(buf, off, 1, end, "char")
    return chr(buf[off]), off + 1


def _enc_char(out: bytearray, value: Any) -> None:
    out += str(value).encode("latin-1")[:1].ljust(1, b"\0")


def _dec_utf32(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    _need(buf, off, 4, end, "char-utf32")
    cp = _U32.unpack_from(buf, off)[0]
    if cp > 0x10FFFF:
        raise DecodeError(off, "a unicode code point", hex(cp))
    return chr(cp), off + 4


def _enc_utf32(out: bytearray, value: Any) -> None:
    out += _U32.pack(ord(value))


def _dec_bool(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    _need(buf, off, 1, end, "boolean")
    return buf[off] != 0, off + 1


def _enc_bool(out: bytearray, value: Any) -> None:
    out.append(1 if value else 0)


def _dec_uuid(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    _need(buf, off, 16, end, "uuid")
    return uuid.UUID(bytes=bytes(buf[off:off + 16])), off + 16


def _enc_uuid(out: bytearray, value: Any) -> None:
    out += value.bytes if isinstance(value, uuid.UUID) else bytes(value)


def _decimal(mant_fmt: str, code: int) -> tuple[Decoder, Encoder]:
    st = struct.Struct(">B" + mant_fmt)

    def dec(buf: Buf, off: int, end: int) -> tuple[Any, int]:
        _need(buf, off, st.size, end, "decimal")
        exp, mant = st.unpack_from(buf, off)
        return TypedDecimal(decimal.Decimal(mant).scaleb(-exp), code), off + st.size

    def enc(out: bytearray, value: Any) -> None:
        d = decimal.Decimal(value)
        exp = -int(d.as_tuple().exponent)
        if exp < 0:  # 1E+2: write as mantissa 100, exponent 0
            d, exp = d.quantize(decimal.Decimal(1)), 0
        try:
            out += st.pack(exp, int(d.scaleb(exp)))
        except struct.error as e:
            raise EncodeError(f"decimal {value!r}: {e}") from None

    return dec, enc


def _dec_void(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    return None, off


def _enc_void(out: bytearray, value: Any) -> None:
    return None


def _dec_bit(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    return True, off


def _ranges(width: int, what: str, cls: type) -> tuple[Decoder, Encoder]:
    pair = struct.Struct(">II" if width == 4 else ">QQ")

    def dec(buf: Buf, off: int, end: int) -> tuple[Any, int]:
        _need(buf, off, 2, end, f"{what} size")
        size = _U16.unpack_from(buf, off)[0]
        off += 2
        _need(buf, off, size, end, what)
        if size % pair.size:
            raise DecodeError(off - 2, f"{what} size a multiple of {pair.size}", str(size))
        ranges = tuple(pair.unpack_from(buf, o) for o in range(off, off + size, pair.size))
        return cls(ranges), off + size

    def enc(out: bytearray, value: Any) -> None:
        ranges = getattr(value, "ranges", None) if isinstance(value, cls) else tuple(value)
        ranges = tuple(ranges or ())
        if len(ranges) * pair.size > 0xFFFF:
            raise EncodeError(f"{what}: too many ranges ({len(ranges)})")
        out += _U16.pack(len(ranges) * pair.size)
        try:
            for lo, hi in ranges:
                out += pair.pack(lo, hi)
        except struct.error as e:
            raise EncodeError(f"{what}: {e}") from None

    return dec, enc


def _compound_bounds(buf: Buf, off: int, end: int, what: str) -> tuple[int, int]:
    _need(buf, off, 4, end, f"{what} size")
    size = _U32.unpack_from(buf, off)[0]
    off += 4
    _need(buf, off, size, end, what)
    return off, off + size


def _dec_map(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    start = off
    off, sub_end = _compound_bounds(buf, off, end, "map")
    if off == sub_end:  # an empty map may omit its count
        return {}, off
    _need(buf, off, 4, sub_end, "map count")
    count = _U32.unpack_from(buf, off)[0]
    off += 4
    if count * 2 > sub_end - off:
        raise DecodeError(start, f"room for {count} map entries", f"{sub_end - off} octets")
    result: dict[str, Any] = {}
    for _ in range(count):
        key, off = _STR8[0](buf, off, sub_end)
        _need(buf, off, 1, sub_end, "type code")
        code = buf[off]
        value, off = decode_typed(buf, off + 1, sub_end, code)
        result[key] = value
    if off != sub_end:
        raise DecodeError(off, "end of map", f"{sub_end - off} more octet(s)")
    return result, off


def _enc_map(out: bytearray, value: Any) -> None:
    body = bytearray(_U32.pack(len(value)))
    for k, v in value.items():
        _STR8[1](body, k)
        encode_typed(body, v)
    _put32(out, body, "map")


def _put32(out: bytearray, body: bytearray, what: str) -> None:
    if len(body) > 0xFFFFFFFF:
        raise EncodeError(f"{what} too large")
    out += _U32.pack(len(body))
    out += body


def _dec_list(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    start = off
    off, sub_end = _compound_bounds(buf, off, end, "list")
    if off == sub_end:
        return [], off
    _need(buf, off, 4, sub_end, "list count")
    count = _U32.unpack_from(buf, off)[0]
    off += 4
    if count > sub_end - off:
        raise DecodeError(start, f"room for {count} list items", f"{sub_end - off} octets")
    result = []
    for _ in range(count):
        _need(buf, off, 1, sub_end, "type code")
        value, off = decode_typed(buf, off + 1, sub_end, buf[off])
        result.append(value)
    if off != sub_end:
        raise DecodeError(off, "end of list", f"{sub_end - off} more octet(s)")
    return result, off


def _enc_list(out: bytearray, value: Any) -> None:
    body = bytearray(_U32.pack(len(value)))
    for v in value:
        encode_typed(body, v)
    _put32(out, body, "list")


def _dec_array(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    start = off
    off, sub_end = _compound_bounds(buf, off, end, "array")
    if off == sub_end:
        return Array([], 0x95), off
    _need(buf, off, 5, sub_end, "array type code and count")
    code = buf[off]
    count = _U32.unpack_from(buf, off + 1)[0]
    off += 5
    limit = sub_end - off if width_of(code) != 0 else MAX_EMPTY_ELEMENTS
    if count > limit:
        raise DecodeError(start, f"room for {count} array elements", f"{sub_end - off} octets")
    items = []
    for _ in range(count):
        value, off = decode_typed(buf, off, sub_end, code)
        items.append(value)
    if off != sub_end:
        raise DecodeError(off, "end of array", f"{sub_end - off} more octet(s)")
    return Array(items, code), off


def _enc_array(out: bytearray, value: Any) -> None:
    code = value.code if isinstance(value, Array) else (code_of(value[0]) if value else 0x95)
    body = bytearray([code])
    body += _U32.pack(len(value))
    for v in value:
        encode_by_code(body, code, v)
    _put32(out, body, "array")


def _dec_struct32(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    start = off
    off, sub_end = _compound_bounds(buf, off, end, "struct32")
    _need(buf, off, 2, sub_end, "struct type code")
    code = _U16.unpack_from(buf, off)[0]
    sd = STRUCTS_BY_CODE.get(code)
    if sd is None:
        raise DecodeError(off, "a known struct type code", f"0x{code:04x}")
    fields, off = decode_fields(sd.fields, sd.pack, buf, off + 2, sub_end)
    if off != sub_end:
        raise DecodeError(off, f"end of {sd.qname}", f"{sub_end - off} more octet(s)")
    del start
    return Struct._decoded(sd, fields), off


def _enc_struct32(out: bytearray, value: Any) -> None:
    sd = value.definition
    if sd.type_code is None:
        raise EncodeError(f"{sd.qname} has no type code: it cannot be a struct32")
    body = bytearray(_U16.pack(sd.type_code))
    encode_fields(body, sd.fields, sd.pack, value.fields)
    _put32(out, body, "struct32")


def _dec_datetime(buf: Buf, off: int, end: int) -> tuple[Any, int]:
    _need(buf, off, 8, end, "datetime")
    return Datetime(_U64.unpack_from(buf, off)[0]), off + 8


_STR8 = _sized(1, "str8", "utf-8")

PRIMITIVES: dict[str, tuple[Decoder, Encoder]] = {
    "bin8": _binary(1), "bin16": _binary(2), "bin32": _binary(4), "bin64": _binary(8),
    "bin128": _binary(16), "bin256": _binary(32), "bin512": _binary(64),
    "bin1024": _binary(128), "bin40": _binary(5), "bin72": _binary(9),
    "int8": _fixed(">b", "int8"), "uint8": _fixed(">B", "uint8"),
    "int16": _fixed(">h", "int16"), "uint16": _fixed(">H", "uint16"),
    "int32": _fixed(">i", "int32"), "uint32": _fixed(">I", "uint32"),
    "int64": _fixed(">q", "int64"), "uint64": _fixed(">Q", "uint64"),
    "sequence-no": _fixed(">I", "sequence-no"),
    "float": _fixed(">f", "float"), "double": _fixed(">d", "double"),
    "char": (_dec_char, _enc_char), "char-utf32": (_dec_utf32, _enc_utf32),
    "boolean": (_dec_bool, _enc_bool),
    "datetime": (_dec_datetime, _fixed(">Q", "datetime")[1]),
    "uuid": (_dec_uuid, _enc_uuid),
    "dec32": _decimal("i", 0xC8), "dec64": _decimal("q", 0xD8),
    "vbin8": _sized(1, "vbin8", None), "vbin16": _sized(2, "vbin16", None),
    "vbin32": _sized(4, "vbin32", None),
    "str8": _STR8, "str16": _sized(2, "str16", "utf-8"),
    "str8-latin": _sized(1, "str8-latin", "latin-1"),
    "str16-latin": _sized(2, "str16-latin", "latin-1"),
    "str8-utf16": _sized(1, "str8-utf16", "utf-16-be"),
    "str16-utf16": _sized(2, "str16-utf16", "utf-16-be"),
    "byte-ranges": _ranges(8, "byte-ranges", ByteRanges),
    "sequence-set": _ranges(4, "sequence-set", SequenceSet),
    "map": (_dec_map, _enc_map), "list": (_dec_list, _enc_list),
    "array": (_dec_array, _enc_array), "struct32": (_dec_struct32, _enc_struct32),
    "void": (_dec_void, _enc_void), "bit": (_dec_bit, _enc_void),
}

_INTS = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}
_STRS = {"char", "char-utf32", "str8", "str16", "str8-latin", "str16-latin", "str8-utf16",
         "str16-utf16"}
_FLOATS = {"float", "double"}


def width_of(code: int) -> int | None:
    """Fixed width of a type code's values, or None for sized and reserved codes."""
    return _FIXED_BY_RANGE.get(code >> 4)


def decode_typed(buf: Buf, off: int, end: int, code: int) -> tuple[Any, int]:
    """A value whose type code was read from the wire (map, list and array entries)."""
    name = TYPES_BY_CODE.get(code)
    if name is None:
        fixed = _FIXED_BY_RANGE.get(code >> 4)
        if fixed is not None:
            _need(buf, off, fixed, end, f"value of type 0x{code:02x}")
            return TypedBytes(bytes(buf[off:off + fixed]), code), off + fixed
        var = _VAR_BY_RANGE.get(code >> 4)
        if var is None:
            raise DecodeError(off - 1, "a type code", f"reserved code 0x{code:02x}")
        raw, off = _sized(var, f"value of type 0x{code:02x}", None)[0](buf, off, end)
        return TypedBytes(raw, code), off
    value, off = PRIMITIVES[name][0](buf, off, end)
    if name in _INTS:
        return TypedInt(value, code), off
    if name in _STRS:
        return TypedStr(value, code), off
    if name in _FLOATS:
        return TypedFloat(value, code), off
    if isinstance(value, bytes):
        return TypedBytes(value, code), off
    return value, off


def code_of(value: Any) -> int:
    """The type code a value is written with inside a map, list or array."""
    code = getattr(value, "code", None)
    if isinstance(code, int) and not isinstance(value, (Array, bool)):
        return code
    if value is None:
        return 0xF0
    if isinstance(value, bool):
        return 0x08
    if isinstance(value, int):
        return 0x31 if -(1 << 63) <= value < (1 << 63) else 0x32
    if isinstance(value, float):
        return 0x33
    if isinstance(value, str):
        return 0x95
    if isinstance(value, (bytes, bytearray, memoryview)):
        return 0xA0
    if isinstance(value, uuid.UUID):
        return 0x48
    if isinstance(value, decimal.Decimal):
        return 0xD8
    if isinstance(value, Array):
        return 0xAA
    if isinstance(value, dict):
        return 0xA8
    if isinstance(value, (list, tuple)):
        return 0xA9
    if isinstance(value, Struct):
        return 0xAB
    raise EncodeError(f"no 0-10 type for {type(value).__name__} value {value!r}")


def encode_by_code(out: bytearray, code: int, value: Any) -> None:
    name = TYPES_BY_CODE.get(code)
    if name is not None:
        PRIMITIVES[name][1](out, value)
        return
    raw = bytes(value)
    fixed = _FIXED_BY_RANGE.get(code >> 4)
    if fixed is not None:
        if len(raw) != fixed:
            raise EncodeError(f"type 0x{code:02x} needs {fixed} octets, got {len(raw)}")
        out += raw
        return
    var = _VAR_BY_RANGE.get(code >> 4)
    if var is None:
        raise EncodeError(f"reserved type code 0x{code:02x}")
    _sized(var, f"type 0x{code:02x}", None)[1](out, raw)


def encode_typed(out: bytearray, value: Any) -> None:
    code = code_of(value)
    out.append(code)
    encode_by_code(out, code, value)


def decode_struct(sd: StructDef, buf: Buf, off: int, end: int) -> tuple[Struct, int]:
    """A struct used as a field's type: its size prefix, code (if it has one), fields."""
    sub_end = end
    if sd.size:
        size_st = {1: _U8, 2: _U16, 4: _U32}[sd.size]
        _need(buf, off, sd.size, end, f"{sd.qname} size")
        size = size_st.unpack_from(buf, off)[0]
        off += sd.size
        _need(buf, off, size, end, sd.qname)
        sub_end = off + size
    if sd.type_code is not None:
        _need(buf, off, 2, sub_end, f"{sd.qname} type code")
        code = _U16.unpack_from(buf, off)[0]
        if code != sd.type_code:
            raise DecodeError(off, f"{sd.qname} code 0x{sd.type_code:04x}", f"0x{code:04x}")
        off += 2
    fields, off = decode_fields(sd.fields, sd.pack, buf, off, sub_end)
    if sd.size and off != sub_end:
        raise DecodeError(off, f"end of {sd.qname}", f"{sub_end - off} more octet(s)")
    return Struct._decoded(sd, fields), off


def encode_struct(out: bytearray, value: Struct) -> None:
    sd = value.definition
    body = bytearray()
    if sd.type_code is not None:
        body += _U16.pack(sd.type_code)
    encode_fields(body, sd.fields, sd.pack, value.fields)
    if sd.size:
        if len(body) >= 1 << (8 * sd.size):
            raise EncodeError(f"{sd.qname} too large for its {sd.size}-octet size")
        out += {1: _U8, 2: _U16, 4: _U32}[sd.size].pack(len(body))
    out += body


def decode_fields(defs: tuple[FieldDef, ...], pack: int, buf: Buf, off: int,
                  end: int) -> tuple[dict[str, Any], int]:
    if pack:
        _need(buf, off, pack, end, "packing flags")
        flags = int.from_bytes(bytes(buf[off:off + pack]), "little")
        if flags >> len(defs):
            raise DecodeError(off, f"packing flags for {len(defs)} field(s)",
                              f"0x{bytes(buf[off:off + pack]).hex()}")
        off += pack
    else:
        flags = (1 << len(defs)) - 1
    fields: dict[str, Any] = {}
    for f in defs:
        if not flags >> f.index & 1:
            continue
        if f.type == "bit":
            fields[f.name] = True
        elif f.type.startswith("struct:"):
            fields[f.name], off = decode_struct(STRUCTS[f.type[7:]], buf, off, end)
        else:
            fields[f.name], off = PRIMITIVES[f.type][0](buf, off, end)
    return fields, off


def encode_fields(out: bytearray, defs: tuple[FieldDef, ...], pack: int,
                  values: dict[str, Any]) -> None:
    flags = 0
    body = bytearray()
    for f in defs:
        v = values.get(f.name)
        if v is None or v is False:
            if not pack and f.type != "bit":
                raise EncodeError(f"field {f.name!r} is required in an unpacked struct")
            continue
        flags |= 1 << f.index
        if f.type == "bit":
            continue
        if f.type.startswith("struct:"):
            if not isinstance(v, Struct):
                v = Struct(STRUCTS[f.type[7:]], dict(v))
            encode_struct(body, v)
        else:
            try:
                PRIMITIVES[f.type][1](body, v)
            except EncodeError as e:
                raise EncodeError(f"{f.name}: {e}") from None
            except (TypeError, ValueError, AttributeError, OverflowError) as e:
                raise EncodeError(f"{f.name}: cannot encode {v!r} as {f.type} ({e})") from None
    if pack:
        out += flags.to_bytes(pack, "little")
    out += body


def _guard_depth(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Maps, lists and arrays nest; input nested deeper than Python's stack is malformed
    for us, and must end as a DecodeError like any other."""

    def wrapper(buf: Buf, off: int = 0, *args: Any) -> Any:
        try:
            return fn(buf, off, *args)
        except RecursionError:
            raise DecodeError(off, "values nested less deeply", "too deep a nesting") from None

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


@_guard_depth
def decode_method(buf: Buf, off: int, end: int, command: bool) -> tuple[Control | Command, int]:
    """A control or command segment's payload: class code, method code, [session header],
    fields."""
    end = min(end, len(buf))
    _need(buf, off, 2, end, "class and method codes")
    key = (buf[off], buf[off + 1])
    md: MethodDef | None = (COMMANDS if command else CONTROLS).get(key)
    if md is None:
        kind = "command" if command else "control"
        raise DecodeError(off, f"a known {kind}", f"class 0x{key[0]:02x} code 0x{key[1]:02x}")
    off += 2
    if command:
        hdr, off = decode_struct(SESSION_HEADER, buf, off, end)
    fields, off = decode_fields(md.fields, md.pack, buf, off, end)
    if off != end:
        raise DecodeError(off, f"end of {md.qname}", f"{end - off} more octet(s)")
    if command:
        cmd: Command = Command._decoded(md, fields)
        cmd.sync = "sync" in hdr.fields
        return cmd, off
    return Control._decoded(md, fields), off


def encode_method(value: Control | Command) -> bytes:
    md = value.definition
    out = bytearray((md.class_code, md.code))
    if isinstance(value, Command):
        encode_struct(out, Struct(SESSION_HEADER, {"sync": value.sync}))
    encode_fields(out, md.fields, md.pack, value.fields)
    return bytes(out)


@_guard_depth
def decode_header(buf: Buf, off: int, end: int) -> tuple[tuple[Struct, ...], int]:
    """A header segment: struct32s (delivery-properties, message-properties…)."""
    end = min(end, len(buf))
    out = []
    while off < end:
        value, off = _dec_struct32(buf, off, end)
        out.append(value)
    return tuple(out), off


def encode_header(structs: tuple[Struct, ...] | list[Struct]) -> bytes:
    out = bytearray()
    for s in structs:
        _enc_struct32(out, s)
    return bytes(out)


def decode_value(type_name: str, buf: Buf, off: int = 0, end: int | None = None) -> tuple[Any, int]:
    """Decode one value of a named primitive type or struct ("message.reply-to")."""
    return _decode_value(buf, off, type_name, end)


@_guard_depth
def _decode_value(buf: Buf, off: int, type_name: str, end: int | None) -> tuple[Any, int]:
    end = len(buf) if end is None else min(end, len(buf))
    if type_name in STRUCTS:
        return decode_struct(STRUCTS[type_name], buf, off, end)
    return PRIMITIVES[type_name][0](buf, off, end)


def encode_value(type_name: str, value: Any) -> bytes:
    out = bytearray()
    if type_name in STRUCTS:
        encode_struct(out, value)
    else:
        PRIMITIVES[type_name][1](out, value)
    return bytes(out)
