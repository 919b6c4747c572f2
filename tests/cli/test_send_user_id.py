"""`--user-id` is binary (Part 3 §3.2.4): text goes as its UTF-8 bytes and
`binary:hex:…` as any bytes, as a binary value takes them elsewhere (`-P k:binary=hex:…`,
`--message-id binary:…`). The old code sent every value's text, so bytes that are not
UTF-8 text could not be given at all."""

from __future__ import annotations

import pytest

from amqpcli.cli.send import build_template
from amqpcli.errors import UserError
from tests.net.clirun import amqp_in_process


def _user_id(text: str) -> bytes:
    template = build_template("data", {"user_id": text}, None, None, None, None, [], [], [], [])
    value = template.properties["user_id"]
    assert type(value) is bytes
    return value


@pytest.mark.parametrize(("text", "sent"), [
    ("alice", b"alice"),
    ("zoë", "zoë".encode()),
    ("urn:a:b", b"urn:a:b"),  # a colon with no binary: before it is text
    ("hex:00ff", b"hex:00ff"),
    ("binary:hex:00ff", b"\x00\xff"),
    ("BINARY:hex:", b""),
    ("binary:bob", b"bob"),
])
def test_text_is_its_utf8_and_binary_hex_any_bytes(text: str, sent: bytes) -> None:
    assert _user_id(text) == sent


def test_bad_hex_is_one_line_naming_the_option() -> None:
    with pytest.raises(UserError) as e:
        _user_id("binary:hex:0g")
    assert str(e.value) == ("--user-id: bad binary value 'hex:0g': not hex: after hex:, "
                            "pairs of hex digits (hex:00ff)")
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "x",
                                   "--user-id", "binary:hex:0g")
    assert code == 2 and err.count("\n") == 1 and "--user-id: bad binary value" in err
