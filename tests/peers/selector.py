"""JMS message selectors (the ``apache.org:selector-filter:string`` filter), a useful subset.

Grammar (case-insensitive keywords)::

    expr       := or
    or         := and ("OR" and)*
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
    literal    := 'string' ('' escapes a quote) | integer | decimal | TRUE | FALSE

Identifiers name application properties, except:
``JMSMessageID``, ``JMSCorrelationID``, ``JMSPriority``, ``JMSDeliveryMode``
('PERSISTENT' / 'NON_PERSISTENT'), ``JMSTimestamp`` (creation-time), ``JMSType`` (subject),
``JMSExpiration`` (absolute-expiry-time), and ``header.FIELD`` / ``properties.FIELD`` for any
header or properties field by its spec name with ``_`` for ``-`` (``properties.reply_to``).

Evaluation uses SQL's three-valued logic: a missing property is NULL (unknown), a comparison
with NULL or between unlike types is unknown, and a message is selected only if the
whole expression is TRUE. Anything outside this grammar is a ``SelectorError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proton import Message


class SelectorError(ValueError):
    pass


# --- tokens -------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*')
      | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[lLfFdD]?)
      | (?P<ident>[A-Za-z_$][A-Za-z0-9_$.]*)
      | (?P<op><>|<=|>=|=|<|>|\(|\)|,|\+|-|\*|/)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"AND", "OR", "NOT", "BETWEEN", "IN", "LIKE", "ESCAPE", "IS", "NULL", "TRUE", "FALSE"}


@dataclass(frozen=True)
class _Tok:
    kind: str  # string, number, ident, keyword, op, end
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SelectorError(f"unexpected character at {pos}: {text[pos:pos + 10]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        start = m.start(kind)
        if kind == "ident" and value.upper() in _KEYWORDS:
            toks.append(_Tok("keyword", value.upper(), start))
        else:
            toks.append(_Tok(kind, value, start))
        pos = m.end()
    toks.append(_Tok("end", "", len(text)))
    return toks


# --- values ---------------------------------------------------------------------------------

Value = Any  # None (NULL), bool, int, float, str
Expr = Callable[[Message], Value]

_HEADER_GETTERS: dict[str, Callable[[Message], Value]] = {
    "durable": lambda m: bool(m.durable),
    "priority": lambda m: int(m.priority),
    "ttl": lambda m: int(m.ttl * 1000) if m.ttl else None,
    "first_acquirer": lambda m: bool(m.first_acquirer),
    "delivery_count": lambda m: int(m.delivery_count),
}
_PROPERTIES_GETTERS: dict[str, Callable[[Message], Value]] = {
    "message_id": lambda m: m.id,
    "user_id": lambda m: bytes(m.user_id).decode("utf-8", "replace") if m.user_id else None,
    "to": lambda m: m.address,
    "subject": lambda m: m.subject,
    "reply_to": lambda m: m.reply_to,
    "correlation_id": lambda m: m.correlation_id,
    "content_type": lambda m: m.content_type,
    "content_encoding": lambda m: m.content_encoding,
    "absolute_expiry_time": lambda m: int(m.expiry_time * 1000) if m.expiry_time else None,
    "creation_time": lambda m: int(m.creation_time * 1000) if m.creation_time else None,
    "group_id": lambda m: m.group_id,
    "group_sequence": lambda m: int(m.group_sequence) if m.group_id else None,
    "reply_to_group_id": lambda m: m.reply_to_group_id,
}
_JMS_GETTERS: dict[str, Callable[[Message], Value]] = {
    "JMSMessageID": _PROPERTIES_GETTERS["message_id"],
    "JMSCorrelationID": _PROPERTIES_GETTERS["correlation_id"],
    "JMSPriority": _HEADER_GETTERS["priority"],
    "JMSDeliveryMode": lambda m: "PERSISTENT" if m.durable else "NON_PERSISTENT",
    "JMSTimestamp": _PROPERTIES_GETTERS["creation_time"],
    "JMSType": _PROPERTIES_GETTERS["subject"],
    "JMSExpiration": _PROPERTIES_GETTERS["absolute_expiry_time"],
}


def _normalise(value: Any) -> Value:
    """Map an AMQP value onto the selector's types; anything else is NULL-like unknown."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float | str):
        # proton's ulong/uint/symbol/char are subclasses: compare them as plain values.
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        return str(value)
    return _Opaque(value)


