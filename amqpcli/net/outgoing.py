"""Messages to send: a template built from options, and where bodies come from.

`MessageTemplate.encode(n, body)` gives the bytes of message number `n` (1-based): header,
annotations, properties, application-properties, body sections, footer, each encoded by
the codec. A `PerMessage` value (in any section) is made for each message from text the
user typed with placeholders in it (`expand`: ``{n}`` the message's number, ``{n%K}`` it
modulo K, ``{uuid}`` a fresh UUID, ``{{n}}`` and ``{{uuid}}`` the literal text); every other value is the same in
every message, and the sections holding only such values are encoded once. Bodies are `bytes` (a `data` section), any AMQP value (an
`amqp-value` section; a map for body type `map`) or a list (an `amqp-sequence` section), as
`body_type` says.

Every value is checked when the template is made (the body: by `check_body`, or when it is
first encoded): one the codec cannot encode (a number out of its type's range, a char of
two characters), a message-id or correlation-id of a type AMQP does not allow, a map, list
or array in application-properties is a usage error naming the option that gave it and the
value, never an encoder error in the middle of a run. When the run's length is known,
`check_run` checks the values made for each message too, and the error names the first
message whose value fails (`check_numbers`). An error of a value made for each message
names the message it was made for (`message 1: --property 'k': bad int value 'x1'`), the
first one's too; an error of a value that is the same in every message names the option
alone.
"""

from __future__ import annotations

import functools
import math
import os
import re
import select
import struct
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from amqpcli.codec import composites as c
from amqpcli.codec.encode import PYTHON_TYPE_NAMES, encode
from amqpcli.codec.sections import BODY_TYPES as SECTION_TYPES
from amqpcli.codec.types import (
    AmqpList,
    AmqpMap,
    Array,
    Char,
    Composite,
    Described,
    Float,
    Long,
    Symbol,
    ULong,
)
from amqpcli.errors import Exit, UserError

__all__ = ["BODY_TYPES", "MAX_BODY", "TIMESTAMP_KEY", "MessageTemplate", "OutgoingMessage",
           "PerMessage", "TooLarge", "check_placeholders", "expand", "has_placeholder", "read_line_bodies",
           "read_lines", "read_whole", "read_without_waiting", "sized_body", "stamp_bytes", "stamped",
           "with_application_property"]

PROPERTY_FIELDS = tuple(f.name.replace("-", "_") for f in c.Properties.FIELDS)
HEADER_FIELDS = tuple(f.name.replace("-", "_") for f in c.Header.FIELDS)


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One message ready for the wire: its number, its encoded bytes and its message-id.

    `stamp_at`: where in `payload` the 8 bytes of its send-time stamp are (`send
    --timestamp`: the value of the application property `TIMESTAMP_KEY`, a long), filled
    in by `stamped` as the message goes out; -1 for a message without one.
    `message_format`: its transfer's message-format (a replayed message keeps the one it
    came with)."""

    number: int
    payload: bytes
    message_id: Any = None
    stamp_at: int = -1
    message_format: int = 0


# send --timestamp: the application property each message carries, a long holding the
# nanoseconds since the Unix epoch (UTC) when it went out, as qpid-send's --timestamp has it.
TIMESTAMP_KEY = "ts"
# What the stamp holds until it is filled in: any long outside -128..127 is encoded in its
# 8-byte form (0x81), so the stamp takes the same bytes whatever its value.
_UNSTAMPED = Long(-1 << 63)
_pack_stamp = struct.Struct(">q").pack


def stamp_bytes(ns: int) -> bytes:
    """A stamp's 8 bytes: `ns` (nanoseconds since the epoch) as a long's value."""
    return _pack_stamp(ns)


def stamped(msg: OutgoingMessage, stamp: bytes) -> bytes:
    """`msg`'s bytes with its stamp (`stamp_bytes`) filled in; as they are without one."""
    at = msg.stamp_at
    if at < 0:
        return msg.payload
    p = msg.payload
    return p[:at] + stamp + p[at + 8:]


_NO_BODY = object()  # no body encoded yet

# How a body is given (send/request --body-type): as one of the body sections, or "map",
# an amqp-value section holding a map (given as a plain JSON object).
BODY_TYPES = (*SECTION_TYPES, "map")


