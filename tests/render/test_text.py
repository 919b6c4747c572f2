"""Trees, compact values, one-line frames and the hex window."""

from __future__ import annotations

from amqpcli.codec.composites import (
    Accepted,
    Attach,
    Error,
    Open,
    Rejected,
    Source,
    Target,
    Transfer,
)
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Array, Described, Symbol, Timestamp, UByte, UInt, ULong
from amqpcli.render.frameline import frame_line, item_line
from amqpcli.render.hexdump import hex_window
from amqpcli.render.text import format_value, plain_lines, value_tree
from amqpcli.render.types import format_descriptor


def lines(value: object) -> list[str]:
    return plain_lines(value_tree(value))


def test_composite_tree_names_present_fields_only() -> None:
    out = lines(Open(container_id="c1", max_frame_size=UInt(4096)))
    assert out == [
        "open  (0x10 = amqp:open:list)",
        '  container-id: "c1"',
        "  max-frame-size: 4096  (uint)",
    ]


def test_types_shown_where_python_cannot_tell() -> None:
    out = lines({Symbol("k"): Timestamp(1_767_225_600_000), "s": ULong(1), "b": True})
    assert "  k (symbol): 2026-01-01T00:00:00.000Z  (timestamp 1767225600000)" in out
    assert '  "s": 1  (ulong)' in out
    assert '  "b": true' in out


def test_descriptor_names() -> None:
    assert (
        format_descriptor(ULong(0x468C00000004))
        == "0x468c00000004 = apache.org:selector-filter:string"
    )
    assert format_descriptor(ULong(0x14)) == "0x14 = amqp:transfer:list"
    assert format_descriptor(ULong(0x99)) == "0x99"
    assert format_descriptor(Symbol("apache.org:no-local-filter:list")) == (
        "apache.org:no-local-filter:list = 0x468c00000003"
    )
    out = lines(Described(ULong(0x468C00000004), "a = 1"))
    assert out[0] == "  (described by 0x468c00000004 = apache.org:selector-filter:string)"


def test_choices_named() -> None:
    out = lines(Attach(name="l", handle=UInt(0), role=True, rcv_settle_mode=UByte(1)))
    assert "  role: receiver (true)" in out
    assert "  rcv-settle-mode: second (1)  (ubyte)" in out


def test_format_value_compact() -> None:
    assert format_value([UInt(1), "a", Symbol("s"), None]) == '[uint:1, "a", :s, null]'
    assert format_value(Array([Symbol("a"), Symbol("b")], "symbol")) == "@array<symbol>[a, b]"
    assert (
        format_value(Transfer(handle=UInt(0), settled=True)) == "@transfer [handle=0, settled=true]"
    )


def test_frame_line_shows_key_fields_and_body() -> None:
    msg = Message(b"hello").encode()
    data = (
        encode_frame(
            Attach(
                name="l",
                handle=UInt(1),
                role=False,
                source=Source(address="a"),
                target=Target(address="q"),
            )
        )
        + encode_frame(
            Transfer(handle=UInt(1), delivery_id=UInt(9), delivery_tag=b"t9", settled=False), 2, msg
        )
        + encode_frame(None, 0)
    )
    attach, transfer, hb = FrameReader().feed(data)
    assert (
        frame_line(attach) == '[0]  attach      name="l" handle=1 role=sender source="a" target="q"'
    )
    line = frame_line(transfer, time=0.5, connection="c1", direction="->")
    assert (
        line
        == '00:00:00.500000 c1 -> [2]  transfer    handle=1 id=9 tag=b"t9" settled=false  data b"hello" (10 bytes)'
    )
    assert frame_line(hb, direction="<-") == "<- [0]  heartbeat"


def test_frame_line_outcomes_and_errors() -> None:
    from amqpcli.codec.composites import Detach, Disposition

    data = encode_frame(
        Disposition(
            role=True,
            first=UInt(1),
            last=UInt(3),
            settled=True,
            state=Rejected(error=Error(condition=Symbol("amqp:not-found"), description="gone")),
        )
    ) + encode_frame(
        Detach(handle=UInt(0), closed=True, error=Error(condition=Symbol("amqp:link:stolen")))
    )
    disp, det = FrameReader().feed(data)
    assert (
        frame_line(disp)
        == '[0]  disposition role=receiver first=1 last=3 settled state=rejected(amqp:not-found "gone")'
    )
    assert frame_line(det) == "[0]  detach      handle=0 closed error=amqp:link:stolen"
    assert "accepted" in frame_line(
        FrameReader().feed(encode_frame(Disposition(role=True, first=UInt(0), state=Accepted())))[0]
    )


