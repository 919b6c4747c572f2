"""Message: lazy sections, bare_bytes as received, byte-exact re-encoding, constructor rules."""

from __future__ import annotations

import pickle
import struct

import pytest

from amqpcli.codec import DecodeError, Int, Long, Symbol, UByte, decode, encode
from amqpcli.codec.composites import (
    AmqpSequence,
    AmqpValue,
    ApplicationProperties,
    Data,
    Footer,
    Header,
    MessageAnnotations,
    Properties,
)
from amqpcli.codec.message import Message

HEADER = bytes.fromhex("005370c0020141")  # durable
# properties as list32 with to = "q" given as str32: legal, not the smallest encoding
PROPS_ITEMS = b"\x40\x40" + b"\xb1" + struct.pack(">I", 1) + b"q"
PROPS = b"\x00\x53\x73\xd0" + struct.pack(">II", len(PROPS_ITEMS) + 4, 3) + PROPS_ITEMS
APP = bytes.fromhex("005374c10602a101615501")  # {"a": 1}
DATA = bytes.fromhex("005375a0026869")  # b"hi"
FOOTER = bytes.fromhex("005378c10502a3017841")  # {x: true}


def test_decode_splits_and_reencodes_exactly() -> None:
    wire = HEADER + PROPS + APP + DATA + DATA + FOOTER
    m = Message.decode(wire)
    assert m.encode() == wire
    assert m.bare_bytes == PROPS + APP + DATA + DATA
    assert m.header == Header(durable=True)
    assert m.properties is not None and m.properties.to == "q"
    assert m.application_properties == ApplicationProperties({"a": Long(1)})
    assert m.body == [Data(b"hi"), Data(b"hi")]
    assert m.value == b"hihi"
    assert m.footer is not None and m.footer.value == {Symbol("x"): True}
    assert m.delivery_annotations is None and m.message_annotations is None
    # everything read, nothing changed: still the same bytes (the str32 kept)
    assert m.encode() == wire


def test_sections_decode_only_when_read() -> None:
    # well-framed properties holding an invalid UTF-8 string: found only on access
    bad_items = b"\x40\x40\xa1\x02\xc3\x28"
    bad_props = b"\x00\x53\x73\xc0" + bytes((len(bad_items) + 1, 3)) + bad_items
    wire = HEADER + bad_props + DATA
    m = Message.decode(wire)
    assert m.header == Header(durable=True)
    assert m.value == b"hi"
    assert m.encode() == wire
    with pytest.raises(DecodeError) as info:
        m.properties  # noqa: B018
    assert info.value.offset == len(HEADER) + 3 + 3 + 2 + 2  # at the bad byte


def test_changed_section_is_reencoded_others_kept() -> None:
    wire = HEADER + PROPS + DATA
    m = Message.decode(wire)
    assert m.properties is not None
    m.properties.subject = "s"
    out = m.encode()
    assert out.startswith(HEADER) and out.endswith(DATA)
    again = Message.decode(out)
    assert again.properties is not None
    assert again.properties.subject == "s" and again.properties.to == "q"
    m.header = None
    assert not m.encode().startswith(HEADER)


def test_constructor_body_rules() -> None:
    assert Message(b"x").body == [Data(b"x")]
    assert Message(bytearray(b"x")).body == [Data(b"x")]
    assert Message("text").body == AmqpValue("text")
    assert Message(Int(5)).body == AmqpValue(Int(5))
    assert Message([1, 2]).body == AmqpValue([1, 2])
    assert Message({"k": 1}).body == AmqpValue({"k": 1})
    assert Message(None).body is None and Message().encode() == b""
    assert Message(AmqpValue(None)).encode() == bytes.fromhex("00537740")
    assert Message(Data(b"a")).body == [Data(b"a")]
    seq = [AmqpSequence([1]), AmqpSequence([2])]
    assert Message(seq).body == seq
    with pytest.raises(TypeError):
        Message([Data(b"a"), AmqpSequence([1])])


def test_constructor_sections_and_order() -> None:
    m = Message(
        "v",
        footer={"f": 1},
        application_properties={"a": 1},
        properties=Properties(to="q"),
        message_annotations={"x-opt-k": "v"},
        delivery_annotations=None,
        header=Header(priority=UByte(9)),
    )
    wire = m.encode()
    sections = []
    p = 0
    while p < len(wire):
        v, p = decode(wire, p)
        sections.append(type(v))
    assert sections == [
        Header,
        MessageAnnotations,
        Properties,
        ApplicationProperties,
        AmqpValue,
        Footer,
    ]
    back = Message.decode(wire)
    assert back.header == m.header and back.properties == m.properties
    assert back.application_properties == m.application_properties
    # annotation keys given as str are symbols on the wire
    assert back.message_annotations is not None
    assert list(back.message_annotations.value) == [Symbol("x-opt-k")]
    assert back.bare_bytes == m.bare_bytes
    assert back.bare_bytes == encode(Properties(to="q")) + encode(
        ApplicationProperties({"a": 1})
    ) + encode(AmqpValue("v"))


def test_setters_type_checks() -> None:
    m = Message()
    with pytest.raises(TypeError):
        m.header = {"durable": True}  # type: ignore[assignment]
    with pytest.raises(TypeError):
        m.application_properties = [1]  # type: ignore[assignment]
    m.application_properties = {"k": "v"}
    assert isinstance(m.application_properties, ApplicationProperties)


def test_value_of_sequences_and_empty() -> None:
    assert Message([AmqpSequence([1]), AmqpSequence([2, 3])]).value == [1, 2, 3]
    assert Message().value is None
    assert Message.decode(b"").body is None


def test_pickle_and_repr_of_a_lazy_message() -> None:
    wire = HEADER + PROPS + DATA
    m = pickle.loads(pickle.dumps(Message.decode(wire)))
    assert m.properties is not None and m.properties.to == "q"
    assert m.encode() == wire
    bad = Message.decode(HEADER + b"\x00\x53\x73\xc0\x03\x01\xa1\x01")  # string cut short
    assert "properties=<at offset" in repr(bad)


def test_symbol_section_descriptors() -> None:
    name = b"amqp:amqp-value:*"
    wire = b"\x00\xa3" + bytes((len(name),)) + name + b"\xa1\x01x"
    m = Message.decode(wire)
    assert m.body == AmqpValue("x")
    assert m.encode() == wire


@pytest.mark.parametrize("bodies", [[b""], [b"x" * 100], [b"y" * 300], [b"a", b"b" * 260, b""]])
def test_data_body_read_like_the_decoder_reads_it(bodies: list[bytes]) -> None:
    # data sections take a shorter path when read; it must give what decode() gives
    raw = Message([Data(b) for b in bodies]).encode()
    got = Message.decode(raw).body
    want = []
    p = 0
    while p < len(raw):
        v, p = decode(raw, p)
        want.append(v)
    assert [type(x) for x in got] == [Data] * len(bodies)
    assert [x.value for x in got] == [w.value for w in want] == bodies
    assert [x._raw for x in got] == [w._raw for w in want]
    assert Message.decode(raw).encode() == raw
    m = Message.decode(raw)
    m.body[0].value = b"changed"
    assert Message.decode(m.encode()).body[0].value == b"changed"
