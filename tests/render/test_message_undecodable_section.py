"""A message with a section that does not decode (a string that is not UTF-8), or a payload
that is no message at all, still has a JSON object: the sections that decode as members,
the bytes of the one that does not in `encoded-sections` (bytes that are no message: the
whole in `encoded`), and reading it back gives the very bytes."""

from __future__ import annotations

import base64
import hashlib
import json

from amqpcli.codec.composites import Header
from amqpcli.codec.message import Message
from amqpcli.render.message import (
    message_bytes_from_json,
    message_from_json,
    message_to_json,
    payload_problem,
    payload_to_json,
    payload_tree,
)
from amqpcli.render.text import plain_lines

# properties: list8 of 4 fields, subject a string of the two bytes 0xff 0xfe
BAD_PROPS = bytes.fromhex("005373c00804404040a102fffe")
BODY = bytes.fromhex("005377a10141")  # amqp-value "A"
HEADER = bytes.fromhex("005370c00201 41".replace(" ", ""))  # durable


def _round_trip(obj: dict) -> dict:  # type: ignore[type-arg]
    return json.loads(json.dumps(obj))  # type: ignore[no-any-return]


def test_undecodable_properties_keep_their_bytes_alone() -> None:
    raw = HEADER + BAD_PROPS + BODY
    obj = message_to_json(Message.decode(raw))
    assert "properties" not in obj
    assert obj["header"] == {"durable": True}
    assert obj["body"] == {"value": "A"}
    assert "encoded" not in obj
    assert obj["encoded-sections"] == {"properties": base64.b64encode(BAD_PROPS).decode()}
    assert obj["bare-sha256"] == hashlib.sha256(BAD_PROPS + BODY).hexdigest()
    assert message_bytes_from_json(_round_trip(obj)) == raw


def test_payload_to_json_is_message_to_json_for_a_message() -> None:
    raw = BAD_PROPS + BODY
    assert payload_to_json(raw) == message_to_json(Message.decode(raw))
    assert payload_problem(raw, payload_to_json(raw)) == (
        "its properties section does not decode (at offset 11: expected UTF-8 string, "
        'found byte 0xff); kept as bytes in "encoded-sections"')
    assert payload_problem(BODY, payload_to_json(BODY)) is None


def test_sections_kept_only_for_their_encoding_are_no_problem() -> None:
    header32 = bytes.fromhex("005370d00000000500000001" "41")
    obj = payload_to_json(header32 + BODY)
    assert list(obj["encoded-sections"]) == ["header"]
    assert payload_problem(header32 + BODY, obj) is None


def test_an_edited_member_wins_and_the_undecodable_section_stays() -> None:
    raw = HEADER + BAD_PROPS + BODY
    obj = _round_trip(message_to_json(Message.decode(raw)))
    obj["header"] = {"durable": False}
    obj["body"] = {"value": "B"}
    edited = Message("B", header=Header(durable=False))
    header, body = edited.section_bytes("header"), edited.section_bytes("body")
    assert message_bytes_from_json(obj) == header + BAD_PROPS + body
    obj = _round_trip(message_to_json(Message.decode(raw)))
    obj["properties"] = {"subject": "s"}  # given again: the member says what it is
    msg = message_from_json(obj)
    assert msg.properties is not None and msg.properties.subject == "s"


def test_whole_encoded_of_older_versions_still_replays() -> None:
    raw = HEADER + BAD_PROPS + BODY
    old = {"header": {"durable": True}, "body": {"value": "A"},
           "bare-sha256": hashlib.sha256(BAD_PROPS + BODY).hexdigest(),
           "encoded": base64.b64encode(raw).decode()}
    assert message_bytes_from_json(old) == raw
    old["body"] = {"value": "B"}  # edited: the members alone, as before
    assert message_bytes_from_json(old) == Message(
        "B", header=Header(durable=True)).encode()


def test_bytes_that_are_no_message() -> None:
    obj = payload_to_json(b"\x01\x02\x03")
    assert obj == {"encoded": "AQID"}
    assert message_bytes_from_json(_round_trip(obj)) == b"\x01\x02\x03"
    assert payload_problem(b"\x01\x02\x03", obj) == (
        "not an AMQP message (at offset 0: expected a message section (a described type), "
        'found 0x01); written whole in "encoded"')
    (line,) = plain_lines(payload_tree(b"\x01\x02\x03", "message 1"))
    assert line.startswith("message 1: decode error at offset 0:")