# What braces a placeholder: {n}, {n%K}, {uuid}, and what looks like one meant and
# unknown (an error: `unknown_placeholder`): a name alone ({seq}, {N}) or n or uuid
# followed by more ({n+1}, {n % 3}, {uuid:8}). Doubled braces around any of them are the
# literal text ({{n}} is "{n}"); other braces are text (JSON, a GUID in braces).
_BRACED = r"(?:n|uuid)\b[^{}]*|[A-Za-z_]\w*"
_PLACEHOLDER = re.compile(rf"\{{\{{({_BRACED})\}}\}}|\{{({_BRACED})\}}")
_MODULO = re.compile(r"n%([1-9][0-9]{0,17})")
KNOWN_PLACEHOLDERS = "{n}, {n%K} (K a positive integer), {uuid}"


def _kind(name: str) -> str | int | None:
    """What a placeholder's name stands for: "n", "uuid", K for n%K; None if unknown."""
    if name in ("n", "uuid"):
        return name
    modulo = _MODULO.fullmatch(name)
    return int(modulo[1]) if modulo else None


def unknown_placeholder(text: str) -> str | None:
    """The first placeholder in `text` that is none of `KNOWN_PLACEHOLDERS` ("{seq}"), or
    None."""
    for m in _PLACEHOLDER.finditer(text):
        if m.group(2) is not None and _kind(m.group(2)) is None:
            return "{" + m.group(2) + "}"
    return None


def check_placeholders(text: str, what: str) -> None:
    """A usage error naming `what` for a placeholder in `text` that is not known."""
    bad = unknown_placeholder(text)
    if bad is not None:
        raise UserError(f"{what}: unknown placeholder {bad} (known: {KNOWN_PLACEHOLDERS}; "
                        f"{{{bad}}} is the text {bad})", Exit.USAGE)


def has_placeholder(text: str) -> bool:
    """Whether `text` holds ``{n}``, ``{n%K}`` or ``{uuid}`` (not counting the escaped
    ones)."""
    return any(m.group(2) is not None and _kind(m.group(2)) is not None
               for m in _PLACEHOLDER.finditer(text))


def moduli(text: str) -> tuple[bool, set[int]]:
    """Whether `text` holds ``{n}``, and the K of each ``{n%K}`` in it: how its value
    depends on the message number (`MessageTemplate.check_run`)."""
    counts = False
    ks: set[int] = set()
    for m in _PLACEHOLDER.finditer(text):
        kind = _kind(m.group(2)) if m.group(2) is not None else None
        if kind == "n":
            counts = True
        elif isinstance(kind, int):
            ks.add(kind)
    return counts, ks


def expand(text: str, n: int) -> str:
    """`text` for message number `n`: ``{n}`` the number, ``{n%K}`` the number modulo K
    (0 … K-1: groups and keys that cycle), ``{uuid}`` a fresh UUID (each one its own);
    a placeholder in doubled braces (``{{n}}``) its literal text (``{n}``). An unknown
    placeholder (`check_placeholders` refuses it first) is left as it is."""
    if "{" not in text:
        return text
    if "{{" not in text and "{n%" not in text:
        # (the common case, without the regular expression: per message)
        text = text.replace("{n}", str(n))
        while "{uuid}" in text:
            text = text.replace("{uuid}", str(uuid.uuid4()), 1)
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return "{" + m.group(1) + "}"
        kind = _kind(m.group(2))
        if kind == "n":
            return str(n)
        if kind == "uuid":
            return str(uuid.uuid4())
        return str(n % kind) if isinstance(kind, int) else m.group(0)

    return _PLACEHOLDER.sub(one, text)


@dataclass(frozen=True, slots=True)
class PerMessage:
    """A value made for each message: `make` (the option's own parsing, which raises a
    UserError naming it) applied to `text` with its placeholders expanded (`expand`)."""

    text: str
    make: Callable[[str], Any]

    def value(self, n: int) -> Any:
        try:
            return self.make(expand(self.text, n))
        except UserError as e:
            raise _numbered(e, n) from None


def _expand(value: Any, n: int) -> Any:
    return value.value(n) if value.__class__ is PerMessage else value


def _numbered(e: UserError, n: int) -> UserError:
    """`e`, an error of a value made for message `n` (`PerMessage`, an expanded body), as
    said of that message."""
    if str(e).startswith(f"message {n}: "):
        return e
    return UserError(f"message {n}: {e}", e.code)


