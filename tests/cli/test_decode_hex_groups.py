"""Plain hex is read group by group (the digits between separators): a group of an odd
number of digits never borrows a digit from the next one, which would give other bytes
than the ones written (`0x1 0x2` read as 0x12)."""

from __future__ import annotations

import pytest

from amqpcli.cli.decode_input import InputError, PlainHexReader, parse_input
from tests.net.clirun import amqp_in_process, json_lines

HI = bytes.fromhex("005377a1026869")  # a message: amqp-value "hi"


@pytest.mark.parametrize("text", [
    "0x0,0x53,0x77,0xa1,0x2,0x68,0x69",  # printf("0x%x,") or hex(): no leading zero
    "0x0 0x53 0x77 0xa1 0x2 0x68 0x69",
    "\\x0\\x53\\x77\\xa1\\x2\\x68\\x69",
])
def test_one_digit_after_a_prefix_is_that_byte(text: str) -> None:
    assert parse_input(text.encode()) == (HI, "hex")
    code, out, err = amqp_in_process("decode", "--json", text)
    assert code == 0, err
    assert [i["item"] for i in json_lines(out)] == ["message"]


@pytest.mark.parametrize("text", ["0:53:77:a1:2:68:69", "00537 7a1026869", "12 3 4"])
def test_a_group_of_an_odd_number_of_digits_is_a_usage_error(text: str) -> None:
    with pytest.raises(InputError, match="odd number of hex digits .* in the group ending at"):
        parse_input(text.encode())
    code, out, err = amqp_in_process("decode", text)
    assert code == 2 and out == ""
    assert err.startswith("amqp: error: argument: odd number of hex digits (")
    assert "a digit missing?" in err and "Traceback" not in err


def test_groups_read_the_same_in_any_pieces() -> None:
    text = "0x0, 0x53,0x77 a1:0x2 6869 " * 200
    want = HI * 200
    for size in (1, 2, 3, 7, 64):
        reader = PlainHexReader()
        raw = text.encode()
        got = b"".join(reader.feed(raw[i:i + size]) for i in range(0, len(raw), size))
        assert got + reader.close() == want, size


def test_hex_wrapped_at_any_width_reads_as_one_line() -> None:
    # a long line of hex folded at an odd width (fold -w 5): a line break ends no group
    for text in ("00537\n7a102\n6869\n", "00537\r\n7a102\r\n6869\r\n"):
        assert parse_input(text.encode()) == (HI, "hex")
        reader = PlainHexReader()
        raw = text.encode()
        got = b"".join(reader.feed(raw[i:i + 1]) for i in range(len(raw)))
        assert got + reader.close() == HI
