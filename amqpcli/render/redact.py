"""Secrets out of sight: the one function every renderer passes values through.

A SASL PLAIN initial response is `authzid NUL authcid NUL password` (RFC 4616); the password
is replaced by `***` unless the user asked for secrets. Nothing else AMQP carries is a
secret the protocol marks as such.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.composites import SaslInit
from amqpcli.codec.frames import Frame

MASK = b"***"


def redact_plain_response(response: bytes | bytearray) -> bytes:
    """`authzid NUL authcid NUL ***`; bytes that are not a PLAIN response become `***`."""
    parts = bytes(response).split(b"\x00")
    if len(parts) != 3:
        return MASK
    return parts[0] + b"\x00" + parts[1] + b"\x00" + MASK


def is_secret(value: Any) -> bool:
    """True for a sasl-init whose initial response holds a PLAIN password."""
    return (
        isinstance(value, SaslInit)
        and isinstance(value.mechanism, str)
        and value.mechanism.upper() == "PLAIN"
        and isinstance(value.initial_response, (bytes, bytearray))
        and value.initial_response != redact_plain_response(value.initial_response)
    )


def redact(value: Any, show_secrets: bool = False) -> Any:
    """`value` (a performative, a frame, anything) with SASL PLAIN passwords masked.

    Returns the value itself when there is nothing to hide (or `show_secrets`), else a
    copy: the caller's object is never changed.
    """
    if show_secrets:
        return value
    if isinstance(value, Frame):
        body = redact(value.body)
        if body is value.body:
            return value
        return Frame(
            value.offset,
            value.size,
            value.doff,
            value.type,
            value.channel,
            value.ext,
            body,
            value.payload,
        )
    if is_secret(value):
        return SaslInit(
            mechanism=value.mechanism,
            initial_response=redact_plain_response(value.initial_response),
            hostname=value.hostname,
        )
    return value


# AMQP 0-10 carries SASL in connection.start-ok / secure-ok `response` fields.
_SECRET_010 = {"connection.start-ok", "connection.secure-ok"}
_NO_SECRET_MECHANISMS = {"ANONYMOUS", "EXTERNAL"}


def redact_010_fields(method: Any, show_secrets: bool = False) -> dict[str, Any]:
    """A 0-10 control's or command's fields with the SASL response masked (PLAIN keeps
    its user); the method itself is never changed."""
    fields = dict(method.fields)
    if show_secrets or method.qname not in _SECRET_010:
        return fields
    response = fields.get("response")
    mechanism = str(fields.get("mechanism", "")).upper()
    if not isinstance(response, (bytes, bytearray)) or mechanism in _NO_SECRET_MECHANISMS:
        return fields
    fields["response"] = redact_plain_response(response) if mechanism == "PLAIN" else MASK
    return fields