# Every message number up to this one is checked before a run (`check_numbers`).
_CHECK_EACH = 999


def check_numbers(check: Callable[[int], None], last: int, period: int = 1) -> None:
    """`check(n)` (a UserError for a message number whose values are bad) for the message
    numbers 2 … `last`, so that the error raised, if any, is the first failing number's;
    cheap however long the run.

    A value made for each message depends on its number only through the digits that
    replace {n}: among numbers with as many digits as each other (1000 … 9999) its text
    keeps its length and every other character. What can go wrong with it is then either
    the same across such a stretch (a char or a uuid of the wrong length, hex with an odd
    number of digits, text that is no number) or a number past its type's range, and a
    number read from the text moves one way only across the stretch: `{n}`, `1{n}`,
    `{n}{n}`, `0x{n}`, `{n}000` grow with n, `-{n}` shrinks, `1e{n}` and `1e-{n}` move
    their exponent by a whole power of ten for each step (more than n's digits can move
    the rest). So the numbers of a stretch that pass are those from its first to some
    point: its first and its last are checked, and when the last fails a binary search
    finds the first that does. The few texts for which this does not hold fail for a
    number below 1000, and every number up to `_CHECK_EACH` is checked: a digit that a base
    does not have (`0o{n}` at 8, `0b{n}` at 2), a boolean (`{n}` is one only for 1), a
    date field (`2024-01-{n}` past 31).

    `period`: the values checked have {n%K} in them besides {n}, each K dividing `period`
    (their least common multiple). Across a stretch their text then keeps its other
    characters only among the numbers with one remainder modulo `period` (each n%K is
    the same for all of them): `{n%4}{n}` is 01000, 11001, 21002, 31003, 01004, … So the
    numbers of each remainder are a stretch of their own, checked as above, and the
    first failing number of them all is the error's."""
    for n in range(2, min(last, _CHECK_EACH) + 1):
        check(n)
    first = _CHECK_EACH + 1
    while first <= last:
        end = min(first * 10 - 1, last)
        failing = [bad for r in range(period)
                   if (bad := _first_failing(check, first + (r - first) % period, end,
                                             period)) is not None]
        if failing:
            check(min(failing))  # (raises its error)
        first = end + 1


def _first_failing(check: Callable[[int], None], first: int, last: int,
                   step: int) -> int | None:
    """The first of `first`, `first` + `step`, … up to `last` that fails `check`, when
    those that pass come before those that fail (`check_numbers`); None if none fails."""
    if first > last:
        return None
    steps = (last - first) // step
    if not _passes(check, first):
        return first
    if _passes(check, first + steps * step):
        return None
    good, bad = 0, steps
    while bad - good > 1:
        mid = (good + bad) // 2
        if _passes(check, first + mid * step):
            good = mid
        else:
            bad = mid
    return first + bad * step


# The most messages checked one by one for a value whose text has several {n%K} moduli
# (or {n} and {n%K} whose least common multiple is past `_CHECK_PERIOD`).
_CHECK_CYCLE = 100_000
# The largest least common multiple of the K of {n%K} beside {n} in one value whose
# remainders are checked each as a stretch of numbers (`check_numbers`): two checks per
# remainder and number of digits at least.
_CHECK_PERIOD = 1000


def _check_cycle(check: Callable[[int], None], ks: list[int], last: int) -> None:
    """`check(n)` for the message numbers 2 … `last` of values whose text has {n%K} for
    each K of `ks` and no {n} (see `MessageTemplate.check_run`)."""
    if len(ks) == 1:
        k = ks[0]
        check_numbers(check, min(last, k - 1))
        if k <= last:
            check(k)
        return
    for n in range(2, min(last, math.lcm(*ks), _CHECK_CYCLE) + 1):
        check(n)


@functools.lru_cache(maxsize=256)
def _text_dependence(text: str) -> tuple[bool, frozenset[int]]:
    counts, ks = moduli(text)
    return counts, frozenset(ks)


def _dependence(value: PerMessage) -> tuple[bool, frozenset[int]]:
    """How `value` depends on the message number: whether its text has {n}, and the K of
    each {n%K} in it."""
    return _text_dependence(value.text)


def _passes(check: Callable[[int], None], n: int) -> bool:
    try:
        check(n)
    except UserError:
        return False
    return True


