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


def _plain_shaped(response: bytes) -> bool:
    """`authzid NUL authcid NUL password` with a password that is not already masked."""
    parts = response.split(b"\x00")
    return len(parts) == 3 and parts[2] not in (b"", MASK)


def _response_bytes(response: Any) -> bytes | None:
    if isinstance(response, (bytes, bytearray)):
        return bytes(response)
    if isinstance(response, str):  # a damaged encoding can make it a string
        return response.encode("utf-8", "surrogatepass")
    return None


def is_secret(value: Any) -> bool:
    """True for a sasl-init whose initial response holds a PLAIN password: its mechanism
    is PLAIN, or (a damaged mechanism name) the response has PLAIN's shape."""
    if not isinstance(value, SaslInit):
        return False
    response = _response_bytes(value.initial_response)
    if response is None:
        return False
    if isinstance(value.mechanism, str) and value.mechanism.upper() == "PLAIN":
        return response != redact_plain_response(response)
    return _plain_shaped(response)


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
        response = value.initial_response
        masked: Any = redact_plain_response(_response_bytes(response) or b"")
        if isinstance(response, str):
            masked = masked.decode("utf-8", "surrogatepass")
        return SaslInit(
            mechanism=value.mechanism,
            initial_response=masked,
            hostname=value.hostname,
        )
    return value


# Where a sasl-init starts in raw bytes: its descriptor, small-ulong or ulong 0x41.
_SASL_INIT_DESCRIPTORS = (b"\x00\x53\x41", b"\x00\x80" + (0x41).to_bytes(8, "big"))
# Mechanisms whose initial response holds no secret.
_OPEN_MECHANISMS = {b"ANONYMOUS", b"EXTERNAL"}
# What may follow the initial response: the hostname, a str8, a str32 or null.
_HOSTNAME_CODES = {0x40, 0xA1, 0xB1}


def _frame_end(data: bytes, at: int) -> int:
    """The end of the SASL frame holding the byte `at` (its header is 8 bytes, its
    descriptor at header + 4 * doff), or the end of `data` when no header fits."""
    for doff in (2, *range(3, 16)):
        start = at - 4 * doff
        if start < 0:
            break
        size = int.from_bytes(data[start:start + 4], "big")
        if data[start + 4] == doff and data[start + 5] == 1 and size >= at - start:
            return min(len(data), start + size)
    return len(data)


def secret_spans(data: bytes | bytearray) -> list[tuple[int, int]]:
    """Byte ranges `[start, stop)` of `data` that may hold a SASL password: the initial
    response of every sasl-init that can be located by its descriptor, for a hexdump to
    mask. Found in raw (possibly corrupt) bytes, so when in doubt a range reaches to the end
    of the frame: it is the bytes of the response, and the hostname after it only when
    the list's own size shows where the response ends."""
    data = bytes(data)
    spans: list[tuple[int, int]] = []
    for descriptor in _SASL_INIT_DESCRIPTORS:
        at = data.find(descriptor)
        while at >= 0:
            span = _init_span(data, at, at + len(descriptor))
            if span is not None:
                spans.append(span)
            at = data.find(descriptor, at + 1)
    return sorted(spans)


def _init_span(data: bytes, at: int, pos: int) -> tuple[int, int] | None:
    frame_end = _frame_end(data, at)
    end = frame_end
    # The field list: list8, list32 or list0.
    code = data[pos] if pos < len(data) else None
    if code == 0xC0:
        if pos + 2 < len(data):
            end = min(end, pos + 2 + data[pos + 1])
        pos += 3
    elif code == 0xD0:
        if pos + 8 < len(data):
            end = min(end, pos + 5 + int.from_bytes(data[pos + 1:pos + 5], "big"))
        pos += 9
    elif code == 0x45:
        return None
    else:
        return (pos, frame_end) if pos < frame_end else None
    # The mechanism: sym8 or sym32.
    code = data[pos] if pos < len(data) else None
    if code == 0xA3 and pos + 1 < len(data):
        n, pos = data[pos + 1], pos + 2
    elif code == 0xB3 and pos + 4 < len(data):
        n, pos = int.from_bytes(data[pos + 1:pos + 5], "big"), pos + 5
    else:
        return (pos, frame_end) if pos < frame_end else None
    mechanism = data[pos:pos + n]
    pos += n
    if len(mechanism) == n and mechanism.upper() in _OPEN_MECHANISMS:
        return None
    # The initial response: vbin8, vbin32 or null.
    code = data[pos] if pos < len(data) else None
    if code == 0x40:
        # No response, if the list agrees: it ends here or a hostname fills the rest.
        after = pos + 1
        if after >= end or (after + 1 < len(data) and data[after] == 0xA1
                            and after + 2 + data[after + 1] == end):
            return None
        return (pos, min(len(data), max(end, frame_end)))
    if code == 0xA0 and pos + 1 < len(data):
        n, pos = data[pos + 1], pos + 2
    elif code == 0xB0 and pos + 4 < len(data):
        n, pos = int.from_bytes(data[pos + 1:pos + 5], "big"), pos + 5
    else:
        return (pos, frame_end) if pos < frame_end else None
    stop = pos + n
    # The response's length is trusted only where the list agrees: it ends the list, or a
    # hostname (or what takes its place: a null, a str8 of the right size) fills the rest.
    trusted = stop <= end and (
        stop == end
        or (stop < len(data) and data[stop] in _HOSTNAME_CODES)
        or stop + 1 == end
        or (stop + 1 < len(data) and stop + 2 + data[stop + 1] == end)
    )
    if not trusted:
        stop = max(stop, end, frame_end)
    return (pos, min(stop, len(data)))


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
