"""What an AMQP value is called: its AMQP type, its descriptor's name, a field's spec type.

Shared by every renderer (text, tree, one-line frames, JSON) so they name things alike.
"""

from __future__ import annotations

import math
import re
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from amqpcli.codec import composites as _c
from amqpcli.codec.encode import PYTHON_TYPE_NAMES
from amqpcli.codec.types import (
    Composite,
    Described,
    UByte,
)

# Exact Python type → AMQP type name (the codec's table, plus described values).
# Subclasses are looked up first, so order is free.
_TYPE_NAMES: dict[type, str] = {**PYTHON_TYPE_NAMES, Described: "described"}

INTEGER_TYPES = frozenset(("ubyte", "ushort", "uint", "ulong", "byte", "short", "int", "long"))
DECIMAL_TYPES = frozenset(("decimal32", "decimal64", "decimal128"))


def amqp_type(value: Any) -> str:
    """The AMQP type name of a decoded value ("uint", "symbol", …; composites: "described")."""
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, Composite):
        return "described"
    for cls, n in _TYPE_NAMES.items():
        if isinstance(value, cls) and cls is not type(None):
            return n
    raise TypeError(f"not an AMQP value: {type(value).__name__}")


_FLOAT32 = struct.Struct(">f")


def float32_value(x: float) -> float:
    """`x` rounded to a float (32-bit), as it is encoded: the value a float read from
    text stands for."""
    return _FLOAT32.unpack(_FLOAT32.pack(x))[0]  # type: ignore[no-any-return]


def shortest_float32(x: float) -> float:
    """The float (32-bit) `x` as the double whose repr is the shortest decimal that reads
    back as that float: 0.1 for the float nearest 0.1, which as a double is
    0.10000000149011612 (what repr of it says, and a reader takes for a double's
    precision). A NaN or an infinity, or a number past a float's range (it does not
    encode), is returned as it is."""
    if not math.isfinite(x):
        return x
    try:
        bits = _FLOAT32.pack(x)
    except OverflowError:
        return x
    exact = _FLOAT32.unpack(bits)[0]
    for digits in range(1, 10):  # (9 significant digits always tell floats apart)
        candidate = float(f"{exact:.{digits}g}")
        try:
            if _FLOAT32.pack(candidate) == bits:
                return candidate
        except OverflowError:  # rounded up past the largest float
            continue
    return exact  # (not reached)


def field_type(spec_type: str) -> str:
    """A field's spec type resolved through restricted types to a primitive or composite name
    ("handle" → "uint", "error" → "error", "*" → "*")."""
    seen = 0
    while spec_type in _c.RESTRICTED and seen < 10:
        spec_type = _c.RESTRICTED[spec_type]
        seen += 1
    return spec_type


# Descriptors that are not in the spec but are met in the field: filter types registered by
# Apache Qpid (used by JMS clients for selectors and no-local) and their symbolic names.
WELL_KNOWN_DESCRIPTORS: dict[int, str] = {
    0x0000468C00000000: "apache.org:legacy-amqp-direct-binding:string",
    0x0000468C00000001: "apache.org:legacy-amqp-topic-binding:string",
    0x0000468C00000002: "apache.org:legacy-amqp-headers-binding:map",
    0x0000468C00000003: "apache.org:no-local-filter:list",
    0x0000468C00000004: "apache.org:selector-filter:string",
    0x0000468C00000005: "apache.org:xquery-filter:string",
}
_WELL_KNOWN_BY_SYMBOL = {v: k for k, v in WELL_KNOWN_DESCRIPTORS.items()}


# Values of message annotations that the AMQP JMS mapping gives a meaning to.
_JMS_DEST = {0: "queue", 1: "topic", 2: "temporary queue", 3: "temporary topic"}
ANNOTATION_VALUE_NAMES: dict[str, dict[int, str]] = {
    "x-opt-jms-msg-type": {
        0: "JMS Message",
        1: "JMS ObjectMessage",
        2: "JMS MapMessage",
        3: "JMS BytesMessage",
        4: "JMS StreamMessage",
        5: "JMS TextMessage",
    },
    "x-opt-jms-dest": _JMS_DEST,
    "x-opt-jms-reply-to": _JMS_DEST,
}


def annotation_value_name(key: Any, value: Any) -> str | None:
    """What a known annotation's value means (`x-opt-jms-msg-type` 5 → "JMS TextMessage")."""
    if type(key).__name__ != "Symbol" or isinstance(value, bool) or not isinstance(value, int):
        return None
    return ANNOTATION_VALUE_NAMES.get(str(key), {}).get(int(value))


def descriptor_name(descriptor: Any) -> str | None:
    """The symbolic name of a descriptor (a code or a symbol), if it is known."""
    if isinstance(descriptor, int) and not isinstance(descriptor, bool):
        cls = _c.BY_CODE.get(descriptor)
        if cls is not None:
            return cls.SYMBOL
        return WELL_KNOWN_DESCRIPTORS.get(descriptor)
    if isinstance(descriptor, str):
        return str(descriptor)
    return None


