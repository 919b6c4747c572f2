"""decimal32/64/128 in the text views are their decimal number (`bid_decimal`), the same in
trees, one-line values, frame lines and `amqp decode`; they were shown as hex. The JSON
form keeps the bytes."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Array, Decimal32, Decimal64, Decimal128
from amqpcli.render.frameline import summarize_payload
from amqpcli.render.jsonvalues import to_json
from amqpcli.render.text import format_scalar, format_value, plain_lines, value_tree

D64 = Decimal64(bytes.fromhex("31a000000000007d"))  # 12.5


def test_scalars_show_the_number_and_their_type() -> None:
    assert format_scalar(D64) == ("12.5", "decimal64")
    assert format_scalar(Decimal32(bytes.fromhex("b2800000"))) == ("-0", "decimal32")
    assert format_scalar(Decimal64(bytes.fromhex("33e00000000004d2"))) == (
        "1.234E+20", "decimal64")
    assert format_scalar(Decimal128(bytes.fromhex("f8" + "00" * 15))) == (
        "-Infinity", "decimal128")
    assert format_scalar(Decimal32(bytes.fromhex("7e000000"))) == ("sNaN", "decimal32")
    assert format_scalar(Decimal32(bytes.fromhex("6cb89680"))) == ("0", "decimal32")


def test_tree_and_one_line_forms() -> None:
    assert plain_lines(value_tree({"price": D64})) == [
        "  (map, 1 entry)",
        '  "price": 12.5  (decimal64)',
    ]
    # one line: typed like a double (12.5 alone would not say which)
    assert format_value([D64, 12.5]) == "[decimal64:12.5, double:12.5]"
    assert format_value(Array([D64, D64], "decimal64")) == "@array<decimal64>[12.5, 12.5]"


def test_frame_line_body_summary() -> None:
    payload = Message(body=c.AmqpValue(D64)).encode()
    assert summarize_payload(payload) == f"value decimal64:12.5 ({len(payload)} bytes)"


def test_decode_shows_the_number_and_json_keeps_the_bytes() -> None:
    from tests.net.clirun import amqp_in_process

    code, out, err = amqp_in_process("decode", "7432800001")
    assert code == 0, err
    assert "value: 1  (decimal32; @0, 5 bytes)" in out
    code, out, err = amqp_in_process("decode", "7432800001", "--brief")
    assert code == 0, err
    assert "value: 1  (decimal32" in out
    assert to_json(D64) == {"decimal64": "31a000000000007d"}
