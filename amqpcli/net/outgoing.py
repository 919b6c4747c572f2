"""Messages to send: a template built from options, and where bodies come from.

`MessageTemplate.encode(n, body)` gives the bytes of message number `n` (1-based): header,
annotations, properties, application-properties, body sections, footer, each encoded by
the codec. ``{n}`` in a string property (message-id, subject, …) becomes the number;
``{uuid}`` a fresh UUID; a `Numbered` property is a typed id made per message (ulong n, a
fresh uuid). Bodies are `bytes` (a `data` section), any AMQP value (an
`amqp-value` section) or a list (an `amqp-sequence` section), as `body_type` says.

Every value is checked when the template is made (the body: by `check_body`, or when it is
first encoded): one the codec cannot encode (a number out of its type's range, a char of
two characters), a message-id or correlation-id of a type AMQP does not allow, a map, list
or array in application-properties is a usage error naming the option that gave it and the
value, never an encoder error in the middle of a run.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from amqpcli.codec import composites as c
from amqpcli.codec.encode import PYTHON_TYPE_NAMES, encode
from amqpcli.codec.sections import BODY_TYPES
from amqpcli.codec.types import (
    AmqpList,
    AmqpMap,
    Array,
    Char,
    Composite,
    Described,
    Float,
    Symbol,
    ULong,
)
from amqpcli.errors import Exit, UserError

__all__ = ["BODY_TYPES", "MAX_BODY", "MessageTemplate", "Numbered", "OutgoingMessage",
           "TooLarge", "read_line_bodies", "read_lines", "read_whole"]

PROPERTY_FIELDS = tuple(f.name.replace("-", "_") for f in c.Properties.FIELDS)
HEADER_FIELDS = tuple(f.name.replace("-", "_") for f in c.Header.FIELDS)


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One message ready for the wire: its number, its encoded bytes and its message-id."""

    number: int
    payload: bytes
    message_id: Any = None


_NO_BODY = object()  # no body encoded yet


@dataclass(frozen=True, slots=True)
class Numbered:
    """A typed message-id or correlation-id made for each message: ``ulong`` (the message's
    number) or ``uuid`` (a fresh one)."""

    kind: str

    def value(self, n: int) -> Any:
        from amqpcli.codec.types import ULong

        return ULong(n) if self.kind == "ulong" else uuid.uuid4()


def _per_message(value: Any) -> bool:
    return (isinstance(value, str) and "{" in value) or isinstance(value, Numbered)


def _expand(value: Any, n: int) -> Any:
    if value.__class__ is Numbered:
        return value.value(n)
    if isinstance(value, str) and "{" in value:
        text = value.replace("{n}", str(n))
        if "{uuid}" in text:
            text = text.replace("{uuid}", str(uuid.uuid4()))
        return type(value)(text) if isinstance(value, Symbol) else text
    return value


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
    if isinstance(bad, Char):
        return f"{str(bad)!r} is not one character, as a char must be"
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
    return (value is None or t is str or t is ULong or t is uuid.UUID or t is Numbered
            or isinstance(value, (bytes, bytearray)))


