"""A message with a section that does not decode (a string that is not UTF-8), or a payload
that is no message at all, still has a JSON object: the sections that decode as members,
the whole in `encoded`, and reading it back gives the very bytes."""

from __future__ import annotations

import base64
import hashlib
import json

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


def test_undecodable_properties_kept_whole_in_encoded() -> None:
    raw = HEADER + BAD_PROPS + BODY
    obj = message_to_json(Message.decode(raw))
    assert "properties" not in obj
    assert obj["header"] == {"durable": True}
    assert obj["body"] == {"value": "A"}
    assert base64.b64decode(obj["encoded"]) == raw
    assert obj["bare-sha256"] == hashlib.sha256(BAD_PROPS + BODY).hexdigest()
    assert message_bytes_from_json(_round_trip(obj)) == raw


def test_payload_to_json_is_message_to_json_for_a_message() -> None:
    raw = BAD_PROPS + BODY
    assert payload_to_json(raw) == message_to_json(Message.decode(raw))
    assert payload_problem(raw) == ("its properties section does not decode (at offset 11: "
                                    "expected UTF-8 string, found byte 0xff)")
    assert payload_problem(BODY) is None


def test_an_edited_member_wins_over_encoded() -> None:
    raw = BAD_PROPS + BODY
    obj = _round_trip(message_to_json(Message.decode(raw)))
    obj["body"] = {"value": "B"}
    assert message_bytes_from_json(obj) == bytes.fromhex("005377a10142")
    obj = _round_trip(message_to_json(Message.decode(raw)))
    obj["properties"] = {"subject": "s"}  # given again: the members say it all
    msg = message_from_json(obj)
    assert msg.properties is not None and msg.properties.subject == "s"


def test_bytes_that_are_no_message() -> None:
    obj = payload_to_json(b"\x01\x02\x03")
    assert obj == {"encoded": "AQID"}
    assert message_bytes_from_json(_round_trip(obj)) == b"\x01\x02\x03"
    assert payload_problem(b"\x01\x02\x03") == (
        "not an AMQP message (at offset 0: expected a message section (a described type), "
        "found 0x01)")
    (line,) = plain_lines(payload_tree(b"\x01\x02\x03", "message 1"))
    assert line.startswith("message 1: decode error at offset 0:")
