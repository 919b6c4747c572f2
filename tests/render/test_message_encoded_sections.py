"""`encoded-sections`: a message's JSON keeps the bytes of just the sections whose members
would not re-encode to them (docs/message-format.md), each kind of section alike; the
body, big as it may be, is not repeated for a small header written another way."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

import pytest

from amqpcli.codec.composites import Header
from amqpcli.codec.message import SECTION_NAMES, Message
from amqpcli.render.jsonvalues import JsonValueError
from amqpcli.render.message import (
    SECTION_KEYS,
    message_bytes_from_json,
    message_to_json,
    payload_to_json,
)

# RabbitMQ 3.10's header: list8 of durable false, three nulls, first-acquirer true, and a
# trailing null (the encoder writes [false, null, null, true])
RABBITMQ_HEADER = bytes.fromhex("005370c006054240404140")
DATA_HI = bytes.fromhex("005375a0026869")
PROPS = bytes.fromhex("005373c00401a1016d")  # message-id "m"

# Per section kind: canonical bytes, and the same section written another way.
CANONICAL = {
    "header": bytes.fromhex("005370c0020141"),  # durable
    "delivery-annotations": bytes.fromhex("005371c10702a3017aa10176"),  # {z: "v"}
    "message-annotations": bytes.fromhex("005372c10702a3017aa10176"),
    "properties": PROPS,
    "application-properties": bytes.fromhex("005374c10602a1016b5505"),  # {"k": 5 (long)}
    "body": DATA_HI,
    "footer": bytes.fromhex("005378c10702a3017aa10176"),
}
NOT_CANONICAL = {
    "header": RABBITMQ_HEADER,
    # maps as map32
    "delivery-annotations": bytes.fromhex("005371d10000000a00000002a3017aa10176"),
    "message-annotations": bytes.fromhex("005372d10000000a00000002a3017aa10176"),
    # message-id "m" and two explicit trailing nulls
    "properties": bytes.fromhex("005373c00603a1016d4040"),
    # a long of 5 as eight bytes where smalllong (0x55) would do
    "application-properties": bytes.fromhex("005374c10d02a1016b810000000000000005"),
    "body": bytes.fromhex("005375b0000000026869"),  # vbin32 of two bytes
    "footer": bytes.fromhex("005378d10000000a00000002a3017aa10176"),
}
BODIES_NOT_CANONICAL = {
    "amqp-sequence": bytes.fromhex("005376d000000006000000015301"),  # list32 of [1 (ulong)]
    "amqp-value": bytes.fromhex("0053777000000005"),  # uint 5 in four bytes
    "data, one of two": DATA_HI + bytes.fromhex("005375b0000000016a"),
}


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def json_of(raw: bytes) -> dict[str, Any]:
    """The message's JSON object as a file holds it."""
    return json.loads(json.dumps(message_to_json(Message.decode(raw))))  # type: ignore[no-any-return]


def message(sections: dict[str, bytes]) -> bytes:
    return b"".join(sections[k] for k in SECTION_KEYS if k in sections)


@pytest.mark.parametrize("key", SECTION_KEYS)
def test_each_section_kind_keeps_its_bytes_alone(key: str) -> None:
    for sections in (CANONICAL, NOT_CANONICAL):  # (the test's bytes are what they say)
        decoded = Message.decode(sections[key])
        assert decoded.section_bytes(SECTION_NAMES[SECTION_KEYS.index(key)]) == sections[key]
    assert "encoded-sections" not in json_of(message(CANONICAL))
    raw = message({**CANONICAL, key: NOT_CANONICAL[key]})
    obj = json_of(raw)
    assert obj["encoded-sections"] == {key: b64(NOT_CANONICAL[key])}
    assert "encoded" not in obj
    assert message_bytes_from_json(obj) == raw


@pytest.mark.parametrize("body", list(BODIES_NOT_CANONICAL.values()),
                         ids=list(BODIES_NOT_CANONICAL))
def test_a_body_keeps_the_bytes_of_all_its_sections(body: bytes) -> None:
    raw = PROPS + body
    obj = json_of(raw)
    assert obj["encoded-sections"] == {"body": b64(body)}
    assert message_bytes_from_json(obj) == raw


def test_every_section_written_another_way() -> None:
    raw = message(NOT_CANONICAL)
    obj = json_of(raw)
    assert obj["encoded-sections"] == {k: b64(v) for k, v in NOT_CANONICAL.items()}
    assert list(obj["encoded-sections"]) == list(SECTION_KEYS)  # in section order
    assert message_bytes_from_json(obj) == raw


