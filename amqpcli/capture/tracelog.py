"""Frame-trace logs → the capture events `read_capture` yields, so every view of
`pcap-dump` (and the TUI's capture input) reads them as it reads a capture.

A frame-trace log is the text Apache Qpid Proton writes with `PN_TRACE_FRM=1` (any
proton-based client or broker), or a router's PROTOCOL log (qpid-dispatch, skupper-router),
which carries the same frame text after a timestamp:

    [0x55d0c8a4f2a0]: AMQP:FRAME:0 -> @open(16) [container-id="a", channel-max=0x7fff]
    [0x55d0c8a4f2a0]:0 <- @transfer(20) [handle=0, delivery-id=0, ...] (42) "\\x00Sp..."
    2023-05-01 10:00:00.123456 +0000 PROTOCOL (trace) [C3]:0 -> @attach(18) [...]

Each frame line is parsed (`parse_frame_line`), its performative rebuilt as the composite
its descriptor names (field types from the spec, so an `0x0` prints back as the ubyte, uint
or ulong the field is) and encoded with the codec, its payload appended: the bytes that
went over the wire, give or take an encoding width. A connection is the id in brackets
(the transport's address, or the router's `C3`), per file; its endpoints are named
`ID:0` (the side that wrote the log) and `ID:1` (its peer), and the client is the side
whose protocol header comes first. A frame's number is its line number in the log; a line
without a time takes the time of the line before it (0, the epoch, before any). A
connection whose first line has no time (proton's trace has none) is a `TraceFlow` not
`timed`: the views say its times are unknown.
Other log lines are skipped; a frame line that does not parse is a warning, with its line.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import functools
import io
import json
import os
import re
import struct
import sys
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any, cast

from amqpcli.capture.detect import AMQP_1_0, AMQP_SASL, UNKNOWN
from amqpcli.capture.files import CaptureError, ReadOnce, starts_as_capture
from amqpcli.capture.tcp import (
    C2S,
    S2C,
    Closed,
    Data,
    Direction,
    Event,
    Flow,
    FlowKey,
    Opened,
)
from amqpcli.codec import composites as _c
from amqpcli.codec.decode import MAX_DEPTH
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import (
    AMQP_HEADER,
    FRAME_TYPE_AMQP,
    FRAME_TYPE_SASL,
    SASL_HEADER,
    encode_frame,
)
from amqpcli.codec.types import (
    Array,
    Composite,
    Decimal32,
    Decimal64,
    Decimal128,
    Described,
    Int,
    Long,
    MapKey,
    Symbol,
    UInt,
    ULong,
    add_map_entry,
)
from amqpcli.errors import Exit, UserError

# How many lines (and bytes) of a file are looked at to tell a frame-trace log
SNIFF_LINES = 200
SNIFF_BYTES = 1 << 16

# The line: an optional timestamp (a router's), anything (a router's module and level),
# the connection id in brackets, proton's optional subsystem tag, the channel, the
# direction, the frame text.
_LINE = re.compile(
    r"^(?:(?P<date>\d{4}-\d\d-\d\d)[ T](?P<clock>\d\d:\d\d:\d\d(?:\.\d+)?)"
    r"(?:\s*(?P<zone>Z|UTC|[+-]\d\d:?\d\d))?\s+)?"
    r".*?\[(?P<conn>[^\[\]\s]+)\]:\s*(?:[A-Z]+:)?(?:FRAME:)?\s*(?P<channel>\d+)?\s*"
    r"(?P<dir>->|<-)\s+(?P<body>\S(?:.*\S)?)\s*$")
# A router's log lines may end with the source location (`(server.c:1234)`)
_PAYLOAD_SIZE = re.compile(r"\((\d{1,20})\)\s?")  # a transfer's `(N)` before its payload
_LOCATION = re.compile(r"\((?:/?[\w./-]+)\.c:\d+\)")
_TRUNCATED = re.compile(r"\s*\.\.\.\s*\(truncated\)$")
_HEADERS = {"AMQP": AMQP_HEADER, "SASL": SASL_HEADER}


class TraceSyntaxError(ValueError):
    """Frame text that does not parse: what, and where in the text (a character index)."""

    def __init__(self, problem: str, at: int) -> None:
        super().__init__(f"{problem} at column {at + 1}")
        self.at = at


# --- values: proton's inspect format -------------------------------------------------

# Array element type names, proton's and older proton's (`@PN_SYMBOL[...]`)
_ARRAY_TYPES = {
    "bool": "boolean", "boolean": "boolean", "byte": "byte", "ubyte": "ubyte",
    "short": "short", "ushort": "ushort", "int": "int", "uint": "uint", "long": "long",
    "ulong": "ulong", "float": "float", "double": "double", "decimal32": "decimal32",
    "decimal64": "decimal64", "decimal128": "decimal128", "uuid": "uuid",
    "timestamp": "timestamp", "symbol": "symbol", "string": "string", "binary": "binary",
    "list": "list", "map": "map", "char": "char", "null": "null", "true": "boolean",
    "false": "boolean",
}
# What may follow a string at the top of a text: its end, or a space (a descriptor's
# value, a performative's payload)
_AFTER_TOP = " "
_NAME = re.compile(r"[a-z][a-z0-9-]*=")
_NUMBER = re.compile(r"[+-]?(?:0x[0-9a-fA-F]+|(?:\d+\.?\d*(?:[eE][+-]?\d+)?|inf|nan))")
_WORD = re.compile(r"[A-Za-z_][\w.-]*")


class _Parser:
    """One frame text, parsed from `pos` on. Values come out typed as far as the text
    tells: `0x..` (proton's unsigned integers) as UInt or ULong by size, signed ones as
    Int or Long, floats as doubles; a composite field retypes them as its spec says."""

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos
        self.depth = 0  # the compound values being read, around `pos`
        # what may follow a string where the parser stands (older proton did not
        # escape a quote inside one: a quote followed by anything else is that byte)
        self.after_string = _AFTER_TOP

    def fail(self, problem: str) -> TraceSyntaxError:
        return TraceSyntaxError(problem, self.pos)

    def skip_spaces(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos] == " ":
            self.pos += 1

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def expect(self, s: str) -> None:
        if not self.peek(s):
            found = self.text[self.pos:self.pos + 12] or "the end"
            raise self.fail(f"expected {s!r}, found {found!r}")
        self.pos += len(s)

    def value(self) -> Any:
        self.skip_spaces()
        text, pos = self.text, self.pos
        if pos >= len(text):
            raise self.fail("expected a value, found the end")
        c = text[pos]
        if c in "@[{":
            return self._compound(c)
        if c == '"':
            return self.quoted(self.after_string).decode("utf-8", "replace")
        if c == "b" and text.startswith('b"', pos):
            self.pos += 1
            return self.quoted(self.after_string)
        if c == ":":
            self.pos += 1
            if self.peek('"'):
                return Symbol(self.quoted(self.after_string).decode("utf-8", "replace"))
            m = re.compile(r"[^\s,\]}=\[{]+").match(text, self.pos)
            if m is None:
                raise self.fail("an empty symbol")
            self.pos = m.end()
            return Symbol(m.group())
        for word, v in (("null", None), ("true", True), ("false", False)):
            if text.startswith(word, pos) and not _continues(text, pos + len(word)):
                self.pos += len(word)
                return v
        for prefix in ("UUID(", "D32(", "D64(", "D128("):
            if text.startswith(prefix, pos):
                return self._special(prefix[:-1])
        m = _NUMBER.match(text, pos)
        if m is not None and not _continues(text, m.end()):
            number = _number(m.group())
            if number is None:
                raise self.fail("a number too long for any AMQP type")
            self.pos = m.end()
            return number
        raise self.fail(f"not a value: {text[pos:pos + 12]!r}")

    def _compound(self, c: str) -> Any:
        """A described value, array, list or map: no deeper than the codec decodes (the
        recursion would fail first in Python; the frame then in the decoder)."""
        if self.depth >= MAX_DEPTH:
            raise self.fail(f"a value nested more than {MAX_DEPTH} deep")
        self.depth += 1
        if c == "@":
            v = self._described_or_array()
        elif c == "[":
            v = [v for _, v in self._items()]
        else:
            v = self._map()
        self.depth -= 1
        return v

    def quoted(self, after: str) -> bytes:
        """A `"..."` string as bytes: proton writes every byte outside printable ASCII,
        and the quote and the backslash, as `\\xNN` (older ones `\\"`, `\\\\`, or the
        quote bare). The string ends at a quote followed by the end of the text or by a
        character of `after`; another quote is a byte of the string."""
        text = self.text
        end = _string_end(text, self.pos, after)
        if end >= 0:
            data = _unescaped(text[self.pos + 1:end])
            if data is not None:
                self.pos = end + 1
                return data
        return self._quoted_each(after)

    def _quoted_each(self, after: str) -> bytes:
        """`quoted` character by character: for the escapes `_unescaped` leaves, and for
        the errors, where they are."""
        self.expect('"')
        text = self.text
        out = bytearray()
        i = self.pos
        n = len(text)
        while True:
            if i >= n:
                self.pos = i
                raise self.fail("a string that does not end")
            c = text[i]
            if c == '"' and (i + 1 == n or text[i + 1] in after):
                self.pos = i + 1
                return bytes(out)
            if c == "\\":
                i = _escape(text, i, out, self)
                continue
            out += c.encode("utf-8")
            i += 1

    def value_before(self, after: str) -> Any:
        """A value where a string in it ends before one of `after` (see `quoted`)."""
        outer, self.after_string = self.after_string, after
        try:
            return self.value()
        finally:
            self.after_string = outer

    def _special(self, kind: str) -> Any:
        self.expect(kind + "(")
        end = self.text.find(")", self.pos)
        if end < 0:
            raise self.fail(f"{kind}( without its )")
        inner = self.text[self.pos:end]
        self.pos = end + 1
        try:
            if kind == "UUID":
                return uuid.UUID(inner)
            bits = {"D32": 32, "D64": 64, "D128": 128}[kind]
            raw = int(inner, 16).to_bytes(bits // 8, "big")
        except (ValueError, OverflowError):
            raise self.fail(f"not a {kind}: {inner!r}") from None
        return {"D32": Decimal32, "D64": Decimal64, "D128": Decimal128}[kind](raw)

    def _items(self, close: str = "]") -> list[tuple[str | None, Any]]:
        """The items of a list (`[`...`]`): (field name or None, value) each, as a
        described list names its fields."""
        self.expect("[" if close == "]" else "{")
        items: list[tuple[str | None, Any]] = []
        self.skip_spaces()
        if self.peek(close):
            self.pos += 1
            return items
        while True:
            self.skip_spaces()
            name = None
            m = _NAME.match(self.text, self.pos)
            if m is not None:
                name = m.group()[:-1]
                self.pos = m.end()
            items.append((name, self.value_before("," + close)))
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                continue
            self.expect(close)
            return items

    def _map(self) -> dict[Any, Any]:
        self.expect("{")
        out: dict[Any, Any] = {}
        self.skip_spaces()
        if self.peek("}"):
            self.pos += 1
            return out
        while True:
            key = self.value_before("=")
            self.skip_spaces()
            self.expect("=")
            add_map_entry(out, key, self.value_before(",}"))  # (`"a"` and `:a` both)
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                continue
            self.expect("}")
            return out

    def _described_or_array(self) -> Any:
        self.expect("@")
        text = self.text
        if self.peek("<") or self.peek("PN_"):
            return self._array()
        m = re.compile(r"([a-z][a-z0-9-]*)\((\d{1,20})\)").match(text, self.pos)
        if m is not None:  # @name(code) value
            self.pos = m.end()
            code: Any = int(m.group(2))
        else:
            descriptor = self.value_before(" ")  # @123 value, @0x7b value, @:sym value
            if isinstance(descriptor, int) and not isinstance(descriptor, bool):
                code = int(descriptor)
            else:
                return Described(descriptor, self.value())
        self.skip_spaces()
        cls = _c.BY_CODE.get(code)
        if cls is None:
            return Described(ULong(code), self.value())
        if cls.HAS_VALUE or not self.peek("["):
            value = self.value()
            return cast(Any, cls)(value) if cls.HAS_VALUE else Described(ULong(code), value)
        return build(cls, self._items(), self)

    def _array(self) -> Array:
        text = self.text
        if self.peek("<"):
            end = text.find(">", self.pos)
            name = text[self.pos + 1:end] if end > 0 else ""
            self.pos = end + 1 if end > 0 else len(text)
        else:
            m = _WORD.match(text, self.pos)
            name = m.group()[3:].lower() if m else ""
            self.pos = m.end() if m else self.pos
        kind = _ARRAY_TYPES.get(name.lower())
        if kind is None:
            raise self.fail(f"an array of an unknown type {name!r}")
        self.skip_spaces()
        self.expect("[")
        items: list[Any] = []
        self.skip_spaces()
        while not self.peek("]"):
            if self.peek("..."):  # proton shows one of an array of true, false or null
                raise self.fail("an array proton shows only in part")
            items.append(_retype(self.value_before(",]"), kind))
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                self.skip_spaces()
        self.pos += 1
        return Array(items, kind)


def _continues(text: str, i: int) -> bool:
    """Whether a word or number read up to `i` goes on (so it was not one)."""
    return i < len(text) and (text[i].isalnum() or text[i] in "_-.")


# A string's characters up to a quote or a backslash, escapes (a backslash and what it
# takes) among them
_STRING_RUN = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
# Text whose escapes `codecs.escape_decode` reads as `_escape` does: `\\xNN`, `\\\\`,
# `\\"`, `\\n`, `\\r`, `\\t` (`\\0` it would take for an octal escape), read from the left
_COMMON_ESCAPES = re.compile(rb'[^\\]*(?:\\(?:x[0-9a-fA-F]{2}|[\\"nrt])[^\\]*)*')


def _string_end(text: str, start: int, after: str) -> int:
    """The index of the quote that ends the string whose opening quote is at `start`
    (see `_Parser.quoted`), or -1 (no such quote, or a backslash at the end)."""
    if not text.startswith('"', start):
        return -1
    i, n = start + 1, len(text)
    while True:
        i = _STRING_RUN.match(text, i).end()  # type: ignore[union-attr]
        if i >= n or text[i] != '"':
            return -1
        if i + 1 == n or text[i + 1] in after:
            return i
        i += 1


def _unescaped(text: str) -> bytes | None:
    """The bytes an escaped text stands for, in one step; None where it holds an escape
    other than proton's and older proton's (read one by one then, by `_escape`)."""
    raw = text.encode("utf-8")
    if b"\\" not in raw:
        return raw
    if _COMMON_ESCAPES.fullmatch(raw) is None:
        return None
    return cast(bytes, codecs.escape_decode(raw)[0])


def _escape(text: str, i: int, out: bytearray, p: _Parser) -> int:
    """One backslash escape at `text[i]` into `out`; the index after it."""
    nxt = text[i + 1:i + 2]
    if nxt == "x":
        digits = text[i + 2:i + 4]
        if len(digits) == 2 and all(c in "0123456789abcdefABCDEF" for c in digits):
            out.append(int(digits, 16))
            return i + 4
        p.pos = i
        raise p.fail("a bad \\x escape")
    simple = {"n": 10, "r": 13, "t": 9, "0": 0}
    if nxt in simple:
        out.append(simple[nxt])
        return i + 2
    if nxt:
        out += nxt.encode("utf-8")
        return i + 2
    p.pos = i
    raise p.fail("a backslash at the end")


# The integers some AMQP type holds (long's least to ulong's most)
_INTEGER_MIN, _INTEGER_MAX = -(1 << 63), (1 << 64) - 1
# Digits enough for any of them (more are no AMQP integer, and Python refuses to convert
# a few thousand)
_INTEGER_DIGITS = 20


def _number(text: str) -> Any:
    """A number's value, typed as in `_Parser`; None for an integer of no AMQP type."""
    low = text.lower()
    if "0x" in low:
        v = int(low, 16)
        if v > _INTEGER_MAX:
            return None
        return UInt(v) if v <= 0xFFFFFFFF else ULong(v)
    if any(c in low for c in ".en") or "inf" in low:
        return float(low)  # (a double, as Python's float encodes)
    if len(low.lstrip("+-")) > _INTEGER_DIGITS:
        return None
    v = int(low)
    if not _INTEGER_MIN <= v <= _INTEGER_MAX:
        return None
    return Int(v) if -(1 << 31) <= v < (1 << 31) else Long(v)


# Plain Python types for a field's primitive type: the field's encoder then writes the
# value in that type (an AMQP-typed value would keep its own)
_INT_TYPES = frozenset({"ubyte", "ushort", "uint", "ulong", "byte", "short", "int", "long",
                        "timestamp"})
_FLOAT_TYPES = frozenset({"float", "double"})


@functools.cache
def _primitive(type_name: str) -> str:
    while type_name in _c.RESTRICTED:
        type_name = _c.RESTRICTED[type_name]
    return type_name


def _retype(v: Any, type_name: str) -> Any:
    """`v` as a value of the spec type `type_name` (plain, for the field encoder)."""
    prim = _primitive(type_name)
    if prim in _INT_TYPES and isinstance(v, int) and not isinstance(v, bool):
        return int(v)
    if prim in _FLOAT_TYPES and isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if prim == "symbol" and type(v) is str:
        return Symbol(v)
    if isinstance(v, Array) and prim in _INT_TYPES | _FLOAT_TYPES:
        return Array([_retype(x, prim) for x in v], prim)
    if type(v) is dict:
        return _string_keys_kept(v)
    return v


def _string_keys_kept(m: dict[Any, Any]) -> dict[Any, Any]:
    """A field's map with its quoted keys kept strings: a field of symbol-keyed maps
    (`fields`, annotations) encodes a plain str key as a symbol, a `MapKey` as what it
    holds (proton prints a symbol key `:key`)."""
    if not any(type(k) is str for k in m):
        return m
    return {MapKey(k) if type(k) is str else k: v for k, v in m.items()}


_FIELDS_BY_NAME: dict[type[Composite], dict[str, tuple[str, str]]] = {}


def _fields_by_name(cls: type[Composite]) -> dict[str, tuple[str, str]]:
    """A composite's fields by name: (attribute, spec type) each."""
    fields = _FIELDS_BY_NAME.get(cls)
    if fields is None:
        fields = _FIELDS_BY_NAME[cls] = {f.name: (f.attr, f.type) for f in cls.FIELDS}
    return fields


def build(cls: type[Composite], items: list[tuple[str | None, Any]],
          p: _Parser | None = None) -> Composite:
    """A composite from its described list's items: named ones by name (proton leaves
    null fields out), unnamed ones by position."""
    obj = cls()
    fields = _fields_by_name(cls)
    for i, (name, value) in enumerate(items):
        if name is None:
            if i >= len(cls.FIELDS):
                raise (p or _Parser("")).fail(f"{cls.NAME} has {len(cls.FIELDS)} fields, "
                                              f"not {len(items)}")
            attr, type_name = cls.FIELDS[i].attr, cls.FIELDS[i].type
        else:
            found = fields.get(name)
            if found is None:
                raise (p or _Parser("")).fail(f"{cls.NAME} has no field {name!r}")
            attr, type_name = found
        if value is not None:
            value = _retype(value, type_name)
        setattr(obj, attr, value)
    return obj


def parse_value(text: str) -> Any:
    """One value in proton's inspect format (the whole text)."""
    p = _Parser(text)
    v = p.value()
    p.skip_spaces()
    if p.pos != len(text):
        raise p.fail(f"more after the value: {text[p.pos:p.pos + 12]!r}")
    return v


# --- the common shapes, in one pass ---------------------------------------------------
#
# Most frame lines are composites of named fields holding numbers, words, symbols,
# strings, binaries and composites of the same (transfers, flows, dispositions). They are
# read field by field with one regular expression each; anything else (a map, a list, an
# array, an unnamed field, a value the expression does not take, any error) leaves the
# whole text to `_Parser`, which reads it as it reads every text. The values are those
# `_Parser.value` gives (tests/capture/test_tracelog_fast.py holds the two together).

# `@name(code) [`: a composite's start (its code names it, as in `_described_or_array`)
_COMPOSITE_START = re.compile(r"@[a-z][a-z0-9-]*\((\d{1,20})\) *\[ *")
# One named field and its value, or the start of a composite as its value. A string ends at
# a quote followed by `,` or `]` (as `_items` reads it: other quotes are bytes of it). A
# number of more digits than any AMQP integer has is left to `_Parser` (which says so).
_FIELD = re.compile(
    r" *([a-z][a-z0-9-]*)= *(?:(?:"
    r"(0x[0-9a-fA-F]{1,16})"  # 2: proton's unsigned
    r"|(-?\d{1,20})"  # 3: a signed integer
    r"|(true|false|null)"  # 4
    r"|:([^\s,\]}=\[{\"][^\s,\]}=\[{]*)"  # 5: a plain symbol
    r"|(b|:)?\"([^\"\\]*(?:(?:\\.|\"(?![,\]]))[^\"\\]*)*)\"(?=[,\]])"  # 6, 7: a string
    r")(?: *([,\]]) *)?"  # 8: what follows the value
    r"|@[a-z][a-z0-9-]*\((\d{1,20})\) *\[ *"  # 9: a composite's code
    r")", re.DOTALL)
# What follows a value in a composite's list: the next field, or its end
_SEPARATOR = re.compile(r" *([,\]]) *")
_WORDS = {"true": True, "false": False, "null": None}


def _common_performative(text: str) -> tuple[Composite, int] | None:
    """The composite `text` starts with and the index after it, if it has only the common
    shapes; None to leave the text to `_Parser`."""
    m = _COMPOSITE_START.match(text)
    if m is None:
        return None
    cls = _c.BY_CODE.get(int(m.group(1)))
    if cls is None or cls.HAS_VALUE:
        return None
    # the composites being read, innermost last: each its class and its items so far
    stack: list[tuple[type[Composite], list[tuple[str | None, Any]]]] = [(cls, [])]
    pos = m.end()
    field_match, separator_match = _FIELD.match, _SEPARATOR.match
    try:
        if text.startswith("]", pos):
            return build(cls, []), pos + 1
        while True:
            m = field_match(text, pos)
            if m is None:
                return None
            name, unsigned, signed, word, symbol, prefix, string, after, code = m.groups()
            pos = m.end()
            value: Any
            if code is not None:  # a composite: read its fields, then come back
                inner = _c.BY_CODE.get(int(code))
                if inner is None or inner.HAS_VALUE or len(stack) >= MAX_DEPTH:
                    return None
                if not text.startswith("]", pos):
                    stack[-1][1].append((name, None))  # (its value once it ends)
                    stack.append((inner, []))
                    continue
                pos += 1
                value = build(inner, [])
                after = None
            elif after is None:
                return None
            elif unsigned is not None:
                v = int(unsigned, 16)
                value = UInt(v) if v <= 0xFFFFFFFF else ULong(v)
            elif signed is not None:
                v = int(signed)
                if -(1 << 31) <= v < (1 << 31):
                    value = Int(v)
                elif _INTEGER_MIN <= v <= _INTEGER_MAX:
                    value = Long(v)
                else:
                    return None
            elif word is not None:
                value = _WORDS[word]
            elif symbol is not None:
                value = Symbol(symbol)
            else:
                data = _unescaped(string)
                if data is None:
                    return None
                value = (data if prefix == "b" else
                         Symbol(data.decode("utf-8", "replace")) if prefix == ":" else
                         data.decode("utf-8", "replace"))
            stack[-1][1].append((name, value))
            if after == ",":
                continue
            if after == "]":
                pos = m.start(8)
            # the separators after it: a `]` ends the composite being read
            while True:
                sep = separator_match(text, pos)
                if sep is None:
                    return None
                if sep.group(1) == ",":
                    pos = sep.end()
                    break
                pos = sep.start(1) + 1
                cls, items = stack.pop()
                done = build(cls, items)
                if not stack:
                    return done, pos
                outer = stack[-1][1]
                outer[-1] = (outer[-1][0], done)
    except TraceSyntaxError:
        return None


# --- lines ----------------------------------------------------------------------------


class FrameLine:
    """What one frame line says. `kind` is "header" (`data` the header's bytes), "frame"
    (`data` the frame's bytes), "eos" (proton's end of stream in that direction) or
    "empty" (an empty frame: `data` its 8 bytes). `outgoing`: written by the process
    that logged it (`->`). `time_ns`: None when the line has no time. `cut`: the payload
    was cut short in the log (`... (truncated)`), `data` holds what it shows, `said` the
    payload size the line gives (`(N)`)."""

    __slots__ = ("conn", "cut", "data", "kind", "outgoing", "performative", "said", "time_ns")

    def __init__(self, conn: str, outgoing: bool, kind: str, data: bytes,
                 time_ns: int | None, performative: Composite | None = None,
                 cut: bool = False, said: int = 0) -> None:
        self.conn = conn
        self.outgoing = outgoing
        self.kind = kind
        self.data = data
        self.time_ns = time_ns
        self.performative = performative
        self.cut = cut
        self.said = said


class NotAFrame(Exception):
    """A line that is no frame line (other log text): skipped."""


def parse_frame_line(line: str) -> FrameLine:
    """One log line → `FrameLine`; `NotAFrame` for other log text, `TraceSyntaxError`
    for a frame line whose frame does not parse."""
    m = _LINE.match(line)
    if m is None:
        raise NotAFrame
    body = _without_location(m.group("body"))
    conn, outgoing = m.group("conn"), m.group("dir") == "->"
    t = _time(m) if m.group("date") else None
    word = body.split(" ", 1)[0]
    if word in _HEADERS:
        return FrameLine(conn, outgoing, "header", _HEADERS[word], t)
    if word == "EOS":
        return FrameLine(conn, outgoing, "eos", b"", t)
    channel = _channel(m)
    if body.upper() == "(EMPTY FRAME)":
        return FrameLine(conn, outgoing, "empty", encode_frame(None, channel), t)
    if not body.startswith("@"):
        raise NotAFrame
    cut = False
    if body.endswith("(truncated)") and _TRUNCATED.search(body):
        body = _TRUNCATED.sub("", body)
        cut = True
    fast = _common_performative(body)
    if fast is not None:
        performative, end = fast
        p = _Parser(body, end)
    else:
        p = _Parser(body)
        performative = p.value()
    if not isinstance(performative, Composite) or performative.CODE not in _FRAME_TYPES:
        raise TraceSyntaxError(f"not a performative: {body[:p.pos][:40]!r}", 0)
    payload = b""
    said = 0
    p.skip_spaces()
    if p.pos < len(body):
        size_m = _PAYLOAD_SIZE.match(body, p.pos)
        if size_m is None:
            raise p.fail(f"more after the performative: {body[p.pos:p.pos + 12]!r}")
        p.pos = size_m.end()
        payload = _payload(p)
        said = int(size_m.group(1))
        if not cut and len(payload) != said:
            raise TraceSyntaxError(f"the payload is {len(payload)} bytes, the line says "
                                   f"{size_m.group(1)}", size_m.start())
    frame = encoded_frame(performative, channel, payload, body)
    return FrameLine(conn, outgoing, "frame", frame, t, performative, cut, said)


def encoded_frame(performative: Composite, channel: int, payload: bytes, text: str) -> bytes:
    """The frame of a performative read from `text`; a `TraceSyntaxError` naming the field
    whose value its type cannot take (and where `text` has it) when the codec refuses it."""
    try:
        return encode_frame(performative, channel, payload, _FRAME_TYPES[performative.CODE])
    except (ValueError, TypeError, OverflowError) as e:
        misfit = _misfit(performative)
        if misfit is None:
            raise TraceSyntaxError(f"cannot encode the {performative.NAME}: {e}", 0) from None
        field, problem = misfit
        raise TraceSyntaxError(f"cannot encode the {performative.NAME}: its {problem}",
                               max(text.find(f"{field}="), 0)) from None


# what the field encoders raise for a value they cannot take (`encode_frame` wraps them)
_UNENCODABLE = (ValueError, TypeError, OverflowError, struct.error)


def _misfit(obj: Composite) -> tuple[str, str] | None:
    """The field of `obj` whose value its type cannot take (a string where the spec has
    a uint, a number in an array of char), as (its name, `max-frame-size (a uint) holds
    the string "x"`); a composite's field in it is named `source.timeout`. Looked for only
    once the encoder refused the frame: the frames that encode pay nothing for it."""
    for f, encode_field in zip(obj.FIELDS, obj._FIELD_ENCODERS, strict=False):
        v = getattr(obj, f.attr)
        if v is None:
            continue
        try:
            encode_field(bytearray(), v)
        except _UNENCODABLE:
            inner = _misfit(v) if isinstance(v, Composite) and not v.HAS_VALUE else None
            if inner is not None:
                return f.name, f"{f.name}.{inner[1]}"
            if isinstance(v, Array):
                for x in v:
                    try:
                        encode(Array([x], v.type))
                    except _UNENCODABLE:
                        return f.name, f"{f.name} (an array of {v.type}) holds {_found(x)}"
            prim = _primitive(f.type)
            article = "an" if prim[0] in "aeio" else "a"
            return f.name, f"{f.name} ({article} {prim}) holds {_found(v)}"
    return None


def _found(v: Any) -> str:
    """A value as a message about a misfit names it: `the string "x"`, `the number 1`."""
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, Symbol):
        return f"the symbol :{v[:40]}"
    if isinstance(v, str):
        return f"the string {json.dumps(v)}" if len(v) <= 40 else f"a {len(v)}-character string"
    if isinstance(v, (bytes, bytearray)):
        return (f"the binary b{json.dumps(bytes(v).decode('latin-1'))}" if len(v) <= 40
                else f"{len(v)} bytes of binary")
    if isinstance(v, (int, float)):
        return f"the number {v}"
    if isinstance(v, Array):
        return f"an array of {v.type}"
    if isinstance(v, dict):
        return "a map"
    if isinstance(v, list):
        return "a list"
    return f"a {type(v).__name__}"


