"""Encoded messages as sections, so a peer can change the header and message annotations of a
message it forwards while the bare message stays exactly the bytes the sender sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proton import Data, DataException, Described, Message, MessageException, symbol, uint, ulong

HEADER = 0x70
DELIVERY_ANNOTATIONS = 0x71
MESSAGE_ANNOTATIONS = 0x72
PROPERTIES = 0x73
APPLICATION_PROPERTIES = 0x74
FOOTER = 0x78

_SYMBOLS = {
    "amqp:header:list": HEADER,
    "amqp:delivery-annotations:map": DELIVERY_ANNOTATIONS,
    "amqp:message-annotations:map": MESSAGE_ANNOTATIONS,
    "amqp:properties:list": PROPERTIES,
    "amqp:application-properties:map": APPLICATION_PROPERTIES,
    "amqp:data:binary": 0x75,
    "amqp:amqp-sequence:list": 0x76,
    "amqp:amqp-value:*": 0x77,
    "amqp:footer:map": FOOTER,
}

# Header fields in list order (Part 3 §3.2.1) and their AMQP types for re-encoding.
_HEADER_FIELDS = ("durable", "priority", "ttl", "first_acquirer", "delivery_count")


@dataclass(frozen=True)
class Section:
    code: int  # the descriptor as a number, symbolic descriptors mapped to theirs
    value: Any  # the section's value as proton decodes it
    raw: bytes  # the section's encoded bytes, exactly as received


def split(raw: bytes) -> list[Section]:
    """Split an encoded message into its sections; ValueError if it is not one."""
    sections: list[Section] = []
    offset = 0
    while offset < len(raw):
        data = Data()
        try:
            size = data.decode(raw[offset:])
        except (DataException, MessageException) as exc:
            raise ValueError(f"undecodable section at offset {offset}: {exc}") from exc
        data.rewind()
        data.next()
        obj = data.get_object()
        if not isinstance(obj, Described):
            raise ValueError(f"section at offset {offset} is not a described value")  # noqa: TRY004
        desc: Any = obj.descriptor
        code = _SYMBOLS.get(str(desc), -1) if isinstance(desc, str) else int(desc)
        sections.append(Section(code, obj.value, bytes(raw[offset : offset + size])))
        offset += size
    return sections


def encode_described(code: int, value: Any) -> bytes:
    data = Data()
    data.put_object(Described(ulong(code), value))
    return bytes(data.encode())


def rewrite(
    raw: bytes,
    *,
    delivery_count: int | None = None,
    first_acquirer: bool | None = None,
    annotations: dict[Any, Any] | None = None,
) -> bytes:
    """Return ``raw`` with header fields and message annotations changed; the delivery
    annotations, the bare message and the footer are kept byte for byte."""
    if delivery_count is None and first_acquirer is None and not annotations:
        return raw
    sections = split(raw)
    header = next((s for s in sections if s.code == HEADER), None)
    fields: list[Any] = list(header.value) if header is not None else []
    fields += [None] * (len(_HEADER_FIELDS) - len(fields))
    if first_acquirer is not None:
        fields[3] = first_acquirer
    if delivery_count is not None:
        fields[4] = uint(delivery_count)
    while fields and fields[-1] is None:
        fields.pop()
    out = bytearray(encode_described(HEADER, fields))
    ma = next((s for s in sections if s.code == MESSAGE_ANNOTATIONS), None)
    for s in sections:
        if s.code in (HEADER, MESSAGE_ANNOTATIONS):
            continue
        if s.code not in (DELIVERY_ANNOTATIONS,) and annotations is not None:
            merged = dict(ma.value) if ma is not None else {}
            merged.update({symbol(str(k)): v for k, v in annotations.items()})
            out += encode_described(MESSAGE_ANNOTATIONS, merged)
            annotations = None
            ma = None
        elif s.code not in (DELIVERY_ANNOTATIONS,) and ma is not None:
            out += ma.raw
            ma = None
        out += s.raw
    if annotations is not None:
        merged = dict(ma.value) if ma is not None else {}
        merged.update({symbol(str(k)): v for k, v in annotations.items()})
        out += encode_described(MESSAGE_ANNOTATIONS, merged)
    elif ma is not None:
        out += ma.raw
    return bytes(out)


def bare(raw: bytes) -> bytes:
    """The bare message: properties, application-properties and body, without the
    header, annotations and footer (Part 3 §3.2)."""
    return b"".join(
        s.raw
        for s in split(raw)
        if s.code not in (HEADER, DELIVERY_ANNOTATIONS, MESSAGE_ANNOTATIONS, FOOTER)
    )


def owned(value: Any) -> Any:
    """``value`` with every memoryview copied to bytes (in lists and maps too): proton's
    binary values point into memory that goes when their message or delivery does."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, dict):
        return {owned(k): owned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [owned(v) for v in value]
    return value


DECODE_ERRORS = (DataException, MessageException, ValueError)


def decode(raw: bytes) -> Message:
    """A proton ``Message``; raises one of ``DECODE_ERRORS`` if the bytes are not one."""
    msg = Message()
    msg.decode(raw)
    return msg
