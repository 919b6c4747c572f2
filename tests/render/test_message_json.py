"""The message JSON format (docs/message-format.md): every section, exact bytes, edits win."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest

from amqpcli.codec.composites import AmqpSequence, AmqpValue, Data, Header, Properties
from amqpcli.codec.message import Message
from amqpcli.codec.types import Byte, Symbol, Timestamp, UByte, UInt, ULong
from amqpcli.render.jsonvalues import JsonValueError
from amqpcli.render.message import message_bytes_from_json, message_from_json, message_to_json
from tests.paths import PROTON_VECTORS_DIR, require


def full_message() -> Message:
    return Message(
        [Data(b"part one "), Data(b"\x00\x01")],
        header=Header(
            durable=True,
            priority=UByte(7),
            ttl=UInt(5000),
            first_acquirer=False,
            delivery_count=UInt(2),
        ),
        delivery_annotations={Symbol("x-opt-trace"): "abc"},
        message_annotations={Symbol("x-opt-jms-msg-type"): Byte(3), Symbol("x-opt-partition"): 4},
        properties=Properties(
            message_id=ULong(42),
            user_id=b"guest",
            to="/queue/a",
            subject="s",
            reply_to="/queue/r",
            correlation_id=uuid.UUID(int=7),
            content_type=Symbol("text/plain"),
            content_encoding=Symbol("utf-8"),
            absolute_expiry_time=Timestamp(1_767_225_700_000),
            creation_time=Timestamp(1_767_225_600_000),
            group_id="g",
            group_sequence=UInt(3),
            reply_to_group_id="rg",
        ),
        application_properties={"color": "red", "n": UInt(1), "ok": True},
        footer={Symbol("x-opt-crc"): UInt(1234)},
    )


def roundtrip(msg: Message) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    raw = msg.encode()
    obj = json.loads(json.dumps(message_to_json(Message.decode(raw))))
    return obj, raw


def test_every_section_is_named_and_readable() -> None:
    obj, raw = roundtrip(full_message())
    assert list(obj) == [
        "header",
        "delivery-annotations",
        "message-annotations",
        "properties",
        "application-properties",
        "body",
        "footer",
        "bare-sha256",
    ]
    assert obj["header"] == {
        "durable": True,
        "priority": 7,
        "ttl": 5000,
        "first-acquirer": False,
        "delivery-count": 2,
    }
    assert obj["message-annotations"] == {"x-opt-jms-msg-type": {"byte": 3}, "x-opt-partition": 4}
    assert obj["properties"]["message-id"] == {"ulong": 42}
    assert obj["properties"]["correlation-id"] == {"uuid": str(uuid.UUID(int=7))}
    assert obj["properties"]["creation-time"] == "2026-01-01T00:00:00.000Z"
    assert obj["properties"]["user-id"] == "Z3Vlc3Q="
    assert obj["application-properties"] == {"color": "red", "n": {"uint": 1}, "ok": True}
    assert obj["body"] == {"data": [{"binary-text": "part one "}, {"binary": "AAE="}]}
    assert obj["footer"] == {"x-opt-crc": {"uint": 1234}}
    assert obj["bare-sha256"] == hashlib.sha256(Message.decode(raw).bare_bytes).hexdigest()
    assert message_bytes_from_json(obj) == raw


@pytest.mark.parametrize(
    "body",
    [AmqpValue({"k": [1, 2]}), [AmqpSequence([1, "x"]), AmqpSequence([])], AmqpValue(None), None],
)
def test_body_kinds(body: object) -> None:
    obj, raw = roundtrip(Message(body, properties=Properties(to="q")))
    assert message_bytes_from_json(obj) == raw
    if body is None:
        assert "body" not in obj


def test_non_canonical_message_keeps_its_bytes_until_edited() -> None:
    raw = require(PROTON_VECTORS_DIR / "interop" / "message.amqp").read_bytes()
    obj = json.loads(json.dumps(message_to_json(Message.decode(raw))))
    # proton writes 32-bit lists: those two sections keep their bytes, the body needs none
    assert set(obj["encoded-sections"]) == {"header", "properties"}
    assert "encoded" not in obj
    assert message_bytes_from_json(obj) == raw
    obj["properties"]["subject"] = "edited"
    edited = message_from_json(obj)
    assert edited.properties.subject == "edited"  # type: ignore[union-attr]
    assert message_bytes_from_json(obj) != raw


def test_hand_written_json_for_send() -> None:
    msg = message_from_json(
        {
            "properties": {"message-id": "m1", "creation-time": 1000},
            "application-properties": {"n": 5},
            "body": {"value": "hello"},
        }
    )
    assert msg.properties.message_id == "m1"  # type: ignore[union-attr]
    assert msg.properties.creation_time == Timestamp(1000)  # type: ignore[union-attr]
    assert msg.body == AmqpValue("hello")
    assert Message.decode(msg.encode()) == msg


@pytest.mark.parametrize(
    "obj",
    [
        {"headers": {}},
        {"body": {"data": "abc"}},
        {"body": {"data": [{"uint": 1}]}},
        {"properties": {"message_idx": 1}},
        {"body": {"value": 1, "data": []}},
        [],
    ],
)
def test_bad_message_json(obj: object) -> None:
    with pytest.raises(JsonValueError):
        message_from_json(obj)


def test_tree_of_a_message_with_a_bad_section_shows_the_rest() -> None:
    from amqpcli.render.message import message_tree
    from amqpcli.render.text import plain_lines

    raw = bytes.fromhex("005370c0020141005373c00201ff005377a1026869")
    out = plain_lines(message_tree(Message.decode(raw)))
    assert out[1:] == [
        "  header  (0x70 = amqp:header:list)",
        "    durable: true",
        "  properties: decode error at offset 13: expected a format code, found 0xff",
        '  body: amqp-value "hi"  (0x77 = amqp:amqp-value:*)',
    ]


def _message_strategy():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    from tests.render.test_jsonvalues import _values

    keys = st.text(max_size=5)
    body = st.one_of(
        st.none(),
        _values.map(AmqpValue),
        st.lists(st.binary(max_size=10).map(Data), min_size=1, max_size=3),
        st.lists(st.lists(_values, max_size=3).map(AmqpSequence), min_size=1, max_size=2),
    )
    return st.builds(
        lambda h, ma, ap, b: Message(
            b, header=h, message_annotations=ma, application_properties=ap
        ),
        st.one_of(
            st.none(),
            st.builds(Header, durable=st.booleans(), priority=st.integers(0, 9).map(UByte)),
        ),
        st.one_of(
            st.none(),
            st.dictionaries(
                st.text(alphabet="x-opt", min_size=1, max_size=6).map(Symbol), _values, max_size=3
            ),
        ),
        st.one_of(st.none(), st.dictionaries(keys, _values, max_size=3)),
        body,
    )


def test_any_message_survives_json_byte_for_byte() -> None:
    from hypothesis import given, settings

    @settings(max_examples=200, deadline=None)
    @given(_message_strategy())
    def check(msg: Message) -> None:
        raw = msg.encode()
        obj = json.loads(json.dumps(message_to_json(Message.decode(raw))))
        # canonical bytes come back from the members alone
        assert "encoded" not in obj and "encoded-sections" not in obj
        assert message_bytes_from_json(obj) == raw

    check()


@pytest.mark.parametrize("section", ["message-annotations", "application-properties",
                                     "delivery-annotations", "footer"])
def test_map32_section_keeps_its_bytes(section: str) -> None:
    # python-qpid-proton writes these maps as map32; a plain JSON object reads back as a
    # map8, so the JSON must keep that section's bytes and give the original bytes back.
    from amqpcli.codec.types import AmqpMap

    key: object = Symbol("x-opt-z") if section != "application-properties" else "x"
    m = AmqpMap({key: "z"}, code=0xD1)
    attr = section.replace("-", "_")
    msg = Message(AmqpValue("v"), **{attr: m})
    raw = msg.encode()
    assert bytes.fromhex("d1") in raw  # the section really is a map32
    back = Message.decode(raw)
    obj = json.loads(json.dumps(message_to_json(back)))
    assert obj[section] == {str(key): "z"}  # still the plain form
    assert list(obj["encoded-sections"]) == [section]  # its bytes only, not the body's
    assert message_bytes_from_json(obj) == raw


def test_map8_section_needs_no_encoded() -> None:
    msg = Message(AmqpValue("v"), message_annotations={Symbol("x-opt-z"): "z"},
                  application_properties={"x": 1})
    obj = message_to_json(Message.decode(msg.encode()))
    assert "encoded" not in obj and "encoded-sections" not in obj


@pytest.mark.parametrize("keys", [["map"], ["map", "code"], ["keys", "map"], ["map", "code", "keys"]])
def test_a_section_whose_keys_spell_the_tagged_form_round_trips(keys: list[str]) -> None:
    """A section whose keys are all among map/keys/code, `map` one of them, is written in
    the tagged form: as a plain object it read back as that form (another message, or a
    refusal)."""
    from amqpcli.codec.composites import (
        ApplicationProperties,
        DeliveryAnnotations,
        Footer,
        MessageAnnotations,
    )

    sym = {Symbol(k): [["k", 1]] for k in keys}
    msg = Message(
        delivery_annotations=DeliveryAnnotations(dict(sym)),
        message_annotations=MessageAnnotations(dict(sym)),
        application_properties=ApplicationProperties({k: "x" for k in keys}),
        body=AmqpValue("hi"),
        footer=Footer(dict(sym)),
    )
    for use_encoded in (True, False):
        back = message_from_json(json.loads(json.dumps(message_to_json(msg))),
                                 use_encoded=use_encoded)
        assert back.message_annotations.value == sym
        assert back.delivery_annotations.value == sym
        assert back.footer.value == sym
        assert back.application_properties.value == {k: "x" for k in keys}
        assert back.encode() == msg.encode()


def test_a_map32_section_in_the_map_form_keeps_its_width() -> None:
    """Proton writes every map as a map32; a section in the tagged form (keys not all
    symbols) keeps that width in its "code", so the replay is the same bytes."""
    import proton

    pm = proton.Message(body="x")
    pm.annotations = {proton.ulong(5): "x", proton.symbol("a"): 1}
    pm.instructions = {proton.ulong(9): None}
    raw = bytes(pm.encode())
    obj = json.loads(json.dumps(message_to_json(Message.decode(raw))))
    assert obj["message-annotations"]["code"] == "0xd1"
    assert "encoded-sections" not in obj
    for use_encoded in (True, False):
        assert message_from_json(obj, use_encoded=use_encoded).encode() == raw