def _is_compound(value: Any) -> bool:
    if isinstance(value, Described):
        return _is_compound(value.value)
    return isinstance(value, (dict, list, tuple, Array, AmqpList, AmqpMap, Composite))


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

    def __post_init__(self) -> None:
        if self.body_type not in BODY_TYPES:
            raise ValueError(f"body type must be one of {BODY_TYPES}")
        bad = set(self.properties) - set(PROPERTY_FIELDS) or set(self.header) - set(HEADER_FIELDS)
        if bad:
            raise ValueError(f"unknown field(s): {', '.join(sorted(bad))}")
        self._templated = any(_per_message(v) for v in self.properties.values())
        self._prefix: bytes | None = None
        self._suffix: bytes | None = None
        # The same body object again (--count): same bytes. A sentinel, not None: None
        # is a body too (an amqp-value holding null).
        self._last_body: Any = _NO_BODY
        self._last_body_bytes = b""
        self._check()

    def _check(self) -> None:
        """Every value checked now, so a bad one is a usage error before anything is sent."""
        for name, value in (*self.header.items(), *self.properties.items()):
            what = "--" + name.replace("_", "-")
            if name in ("message_id", "correlation_id") and not _is_id(value):
                raise UserError(f"{what}: an id of type {_type_name(value)} is not allowed: AMQP "
                                "allows ulong, uuid, binary or string", Exit.USAGE)
            if not isinstance(value, Numbered):
                check_encodes(_expand(value, 1), what)
        for section, option in _MAP_OPTIONS.items():
            for key, value in getattr(self, section).items():
                what = f"{option} {str(key)!r}"
                if section == "application_properties" and _is_compound(value):
                    raise UserError(f"{what}: a value of type {_type_name(value)} is not allowed: "
                                    "application-properties hold only simple values (no map, "
                                    "list or array)", Exit.USAGE)
                check_encodes(value, what)

    def check_body(self, body: Any) -> None:
        """Encode `body` now (kept for `encode`): one with no encoding is a usage error
        before anything is sent."""
        self._last_body_bytes = self.body_bytes(body)
        self._last_body = body

    def _sections_before_body(self, n: int) -> bytes:
        out = bytearray()
        if self.header:
            out += encode(c.Header(**self.header))
        if self.delivery_annotations:
            out += encode(c.DeliveryAnnotations(self.delivery_annotations))
        if self.message_annotations:
            out += encode(c.MessageAnnotations(self.message_annotations))
        if self.properties:
            props = {k: _expand(v, n) for k, v in self.properties.items()}
            out += encode(c.Properties(**props))
        if self.application_properties:
            out += encode(c.ApplicationProperties(self.application_properties))
        return bytes(out)

    def message_id(self, payload_prefix_n: int) -> Any:
        mid = self.properties.get("message_id")
        return _expand(mid, payload_prefix_n) if mid is not None else None

    def body_bytes(self, body: Any) -> bytes:
        if self.body_type == "data":
            if isinstance(body, str):
                body = body.encode("utf-8")
            return encode(c.Data(bytes(body)))
        if self.body_type == "sequence":
            return check_encodes(c.AmqpSequence(list(body)), "body")
        return check_encodes(c.AmqpValue(body), "body")

    def encode(self, n: int, body: Any) -> OutgoingMessage:
        """Message number `n` with this body. Constant sections are encoded once."""
        if self._templated:
            prefix = self._sections_before_body(n)
            mid = self.message_id(n)
        else:
            if self._prefix is None:
                self._prefix = self._sections_before_body(n)
            prefix = self._prefix
            mid = self.properties.get("message_id")
        if self._suffix is None:
            self._suffix = encode(c.Footer(self.footer)) if self.footer else b""
        if body is not self._last_body:
            self._last_body = body
            self._last_body_bytes = self.body_bytes(body)
        return OutgoingMessage(n, prefix + self._last_body_bytes + self._suffix, mid)


# The most bytes one body (or one line of --lines/--from) may have: a message is held
# whole in memory, and a device or endless stream given by mistake must end in an error,
# not in the machine's memory running out.
MAX_BODY = 256 << 20
_CHUNK = 1 << 20  # read in pieces, so a signal is handled between them


class TooLarge(ValueError):
    """A body or a line over `MAX_BODY` (the message says which)."""


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


def read_lines(stream: BinaryIO, limit: int = MAX_BODY) -> Iterator[bytes]:
    """The stream's lines, each with its line ending, as soon as each is whole;
    `TooLarge` for a line longer than `limit` bytes (an endless line, as /dev/zero
    gives, is never held whole). A stream with a file descriptor is read with `os.read`:
    no lock of Python's buffered reader is held while it waits for its input (a thread
    waiting on a pipe must not keep the interpreter from ending)."""
    read = _chunks(stream)
    buf = bytearray()
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


def read_line_bodies(stream: BinaryIO) -> Iterator[bytes]:
    """One body per line of the stream, line endings removed, each at most `MAX_BODY`
    bytes (`TooLarge`); a whole stream as one body is `read_whole`."""
    for line in read_lines(stream):
        if line.endswith(b"\n"):
            line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
        yield line


def numbered(messages: Iterable[bytes], start: int = 1) -> Iterator[OutgoingMessage]:
    """Pre-encoded messages (e.g. from ``--from``) numbered from `start`."""
    for i, payload in enumerate(messages, start):
        yield OutgoingMessage(i, payload)
