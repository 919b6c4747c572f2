"""Messages to send: a template built from options, and where bodies come from.

`MessageTemplate.encode(n, body)` gives the bytes of message number `n` (1-based): header,
annotations, properties, application-properties, body sections, footer, each encoded by
the codec. ``{n}`` in a string property (message-id, subject, …) becomes the number;
``{uuid}`` a fresh UUID; a `Numbered` property is a typed id made per message (ulong n, a
fresh uuid). Bodies are `bytes` (a `data` section), any AMQP value (an
`amqp-value` section) or a list (an `amqp-sequence` section), as `body_type` says.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.sections import BODY_TYPES
from amqpcli.codec.types import Symbol

__all__ = ["BODY_TYPES", "MessageTemplate", "Numbered", "OutgoingMessage", "read_bodies"]

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
            return encode(c.AmqpSequence(list(body)))
        return encode(c.AmqpValue(body))

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


def read_bodies(stream: BinaryIO, lines: bool) -> Iterator[bytes]:
    """The whole stream as one body, or one body per line (line endings removed)."""
    if not lines:
        yield stream.read()
        return
    for line in stream:
        if line.endswith(b"\n"):
            line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
        yield line


def numbered(messages: Iterable[bytes], start: int = 1) -> Iterator[OutgoingMessage]:
    """Pre-encoded messages (e.g. from ``--from``) numbered from `start`."""
    for i, payload in enumerate(messages, start):
        yield OutgoingMessage(i, payload)