# What the encoder raises for a value it has no bytes for: EncodeError (a ValueError) for
# ranges and types, OverflowError for a float beyond float32.
_UNENCODABLE = (ValueError, OverflowError)

# Section -> the option that fills it, for errors ("--property 'k'").
_MAP_OPTIONS = {"application_properties": "--property", "message_annotations": "--annotation",
                "delivery_annotations": "--delivery-annotation", "footer": "--footer"}


def _type_name(value: Any) -> str:
    if isinstance(value, Composite):
        return value.NAME
    return PYTHON_TYPE_NAMES.get(type(value)) or (
        "described" if isinstance(value, Described) else type(value).__name__)


def _parts(value: Any) -> list[Any]:
    """The values inside a compound value (none in a scalar)."""
    if isinstance(value, dict):
        return [x for kv in value.items() for x in kv]
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, Described):
        return [value.descriptor, value.value]
    if isinstance(value, Composite):
        return [value.value] if value.HAS_VALUE else list(type(value)._GET(value))  # type: ignore[attr-defined]
    return []


def _innermost_unencodable(value: Any) -> Any:
    """The innermost part of `value` that does not encode (`value` itself when every part
    inside it does)."""
    for x in _parts(value):
        try:
            encode(x)
        except _UNENCODABLE:
            return _innermost_unencodable(x)
    return value


def _why_unencodable(value: Any, e: Exception) -> str:
    bad = _innermost_unencodable(value)
    name = _type_name(bad)
    if isinstance(bad, Float):
        return f"{float(bad)!r} is out of range for float (32-bit: use double for larger numbers)"
    if isinstance(bad, int) and not isinstance(bad, bool):
        return f"{int(bad)} is out of range for {name}"
    if isinstance(bad, Char):  # (one character may still be no char: a surrogate)
        return f"{str(bad)!r} is not one character, as a char must be" if len(bad) != 1 else str(e)
    if isinstance(bad, str) and type(bad) is not Symbol:
        return f"{bad!r} is not valid Unicode text"
    return str(e)


def check_encodes(value: Any, what: str) -> bytes:
    """`value` encoded, or a usage error naming `what` and the part that has no encoding."""
    try:
        return encode(value)
    except _UNENCODABLE as e:
        raise UserError(f"{what}: {_why_unencodable(value, e)}", Exit.USAGE) from None


def _is_id(value: Any) -> bool:
    # message-id-ulong, -uuid, -binary, -string (Part 3 §3.2.11-14): no other type
    t = type(value)
    return (value is None or t is str or t is ULong or t is uuid.UUID
            or isinstance(value, (bytes, bytearray)))


def _is_compound(value: Any) -> bool:
    if isinstance(value, Described):
        return _is_compound(value.value)
    return isinstance(value, (dict, list, tuple, Array, AmqpList, AmqpMap, Composite))


def _check_id(value: Any, what: str) -> None:
    """A message-id or correlation-id: of a type AMQP allows for one, and encodable."""
    if not _is_id(value):
        raise UserError(f"{what}: an id of type {_type_name(value)} is not allowed: AMQP "
                        "allows ulong, uuid, binary or string", Exit.USAGE)
    check_encodes(value, what)


def _check_application_property(value: Any, what: str) -> None:
    """An application property's value: a simple one (Part 3 §3.2.5), and encodable."""
    if _is_compound(value):
        raise UserError(f"{what}: a value of type {_type_name(value)} is not allowed: "
                        "application-properties hold only simple values (no map, list or "
                        "array)", Exit.USAGE)
    check_encodes(value, what)


