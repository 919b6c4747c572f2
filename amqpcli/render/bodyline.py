"""A message's body alone, as one line of text (`recv --bodies-only`), for pipelines.

* data sections: their bytes together; UTF-8 text as it is, but for what would break the
  line or drive a terminal — control characters (`\\n`, `\\r`, `\\t`, `\\x1b`), line and
  bidi separators — and the backslash (`\\\\`), escaped as `printable` escapes peer text,
  so the line reads back one way. Bytes that are not UTF-8 as the text view shows binary
  (`format_binary`: `b"…"` when mostly printable, else `0x…`), whole.
* amqp-value: a string is its text, escaped as above; any other value in the one-line
  form of the views (`format_value`: `int:5`, `[1, "a"]`, `{"k": null}`), a binary
  whole.
* amqp-sequence sections: each as a list in that form, separated by a space.

A message that does not decode is its bytes as binary, and the caller says why.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.composites import AmqpSequence, AmqpValue
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError
from amqpcli.render.text import format_binary, format_value
from amqpcli.render.types import amqp_type, printable

__all__ = ["body_line"]


def body_line(payload: bytes, message_format: int = 0) -> tuple[str, str | None]:
    """(the line without its newline, why the body could not be shown as such or None).
    A vendor's message-format (not 0): the payload is no AMQP message (though it may
    decode as one), so it is the line, as binary."""
    if message_format:
        return (format_binary(payload, len(payload)),
                f"its message-format is {message_format} (a vendor's): its payload whole")
    try:
        body = Message.decode(payload).body
    except DecodeError as e:
        return format_binary(payload, len(payload)), f"its body does not decode ({e})"
    if body is None:
        return "", None
    if isinstance(body, AmqpValue):
        return _value(body.value), None
    parts = list(body)
    if parts and isinstance(parts[0], AmqpSequence):
        return " ".join(format_value(list(p.value)) for p in parts), None
    data = b"".join(bytes(p.value) for p in parts)
    return _text(data), None


def _value(value: Any) -> str:
    t = amqp_type(value)
    if t == "string":
        return printable(value)
    if t == "binary":
        return format_binary(value, len(value))
    return format_value(value)


def _text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return format_binary(data, len(data))
    return printable(text)
