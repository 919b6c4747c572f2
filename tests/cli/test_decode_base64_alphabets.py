"""Base64 in the URL-safe alphabet (`-`, `_`) is checked as the standard one is: a
character of neither alphabet is an error, not dropped (`A_N3****oQJoaQ==` read as the
bytes of `A_N3oQJoaQ==`), as the reader of a long input already said."""

from __future__ import annotations

import base64

import pytest

from amqpcli.cli.decode_input import Base64Reader, InputError, parse_input
from tests.net.clirun import amqp_in_process

HI = bytes.fromhex("005377a1026869")


@pytest.mark.parametrize("text", ["A_N3****oQJoaQ==", "AFN3oQ-J!!oaQ=", "AFN3o.Q_JoaQ"])
def test_a_character_of_neither_alphabet_is_an_error(text: str) -> None:
    with pytest.raises(InputError, match="^not base64"):
        parse_input(text.encode(), "base64")
    reader = Base64Reader()  # the reader of a long input says the same
    with pytest.raises(InputError, match="^not base64"):
        reader.feed(text.encode())
        reader.close()
    code, out, err = amqp_in_process("decode", "--input", "base64", text)
    assert code == 2 and out == "" and err.startswith("amqp: error: argument: not base64")


def test_either_alphabet_still_reads() -> None:
    data = bytes(range(256)) + HI
    for text in (base64.urlsafe_b64encode(data), base64.urlsafe_b64encode(data).rstrip(b"="),
                 base64.b64encode(data)):
        assert parse_input(text, "base64") == (data, "base64")
