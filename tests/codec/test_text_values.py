"""Text that is not what its type allows is refused alike for the three text types: a
string that is not UTF-8, a symbol that is not seven-bit ASCII (Part 1 §1.6.21), a char
that is not a Unicode scalar value (§1.6.16: a surrogate, or past U+10FFFF). Decoding
gives a DecodeError at the offending byte (a frame reader's FrameError, an endpoint's
framing error) naming the type and the byte or code point; the encoder refuses to write
such a symbol or char (an EncodeError saying which character)."""

from __future__ import annotations

import struct

import pytest

from amqpcli.codec import (
    Array,
    Char,
    DecodeError,
    Described,
    EncodeError,
    Symbol,
    decode,
    decode_all,
    encode,
)
from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, Frame, FrameError, FrameReader, encode_frame
from amqpcli.codec.message import Message
from tests.engine.harness import Pair


def _err(data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_all(data)
    return info.value


def _patched(data: bytes, old: bytes, new: bytes) -> bytes:
    """`data` with its one `old` replaced (the encoder writes no bad text: it is put in
    after)."""
    assert data.count(old) == 1, data
    return data.replace(old, new)


# (bytes, offset of the offending byte or value, expected, found)
BAD_TEXT = [
    (b"\xa1\x03A\x80B", 3, "UTF-8 string", "byte 0x80"),
    (b"\xa3\x03A\x80B", 3, "ASCII symbol", "byte 0x80"),
    (b"\xa3\x02\xc3\xa9", 2, "ASCII symbol", "byte 0xc3"),  # é in UTF-8: still not ASCII
    (b"\xb3\x00\x00\x00\x03AB\xff", 7, "ASCII symbol", "byte 0xff"),
    (b"\x73\x00\x00\xd8\x00", 1, "char holding a Unicode scalar value", "surrogate U+D800"),
    (b"\x73\x00\x00\xdf\xff", 1, "char holding a Unicode scalar value", "surrogate U+DFFF"),
    (b"\x73\x00\x11\x00\x00", 1, "char holding a Unicode scalar value",
     "0x110000 (past U+10FFFF)"),
]


@pytest.mark.parametrize(("data", "offset", "expected", "found"), BAD_TEXT)
def test_bad_text_is_a_decode_error_at_the_offending_byte(data: bytes, offset: int,
                                                         expected: str, found: str) -> None:
    e = _err(data)
    assert (e.offset, e.expected, e.found) == (offset, expected, found)
    # the same from a memoryview, as the frame reader decodes
    with pytest.raises(DecodeError) as info:
        decode(memoryview(b"\x40" + data), 1)
    assert (info.value.offset, info.value.found) == (offset + 1, found)


@pytest.mark.parametrize(("data", "found"), [
    (_patched(encode(Array(["a", "X"], "symbol")), b"X", b"\xe9"), "byte 0xe9"),
    (_patched(encode(Array([Char("a"), Char("X")])), b"\x00\x00\x00X", b"\x00\x00\xd8\x00"),
     "surrogate U+D800"),
    (_patched(encode({Symbol("X"): True}), b"X", b"\xe9"), "byte 0xe9"),  # a map key
    (_patched(encode(Described(Symbol("X"), None)), b"X", b"\xe9"), "byte 0xe9"),
])
def test_bad_text_inside_compound_values(data: bytes, found: str) -> None:
    e = _err(data)
    assert e.found == found
    assert e.offset == (data.index(b"\xe9") if found.startswith("byte") else data.index(b"\xd8") - 2)


@pytest.mark.parametrize("cp", [0, 0x7F, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF])
def test_every_scalar_value_is_a_char(cp: int) -> None:
    data = b"\x73" + struct.pack(">I", cp)
    assert decode(data) == (Char(chr(cp)), 5)
    assert encode(Char(chr(cp))) == data


def test_every_ascii_byte_is_a_symbol() -> None:
    text = bytes(range(128))
    v, _ = decode(b"\xa3\x80" + text)
    assert type(v) is Symbol and v == Symbol(text.decode("ascii"))
    assert encode(v) == b"\xa3\x80" + text


def test_a_message_section_with_a_bad_symbol_says_so_on_access() -> None:
    data = _patched(Message(body="hi", message_annotations={Symbol("x-opt-a"): "v"}).encode(),
                    b"x-opt-a", b"x-opt-\xe9")
    m = Message.decode(data)  # sections are decoded when read
    with pytest.raises(DecodeError, match="expected ASCII symbol, found byte 0xe9"):
        m.message_annotations  # noqa: B018
    assert m.body == c.AmqpValue("hi")


def test_a_frame_with_a_bad_symbol_is_a_frame_error_and_the_next_is_read() -> None:
    bad = _patched(encode_frame(c.Open(container_id="c", offered_capabilities=[Symbol("ABC")])),
                   b"ABC", b"A\xe9C")
    items = FrameReader().feed(AMQP_HEADER + bad + encode_frame(c.Close()))
    err, close = items[1:]
    assert isinstance(err, FrameError)
    assert (err.expected, err.found) == ("ASCII symbol", "byte 0xe9")
    assert err.offset == len(AMQP_HEADER) + bad.index(b"\xe9")
    assert isinstance(close, Frame) and isinstance(close.body, c.Close)


@pytest.mark.parametrize("to", ["peer", "client"])
def test_a_peer_that_sends_a_bad_symbol_is_closed_with_a_framing_error(to: str) -> None:
    p = Pair()
    p.inject_bytes(to, _patched(encode_frame(c.Begin(
        next_outgoing_id=0, incoming_window=1, outgoing_window=1,
        offered_capabilities=[Symbol("ABC")])), b"ABC", b"AB\x80"))
    ep = p.peer if to == "peer" else p.client
    (close,) = [f.body for f in FrameReader().feed(ep.data_to_send())
                if isinstance(f, Frame) and isinstance(f.body, c.Close)]
    assert str(close.error.condition) == "amqp:connection:framing-error"
    assert "expected ASCII symbol, found byte 0x80" in close.error.description


@pytest.mark.parametrize(("value", "said"), [
    (Symbol("é"), "symbol 'é' is not ASCII: 'é' (U+00E9) at index 0"),
    (Symbol("ab\udc80"), r"symbol 'ab\udc80' is not ASCII: '\udc80' (U+DC80) at index 2"),
    (Array(["a", "é"], "symbol"), "symbol 'é' is not ASCII"),
    (Array([Symbol("a"), Symbol("é")]), "symbol 'é' is not ASCII"),
    ({Symbol("é"): 1}, "symbol 'é' is not ASCII"),
    (c.MessageAnnotations({"é": 1}), "symbol 'é' is not ASCII"),  # str keys are symbols
    (c.Properties(content_type="é"), "symbol 'é' is not ASCII"),  # a symbol field
    (c.Open(container_id="x", offered_capabilities=["ok", "é"]), "symbol 'é' is not ASCII"),
    (Char("\ud800"), r"char '\ud800' is surrogate U+D800, not a Unicode scalar value"),
    (Array([Char("a"), Char("\udfff")]), "surrogate U+DFFF"),
])
def test_the_encoder_writes_no_bad_symbol_or_char(value: object, said: str) -> None:
    with pytest.raises(EncodeError) as info:
        encode(value)
    assert said in str(info.value)
    assert "\n" not in str(info.value)