def _channel(m: re.Match[str]) -> int:
    digits = m.group("channel") or "0"
    if len(digits) > 5:  # (Python refuses to convert a few thousand digits)
        raise TraceSyntaxError("a channel number too long (a channel is 0..65535)",
                               m.start("channel"))
    return int(digits)


_FRAME_TYPES = {**dict.fromkeys(range(0x10, 0x19), FRAME_TYPE_AMQP),
                **dict.fromkeys(range(0x40, 0x45), FRAME_TYPE_SASL)}


def _payload(p: _Parser) -> bytes:
    """A transfer's payload: quoted by older proton, bare escapes by newer, to the end.
    A quoted payload runs to the line's last quote: older proton left a quote inside it
    bare (the size the line says, which the caller holds the payload to, tells)."""
    text = p.text
    quoted = p.peek('"')
    i = p.pos + quoted
    end = len(text)
    if quoted:
        end = text.rstrip(" ").rfind('"')
        if end == p.pos:
            raise p.fail("a payload that does not end")
    data = _unescaped(text[i:end])
    if data is not None:
        i = end
    else:
        out = bytearray()
        while i < end:
            if text[i] == "\\":
                i = _escape(text, i, out, p)
            else:
                out += text[i].encode("utf-8")
                i += 1
        data = bytes(out)
    p.pos = i + quoted
    if p.pos < len(text.rstrip(" ")):
        raise p.fail(f"more after the payload: {text[p.pos:p.pos + 12]!r}")
    return data


