"""What `amqp decode` makes of its input: hex/base64/raw forms and frames/message/values."""

from __future__ import annotations

import base64

import pytest

from amqpcli.cli.decode_input import (
    InputError,
    choose_reader,
    detect_format,
    detect_kind,
    frames_chain,
    parse_dump,
    parse_hex,
    parse_input,
)
from amqpcli.codec.composites import Open
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message

DATA = AMQP_HEADER + encode_frame(Open(container_id="client1")) + b"hello world!!"

WIRESHARK = """\
0000   41 4d 51 50 00 01 00 00 00 00 00 17 02 00 00 00   AMQP............
0010   00 53 10 c0 0a 01 a1 07 63 6c 69 65 6e 74 31 68   .S......client1h
0020   65 6c 6c 6f 20 77 6f 72 6c 64 21 21               ello world!!
"""


def test_dump_styles() -> None:
    hexdump_c = (
        "00000000  41 4d 51 50 00 01 00 00  00 00 00 17 02 00 00 00  |AMQP............|\n"
        "00000010  00 53 10 c0 0a 01 a1 07  63 6c 69 65 6e 74 31 68  |.S......client1h|\n"
        "00000020  65 6c 6c 6f 20 77 6f 72  6c 64 21 21              |ello world!!|\n"
        "0000002c\n"
    )
    xxd = (
        "00000000: 414d 5150 0001 0000 0000 0017 0200 0000  AMQP............\n"
        "00000010: 0053 10c0 0a01 a107 636c 6965 6e74 3168  .S......client1h\n"
        "00000020: 656c 6c6f 2077 6f72 6c64 2121            ello world!!\n"
    )
    for text in (hexdump_c, xxd, WIRESHARK):
        assert parse_dump(text) == DATA
        assert parse_input(text.encode()) == (DATA, "hex")


def test_ascii_column_that_looks_like_hex_is_ignored() -> None:
    text = "00000000  de ad be ef 61 62 63 64  |....abcd|\n"
    assert parse_hex(text) == bytes.fromhex("deadbeef61626364")
    xxd = "00000000: dead beef 6162 6364  ....abcd\n"
    assert parse_hex(xxd) == bytes.fromhex("deadbeef61626364")


def test_offsets_must_chain_else_plain_hex() -> None:
    # Two lines that start with a long hex word but are not a dump: read as plain hex.
    text = "00537000 4142\n00537001 4344\n"
    assert parse_dump(text) is None
    assert parse_hex(text) == bytes.fromhex("00537000414200537001" + "4344")


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("00 53 77", b"\x00\x53\x77"),
        ("0x00,0x53, 0x77", b"\x00\x53\x77"),
        ("\\x00\\x53\\x77", b"\x00\x53\x77"),
        ("00:53:77", b"\x00\x53\x77"),
        ("005377\n41", b"\x00\x53\x77\x41"),
    ],
)
def test_plain_hex(text: str, data: bytes) -> None:
    assert parse_hex(text) == data


@pytest.mark.parametrize("text", ["0053 7", "00 5z", ""])
def test_bad_hex(text: str) -> None:
    with pytest.raises(InputError):
        parse_hex(text)


def test_format_detection() -> None:
    assert detect_format(DATA) == "raw"
    assert detect_format(DATA.hex().encode()) == "hex"
    assert detect_format(base64.b64encode(DATA)) == "base64"
    assert detect_format(base64.urlsafe_b64encode(b"\xfb\xff\xfe" * 5)) == "base64"
    assert (
        parse_input(base64.urlsafe_b64encode(b"\xfb\xff\xfe" * 5).rstrip(b"="))[0]
        == b"\xfb\xff\xfe" * 5
    )
    assert detect_format(b"not anything!") == "raw"
    with pytest.raises(InputError):
        parse_input(b"\xff\x00", "hex")