def test_a_big_body_is_not_written_twice() -> None:
    body = os.urandom(1 << 20)
    raw = RABBITMQ_HEADER + Message(body).encode()
    line = json.dumps(message_to_json(Message.decode(raw)))
    obj = json.loads(line)
    assert obj["encoded-sections"] == {"header": "AFNwwAYFQkBAQUA="}
    assert obj["header"] == {"durable": False, "first-acquirer": True}
    assert len(line) < len(body) * 4 / 3 + 300  # the body's base64 and little more
    assert message_bytes_from_json(obj) == raw


def test_an_edited_member_wins_over_its_kept_bytes() -> None:
    raw = message(NOT_CANONICAL)
    obj = json_of(raw)
    obj["header"]["durable"] = True
    obj["properties"]["subject"] = "s"
    back = Message.decode(message_bytes_from_json(obj))
    assert back.header == Header(durable=True, first_acquirer=True)
    assert back.properties is not None and back.properties.subject == "s"
    # the sections not edited keep their bytes
    for key, attr in zip(SECTION_KEYS, SECTION_NAMES, strict=True):
        if key not in ("header", "properties"):
            assert back.section_bytes(attr) == NOT_CANONICAL[key], key


def test_a_removed_member_removes_its_section() -> None:
    raw = RABBITMQ_HEADER + DATA_HI
    obj = json_of(raw)
    del obj["header"]
    assert message_bytes_from_json(obj) == DATA_HI


def test_a_hand_added_member_needs_no_kept_bytes() -> None:
    obj = json_of(RABBITMQ_HEADER + DATA_HI)
    obj["application-properties"] = {"k": 1}
    got = Message.decode(message_bytes_from_json(obj))
    assert got.section_bytes("header") == RABBITMQ_HEADER
    assert got.application_properties is not None
    assert got.application_properties.value == {"k": 1}


def test_the_bare_message_hash_is_unchanged() -> None:
    raw = message(NOT_CANONICAL)
    obj = json_of(raw)
    bare = message({k: v for k, v in NOT_CANONICAL.items()
                    if k in ("properties", "application-properties", "body")})
    assert obj["bare-sha256"] == hashlib.sha256(bare).hexdigest()


@pytest.mark.parametrize(("kept", "says"), [
    ("AFNwwAYFQkBAQUA=", "expected an object"),  # not keyed by section
    ({"headers": "AFNwwAYFQkBAQUA="}, "unknown section name(s): headers"),
    ({"header": b64(DATA_HI)},
     "encoded-sections.header: not the bytes of one header section alone"),
    ({"header": b64(RABBITMQ_HEADER + DATA_HI)}, "not the bytes of one header section"),
    ({"header": ""}, "not the bytes of one header section"),
    ({"header": b64(b"\x01\x02")},
     "encoded-sections.header: not the bytes of a header section: at offset 0"),
    ({"header": "not base64!"}, "encoded-sections.header"),
])
def test_kept_bytes_that_are_not_the_section_are_refused(kept: Any, says: str) -> None:
    obj = json_of(RABBITMQ_HEADER + DATA_HI)
    obj["encoded-sections"] = kept
    with pytest.raises(JsonValueError) as e:
        message_bytes_from_json(obj)
    assert says in str(e.value)


def test_whole_and_per_section_bytes_together_are_refused() -> None:
    raw = RABBITMQ_HEADER + DATA_HI
    obj = json_of(raw)
    obj["encoded"] = b64(raw)
    with pytest.raises(JsonValueError, match="not both"):
        message_bytes_from_json(obj)


def test_old_whole_encoded_lines_still_replay() -> None:
    # a RabbitMQ message as older versions wrote it: the members and the whole message
    raw = RABBITMQ_HEADER + PROPS + Message(os.urandom(1000)).encode()
    obj = json_of(raw)
    old = {k: v for k, v in obj.items() if k != "encoded-sections"}
    old["encoded"] = b64(raw)
    assert message_bytes_from_json(old) == raw
    # and a payload that is no message is still written and read whole
    assert message_bytes_from_json(json.loads(json.dumps(payload_to_json(b"\x00\x53")))) \
        == b"\x00\x53"


@pytest.mark.parametrize("raw", [
    DATA_HI + PROPS,  # sections out of order
    PROPS + PROPS + DATA_HI,  # a section twice
    PROPS + DATA_HI + b"\x00",  # bytes after the last section
    bytes.fromhex("005377a10141") + DATA_HI,  # an amqp-value and a data section
])
def test_payloads_the_sections_cannot_say_are_written_whole(raw: bytes) -> None:
    obj = json.loads(json.dumps(payload_to_json(raw)))
    assert obj == {"encoded": b64(raw)}
    assert message_bytes_from_json(obj) == raw
