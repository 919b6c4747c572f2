"""When a message's JSON keeps a section's bytes (`encoded-sections`): only when that
section's member alone would not re-encode to its exact bytes."""

from __future__ import annotations

import base64
import json

from amqpcli.codec.composites import ApplicationProperties, Data, Header, Properties
from amqpcli.codec.message import Message
from amqpcli.codec.types import AmqpMap, Symbol, UInt
from amqpcli.render.message import load_sections, message_bytes_from_json, message_to_json

DATA_HI = bytes((0x00, 0x53, 0x75, 0xA0, 0x02)) + b"hi"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def to_json(raw: bytes) -> tuple[dict, Message]:  # type: ignore[type-arg]
    msg = load_sections(Message.decode(raw))
    return message_to_json(msg), msg


def gives_back(obj: dict, raw: bytes) -> bool:  # type: ignore[type-arg]
    return message_bytes_from_json(json.loads(json.dumps(obj))) == raw


def canonical() -> bytes:
    return Message(
        [Data(b"hi")],
        header=Header(durable=True, ttl=UInt(5000)),
        message_annotations={Symbol("x-opt-a"): UInt(1)},
        properties=Properties(message_id="m", subject="s"),
        application_properties={"color": "red"},
        footer={Symbol("x-opt-crc"): UInt(7)},
    ).encode()


def test_canonical_message_has_no_encoded() -> None:
    raw = canonical()
    obj, _ = to_json(raw)
    assert "encoded" not in obj and "encoded-sections" not in obj
    assert gives_back(obj, raw)


def test_properties_with_explicit_trailing_nulls_carry_encoded() -> None:
    # properties: list8 of message-id "m" then two nulls the encoder would leave out
    props = bytes((0x00, 0x53, 0x73, 0xC0, 0x06, 0x03, 0xA1, 0x01)) + b"m" + b"\x40\x40"
    raw = props + DATA_HI
    obj, _ = to_json(raw)
    assert obj["properties"] == {"message-id": "m"}
    assert obj["encoded-sections"] == {"properties": b64(props)}
    assert gives_back(obj, raw)
    assert not gives_back({k: v for k, v in obj.items() if k != "encoded-sections"}, raw)


def test_integer_wider_than_needed_carries_encoded() -> None:
    # header: ttl 5 as a four-byte uint (0x70) where smalluint (0x52) would do
    header = bytes((0x00, 0x53, 0x70, 0xC0, 0x08, 0x03, 0x40, 0x40, 0x70, 0, 0, 0, 5))
    raw = header + DATA_HI
    obj, _ = to_json(raw)
    assert obj["header"] == {"ttl": 5}
    assert obj["encoded-sections"] == {"header": b64(header)}
    assert gives_back(obj, raw)


def test_a_section_changed_after_decoding_is_not_taken_as_decoded() -> None:
    obj, msg = to_json(canonical())
    assert "encoded-sections" not in obj
    # a map section replaced by a 32-bit map: its JSON member comes back as a map8
    msg.application_properties = ApplicationProperties(AmqpMap({"color": "blue"}, 0xD1))
    obj = message_to_json(msg)
    assert list(obj["encoded-sections"]) == ["application-properties"]
    assert gives_back(obj, msg.encode())


def test_a_changed_field_re_encodes_from_the_members() -> None:
    props = bytes((0x00, 0x53, 0x73, 0xC0, 0x06, 0x03, 0xA1, 0x01)) + b"m" + b"\x40\x40"
    obj, msg = to_json(props + DATA_HI)
    assert list(obj["encoded-sections"]) == ["properties"]
    # once a field is assigned the section encodes from its fields: nothing to keep
    msg.properties.subject = "s"  # type: ignore[union-attr]
    obj = message_to_json(msg)
    assert "encoded-sections" not in obj
    assert gives_back(obj, msg.encode())


def test_not_exact_never_carries_encoded() -> None:
    header = bytes((0x00, 0x53, 0x70, 0xC0, 0x08, 0x03, 0x40, 0x40, 0x70, 0, 0, 0, 5))
    msg = load_sections(Message.decode(header + DATA_HI))
    assert "encoded-sections" not in message_to_json(msg, exact=False)