@dataclass
class MessageTemplate:
    """Everything about a message except its body, as the options gave it."""

    body_type: str = "data"
    header: dict[str, Any] = field(default_factory=dict)
    delivery_annotations: dict[Any, Any] = field(default_factory=dict)
    message_annotations: dict[Any, Any] = field(default_factory=dict)
    properties: dict[str, Any] = field(default_factory=dict)
    application_properties: dict[str, Any] = field(default_factory=dict)
    footer: dict[Any, Any] = field(default_factory=dict)
    # send --timestamp: the application property that holds each message's send-time
    # stamp (`TIMESTAMP_KEY`), added last to the section so that its 8 bytes are the last
    # before the body, filled in as the message goes out (`stamped`)
    timestamp: str | None = None

    def __post_init__(self) -> None:
        if self.body_type not in BODY_TYPES:
            raise ValueError(f"body type must be one of {BODY_TYPES}")
        bad = set(self.properties) - set(PROPERTY_FIELDS) or set(self.header) - set(HEADER_FIELDS)
        if bad:
            raise ValueError(f"unknown field(s): {', '.join(sorted(bad))}")
        if self.timestamp is not None and self.timestamp in self.application_properties:
            raise ValueError(f"application property {self.timestamp!r} given twice")
        self._templated = any(v.__class__ is PerMessage for d in (
            self.properties, self.application_properties, self.message_annotations,
            self.delivery_annotations) for v in d.values())
        self._footer_templated = any(v.__class__ is PerMessage for v in self.footer.values())
        self._prefix: bytes | None = None
        self._suffix: bytes | None = None
        # The same body object again (--count): same bytes. A sentinel, not None: None
        # is a body too (an amqp-value holding null).
        self._last_body: Any = _NO_BODY
        self._last_body_bytes = b""
        self.check_number(1)

    def check_number(self, n: int,
                     only: Callable[[PerMessage], bool] | None = None) -> None:
        """Every value of message number `n` checked now (the first when the template is
        made; the others of the run by `check_run`), so that a bad one is a usage error
        before anything is sent. Past the first only the values made for each message
        (`PerMessage`) are checked: the others are the first message's; `only`: those of
        them it is true for. The error of a value made for each message names the message
        (`_numbered`), the first one's too; that of a value the same in every message
        names the option alone."""
        for what, check, value in self._values():
            if value.__class__ is not PerMessage:
                if n == 1:
                    check(value, what)
                continue
            if only is not None and not only(value):
                continue
            try:
                check(value.value(n), what)
            except UserError as e:
                raise _numbered(e, n) from None

    def check_run(self, last: int | None, body: PerMessage | None = None) -> None:
        """Messages 1 … `last` (None: unknown) checked now, their values and, with `body`
        (the body made for each message), their bodies: the error, if any, is the first
        failing message's, before anything is sent.

        A value whose text has {n} is checked as `check_numbers` says; one with {n} and
        {n%K} too, with `check_numbers`'s `period` the least common multiple of its K
        (past `_CHECK_PERIOD`, each message up to `_CHECK_CYCLE`; the rest as they are
        made). One with {n%K} and no {n} takes every value it will take in the first K
        messages, and for n below K the same as {n} would: `check_numbers` up to K-1,
        then message K (where n%K is 0 first). One with several moduli repeats after
        their least common multiple: each message up to it is checked (at most
        `_CHECK_CYCLE`; the rest as they are made). Values that depend on the number in
        different ways are checked apart, the first failing message of them all the
        error's."""

        def check(n: int, only: Callable[[PerMessage], bool] | None = None) -> None:
            self.check_number(n, only)
            if body is not None and (only is None or only(body)):
                try:
                    self.check_body(body.value(n))
                except UserError as e:
                    raise _numbered(e, n) from None

        check(1)
        if last is None or last < 2 or not (
                self._templated or self._footer_templated or body is not None):
            return
        per_message = [v for _, _, v in self._values() if v.__class__ is PerMessage]
        if body is not None:
            per_message.append(body)
        # how the values with {n%K} depend on the number: ({n} in it too, the K)
        cycling = {dependence for dependence in map(_dependence, per_message) if dependence[1]}
        failures: list[tuple[int, UserError]] = []

        def run(checks: Callable[[Callable[[int], None]], None],
                only: Callable[[PerMessage], bool]) -> None:
            at = [0]

            def one(n: int) -> None:
                at[0] = n
                check(n, only)

            try:
                checks(one)
            except UserError as e:
                failures.append((at[0], e))

        def counting(v: PerMessage) -> bool:  # ({n} alone in it, or no number at all)
            return not _dependence(v)[1]

        run(lambda one: check_numbers(one, last), counting)
        for dependence in cycling:
            def depends(v: PerMessage,
                        dependence: tuple[bool, frozenset[int]] = dependence) -> bool:
                return _dependence(v) == dependence

            def checks(one: Callable[[int], None],
                       dependence: tuple[bool, frozenset[int]] = dependence) -> None:
                counts, ks = dependence
                if not counts:
                    _check_cycle(one, sorted(ks), last)
                elif (period := math.lcm(*ks)) <= _CHECK_PERIOD:
                    check_numbers(one, last, period)
                else:
                    for n in range(2, min(last, _CHECK_CYCLE) + 1):
                        one(n)

            run(checks, depends)
        if failures:
            raise min(failures, key=lambda f: f[0])[1]

    def _values(self) -> Iterator[tuple[str, Callable[[Any, str], Any], Any]]:
        """Every value of the template (made for each message or not): the option that
        gave it (as errors name it), what checks it, and the value."""
        for name, value in (*self.header.items(), *self.properties.items()):
            yield ("--" + name.replace("_", "-"),
                   _check_id if name in ("message_id", "correlation_id") else check_encodes,
                   value)
        for section, option in _MAP_OPTIONS.items():
            check = (_check_application_property if section == "application_properties"
                     else check_encodes)
            for key, value in getattr(self, section).items():
                if section != "application_properties":  # (its keys are strings)
                    # an annotation's key is a symbol: ASCII, checked before connecting
                    yield f"{option} {str(key)!r}", check_encodes, key
                yield f"{option} {str(key)!r}", check, value

    def check_body(self, body: Any) -> None:
        """Encode `body` now (kept for `encode`): one with no encoding is a usage error
        before anything is sent."""
        self._last_body_bytes = self.body_bytes(body)
        self._last_body = body

    def _sections_before_body(self, n: int) -> tuple[bytes, Any]:
        """The encoded sections before the body of message `n`, and its message-id."""
        out = bytearray()
        if self.header:
            out += encode(c.Header(**self.header))
        if self.delivery_annotations:
            out += encode(c.DeliveryAnnotations(_each(self.delivery_annotations, n)))
        if self.message_annotations:
            out += encode(c.MessageAnnotations(_each(self.message_annotations, n)))
        props = _each(self.properties, n)
        if props:
            out += encode(c.Properties(**props))
        if self.application_properties or self.timestamp is not None:
            values = _each(self.application_properties, n)
            if self.timestamp is not None:
                values[self.timestamp] = _UNSTAMPED  # (last: see `timestamp`)
            out += encode(c.ApplicationProperties(values))
        return bytes(out), props.get("message_id")

    def body_bytes(self, body: Any) -> bytes:
        if self.body_type == "data":
            if isinstance(body, str):
                body = body.encode("utf-8")
            return encode(c.Data(bytes(body)))
        if self.body_type == "sequence":
            return check_encodes(c.AmqpSequence(list(body)), "body")
        return check_encodes(c.AmqpValue(body), "body")  # (value, map)

    def encode(self, n: int, body: Any) -> OutgoingMessage:
        """Message number `n` with this body. Constant sections are encoded once."""
        try:
            if self._templated:
                prefix, mid = self._sections_before_body(n)
            else:
                if self._prefix is None:
                    self._prefix, _ = self._sections_before_body(n)
                prefix = self._prefix
                mid = self.properties.get("message_id")
            if self._footer_templated:
                suffix = encode(c.Footer(_each(self.footer, n)))
            else:
                if self._suffix is None:
                    self._suffix = encode(c.Footer(self.footer)) if self.footer else b""
                suffix = self._suffix
        except _UNENCODABLE as e:  # a number past its type's range, late in a run
            self.check_number(n)  # (which says which option gave it)
            raise UserError(f"message {n}: {e}", Exit.USAGE) from None
        if body is not self._last_body:
            try:
                self._last_body_bytes = self.body_bytes(body)
            except UserError as e:
                raise _numbered(e, n) from None
            self._last_body = body
        if self.timestamp is None:
            return OutgoingMessage(n, prefix + self._last_body_bytes + suffix, mid)
        at = len(prefix) - 8  # the stamp's value ends the sections before the body
        if prefix[at - 1] != 0x81:  # (a long's 8-byte form: see `_UNSTAMPED`)
            raise AssertionError("the timestamp is not where it was put")
        return OutgoingMessage(n, prefix + self._last_body_bytes + suffix, mid, at)