@dataclass(frozen=True)
class _Opaque:
    """A value of a type selectors cannot compare (binary, uuid, list...): never equal."""

    value: Any


def _identifier(name: str) -> Expr:
    if name in _JMS_GETTERS:
        getter = _JMS_GETTERS[name]
        return lambda m: _normalise(getter(m))
    for prefix, table in (("header.", _HEADER_GETTERS), ("properties.", _PROPERTIES_GETTERS)):
        if name.startswith(prefix):
            field = name[len(prefix) :]
            if field not in table:
                raise SelectorError(f"unknown {prefix[:-1]} field {field!r}")
            getter = table[field]
            return lambda m: _normalise(getter(m))

    def app_prop(m: Message) -> Value:
        props: dict[Any, Any] = m.properties or {}
        return _normalise(props.get(name))

    return app_prop


def _numeric(v: Value) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _compare(op: str, a: Value, b: Value) -> bool | None:
    if a is None or b is None or isinstance(a, _Opaque) or isinstance(b, _Opaque):
        return None
    if _numeric(a) and _numeric(b):
        pass
    elif type(a) is not type(b):
        return None  # unlike types: unknown
    elif isinstance(a, bool) and op not in ("=", "<>"):
        return None
    if op == "=":
        return bool(a == b)
    if op == "<>":
        return bool(a != b)
    if isinstance(a, str) and op not in ("=", "<>"):
        return None  # JMS: strings compare only for (in)equality
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _not(v: bool | None) -> bool | None:
    return None if v is None else not v


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _truth(v: Value) -> bool | None:
    return v if isinstance(v, bool) else None


def _logical(
    op: Callable[[bool | None, bool | None], bool | None], left: Expr, right: Expr
) -> Expr:
    return lambda m: op(_truth(left(m)), _truth(right(m)))


def _like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape:
            i += 1
            if i >= len(pattern):
                raise SelectorError("LIKE pattern ends with its escape character")
            out.append(re.escape(pattern[i]))
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