def test_item_line_headers_and_errors() -> None:
    items = FrameReader().feed(
        b"AMQP\x03\x01\x00\x00" + bytes.fromhex("0000000c01000000") + b"\x00\x00\x00\x00"
    )
    assert item_line(items[0]) == "AMQP 1.0 SASL protocol header (03 01 00 00)"
    assert item_line(items[1]).startswith(
        "frame error at offset 12 (in the frame at offset 8): expected a data offset"
    )


def test_hex_window_marks_the_byte() -> None:
    data = bytes(range(20))
    assert hex_window(data, 17) == [
        "00000000  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f",
        "00000010  10[11]12 13",
        "            ^^^^",
    ]
    assert hex_window(b"\x01\x02", 2)[-2:] == ["00000000  01 02[..]", "               ^^^^"]


def test_jms_annotation_values_named() -> None:
    from amqpcli.codec.types import Byte

    out = lines(
        {
            Symbol("x-opt-jms-msg-type"): Byte(5),
            Symbol("x-opt-jms-dest"): Byte(1),
            Symbol("other"): Byte(5),
        }
    )
    assert "  x-opt-jms-msg-type (symbol): 5 = JMS TextMessage  (byte)" in out
    assert "  x-opt-jms-dest (symbol): 1 = topic  (byte)" in out
    assert "  other (symbol): 5  (byte)" in out


def test_multi_frame_delivery_assembled() -> None:
    from amqpcli.render.items import TransferAssembler, item_to_json, item_tree

    msg = Message(b"x" * 50, application_properties={"k": "v"}).encode()
    chunks = [msg[:20], msg[20:40], msg[40:]]
    data = (
        encode_frame(
            Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t", more=True),
            payload=chunks[0],
        )
        + encode_frame(
            Transfer(handle=UInt(1), delivery_id=UInt(1), delivery_tag=b"u", more=True),
            payload=b"\x00\x53",
        )
        + encode_frame(Transfer(handle=UInt(0), more=True), payload=chunks[1])
        + encode_frame(Transfer(handle=UInt(1), aborted=True))
        + encode_frame(Transfer(handle=UInt(0)), payload=chunks[2])
    )
    frames = FrameReader().feed(data)
    asm = TransferAssembler()
    wholes = [asm.feed(f) for f in frames]
    assert wholes[:4] == [None, None, None, None]  # the aborted delivery on handle 1 is dropped
    whole = wholes[4]
    assert whole is not None and whole.encode() == msg
    assert frame_line(frames[4], message=whole).endswith(
        'data b"' + "x" * 50 + '" (67 bytes in all)'
    )
    assert "message (all frames of the delivery)" in "\n".join(
        plain_lines(item_tree(frames[4], message=whole))
    )
    assert item_to_json(frames[4], message=whole)["message"]["application-properties"] == {"k": "v"}


def test_a_delivery_ended_by_a_transfer_without_payload_shows_its_message() -> None:
    # a sender may end a delivery with a transfer that carries only `more=false`: its
    # line, JSON and tree give the delivery's message as a last frame with a payload does
    from amqpcli.render.frameline import summarize_payload
    from amqpcli.render.items import TransferAssembler, frame_to_json, item_tree

    msg = Message(b"x" * 50).encode()
    data = (
        encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t", more=True),
                     payload=msg)
        + encode_frame(Transfer(handle=UInt(0), more=False))
    )
    frames = FrameReader().feed(data)
    asm = TransferAssembler()
    whole = [asm.feed(f) for f in frames][1]
    assert whole is not None and whole.encode() == msg and frames[1].payload == b""
    summary = 'data b"' + "x" * 50 + '" (55 bytes in all)'
    assert summarize_payload(b"", message=whole) == summary
    assert frame_line(frames[1], message=whole) == "[0]  transfer    handle=0  " + summary
    assert item_line(frames[1], message=whole) == frame_line(frames[1], message=whole)
    obj = frame_to_json(frames[1], message=whole)
    assert "payload" not in obj and obj["message"]["body"] == {"data": [{"binary-text": "x" * 50}]}
    assert "message (all frames of the delivery)" in "\n".join(
        plain_lines(item_tree(frames[1], message=whole)))
    # without the delivery's message such a frame has nothing to summarise
    assert summarize_payload(b"") == ""
    assert frame_line(frames[1]) == "[0]  transfer    handle=0"
    assert "message" not in frame_to_json(frames[1])