def test_unpadded_base64_and_a_hex_digit_short() -> None:
    data = bytes.fromhex("005377a1026869")
    unpadded = base64.b64encode(data).rstrip(b"=")
    assert unpadded == b"AFN3oQJoaQ"
    assert parse_input(unpadded) == (data, "base64")
    # every character a hex digit, one short: a typo, said as such, not decoded as text
    with pytest.raises(InputError, match="odd number of hex digits .7.: a digit missing"):
        parse_input(b"0053774")
    assert parse_input(b"0053774", "raw") == (b"0053774", "raw")
    # short words stay raw: no padding is guessed for them
    assert detect_format(b"abc") == "raw"


def test_hex_but_for_a_typo_is_said_so() -> None:
    """Hex groups with a character or two that are not hex digits: a typo, said where —
    not read as base64 (`00 53 77 a1 02 68 6g` is valid base64) nor as the characters."""
    for text, ch, at in ((b"00 53 77 a1 02 68 6g", "g", 20), (b"00 53 zz", "z", 7),
                         (b"0053 77a1 02x8", "x", 13)):
        with pytest.raises(InputError, match=f"not hex: unexpected character '{ch}' at "
                                             f"position {at} .the rest is hex"):
            parse_input(text)
        with pytest.raises(InputError, match="the rest is hex"):
            choose_reader(text + b" " * 10)  # (an input that goes on: its first bytes)
    assert parse_input(b"00 53 zz", "raw") == (b"00 53 zz", "raw")
    assert parse_input(b"AFN3 oQJo aQ==")[1] == "base64"  # not hex-shaped enough
    assert detect_format(b"hello world foo") == "raw"


def test_kind_detection_strictest_first() -> None:
    frame = encode_frame(Open(container_id="x"))
    msg = Message(b"body").encode()
    assert detect_kind(AMQP_HEADER) == "frames"
    assert detect_kind(frame + frame) == "frames"
    assert frames_chain(frame[:-1]) is False  # sizes do not chain to the end...
    assert detect_kind(frame[:-1]) == "frames"  # ...but it opens with a frame: cut short
    assert detect_kind(msg) == "message"
    assert detect_kind(bytes.fromhex("a10568656c6c6f")) == "values"
    # Sections out of order are not a message.
    header, props = bytes.fromhex("005370c0020141"), bytes.fromhex("005373c0020140")
    assert detect_kind(header + props) == "message"
    assert detect_kind(props + header) == "values"
    assert frames_chain(b"") is False
    assert frames_chain(bytes.fromhex("0000000802000000") * 3) is True
    assert frames_chain(bytes.fromhex("0000000801000000")) is False  # doff 1


def test_a_stream_cut_short_still_reads_as_frames() -> None:
    frame = encode_frame(Open(container_id="x"))
    assert detect_kind(frame + frame[:-3]) == "frames"
    assert detect_kind(frame + b"\xff\xff") == "frames"
    assert detect_kind(bytes.fromhex("0000000d02000000a1026869")) == "values"  # no performative


def test_a_byte_order_mark_before_text_is_left_out() -> None:
    """An editor's UTF-8 BOM before hex or base64 made the whole input raw bytes."""
    bom = b"\xef\xbb\xbf"
    assert parse_input(bom + b"00 53 77 a1 02 68 69\n") == (bytes.fromhex("005377a1026869"),
                                                            "hex")
    assert parse_input(bom + b"AFN3oQJoaQ==") == (bytes.fromhex("005377a1026869"), "base64")
    assert parse_input(bom + b"00 53", "hex") == (b"\x00\x53", "hex")
    assert parse_input(bom + b"\x00\x53", "raw") == (bom + b"\x00\x53", "raw")
    assert parse_input(bom + b"\x00\x53\x77")[0].startswith(bom)  # raw bytes stay as they are


def test_white_space_alone_is_no_bytes() -> None:
    assert parse_input(b"  \n \t\r\n") == (b"", "raw")
    assert parse_input(b" ", "raw") == (b" ", "raw")