def _each(values: dict[Any, Any], n: int) -> dict[Any, Any]:
    """A section's values for message `n`."""
    return {k: _expand(v, n) for k, v in values.items()}


def with_application_property(payload: bytes, key: str, value: Any) -> bytes:
    """Encoded message bytes with application property `key` set to `value` (replaced
    where it was, else added last); every other section is kept as it was encoded."""
    from amqpcli.codec.message import Message

    msg = Message.decode(payload)
    props = msg.application_properties
    values = dict(props.value) if props is not None and props.value is not None else {}
    values[key] = value
    msg.application_properties = c.ApplicationProperties(values)
    return msg.encode()


# The most bytes one body (or one line of --lines/--from) may have: a message is held
# whole in memory, and a device or endless stream given by mistake must end in an error,
# not in the machine's memory running out.
MAX_BODY = 256 << 20
_CHUNK = 1 << 20  # read in pieces, so a signal is handled between them


class TooLarge(ValueError):
    """A body or a line over `MAX_BODY` (the message says which)."""


# send --size: a body's bytes, this pattern repeated (printable ASCII, so the body reads as
# text too, and a body cut short or shifted shows where)
SIZED_PATTERN = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def sized_body(size: int) -> bytes:
    """A body of `size` bytes (`SIZED_PATTERN` repeated, cut at `size`)."""
    whole, part = divmod(size, len(SIZED_PATTERN))
    return SIZED_PATTERN * whole + SIZED_PATTERN[:part]


