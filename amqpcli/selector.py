"""Message selectors: the JMS-style filter of `apache.org:selector-filter:string`.

The grammar (SQL-92 conditional expressions, as JMS defines them):

    expr       := and ("OR" and)*
    and        := not ("AND" not)*
    not        := "NOT" not | predicate
    predicate  := sum [ cmp sum
                      | ["NOT"] "BETWEEN" sum "AND" sum
                      | ["NOT"] "IN" "(" literal ("," literal)* ")"
                      | ["NOT"] "LIKE" string ["ESCAPE" string]
                      | "IS" ["NOT"] "NULL" ]
    cmp        := "=" | "<>" | "<" | "<=" | ">" | ">="
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := ("+" | "-") unary | primary
    primary    := literal | identifier | "(" expr ")"
    literal    := 'string' ('' is a quote) | integer | decimal | TRUE | FALSE | NULL

Numbers are Java's literals, as JMS has them: an integer (decimal, 0x hex or, with a
leading 0, octal: `010` is 8 and `09` an error; `L` or `l` after it allowed) is exact; a number with a decimal point or an exponent, or with `D`,
`d`, `F` or `f` after it, is approximate, a double (`2D` is 2.0: `weight / 2D` divides
as doubles, `weight / 2` as integers, truncating). `L` after an approximate number
(`2.5L`) is an error.

A selector is a condition, as JMS has it: the whole of it, each side of AND and OR and
what NOT negates is a comparison, BETWEEN, IN, LIKE, IS NULL, TRUE, FALSE or NULL, or an
identifier (a property that may hold a boolean: `flag`, `flag AND n = 1`, as ActiveMQ
and Artemis take it; `+flag` too: a unary plus is no operation in their grammars, while
`-flag` negates, which is arithmetic). In any of those places a number, a string,
arithmetic (`a + 1`, `-a`) or a header or properties field that is never a boolean
(`JMSPriority`, `properties.subject`) is a `SelectorError` naming its position, as those
brokers refuse it ("will not result in a boolean value"), rather than a selector that
selects nothing.

Keywords are case-insensitive (their ASCII letters); identifiers are not. Identifiers
are Java identifiers, as JMS has them: a letter of any script, `$` or `_` first, then
those, digits and combining marks (`prénom`, `$total`); dots may join names (`a.b`). An
identifier names an application property, or a header / properties field: the JMS names
(`JMSMessageID`, `JMSCorrelationID`, `JMSPriority`, `JMSTimestamp`, `JMSExpiration`,
`JMSDeliveryMode`, `JMSType`, `JMSReplyTo`, `JMSDestination`, `JMSXUserID`,
`JMSXGroupID`, `JMSXGroupSeq`) or the AMQP names with a section prefix
(`header.priority`, `properties.subject`, `properties.message-id`): the name after
`header.` or `properties.` is one of that section's AMQP fields, the longest there (they
hold dashes: `properties.reply-to-group-id`), and a `-` after it is a minus
(`header.priority-1`, as `weight-1`); any other name there, or a known one with a name
joined by a `-` after it (`properties.reply-to-grp`; `properties.reply-to - grp` is
subtraction), is a `SelectorError` naming the section's fields. Comparisons follow SQL's three-valued logic: anything compared
with a missing value is unknown, and only a selector that is true selects; as JMS has
it, values of different kinds compare false, and strings and booleans compare only for
equality (`<` and the like are false for them). `compile_selector` raises
`SelectorError` (with the position) on bad syntax.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from difflib import get_close_matches
from typing import Any

from amqpcli.errors import Exit, UserError, cut_middle

__all__ = ["Fields", "Selector", "SelectorError", "compile_selector"]

# A message as the selector sees it: name -> value (None when absent).
Fields = Callable[[str], Any]
_Fn = Callable[[Fields], Any]
# A parsed expression and what kind of value it makes, as far as its syntax tells:
# "condition" (true, false or unknown), "identifier" (a property: may be a boolean),
# else one of _NOT_CONDITION's.
_Node = tuple[_Fn, str]
_CONDITION, _IDENTIFIER = "condition", "identifier"
_NOT_CONDITION = {"number": "a number", "string": "a string",
                  "arithmetic": "an arithmetic expression",
                  "field": "a field that is never a boolean"}


class SelectorError(ValueError):
    """A selector that does not parse; the message says where."""


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*')
      | (?P<number>0[xX][0-9a-fA-F]+[lL]?|(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?[lLfFdD]?)
      | (?P<op><>|<=|>=|!=|[=<>+\-*/(),])
    )""",
    re.VERBOSE,
)
# Java identifiers (Character.isJavaIdentifierStart / isJavaIdentifierPart), by Unicode
# category: letters of any script, letter numbers, currency symbols ($) and connector
# punctuation (_) begin one; digits, combining marks and format characters may follow.
_IDENT_START = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"))
_IDENT_PART = _IDENT_START | {"Nd", "Mn", "Mc", "Cf"}


