"""A typed, readable, lossless JSON encoding of AMQP values (docs/message-format.md).

Plain JSON where the AMQP type is unambiguous, a small tagged object elsewhere:

* null, boolean, string → JSON null, true/false, "text"
* long → a JSON integer; list → a JSON array
* every other type → `{"<type>": <value>}`: `{"uint": 5}`, `{"symbol": "amqp:foo"}`,
  `{"binary": "<base64>"}` (or `{"binary-text": "hello"}` when the bytes are printable
  UTF-8), `{"timestamp": "2026-01-02T03:04:05.678Z"}`, `{"double": 1.5}`, `{"uuid": "…"}`,
  `{"char": "x"}`, `{"decimal64": "<hex>"}`
* map → `{"map": {"k": v}}` when every key is a string, `{"map": {"k": v}, "keys":
  "symbol"}` when every key is a symbol, else `{"map": [[k, v], …]}`
* array → `{"array": [plain elements], "type": "uint"}`
* known composite → `{"<name>": {"<field>": v, …}}` (list-based; only fields present) or
  `{"<name>": v}` (sections whose value is a map, binary or any value)
* other described value → `{"described": <descriptor>, "value": v}`

Inside a composite a field whose value has the field's declared type is written plain
(`"handle": 0`, `"mechanism": "PLAIN"`, `"creation-time": "2026-…Z"`,
`"delivery-tag": "<base64>"`); anything else keeps its tag. Encodings wider than needed
are kept by a `"code"` member (lists, maps) or `"code"`/`"fmt"` (arrays); a composite whose
bytes would not come back from its fields alone carries them as `"encoded"` (base64).

The views (decode, pcap-dump, recv) mask SASL secrets through `to_json`'s `redactions`: a
sasl-init or sasl-response at any depth is written as `redact` masks it, as the text views
draw it, and what holds it gives none of its bytes.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
import threading
import uuid
from typing import Any

from amqpcli.codec import composites as _c
from amqpcli.codec.encode import array_form, encode_fields, encodes_as_decoded
from amqpcli.codec.types import (
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
    add_map_entry,
)
from amqpcli.render.redact import SASL_PERFORMATIVES, may_hold_secret, redact
from amqpcli.render.types import (
    _TYPE_NAMES,
    amqp_type,
    field_type,
    float32_value,
    iso_time,
    parse_iso_time,
    shortest_float32,
)

__all__ = ["JsonValueError", "Redactions", "b64", "from_json", "to_json", "unb64"]


class JsonValueError(ValueError):
    """JSON that is not a valid encoding of an AMQP value; `path` says where."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '$'}: {message}")
        self.path = path