def read_whole(stream: BinaryIO, limit: int = MAX_BODY) -> bytes:
    """The whole stream as one body, read in pieces; `TooLarge` past `limit` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        piece = stream.read(_CHUNK)
        if not piece:
            return b"".join(parts)
        size += len(piece)
        if size > limit:
            raise TooLarge(f"more than {limit >> 20} MiB: too large for one message")
        parts.append(piece)


def read_lines(stream: BinaryIO, limit: int = MAX_BODY, head: bytes = b"") -> Iterator[bytes]:
    """The stream's lines, each with its line ending, as soon as each is whole;
    `TooLarge` for a line longer than `limit` bytes (an endless line, as /dev/zero
    gives, is never held whole). A stream with a file descriptor is read with `os.read`:
    no lock of Python's buffered reader is held while it waits for its input (a thread
    waiting on a pipe must not keep the interpreter from ending). `head`: the stream's
    first bytes, already read from it (`read_without_waiting`)."""
    read = _chunks(stream)
    buf = bytearray(head)
    pos = scanned = 0
    n = 0
    while True:
        i = buf.find(b"\n", max(pos, scanned))
        if i >= 0:
            n += 1
            if i - pos > limit:
                raise TooLarge(f"line {n} is longer than {limit >> 20} MiB")
            yield bytes(buf[pos : i + 1])
            pos = scanned = i + 1
            continue
        if pos:
            del buf[:pos]
            pos = 0
        scanned = len(buf)
        if scanned > limit:
            raise TooLarge(f"line {n + 1} is longer than {limit >> 20} MiB")
        more = read(_CHUNK)
        if not more:
            if buf:
                yield bytes(buf)
            return
        buf += more


def _chunks(stream: BinaryIO) -> Callable[[int], bytes]:
    """What reads the next piece of `stream` (as much as has come, up to n bytes)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stream
        read1 = getattr(stream, "read1", None)
        return read1 if read1 is not None else stream.read
    return lambda n: os.read(fd, n)


def read_without_waiting(fd: int, limit: int = MAX_BODY) -> tuple[bytes, bool]:
    """What the input `fd` (a pipe, a terminal) holds now, up to the end of its first
    line (or past `limit` bytes), read without waiting for more; and whether the input
    has ended. Only what has already come is read: a producer that has not written yet
    is not waited for."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    got = bytearray()
    while len(got) <= limit and poller.poll(0):
        more = os.read(fd, _CHUNK)
        if not more:
            return bytes(got), True
        got += more
        if b"\n" in more:
            break
    return bytes(got), False


def read_line_bodies(stream: BinaryIO, head: bytes = b"") -> Iterator[bytes]:
    """One body per line of the stream, line endings removed, each at most `MAX_BODY`
    bytes (`TooLarge`); a whole stream as one body is `read_whole`. `head`: as for
    `read_lines`."""
    for line in read_lines(stream, head=head):
        if line.endswith(b"\n"):
            line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
        yield line


def numbered(messages: Iterable[bytes], start: int = 1) -> Iterator[OutgoingMessage]:
    """Pre-encoded messages (e.g. from ``--from``) numbered from `start`."""
    for i, payload in enumerate(messages, start):
        yield OutgoingMessage(i, payload)