def _ident_end(text: str, pos: int) -> int:
    """Where the identifier that starts at `pos` ends (`pos`: none starts there). A dot
    may join names (`a.b`, as property names have them)."""
    if pos >= len(text) or unicodedata.category(text[pos]) not in _IDENT_START:
        return pos
    end = pos + 1
    while end < len(text) and (text[end] == "." or unicodedata.category(text[end])
                               in _IDENT_PART):
        end += 1
    return end
_KEYWORDS = {"AND", "OR", "NOT", "BETWEEN", "IN", "LIKE", "ESCAPE", "IS", "NULL", "TRUE",
             "FALSE"}


class _Tok:
    __slots__ = ("kind", "pos", "text", "value")

    def __init__(self, kind: str, text: str, value: Any, pos: int) -> None:
        self.kind = kind  # string, number, ident, kw, op, end
        self.text = text
        self.value = value
        self.pos = pos


def _field_end(text: str, pos: int) -> int | None:
    """Where the header or properties field named at `pos` (`header.priority`,
    `properties.reply-to`) ends; None if neither section's prefix is there. Its AMQP name
    may hold dashes, so the name is the longest known one there (a `-` and a number
    after it is a minus: `header.priority-1`); an unknown name, or a known one with
    `-name` after it (`properties.reply-to-grp`), is a SelectorError naming the known
    ones."""
    for section, fields in (("header", _HEADER), ("properties", _PROPERTIES)):
        start = pos + len(section) + 1
        if text.startswith(section + ".", pos):
            break
    else:
        return None
    glued = ""  # a known name with `-name` after it: a typo far likelier than a minus
    for name in sorted(fields, key=len, reverse=True):
        end = start + len(name)
        if text.startswith(name, start) and (end == len(text) or (
                text[end] != "." and unicodedata.category(text[end]) not in _IDENT_PART)):
            after = _ident_end(text, end + 1) if text.startswith("-", end) else end
            if after == end or after == end + 1:
                return end
            glued = f"for a subtraction write '{text[pos:end]} - {text[end + 1:after]}'; "
            break
    end = start
    while end < len(text) and (text[end] in "-." or unicodedata.category(text[end])
                               in _IDENT_PART):
        end += 1
    near = get_close_matches(text[start:end], fields, n=1)
    hint = f"did you mean '{section}.{near[0]}'? " if near else ""
    hint += glued
    raise SelectorError(f"unknown {section} field {cut_middle(repr(text[pos:end]))} at position {pos + 1} "
                        f"({hint}{section} fields: {', '.join(fields)})")


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    end = len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            ident = _field_end(text, pos) or _ident_end(text, pos)
            if ident == pos:
                raise SelectorError(f"unexpected {text[pos]!r} at position {pos + 1}")
            tok = text[pos:ident]
            if tok.isascii() and tok.upper() in _KEYWORDS:
                out.append(_Tok("kw", tok.upper(), None, pos))
            else:
                out.append(_Tok("ident", tok, tok, pos))
            pos = ident
            continue
        start = m.start(m.lastgroup or 0)
        kind = m.lastgroup or "op"
        tok = m.group(kind)
        if kind == "string":
            out.append(_Tok("string", tok, tok[1:-1].replace("''", "'"), start))
        elif kind == "number":
            out.append(_Tok("number", tok, _number(tok, start), start))
        else:
            out.append(_Tok(kind, tok, tok, start))
        pos = m.end()
    out.append(_Tok("end", "end of selector", None, end))
    return out