def _without_location(body: str) -> str:
    """The frame text without the source location a router's line may end with, and the
    spaces before it. (The location holds no parenthesis: it is at the last one.)"""
    if not body.endswith(")"):
        return body
    at = body.rfind("(")
    if at > 0 and body[at - 1].isspace() and _LOCATION.fullmatch(body, at):
        return body[:at].rstrip()
    return body


def _time(m: re.Match[str]) -> int:
    clock = m.group("clock")
    whole, _, frac = clock.partition(".")
    zone = m.group("zone") or "+0000"
    if zone in ("Z", "UTC"):
        zone = "+0000"
    ns = int((frac + "000000000")[:9]) if frac else 0
    hours, minutes, seconds = int(whole[:2]), int(whole[3:5]), int(whole[6:8])
    if hours < 24 and minutes < 60 and seconds < 60:
        try:
            day = _day_start(m.group("date"), zone)
        except ValueError:
            pass  # (strptime of the whole time says what is wrong, as it always has)
        else:
            return (day + hours * 3600 + minutes * 60 + seconds) * 1_000_000_000 + ns
    try:
        stamp = _dt.datetime.strptime(f"{m.group('date')} {whole} {zone.replace(':', '')}",
                                      "%Y-%m-%d %H:%M:%S %z")
    except ValueError:  # (a month 98, a 25th hour: the line's, not the reader's, error)
        said = " ".join(g for g in m.group("date", "clock", "zone") if g)
        raise TraceSyntaxError(f"no such time: {said}", m.start("date")) from None
    return int(stamp.timestamp()) * 1_000_000_000 + ns