# What a JSON line keeps escaped although it leaves other non-ASCII text readable: C1
# controls and bidi overrides (a terminal acts on them), NEL and the line and paragraph
# separators (line breaks to many readers: one record would read as several), and lone
# surrogates (UTF-8 cannot carry one; decoded values hold none, other text may).
_JSON_UNSAFE = re.compile("[\x80-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def safe_json_text(text: str) -> str:
    """JSON text (written with `ensure_ascii=False`) with the characters above escaped."""
    return text if text.isascii() else _JSON_UNSAFE.sub(_json_escape, text)


def json_line(obj: Any) -> str:
    """`obj` as one line of JSON: non-ASCII text kept readable, but for what
    `safe_json_text` escapes."""
    import json

    return safe_json_text(json.dumps(obj, ensure_ascii=False))


def b64(data: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def unb64(text: str, path: str = "") -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError):
        raise JsonValueError(path, f"not valid base64: {text[:40]!r}") from None


_INT_CLASSES: dict[str, type[int]] = {
    "ubyte": UByte,
    "ushort": UShort,
    "uint": UInt,
    "ulong": ULong,
    "byte": Byte,
    "short": Short,
    "int": Int,
    "long": Long,
}
_DECIMALS: dict[str, Any] = {
    "decimal32": Decimal32,
    "decimal64": Decimal64,
    "decimal128": Decimal128,
}


# A control character other than tab, newline and carriage return (or DEL).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text_or_none(data: bytes) -> str | None:
    """The bytes as text, if they are UTF-8 with no control characters but tab/newline."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _CONTROL.search(text) is not None:
        return None
    return text


_DOUBLE_BITS = struct.Struct("<d").pack
# The bits of the NaN that "NaN" reads back as (and so encodes to: 7fc00000 as a float,
# 7ff8000000000000 as a double).
_NAN_BITS = _DOUBLE_BITS(float("nan"))


class _Written(threading.local):
    odd_nans = 0


_WRITTEN = _Written()


def odd_nans_written() -> int:
    """How many NaNs this thread has written (as "NaN") that do not read back to their own
    bits: a NaN with another payload or sign than the one "NaN" reads back as. A message
    that holds one does not re-encode from its JSON members to the bytes that arrived,
    although its values re-encode to them (Python keeps a NaN's payload): the count going
    up while a message is converted says it needs `encoded`."""
    return _WRITTEN.odd_nans


def _float_json(x: float) -> float | str:
    if math.isnan(x):
        if _DOUBLE_BITS(x) != _NAN_BITS:
            _WRITTEN.odd_nans += 1
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _float_from(v: Any, path: str) -> float:
    if isinstance(v, str) and v in ("NaN", "Infinity", "-Infinity"):
        return float(v.replace("Infinity", "inf"))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            f = float(v)
        except OverflowError:  # an integer past any double
            f = math.inf
        if not math.isfinite(f):
            raise JsonValueError(path, _NOT_FINITE)
        return f
    raise JsonValueError(path, f"expected a number, found {v!r:.40}")


def _float32_from(v: Any, path: str) -> Float:
    """A float (32-bit): as `_float_from`, rounded to the float it encodes as (written as
    its shortest text, 0.1, it is read back as the very float it was); a finite number
    past a float's range is an error here, as it would be when the value is encoded."""
    f = _float_from(v, path)
    try:
        return Float(float32_value(f))
    except OverflowError:
        raise JsonValueError(path, f"{f!r} is out of range for float (32-bit: use double for "
                                   "larger numbers)") from None


_NOT_FINITE = ('not a finite number (too large for a double, or NaN/Infinity): write '
               '{"double": "Infinity"}, "-Infinity" or "NaN" for those')


# --- plain forms: the value's JSON without a tag (used inside tags, arrays and fields) ---


def _plain(t: str, v: Any) -> Any:
    """JSON of `v` whose AMQP type is `t`, without the tag; None if `t` has no plain form."""
    if t in _INT_CLASSES:
        return int(v)
    if t == "boolean":
        return bool(v)
    if t in ("string", "symbol", "char"):
        return str(v)
    if t == "binary":
        return b64(v)
    if t == "float":  # (the shortest number that reads back as the same float)
        return _float_json(shortest_float32(float(v)))
    if t == "double":
        return _float_json(float(v))
    if t == "timestamp":
        return _iso_or_ms(int(v))
    if t == "uuid":
        return str(v)
    if t in _DECIMALS:
        return v.raw.hex()
    return _NO_PLAIN


# `iso_time` up to the second, by second: a capture's timestamps share their seconds.
_ISO_SECONDS: dict[int, str] = {}


def _iso_or_ms(ms: int) -> str | int:
    """`iso_time(ms)`, or `ms` itself where that is None."""
    sec, milli = divmod(ms, 1000)
    head = _ISO_SECONDS.get(sec)
    if head is None:
        iso = iso_time(sec * 1000)
        if iso is None:
            iso = iso_time(ms)
            return iso if iso is not None else ms
        if len(_ISO_SECONDS) >= 4096:
            _ISO_SECONDS.clear()
        head = _ISO_SECONDS[sec] = iso[:-4]  # up to the second's dot
    return f"{head}{milli:03d}Z"


_NO_PLAIN = object()


def _from_plain(t: str, v: Any, path: str) -> Any:
    """Inverse of `_plain`."""
    try:
        if t in _INT_CLASSES:
            if type(v) is not int:
                raise JsonValueError(path, f"expected an integer for {t}, found {v!r:.40}")
            return _INT_CLASSES[t](v)
        if t == "boolean":
            if type(v) is not bool:
                raise JsonValueError(path, f"expected true or false, found {v!r:.40}")
            return v
        if t in ("string", "symbol", "char"):
            if type(v) is not str:
                raise JsonValueError(path, f"expected a string for {t}, found {v!r:.40}")
            return v if t == "string" else (Symbol(v) if t == "symbol" else Char(v))
        if t == "binary":
            if type(v) is not str:
                raise JsonValueError(path, f"expected base64 text, found {v!r:.40}")
            return unb64(v, path)
        if t == "float":
            return _float32_from(v, path)
        if t == "double":
            return _float_from(v, path)
        if t == "timestamp":
            if type(v) is int:
                return Timestamp(v)
            if type(v) is str:
                try:
                    return Timestamp(parse_iso_time(v))
                except ValueError:
                    raise JsonValueError(path, f"expected an ISO 8601 time (2024-05-01T12:00:"
                                         f"00Z) or milliseconds, found {v!r:.40}") from None
            raise JsonValueError(path, f"expected an ISO time or milliseconds, found {v!r:.40}")
        if t == "uuid":
            try:
                return uuid.UUID(v)
            except (ValueError, TypeError, AttributeError):
                raise JsonValueError(path, "expected a UUID (32 hex digits, hyphens optional),"
                                     f" found {v!r:.40}") from None
        if t in _DECIMALS:
            try:
                raw = bytes.fromhex(v)
            except (ValueError, TypeError):
                raise JsonValueError(path, f"expected the {t}'s bytes in hex, found "
                                     f"{v!r:.40}") from None
            return _DECIMALS[t](raw)
    except JsonValueError:
        raise
    except (ValueError, TypeError, AttributeError) as e:
        raise JsonValueError(path, f"bad {t} value {v!r:.40}: {e}") from None
    raise JsonValueError(path, f"unknown type {t!r}")


# --- to JSON -----------------------------------------------------------------------------


# What a conversion to JSON masked (see `to_json`): the names of the SASL performatives, in
# order; empty (false) when nothing was. A plain list: one is made per frame and message.
Redactions = list[str]


def to_json(value: Any, exact: bool = True, redactions: Redactions | None = None) -> Any:
    """The JSON form (Python dicts/lists/scalars ready for `json.dumps`) of an AMQP value.

    With `exact`, a decoded composite whose bytes would not come back from its fields (a
    field encoded wider than needed, explicit trailing nulls) also carries its bytes.

    Lossless unless `redactions` is given: then SASL secrets are masked at any depth by
    the rule the text views follow (`redact`, applied to every value: a sasl-init or
    sasl-response in a list, a map, a field or a message body is written as `redact`
    gives it), and listed in `redactions` for the caller's `"redacted": true`. A
    composite holding a masked one then carries no `encoded` (its bytes hold the secret).
    """
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int or t is Long:
        return int(value)
    if t is list or t is tuple:
        return [to_json(x, exact, redactions) for x in value]
    if isinstance(value, Composite):
        return _composite_to_json(value, exact, redactions)
    name = amqp_type(value)
    if name == "binary":
        text = _text_or_none(bytes(value))
        return {"binary-text": text} if text is not None else {"binary": b64(value)}
    if name == "list":
        return {"list": [to_json(x, exact, redactions) for x in value],
                "code": f"0x{value.code:02x}"}
    if name == "map":
        out = _map_to_json(value, exact, redactions)
        if isinstance(value, AmqpMap):
            out["code"] = f"0x{value.code:02x}"
        return out
    if name == "array" or name == "described":
        if redactions is not None and value.descriptor is not None:
            shown = redact(value)  # of SASL performatives not decoded as one
            if shown is not value:
                redactions.append(name)
                value = shown
        if name == "array":
            return _array_to_json(value, exact, redactions)
        return {"described": to_json(value.descriptor, exact, redactions),
                "value": to_json(value.value, exact, redactions)}
    plain = _plain(name, value)
    if plain is _NO_PLAIN:
        raise TypeError(f"no JSON form for {name}")
    return {name: plain}


def _map_to_json(m: dict[Any, Any], exact: bool, hide: Redactions | None) -> dict[str, Any]:
    kinds = {type(k) for k in m}
    if kinds <= {str}:
        return {"map": {k: to_json(v, exact, hide) for k, v in m.items()}}
    if kinds == {Symbol}:
        return {"map": {str(k): to_json(v, exact, hide) for k, v in m.items()},
                "keys": "symbol"}
    # (a key kept apart from an equal-in-Python one is written as the value it wraps)
    return {"map": [[to_json(k.value if type(k) is MapKey else k, exact, hide),
                     to_json(v, exact, hide)] for k, v in m.items()]}


def _array_to_json(a: Array, exact: bool, hide: Redactions | None) -> dict[str, Any]:
    t = a.type or "null"
    items: list[Any] = []
    for x in a:
        p = _plain(t, x)
        items.append(to_json(x, exact, hide) if p is _NO_PLAIN else p)
    out: dict[str, Any] = {"array": items, "type": t}
    if a.descriptor is not None:
        out["descriptor"] = to_json(a.descriptor, exact, hide)
    # as for lists and maps, only a form other than the encoder's own is kept
    if (a.code is not None or a.fmt is not None) and (a.code, a.fmt) != array_form(a):
        if a.code is not None:
            out["code"] = f"0x{a.code:02x}"
        if a.fmt is not None:
            out["fmt"] = f"0x{a.fmt:02x}"
    return out


# Field types read in their plain form (see _field_from_json).
_PLAIN_FIELD_TYPES = frozenset(
    (
        *_INT_CLASSES,
        *_DECIMALS,
        "boolean",
        "string",
        "symbol",
        "char",
        "binary",
        "float",
        "double",
        "timestamp",
        "uuid",
    )
)


# Plain forms that are just the Python value converted (see `_plain`), by AMQP type.
_FAST_PLAIN: dict[str, Any] = {
    **dict.fromkeys(_INT_CLASSES, int),
    "boolean": bool,
    "string": str,
    "symbol": str,
}
_FIELD_TYPES: dict[str, str] = {}


def _field_to_json(spec: Any, value: Any, exact: bool, hide: Redactions | None) -> Any:
    st = spec.type
    t = _FIELD_TYPES.get(st)
    if t is None:
        t = _FIELD_TYPES[st] = field_type(st)
    if _TYPE_NAMES.get(type(value)) == t:
        # The common case (a uint handle, a string address): the field's own type, plain.
        conv = _FAST_PLAIN.get(t)
        if conv is not None:
            return conv(value)
    vt = "described" if isinstance(value, Composite) else amqp_type(value)
    if vt == t:
        p = _plain(t, value)
        if p is not _NO_PLAIN:
            return p
    out = to_json(value, exact, hide)
    if t in _PLAIN_FIELD_TYPES and type(out) is not dict:
        # Another type than the field's, written plain (a string, a long, a list): tag it,
        # or it would be read back as the field's own type.
        return {vt: out}
    return out


def fields_to_json(
    c: Composite, exact: bool = True, redactions: Redactions | None = None
) -> dict[str, Any]:
    """A list-based composite's present fields, by spec name (`{"handle": 0, …}`); with
    `redactions`, SASL secrets in them masked as by `to_json`."""
    cls = type(c)
    found = _PLANS.get(cls)
    get, plan = found if found is not None else _plan(cls)
    body: dict[str, Any] = {}
    for (name, spec, plain), v in zip(plan, get(c)):
        if v is not None:
            conv = plain.get(type(v))
            body[name] = conv(v) if conv is not None else _field_to_json(spec, v, exact, redactions)
    return body


# Per composite class, per field: (name, spec, {Python type: its plain JSON form}) for the
# types whose plain form `_field_to_json` writes as it is (a uint in a uint field, a
# symbol in a symbol field, bytes in a binary one); other values go through it.
_Plan = tuple[tuple[str, Any, dict[type, Any]], ...]
_PLANS: dict[type, tuple[Any, _Plan]] = {}  # and the class's getter of all its fields
_PLAIN_OF: dict[str, Any] = {**_FAST_PLAIN, "binary": b64, "char": str, "uuid": str}


def _plan(cls: type[Composite]) -> tuple[Any, _Plan]:
    plan = []
    for spec in cls.FIELDS:
        t = field_type(spec.type)
        plain: dict[type, Any] = {}
        if t in _PLAIN_FIELD_TYPES:
            conv = _PLAIN_OF.get(t) or (lambda v, t=t: _plain(t, v))
            plain = {py: conv for py, name in _TYPE_NAMES.items() if name == t}
        plan.append((spec.name, spec, plain))
    get = getattr(cls, "_GET", None)
    if get is None:
        slots = cls._SLOTS
        get = lambda c: [getattr(c, s) for s in slots]
    _PLANS[cls] = (get, tuple(plan))
    return _PLANS[cls]


def _composite_to_json(c: Composite, exact: bool, hide: Redactions | None) -> dict[str, Any]:
    cls = type(c)
    if hide is not None:
        if cls in SASL_PERFORMATIVES:
            shown = redact(c)
            if shown is not c:  # a fresh copy, with no bytes to carry
                hide.append(cls.NAME)
                return {cls.NAME: fields_to_json(shown, exact, hide)}
        masked = len(hide)
    body: Any
    if cls.HAS_VALUE:
        body = to_json(c.value, exact, hide)  # type: ignore[attr-defined]
    else:
        body = fields_to_json(c, exact, hide)
    out: dict[str, Any] = {cls.NAME: body}
    # Its bytes, when its fields do not give them back; never when they hold a secret
    # masked inside it (listed in `hide` while its fields were converted).
    if (exact and c._raw is not None and not encodes_as_decoded(c)
            and (hide is None or len(hide) == masked)):
        fresh = fields_bytes(c)
        if fresh != c._raw[0]:
            from amqpcli.codec.encode import encode

            actual = encode(c)  # the decoded bytes, or fresh ones if a field was changed
            if actual != fresh:
                if hide is not None and may_hold_secret(actual):
                    # (a SASL performative in items beyond its fields, which the fields'
                    # conversion did not mask: its bytes are not written)
                    hide.append(cls.NAME)
                else:
                    out["encoded"] = b64(actual)
    return out


def fields_bytes(c: Composite) -> bytes:
    """The bytes `c`'s fields encode to on their own, ignoring the bytes it was decoded
    from (nested composites as they are): what `from_json(to_json(c))` encodes to."""
    if encodes_as_decoded(c):  # the bytes it was decoded from, as the encoder writes them
        raw = c._raw[0]  # type: ignore[index]
        return raw if type(raw) is bytes else bytes(raw)
    try:
        return encode_fields(c)
    except Exception:  # noqa: BLE001 - a value that cannot re-encode keeps its bytes
        return b""


# --- from JSON ---------------------------------------------------------------------------

_MODIFIERS = frozenset(("code", "keys", "type", "descriptor", "fmt", "encoded", "value", "name"))


def from_json(obj: Any, path: str = "") -> Any:
    """The AMQP value a JSON form stands for (inverse of `to_json`)."""
    t = type(obj)
    if obj is None or t is bool or t is str:
        return obj
    if t is int:
        return obj
    if t is float:
        if not math.isfinite(obj):  # 1e999, NaN, Infinity: not JSON numbers
            raise JsonValueError(path, _NOT_FINITE)
        return obj
    if t is list:
        return [from_json(x, f"{path}[{i}]") for i, x in enumerate(obj)]
    if t is not dict:
        raise JsonValueError(path, f"not a JSON value: {obj!r:.40}")
    tags = [k for k in obj if k not in _MODIFIERS]
    if not tags and "value" in obj and "described" not in obj:
        raise JsonValueError(path, 'an object needs a type tag such as {"uint": 5}')
    if len(tags) != 1:
        raise JsonValueError(path, f"expected one type tag, found {sorted(obj)!r}")
    tag = tags[0]
    v = obj[tag]
    p = f"{path}.{tag}"
    if tag == "binary-text":
        if type(v) is not str:
            raise JsonValueError(p, "expected text")
        return v.encode("utf-8")
    if tag == "list":
        if type(v) is not list:
            raise JsonValueError(p, "expected an array")
        items = [from_json(x, f"{p}[{i}]") for i, x in enumerate(v)]
        return AmqpList(items, _code(obj, path, 0xD0)) if "code" in obj else items
    if tag == "map":
        m = _map_from_json(obj, v, p)
        return AmqpMap(m, _code(obj, path, 0xD1)) if "code" in obj else m
    if tag == "array":
        return _array_from_json(obj, v, p)
    if tag == "described":
        if "value" not in obj:
            raise JsonValueError(path, 'a described value needs "value"')
        # A spec descriptor lands here only with a value its composite can't hold.
        desc = from_json(v, p)
        value = from_json(obj["value"], f"{path}.value")
        return Described(desc, value)
    cls = _c.BY_NAME.get(tag)
    if cls is not None:
        return _composite_from_json(cls, obj, v, p)
    if tag == "null":
        return None
    if tag in ("boolean", "string"):
        return _from_plain(tag, v, p)
    if tag == "null" and v is None:
        return None
    if (
        tag in _INT_CLASSES
        or tag in _DECIMALS
        or tag in ("float", "double", "char", "timestamp", "uuid", "binary", "symbol")
    ):
        return _from_plain(tag, v, p)
    raise JsonValueError(path, f"unknown type tag {tag!r}")


def _code(obj: dict[str, Any], path: str, default: int) -> int:
    c = obj.get("code")
    try:
        return int(c, 16) if isinstance(c, str) else int(c if c is not None else default)
    except (TypeError, ValueError):
        raise JsonValueError(path + ".code", f"bad format code {c!r}") from None


def _map_from_json(obj: dict[str, Any], v: Any, p: str) -> dict[Any, Any]:
    if type(v) is dict:
        keys = obj.get("keys", "string")
        if keys not in ("string", "symbol"):
            raise JsonValueError(p, f'"keys" must be "string" or "symbol", found {keys!r}')
        wrap = Symbol if keys == "symbol" else str
        return {wrap(k): from_json(x, f"{p}.{k}") for k, x in v.items()}
    if type(v) is list:
        out: dict[Any, Any] = {}
        for i, pair in enumerate(v):
            if type(pair) is not list or len(pair) != 2:
                raise JsonValueError(f"{p}[{i}]", "expected a [key, value] pair")
            # every pair kept: keys equal in Python (int 1, long 1, true) or unhashable
            # (a list) are distinct AMQP keys
            add_map_entry(out, from_json(pair[0], f"{p}[{i}][0]"),
                          from_json(pair[1], f"{p}[{i}][1]"))
        return out
    raise JsonValueError(p, "expected an object or an array of [key, value] pairs")


def _array_from_json(obj: dict[str, Any], v: Any, p: str) -> Array:
    if type(v) is not list:
        raise JsonValueError(p, "expected an array")
    t = obj.get("type")
    if not isinstance(t, str):
        raise JsonValueError(p, 'an array needs "type" (its element type)')
    items = []
    for i, x in enumerate(v):
        q = f"{p}[{i}]"
        if t in ("list", "map", "array", "null") or (type(x) is dict and t not in ("uuid",)):
            items.append(from_json(x, q))
        else:
            items.append(_from_plain(t, x, q))
    descriptor = from_json(obj["descriptor"], p + ".descriptor") if "descriptor" in obj else None
    code = _code(obj, p, 0) if "code" in obj else None
    fmt = int(obj["fmt"], 16) if isinstance(obj.get("fmt"), str) else None
    return Array(items, t, code=code, descriptor=descriptor, fmt=fmt)


def _field_from_json(spec: Any, v: Any, path: str) -> Any:
    t = field_type(spec.type)
    if type(v) is dict or v is None:
        return from_json(v, path)
    if (
        t in _INT_CLASSES
        or t in _DECIMALS
        or t
        in ("boolean", "string", "symbol", "char", "binary", "float", "double", "timestamp", "uuid")
    ):
        return _from_plain(t, v, path)
    return from_json(v, path)


def fields_from_json(cls: type[Composite], v: Any, p: str = "") -> Composite:
    """A list-based composite from its fields by spec name (inverse of `fields_to_json`)."""
    if type(v) is not dict:
        raise JsonValueError(p, f"{cls.NAME} needs an object of fields")
    by_name = {f.name: (f, s) for f, s in zip(cls.FIELDS, cls._SLOTS)}
    kwargs: dict[str, Any] = {}
    for name, x in v.items():
        spec_slot = by_name.get(name) or by_name.get(name.replace("_", "-"))
        if spec_slot is None:
            known = ", ".join(f.name for f in cls.FIELDS)
            raise JsonValueError(p, f"{cls.NAME} has no field {name!r} (fields: {known})")
        spec, slot = spec_slot
        kwargs[slot] = _field_from_json(spec, x, f"{p}.{name}")
    return cls(**kwargs)


def _composite_from_json(cls: type[Composite], obj: dict[str, Any], v: Any, p: str) -> Composite:
    if cls.HAS_VALUE:
        value = cls(from_json(v, p))  # type: ignore[call-arg]
    else:
        value = fields_from_json(cls, v, p)
    if "encoded" in obj:
        # The exact bytes, as long as they still say what the fields say (edits win).
        from amqpcli.codec.decode import DecodeError, decode

        try:
            original, _ = decode(unb64(obj["encoded"], p + ".encoded"))
        except DecodeError as e:
            raise JsonValueError(p + ".encoded", f"not an encoded {cls.NAME}: {e}") from None
        if type(original) is cls and same_value(original, value):
            return original
    return value


def same_value(a: Any, b: Any) -> bool:
    """`a == b` for AMQP values, but with floats told apart by their bits rather than by
    `==`, and maps compared in order: whether values read from JSON still say what the
    `encoded` bytes they came with say. Any two NaNs are the same (the JSON form writes
    every NaN as "NaN", and NaN != NaN made each value holding one look edited); 0.0 and
    -0.0 are not, nor a float and a double of the same value."""
    if a is b:
        return True
    ta = type(a)
    if isinstance(a, float) or isinstance(b, float):
        if ta is not type(b):
            return False
        if math.isnan(a):
            return math.isnan(b)
        return _DOUBLE_BITS(a) == _DOUBLE_BITS(b)
    if isinstance(a, Composite):
        return type(b) is ta and all(
            same_value(getattr(a, n), getattr(b, n)) for n in ta._SLOTS)
    if ta is Described:
        return (type(b) is Described and type(a.descriptor) is type(b.descriptor)
                and same_value(a.descriptor, b.descriptor) and same_value(a.value, b.value))
    if ta is MapKey:  # (its == looks at its bytes, in which any NaN is one NaN)
        return type(b) is MapKey and a.n == b.n and same_value(a.value, b.value)
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        if isinstance(a, Array) and isinstance(b, Array) and (
                a.type != b.type or not same_value(a.descriptor, b.descriptor)):
            return False
        return all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        return all(same_value(k, j) and same_value(x, y)
                   for (k, x), (j, y) in zip(a.items(), b.items(), strict=True))
    if isinstance(a, tuple):
        return (isinstance(b, tuple) and len(a) == len(b)
                and all(same_value(x, y) for x, y in zip(a, b, strict=True)))
    return bool(a == b)