def _number(tok: str, pos: int) -> int | float:
    """A number's value, as Java reads the literal: an int (exact: decimal, hex or octal,
    an `L` after it) or a float (approximate: a decimal point, an exponent or `D`/`F`
    after it)."""
    if tok[:2] in ("0x", "0X"):
        return int(tok.rstrip("lL"), 16)
    suffix = tok[-1] if tok[-1] in "lLfFdD" else ""
    body = tok[:-1] if suffix else tok
    exact = body.isdigit()
    if suffix in ("l", "L"):
        if not exact:
            raise SelectorError(f"not a number: {cut_middle(repr(tok))} at position {pos + 1} ({suffix} ends "
                                "an integer, without a decimal point or an exponent)")
        return _integer(body, tok, pos)
    return _integer(body, tok, pos) if exact and not suffix else float(body)


def _integer(digits: str, tok: str, pos: int) -> int:
    """Java reads an integer with a leading 0 as octal (brokers' selector grammars too)."""
    if len(digits) > 1 and digits[0] == "0":
        if digits.strip("01234567"):
            raise SelectorError(f"not a number: {cut_middle(repr(tok))} at position {pos + 1} (an integer "
                                "that starts with 0 is octal, as in Java: digits 0 to 7)")
        return int(digits, 8)
    return int(digits)


# --- evaluation helpers (None is SQL's unknown) ---------------------------------------

def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _comparable(a: Any, b: Any) -> bool:
    if _is_num(a) and _is_num(b):
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return isinstance(a, str) and isinstance(b, str)


_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