@functools.lru_cache(maxsize=64)
def _day_start(date: str, zone: str) -> int:
    """The epoch second a log's day starts at, in its zone: a log's lines share a few
    (strptime for each line was most of the time a router line took)."""
    stamp = _dt.datetime.strptime(f"{date} 00:00:00 {zone.replace(':', '')}",
                                  "%Y-%m-%d %H:%M:%S %z")
    return int(stamp.timestamp())


# --- files → events -------------------------------------------------------------------


def _open_text(source: str | os.PathLike[str] | IO[bytes]) -> tuple[str, IO[bytes], bool]:
    """(name, stream, whether the reader closes it): a path's file and a `ReadOnce` are
    the reader's, another stream its caller's."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        f: IO[bytes] = open(name, "rb")  # noqa: SIM115 (closed by the caller)
        return name, f, True
    label = getattr(source, "name", None)
    name = label if isinstance(label, str) else "<stream>"
    return name, source, isinstance(source, ReadOnce)


def _first_bytes(source: Any, gunzip: bool = True) -> bytes | None:
    """The start of a file, or of a stream that can be peeked at without consuming it
    (`gunzip`: of a gzipped one's text); None if it cannot be read so."""
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                head = f.read(SNIFF_BYTES)
        except OSError:
            return None
    else:
        peek = getattr(source, "peek", None)
        if peek is None:
            return None
        try:
            head = peek(SNIFF_BYTES)[:SNIFF_BYTES]
        except OSError:
            return None
    if gunzip and head[:2] == b"\x1f\x8b":  # (a gzipped log: its first lines, as far as they go)
        lines: list[bytes] = []
        try:
            for line in _gunzipped_lines(io.BytesIO(head), nullcontext()):
                lines.append(line)
                if len(lines) >= SNIFF_LINES:
                    break
        except LogDamage:
            pass
        head = b"".join(lines)
    return head


def is_trace_log(source: Any) -> bool:
    """Whether a file (or a peekable stream: a file read once is given as one, see
    `amqpcli.capture.files.opened_once`) is a frame-trace log, by its first lines: one of
    them is a protocol header or frame line of proton's, and the file is no capture. NUL
    bytes are passed over (a log rotated by copytruncate starts with them), and so are
    other lines (a log's own text, junk)."""
    return _has_frame_lines(_first_bytes(source) or b"")


def _has_frame_lines(head: bytes) -> bool:
    if not head or starts_as_capture(head):
        return False
    text = head.replace(b"\x00", b"").decode("utf-8", "replace")
    for line in text.splitlines()[:SNIFF_LINES]:
        m = _LINE.match(line)
        if m is not None:
            word = m.group("body").split(" ", 1)[0]
            if word in _HEADERS or re.match(r"@[a-z-]+\(\d+\)", word):
                return True
    return False


def settles(head: bytes) -> bool:
    """Whether the first bytes of a file read once (`amqpcli.capture.files.ReadOnce`, read
    as its writer writes them) tell what it is, as the bytes of a regular file's start
    would: they start as a capture does (4 bytes suffice), or hold a frame line, or
    SNIFF_LINES whole lines; a gzipped stream by the text it decompresses to so far, or
    by damage. Else more is needed (up to the end or SNIFF_BYTES, which the caller
    watches): a log's writer may write other lines first, and its lines one at a time."""
    if len(head) < 4:
        return False
    if head[:2] == b"\x1f\x8b":
        d: Any = zlib.decompressobj(31)
        try:
            # (as much text as a log is sniffed by: a small input that inflates hugely is
            # not inflated whole at every read of a pipe)
            text = d.decompress(head, SNIFF_BYTES)
        except zlib.error:
            return True  # (damaged: the reader says where)
        return d.eof or len(text) >= SNIFF_BYTES or _text_settles(text)
    return _text_settles(head)


def _text_settles(head: bytes) -> bool:
    if len(head) < 4:
        return False
    if starts_as_capture(head):
        return True
    end = max(head.rfind(b"\n"), head.rfind(b"\r"))
    if end < 0:
        return False
    whole = head[: end + 1]  # (a frame line may be cut short: its whole line is waited for)
    lines = whole.replace(b"\x00", b"").decode("utf-8", "replace").splitlines()
    return len(lines) >= SNIFF_LINES or _has_frame_lines(whole)


# Bytes of text: printable ASCII, tabs and line ends, and UTF-8's
_TEXT_BYTES = bytes([9, 10, 13, *range(0x20, 0x7F), *range(0x80, 0x100)])


def not_a_log_error(source: Any) -> CaptureError | None:
    """The error for a source that is neither capture nor frame-trace log but text (or
    nothing): the capture reader's would speak of magic numbers only. None for any other
    (binary data, which the capture reader names)."""
    head = _first_bytes(source)
    if head is None or head.strip(b"\x00").translate(None, _TEXT_BYTES) or (
            _has_frame_lines(head)):
        return None  # (the capture reader says why it cannot be read, or what it is)
    if not head and _first_bytes(source, gunzip=False):
        return None  # (gzip data that gives no line: the capture reader says what is wrong)
    what = ("empty" if not head.strip(b"\x00") else
            f"text with no frame line in its first {SNIFF_LINES} lines")
    return CaptureError(source_name(source), 0,
                        f"not a capture file or frame-trace log: {what}", where="")


def source_name(source: Any) -> str:
    """How errors name a source: its path, or a stream's name."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "standard input"


def are_trace_logs(sources: list[Any]) -> bool:
    """Whether the sources are frame-trace logs (else captures, for the capture reader);
    every one is looked at, and logs and captures together are a usage error."""
    logs = [is_trace_log(s) for s in sources]
    if all(logs) or not any(logs):
        return bool(logs) and logs[0]
    log = source_name(sources[logs.index(True)])
    other = source_name(sources[logs.index(False)])
    raise UserError(f"{log} is a frame-trace log, {other} is not: trace logs and captures "
                    "are read apart, not together", Exit.USAGE)


# A SASL frame's start, by name, code or descriptor symbol: its text may hold a password
_SASL_FRAME = re.compile(r"@(?:sasl-|:\"?amqp:sasl-|(?:0x0*4[0-4]|6[4-8])\b)")


def _not_parsed(line: str, e: TraceSyntaxError) -> str:
    """What is wrong with a frame line. Of a SASL frame, only where: the problem quotes
    the text, which may be a password's (a warning cannot know of --show-secrets)."""
    if _SASL_FRAME.search(line):
        return (f"a SASL frame line that does not parse at column {e.at + 1} (its text not "
                "shown: it may hold a password)")
    return f"a frame line that does not parse ({e})"


class TraceFlow(Flow):
    """A connection of a frame-trace log: a `Flow`, and whether its lines carry times
    (`timed`: its first line's has one; proton's trace has none, a router's log has).
    `cut`: the payloads the log cut short, as the size each line says (`(N)`), by the
    frame's number in the connection (its frames of both ways, from 1, as the dissector
    numbers them)."""

    __slots__ = ("cut", "timed")

    def __init__(self, index: int, key: FlowKey, first_ns: int, timed: bool) -> None:
        super().__init__(index, key, first_ns)
        self.timed = timed
        self.cut: dict[int, int] = {}


class _Conn:
    """A connection of the log: its flow, the bytes so far each way, its state."""

    __slots__ = ("closed", "flow", "frames", "headers", "logger_is_client", "offsets")

    def __init__(self, flow: TraceFlow, logger_is_client: bool) -> None:
        self.flow = flow
        self.frames = 0
        self.logger_is_client = logger_is_client
        self.offsets = [0, 0]
        self.headers: list[set[bytes]] = [set(), set()]
        self.closed = [False, False]

    def direction(self, outgoing: bool) -> Direction:
        return C2S if outgoing == self.logger_is_client else S2C


Warn = Callable[[str], None]


def _stderr_warning(text: str) -> None:
    print(f"amqp: warning: {text}", file=sys.stderr, flush=True)


class TraceReader:
    """Frame-trace logs → capture events (`events`), with `packets` the line number of
    the line each event came from (as the file reader numbers packets: the number a
    frame record carries). Several files are read one after the other; a connection is
    one file's. `warn` is told of every frame line that does not parse."""

    def __init__(self, sources: Iterable[Any], *, warn: Warn = _stderr_warning,
                 waiting: AbstractContextManager[Any] | None = None,
                 numbering: Any = None) -> None:
        self.sources = list(sources)
        self.warn = warn
        self.waiting = waiting if waiting is not None else nullcontext()
        self.numbering = numbering  # an object whose `packets` is set (a PacketDecoder)
        self.packets = 0
        self._flows = 0

    def _number(self, n: int) -> None:
        self.packets = n
        if self.numbering is not None:
            self.numbering.packets = n

    def events(self) -> Iterator[Event]:
        for source in self.sources:
            yield from self._file(source)

    def _file(self, source: Any) -> Iterator[Event]:
        try:
            name, f, own = _open_text(source)
        except OSError as e:
            raise UserError(f"{os.fspath(source)}: cannot open: {e.strerror or e}",
                            Exit.USAGE) from None
        conns: dict[str, _Conn] = {}
        last_ns = 0
        first_cut, cut = 0, 0  # (the first line with a payload the log cut short; how many)
        try:
            try:
                gzipped = _gzipped(f, name if own else None)
            except OSError as e:
                raise LogUnreadable(e.strerror or str(e)) from None
            lines = (_gunzipped_lines(f, self.waiting) if gzipped
                     else _plain_lines(f, self.waiting))
            lineno = 0
            for raw in lines:
                lineno += 1
                if b"\x00" in raw:  # (a log rotated by copytruncate starts with NULs)
                    raw = raw.replace(b"\x00", b"")
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                try:
                    fl = parse_frame_line(line)
                except NotAFrame:
                    continue
                except TraceSyntaxError as e:
                    self.warn(f"{name}:{lineno}: {_not_parsed(line, e)}; skipped")
                    continue
                if fl.time_ns is not None:
                    last_ns = fl.time_ns
                if fl.cut:
                    cut += 1
                    if not first_cut:
                        first_cut = lineno
                self._number(lineno)
                yield from self._line(fl, conns, name, last_ns)
        except LogUnreadable as e:
            self.warn(f"{name}: cannot read on: {e}")
        except LogDamage as e:
            self.warn(f"{name}: {e} (the lines before it were read)")
        finally:
            if own:
                f.close()
        for conn in conns.values():
            for d in (C2S, S2C):
                if not conn.closed[d]:
                    yield Closed(conn.flow, d, last_ns, "end")
        if first_cut:
            self.warn(f"{name}:{first_cut}: the log cut {cut} transfer payload"
                      f"{'s' if cut != 1 else ''} short (proton shows at most about "
                      "1 KiB of a frame): those messages are incomplete")

    def _line(self, fl: FrameLine, conns: dict[str, _Conn], name: str,
              t: int) -> Iterator[Event]:
        conn = conns.get(fl.conn)
        if conn is not None and _starts_again(conn, fl):
            conns.pop(fl.conn)
            for d in (C2S, S2C):
                if not conn.closed[d]:
                    yield Closed(conn.flow, d, t, "end")
            conn = None
        if conn is None:
            if fl.kind == "eos":
                return
            conn = self._new_conn(fl, name, t)
            conns[fl.conn] = conn
            yield Opened(conn.flow, t)
        d = conn.direction(fl.outgoing)
        if fl.kind == "eos":
            if not conn.closed[d]:
                conn.closed[d] = True
                yield Closed(conn.flow, d, t, "fin")
            return
        if fl.kind == "header":
            conn.headers[d].add(fl.data)
        else:
            conn.frames += 1
            if fl.cut:
                conn.flow.cut[conn.frames] = fl.said
        offset = conn.offsets[d]
        conn.offsets[d] += len(fl.data)
        yield Data(conn.flow, d, t, fl.data, offset)

    def _new_conn(self, fl: FrameLine, name: str, t: int) -> _Conn:
        self._flows += 1
        ident = fl.conn
        key = (ident, 0, ident, 1)
        flow = TraceFlow(self._flows, key, t, timed=fl.time_ns is not None)
        # the client is the side whose protocol header comes first (a listener's proton
        # answers the client's); with no header, the side of the first frame, unless that
        # is a server's sasl-mechanisms
        if fl.kind == "header":
            logger_is_client = fl.outgoing
            flow.protocol = AMQP_SASL if fl.data == SASL_HEADER else AMQP_1_0
            flow.handshake = True
        else:
            server_first = fl.performative is not None and fl.performative.NAME == (
                "sasl-mechanisms")
            logger_is_client = fl.outgoing != server_first
            flow.protocol = UNKNOWN
            flow.by_port = True  # read as AMQP joined mid-connection
        flow.selected = True
        here, peer = (ident, 0), (ident, 1)
        flow.client, flow.server = (here, peer) if logger_is_client else (peer, here)
        return _Conn(flow, logger_is_client)


def _starts_again(conn: _Conn, fl: FrameLine) -> bool:
    """Whether a line of a known connection id is of a new connection (proton's ids are
    addresses, which a later connection may take again): one whose both directions ended,
    or a protocol header again in a direction that had it."""
    if all(conn.closed):
        return fl.kind != "eos"
    return fl.kind == "header" and fl.data in conn.headers[conn.direction(fl.outgoing)]


class LogDamage(Exception):
    """A gzipped log that does not decompress on (cut short, or a bad byte)."""


class LogUnreadable(Exception):
    """A log that cannot be read on (an I/O error). Only the read's own errors: entering
    `waiting` flushes the output, and a reader of it gone (`| head`) is not the log's."""


def _read(f: IO[bytes], waiting: AbstractContextManager[Any], size: int | None) -> bytes:
    """A line of `f` (`size` None), or up to `size` bytes, waited for in `waiting`."""
    with waiting:
        try:
            return f.readline() if size is None else f.read(size)
        except OSError as e:
            raise LogUnreadable(e.strerror or str(e)) from None


_GZIP_PIECE = 1 << 10  # compressed bytes per step: a bad byte loses at most this much


def _plain_lines(f: IO[bytes], waiting: AbstractContextManager[Any]) -> Iterator[bytes]:
    while True:
        line = _read(f, waiting, None)
        if not line:
            return
        yield line


def _gunzipped_lines(f: IO[bytes], waiting: AbstractContextManager[Any]) -> Iterator[bytes]:
    """The lines of a gzipped log as they decompress, member after member (zero padding
    between members skipped, as gzip does). As with a gzipped capture, a log cut short or
    damaged gives the whole lines that decompress first, then `LogDamage` saying where."""
    d: Any = zlib.decompressobj(31)
    pending = b""
    at = 0  # the compressed bytes fed so far
    started = False  # a member begun (its header read), not ended
    while True:
        raw = _read(f, waiting, _GZIP_PIECE)
        if not raw:
            break
        while raw:
            if not started:
                raw = raw.lstrip(b"\x00")  # (padding between members)
                if not raw:
                    break
                started = True
            try:
                out = d.decompress(raw)
            except zlib.error as e:
                raise LogDamage(f"damaged gzip data ({e}) within compressed bytes {at}-"
                                f"{at + len(raw)}") from None
            at += len(raw) - len(d.unused_data)
            pending += out
            *whole, pending = pending.split(b"\n")
            for line in whole:
                yield line + b"\n"
            raw = d.unused_data if d.eof else b""
            if d.eof:
                d, started = zlib.decompressobj(31), False
    if started:  # (the line it cut is left out, as a capture's cut packet is)
        raise LogDamage(f"the gzip data is cut short after {at} compressed bytes")
    if pending:
        yield pending


def _gzipped(f: IO[bytes], path: str | None) -> bool:
    """Whether the log is gzipped: by its first bytes, peeked at (a stream) or read
    again (a file)."""
    peek = getattr(f, "peek", None)
    if peek is not None:
        return bool(peek(2)[:2] == b"\x1f\x8b")
    if path is None:
        return False
    with open(path, "rb") as again:
        return again.read(2) == b"\x1f\x8b"


def read_trace_logs(sources: Iterable[Any], *, numbering: Any = None,
                    warn: Warn = _stderr_warning,
                    waiting: AbstractContextManager[Any] | None = None) -> Iterator[Event]:
    """The capture events of frame-trace logs (see the module's text). `numbering`, if
    given, has its `packets` set to each event's line number (a `PacketDecoder`, for the
    dissector's frame numbers). A source that is not a frame-trace log is a usage error:
    trace logs and captures are not read together."""
    srcs = list(sources)
    if not are_trace_logs(srcs):
        raise UserError(f"{source_name(srcs[0])}: not a frame-trace log", Exit.USAGE)
    return TraceReader(srcs, warn=warn, waiting=waiting, numbering=numbering).events()