# --- parser ---------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, kind: str, text: str | None = None) -> bool:
        t = self.tok
        return t.kind == kind and (text is None or t.text == text)

    def accept(self, kind: str, text: str | None = None) -> bool:
        if self.at(kind, text):
            self.i += 1
            return True
        return False

    def expect(self, kind: str, text: str | None = None) -> _Tok:
        if not self.at(kind, text):
            want = text or kind
            t = self.tok
            found = t.text or "end of selector"
            raise SelectorError(f"expected {want} at {t.pos}, found {found!r}")
        return self.take()

    def parse(self) -> Expr:
        if self.at("end"):
            raise SelectorError("empty selector")
        e = self.or_()
        self.expect("end")
        return e

    def or_(self) -> Expr:
        left = self.and_()
        while self.accept("keyword", "OR"):
            right = self.and_()
            left = _logical(_or, left, right)
        return left

    def and_(self) -> Expr:
        left = self.not_()
        while self.accept("keyword", "AND"):
            right = self.not_()
            left = _logical(_and, left, right)
        return left

    def not_(self) -> Expr:
        if self.accept("keyword", "NOT"):
            inner = self.not_()
            return lambda m: _not(_truth(inner(m)))
        return self.predicate()

    def predicate(self) -> Expr:
        left = self.sum_()
        t = self.tok
        if t.kind == "op" and t.text in ("=", "<>", "<", "<=", ">", ">="):
            self.take()
            right = self.sum_()
            op = t.text
            return lambda m: _compare(op, left(m), right(m))
        if self.accept("keyword", "IS"):
            negate = self.accept("keyword", "NOT")
            self.expect("keyword", "NULL")
            return lambda m: (left(m) is not None) if negate else (left(m) is None)
        negate = self.accept("keyword", "NOT")
        if self.accept("keyword", "BETWEEN"):
            low = self.sum_()
            self.expect("keyword", "AND")
            high = self.sum_()

            def between(m: Message) -> bool | None:
                v = left(m)
                r = _and(_compare(">=", v, low(m)), _compare("<=", v, high(m)))
                return _not(r) if negate else r

            return between
        if self.accept("keyword", "IN"):
            self.expect("op", "(")
            items = [self.literal()]
            while self.accept("op", ","):
                items.append(self.literal())
            self.expect("op", ")")

            def in_(m: Message) -> bool | None:
                v = left(m)
                if v is None:
                    return None
                if not isinstance(v, str):
                    return None  # JMS: IN applies to strings
                r = v in items
                return not r if negate else r

            return in_
        if self.accept("keyword", "LIKE"):
            pattern = self.string()
            escape = None
            if self.accept("keyword", "ESCAPE"):
                escape = self.string()
                if len(escape) != 1:
                    raise SelectorError("ESCAPE takes one character")
            rx = _like_regex(pattern, escape)

            def like(m: Message) -> bool | None:
                v = left(m)
                if not isinstance(v, str):
                    return None
                r = rx.fullmatch(v) is not None
                return not r if negate else r

            return like
        if negate:
            raise SelectorError(f"expected BETWEEN, IN or LIKE after NOT at {self.tok.pos}")
        return left

    def sum_(self) -> Expr:
        left = self.product()
        while self.at("op", "+") or self.at("op", "-"):
            op = self.take().text
            right = self.product()
            left = _arith(op, left, right)
        return left

    def product(self) -> Expr:
        left = self.unary()
        while self.at("op", "*") or self.at("op", "/"):
            op = self.take().text
            right = self.unary()
            left = _arith(op, left, right)
        return left

    def unary(self) -> Expr:
        if self.accept("op", "-"):
            inner = self.unary()
            return lambda m: -v if _numeric(v := inner(m)) else None
        if self.accept("op", "+"):
            inner = self.unary()
            return lambda m: v if _numeric(v := inner(m)) else None
        return self.primary()

    def primary(self) -> Expr:
        t = self.tok
        if self.accept("op", "("):
            e = self.or_()
            self.expect("op", ")")
            return e
        if t.kind == "ident":
            self.take()
            return _identifier(t.text)
        value = self.literal()
        return lambda m: value

    def literal(self) -> Value:
        t = self.take()
        if t.kind == "string":
            return t.text[1:-1].replace("''", "'")
        if t.kind == "number":
            text = t.text.rstrip("lLfFdD")
            if re.fullmatch(r"\d+", text):
                return int(text)
            return float(text)
        if t.kind == "keyword" and t.text in ("TRUE", "FALSE"):
            return t.text == "TRUE"
        raise SelectorError(f"expected a literal at {t.pos}, found {t.text or 'end of selector'!r}")

    def string(self) -> str:
        t = self.expect("string")
        return t.text[1:-1].replace("''", "'")


def _arith(op: str, left: Expr, right: Expr) -> Expr:
    def run(m: Message) -> Value:
        a, b = left(m), right(m)
        if not (_numeric(a) and _numeric(b)):
            return None
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            return None
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        q = abs(a) // abs(b)  # Java's integer division truncates toward zero
        return q if (a >= 0) == (b >= 0) else -q

    return run


@dataclass(frozen=True)
class Selector:
    text: str
    _expr: Expr

    def matches(self, message: Message) -> bool:
        return self._expr(message) is True


def parse(text: str) -> Selector:
    """Compile ``text``; ``SelectorError`` says where it went wrong."""
    return Selector(text, _Parser(text).parse())