# How deep a selector may nest: parentheses, NOT and a sign (`-`, `+`) each take a level.
# Far beyond any real selector, and within Python's recursion limit (the parser descends
# through eight functions for each parenthesis): deeper is a SelectorError, not a
# RecursionError.
MAX_NESTING = 100


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def _deeper(self, pos: int) -> None:
        """One level more of nesting, at the token at `pos`; too many is a SelectorError
        (`_shallower` undoes it)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise SelectorError(f"selector nested too deeply (more than {MAX_NESTING} levels) "
                                f"at position {self.toks[pos].pos + 1}")

    def _shallower(self) -> None:
        self.depth -= 1

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def _err(self, what: str) -> SelectorError:
        t = self.tok
        return SelectorError(f"expected {what} at position {t.pos + 1}, found {cut_middle(repr(t.text))}")

    def _kw(self, word: str) -> bool:
        if self.tok.kind == "kw" and self.tok.text == word:
            self.i += 1
            return True
        return False

    def _op(self, op: str) -> bool:
        if self.tok.kind == "op" and self.tok.text == op:
            self.i += 1
            return True
        return False

    def _at_kw(self, word: str) -> bool:
        return self.tok.kind == "kw" and self.tok.text == word

    def _condition(self, node: _Node, start: int) -> _Fn:
        """`node`, parsed from token `start` up to here, as a condition: one that is none
        whatever the message holds (a number, a string, arithmetic) is a SelectorError."""
        fn, kind = node
        if kind in (_CONDITION, _IDENTIFIER):
            return fn
        first, last = self.toks[start], self.toks[self.i - 1]
        text = self.text[first.pos:last.pos + len(last.text)]
        raise SelectorError(
            f"expected a condition at position {first.pos + 1}, "
            f"found {cut_middle(repr(text))}, "
            f"{_NOT_CONDITION[kind]} (a condition is a comparison, BETWEEN, IN, LIKE, IS NULL, "
            "TRUE, FALSE or a property holding a boolean)")

    def parse(self) -> _Fn:
        node = self.expr()
        if self.tok.kind != "end":
            raise self._err("AND, OR or the end")
        return self._condition(node, 0)

    def expr(self) -> _Node:
        start = self.i
        first = self.conj()
        if not self._at_kw("OR"):
            return first
        parts = [self._condition(first, start)]
        while self._kw("OR"):
            start = self.i
            parts.append(self._condition(self.conj(), start))

        def _or(f: Fields) -> Any:
            unknown = False
            for p in parts:
                v = p(f)
                if v is True:
                    return True
                if v is not False:
                    unknown = True
            return None if unknown else False
        return _or, _CONDITION

    def conj(self) -> _Node:
        start = self.i
        first = self.neg()
        if not self._at_kw("AND"):
            return first
        parts = [self._condition(first, start)]
        while self._kw("AND"):
            start = self.i
            parts.append(self._condition(self.neg(), start))

        def _and(f: Fields) -> Any:
            unknown = False
            for p in parts:
                v = p(f)
                if v is False:
                    return False
                if v is not True:
                    unknown = True
            return None if unknown else True
        return _and, _CONDITION

    def neg(self) -> _Node:
        if self._kw("NOT"):
            start = self.i
            self._deeper(start - 1)
            inner = self._condition(self.neg(), start)
            self._shallower()

            def _not(f: Fields) -> Any:
                v = inner(f)
                return None if v is None or not isinstance(v, bool) else not v
            return _not, _CONDITION
        return self.predicate()

    def predicate(self) -> _Node:
        node = self.sum()
        left = node[0]
        t = self.tok
        if t.kind == "op" and t.text in _CMP:
            self.i += 1
            right = self.sum()[0]
            cmp = _CMP[t.text]

            ordering = t.text not in ("=", "<>", "!=")

            def _cmp(f: Fields) -> Any:
                a, b = left(f), right(f)
                if a is None or b is None:
                    return None
                # JMS: values of different types compare false, and strings and booleans
                # only for equality (an ordering of them is false)
                if not _comparable(a, b) or (ordering and not _is_num(a)):
                    return False
                return cmp(a, b)
            return _cmp, _CONDITION
        if self._kw("IS"):
            negate = self._kw("NOT")
            if not self._kw("NULL"):
                raise self._err("NULL")
            return ((lambda f: left(f) is not None) if negate else (lambda f: left(f) is None),
                    _CONDITION)
        negate = self._kw("NOT")
        if self._kw("BETWEEN"):
            lo = self.sum()[0]
            if not self._kw("AND"):
                raise self._err("AND")
            hi = self.sum()[0]

            def _between(f: Fields) -> Any:
                v, a, b = left(f), lo(f), hi(f)
                if not (_is_num(v) and _is_num(a) and _is_num(b)):
                    return None
                return (a <= v <= b) != negate
            return _between, _CONDITION
        if self._kw("IN"):
            if not self._op("("):
                raise self._err("(")
            values = [self.literal()]
            while self._op(","):
                values.append(self.literal())
            if not self._op(")"):
                raise self._err(") or ,")

            def _in(f: Fields) -> Any:
                v = left(f)
                if v is None:
                    return None
                return any(_comparable(v, x) and v == x for x in values) != negate
            return _in, _CONDITION
        if self._kw("LIKE"):
            if self.tok.kind != "string":
                raise self._err("a quoted pattern")
            pattern = self.tok.value
            self.i += 1
            escape = None
            if self._kw("ESCAPE"):
                if self.tok.kind != "string" or len(self.tok.value) != 1:
                    raise self._err("one quoted escape character")
                escape = self.tok.value
                self.i += 1
            rx = _like_regex(pattern, escape)

            def _like(f: Fields) -> Any:
                v = left(f)
                if not isinstance(v, str):
                    return None
                return (rx.fullmatch(v) is not None) != negate
            return _like, _CONDITION
        if negate:
            raise self._err("BETWEEN, IN or LIKE after NOT")
        return node

    def sum(self) -> _Node:
        node = self.product()
        rest: list[tuple[str, _Fn]] = []
        while self.tok.kind == "op" and self.tok.text in "+-":
            op = self.tok.text
            self.i += 1
            rest.append((op, self.product()[0]))
        return (_arith(node[0], rest), "arithmetic") if rest else node

    def product(self) -> _Node:
        node = self.unary()
        rest: list[tuple[str, _Fn]] = []
        while self.tok.kind == "op" and self.tok.text in "*/":
            op = self.tok.text
            self.i += 1
            rest.append((op, self.unary()[0]))
        return (_arith(node[0], rest), "arithmetic") if rest else node

    def unary(self) -> _Node:
        if self._op("-"):
            self._deeper(self.i - 1)
            inner, kind = self.unary()
            self._shallower()
            return ((lambda f: -v if _is_num(v := inner(f)) else None),
                    "number" if kind == "number" else "arithmetic")
        if self._op("+"):
            self._deeper(self.i - 1)
            node = self.unary()
            self._shallower()
            return node
        return self.primary()

    def primary(self) -> _Node:
        t = self.tok
        if self._op("("):
            self._deeper(self.i - 1)
            node = self.expr()
            if not self._op(")"):
                raise self._err(")")
            self._shallower()
            return node
        if t.kind == "ident":
            self.i += 1
            name = t.value
            return (lambda f: f(name)), "field" if name in _NOT_BOOLEAN else _IDENTIFIER
        kind = t.kind if t.kind in ("number", "string") else _CONDITION  # (TRUE, FALSE, NULL)
        value = self.literal()
        return (lambda f: value), kind

    def literal(self) -> Any:
        t = self.tok
        if t.kind in ("string", "number"):
            self.i += 1
            return t.value
        if t.kind == "op" and t.text == "-" and self.toks[self.i + 1].kind == "number":
            self.i += 2
            return -self.toks[self.i - 1].value
        if t.kind == "kw" and t.text in ("TRUE", "FALSE", "NULL"):
            self.i += 1
            return {"TRUE": True, "FALSE": False, "NULL": None}[t.text]
        raise self._err("a value")


def _arith(first: _Fn, rest: list[tuple[str, _Fn]]) -> _Fn:
    """`first` then each (operator, operand) of `rest`, left to right (`a - b - c` is
    `(a - b) - c`), in one function: a long chain (`a + a + … + a`) is evaluated in a
    loop, not by a function per operator nested as deep as the chain is long."""
    def fn(f: Fields) -> Any:
        x = first(f)
        for op, b in rest:
            x = _apply(op, x, b(f))
        return x
    return fn


def _apply(op: str, x: Any, y: Any) -> Any:
    if not (_is_num(x) and _is_num(y)):
        return None
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if y == 0:
        return None
    return x / y if isinstance(x, float) or isinstance(y, float) else _int_div(x, y)


def _int_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)  # Java's integer division truncates toward zero
    return q if (x >= 0) == (y >= 0) else -q


class Selector:
    """A compiled selector: `matches(fields)` is True only when the selector is true."""

    __slots__ = ("_fn", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._fn = _Parser(text).parse()

    def matches(self, fields: Fields) -> bool:
        return self._fn(fields) is True

    def __repr__(self) -> str:
        return f"Selector({self.text!r})"


def compile_selector(text: str) -> Selector:
    """Parse `text`; `SelectorError` says what is wrong and where."""
    if not text.strip():
        raise SelectorError("empty selector")
    return Selector(text)


def selector_option(text: str | None) -> Selector | None:
    """A `--selector` given on the command line (pcap-dump's, and recv's and browse's,
    checked before connecting), compiled; one that does not parse, or an empty one, is a
    usage error saying what is wrong and where. None is no selector."""
    if text is None:
        return None
    try:
        return compile_selector(text)
    except SelectorError as e:
        raise UserError(f"--selector: {e}", Exit.USAGE) from None


# --- what a message offers a selector -------------------------------------------------

_HEADER_DEFAULTS = {"durable": False, "priority": 4, "first-acquirer": False,
                    "delivery-count": 0}
_HEADER = ("durable", "priority", "ttl", "first-acquirer", "delivery-count")
_PROPERTIES = ("message-id", "user-id", "to", "subject", "reply-to", "correlation-id",
               "content-type", "content-encoding", "absolute-expiry-time", "creation-time",
               "group-id", "group-sequence", "reply-to-group-id")
_JMS: dict[str, tuple[str, str]] = {
    "JMSMessageID": ("properties", "message-id"),
    "JMSCorrelationID": ("properties", "correlation-id"),
    "JMSPriority": ("header", "priority"),
    "JMSTimestamp": ("properties", "creation-time"),
    "JMSExpiration": ("properties", "absolute-expiry-time"),
    "JMSType": ("properties", "subject"),
    "JMSReplyTo": ("properties", "reply-to"),
    "JMSDestination": ("properties", "to"),
    "JMSXUserID": ("properties", "user-id"),
    "JMSXGroupID": ("properties", "group-id"),
    "JMSXGroupSeq": ("properties", "group-sequence"),
}


# The names of fields that never hold a boolean: a selector of one of them alone is no
# condition (header.durable and header.first-acquirer are booleans; any other name is an
# application property's, which may be one).
_NOT_BOOLEAN = frozenset((*_JMS, "JMSDeliveryMode", "header.priority", "header.ttl",
                          "header.delivery-count", *(f"properties.{p}" for p in _PROPERTIES)))


def _plain(v: Any) -> Any:
    """A value as the selector compares it: numbers, strings, booleans, or None."""
    if isinstance(v, str):
        # a symbol (content-type, a symbol property) compares as its text: Symbol's own
        # equality keeps it apart from a str, as a map key must be
        return str(v) if type(v) is not str else v
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        try:
            return bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def message_fields(message: Any) -> Fields:
    """The selector's view of a codec `Message` (sections decoded on first use)."""
    cache: dict[str, Any] = {}

    def section(name: str, field: str) -> Any:
        sec = getattr(message, name, None)
        v = sec.get(field) if sec is not None else None
        if v is None and name == "header":
            v = _HEADER_DEFAULTS.get(field)  # Part 3 §3.2.1: an absent header has defaults
        return v

    def lookup(name: str) -> Any:
        if name in cache:
            return cache[name]
        if name in _JMS:
            sec, fld = _JMS[name]
            v = _plain(section(sec, fld))
            if v is None and name == "JMSExpiration":
                v = 0  # JMS: no expiry reads 0

        elif name == "JMSDeliveryMode":
            v = "PERSISTENT" if section("header", "durable") else "NON_PERSISTENT"
        elif name.startswith("header.") and name[7:] in _HEADER:
            v = _plain(section("header", name[7:]))
        elif name.startswith("properties.") and name[11:] in _PROPERTIES:
            v = _plain(section("properties", name[11:]))
        else:
            props = _app_properties(message)
            v = _plain(props.get(name)) if props is not None else None
        cache[name] = v
        return v
    return lookup


def _app_properties(message: Any) -> Mapping[Any, Any] | None:
    ap = getattr(message, "application_properties", None)
    if ap is None:
        return None
    value = getattr(ap, "value", ap)
    return value if isinstance(value, Mapping) else None