# Characters that must not reach a terminal raw: C0 and C1 controls, DEL, the
# bidirectional overrides and line separators (an ESC from a capture would drive the
# terminal; a newline breaks a one-line row), and lone surrogates (the bytes of text
# that was not UTF-8, which a UTF-8 output cannot write).
_UNSAFE_CHARS = ("\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                 "\ud800-\udfff")
# A backslash of the text is escaped too (`\\`), so that every backslash shown starts an
# escape: a symbol `a\x1b` (four characters) does not read as an escaped ESC.
_UNSAFE = f"[{_UNSAFE_CHARS}\\\\]"
# In quotes, a quote of the text is escaped as well.
_UNSAFE_IN_QUOTES = f'[{_UNSAFE_CHARS}"\\\\]'
# (patterns, compiled by `re` at their first use and cached there: most runs never meet
# an unprintable character, and the two classes cost a millisecond to compile)
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group()
    short = _SHORT.get(ch)
    if short is not None:
        return short
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(value: object) -> str:
    """Peer-controlled text (a link name, an error description) as one harmless line:
    every control character escaped (`\\n`, `\\x1b`, `\\u202e`), and a backslash as
    `\\\\`, so the text reads back one way."""
    s = value if isinstance(value, str) else str(value)
    return s if s.isprintable() and "\\" not in s else re.sub(_UNSAFE, _escape_char, s)


def one_line(text: str) -> str:
    """A message for the user (an error, a notice) as one harmless line: as it is when
    every character is printable, else `printable`. Peer text in it was made so where
    it was put in (`describe_error`), and escaping it again would double its backslashes
    (`\\n` shown as `\\\\n`); the CLI's error line follows the same rule."""
    return text if text.isprintable() else printable(text)


def quoted(value: object) -> str:
    """A string value in double quotes, escaped as `printable` escapes, with its own
    quotes and backslashes escaped (`"say \\"hi\\"\\x1b"`)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return '"' + re.sub(_UNSAFE_IN_QUOTES, _escape_char, text) + '"'


# What a name drawn bare among others may hold: letters, digits and the punctuation that
# names are made of (amqp:local-transactions, ANONYMOUS-RELAY, topic://x). A comma, a
# space, a quote, a parenthesis or a control character would make a list read two ways.
_PLAIN_NAME = re.compile(r"[\w.:/@#$%&*+!?~^-]+")


def plain_or_quoted(value: object) -> str:
    """Peer text that names something, as it is when it is one plain name (`queue`), else
    `quoted` (`"a,b"`, `"two words"`, `""`): names joined by commas read one way."""
    text = value if isinstance(value, str) else str(value)
    return text if _PLAIN_NAME.fullmatch(text) else quoted(text)


def mechanisms_text(mechanisms: Any, sep: str) -> str:
    """SASL mechanism names, each `plain_or_quoted`, joined by `sep`; `-` for none."""
    return sep.join(plain_or_quoted(m) for m in mechanisms or ()) or "-"


def capabilities_text(caps: Any) -> str:
    """A multiple symbol field (a terminus's or an open's capabilities: one symbol or an
    array of them) as its names joined by commas, each `plain_or_quoted`: `queue,shared`
    is two capabilities, `"queue,shared"` one."""
    items = caps if isinstance(caps, (list, tuple)) else [caps]
    return ",".join(plain_or_quoted(x) for x in items)


def format_descriptor(descriptor: Any) -> str:
    """`0x468c00000004 = apache.org:selector-filter:string`, or the symbol itself."""
    if isinstance(descriptor, int) and not isinstance(descriptor, bool):
        name = descriptor_name(descriptor)
        hex_code = f"0x{descriptor:x}"
        return f"{hex_code} = {name}" if name else hex_code
    if isinstance(descriptor, str):
        code = _WELL_KNOWN_BY_SYMBOL.get(str(descriptor))
        return f"{descriptor} = 0x{code:x}" if code is not None else plain_or_quoted(descriptor)
    return repr(descriptor)


# Named values of restricted types, reversed: type → {value: name}.
_CHOICE_NAMES: dict[str, dict[Any, str]] = {
    t: {(type(v), v): n for n, v in choices.items()} for t, choices in _c.CHOICES.items()
}


def choice_name(spec_type: str, value: Any) -> str | None:
    """The spec's name for a value of a restricted type ("role", True → "receiver")."""
    names = _CHOICE_NAMES.get(spec_type)
    if names is None:
        return None
    return choice_of(names, type(value), value)


def choice_of(names: dict[Any, str], vt: type, value: Any) -> str | None:
    """`names[(vt, value)]`, or None — also for a value that cannot be a key (a damaged
    frame's list or map where the spec says a choice: it is shown as it is)."""
    try:
        return names.get((vt, value))
    except TypeError:
        return None


def sasl_code_name(code: int) -> str | None:
    """A sasl-outcome's code by its spec name ("auth" for 1; None for a code it has none
    for)."""
    return choice_name("sasl-code", UByte(code))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# ISO 8601 needs four-digit years: outside 1000..9999 a timestamp stays a number.
_MIN_ISO_MS = -30_610_224_000_000  # 1000-01-01T00:00:00Z
_MAX_ISO_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def iso_time(ms: int) -> str | None:
    """A timestamp as ISO 8601 UTC with milliseconds, or None outside years 1000..9999."""
    if not _MIN_ISO_MS <= ms <= _MAX_ISO_MS:
        return None
    t = _EPOCH + timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_iso_time(text: str) -> int:
    """ISO 8601 (as written by `iso_time`, or any offset) → milliseconds since the epoch."""
    t = datetime.fromisoformat(text)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    delta = t - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
