"""A float (32-bit) is shown as the shortest decimal that reads back as the same float:
0.1, not 0.10000000149011612 (its value as a double, which the old code showed) in the
text views (decode's tree, recv's lines, pcap-dump's bodies) and the JSON, which reads it
back as the very float it was. A double is shown as Python's repr, as before."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest

from amqpcli.codec.message import Message
from amqpcli.codec.types import Float
from amqpcli.render.bodyline import body_line
from amqpcli.render.jsonvalues import from_json, to_json
from amqpcli.render.message import (
    load_sections,
    message_bytes_from_json,
    message_to_json,
    payload_tree,
)
from amqpcli.render.text import format_value, plain_lines
from amqpcli.render.types import shortest_float32
from tests.net.clirun import amqp_in_process

F32 = struct.Struct(">f")
TENTH = F32.unpack(F32.pack(0.1))[0]  # the float nearest 0.1: 0.10000000149011612
# an amqp-value message: a list of the float 0.1, the double 0.1 and an array of floats
# (1/3, the largest float)
MESSAGE = bytes.fromhex("005377" "d00000001e" "00000003" "723dcccccd"
                        "823fb999999999999a" "e00a02723eaaaaab7f7fffff")
# message-annotations {x: float 0.1} as a map32, whose bytes the JSON keeps
# (`encoded-sections`): they stand for the member only while it reads as the same float
ANNOTATED = bytes.fromhex("005372" "d10000000c" "00000002" "a30178" "723dcccccd") + MESSAGE


def _bits(x: float) -> bytes:
    return F32.pack(x)


@pytest.mark.parametrize(("value", "text"), [
    (TENTH, "0.1"),
    (1 / 3, "0.33333334"),
    (16777217.0, "16777216.0"),
    (3.4028234663852886e38, "3.4028235e+38"),
    (1e-45, "1e-45"),
    (-0.0, "-0.0"),
    (float("inf"), "inf"),
])
def test_the_shortest_text_that_reads_back_as_the_float(value: float, text: str) -> None:
    assert repr(shortest_float32(value)) == text


def test_any_float_reads_back_from_its_text() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        bits = rng.getrandbits(32).to_bytes(4, "big")
        (x,) = F32.unpack(bits)
        if not math.isnan(x):
            assert _bits(float(repr(shortest_float32(x)))) == bits


def test_text_views() -> None:
    msg = load_sections(Message.decode(MESSAGE))
    assert format_value(msg.body.value) == (
        "[float:0.1, double:0.1, @array<float>[0.33333334, 3.4028235e+38]]")
    tree = "\n".join(plain_lines(payload_tree(MESSAGE)))
    assert "0.1 " in tree and "0.33333334" in tree and "0000000149" not in tree
    assert body_line(MESSAGE)[0] == (
        "[float:0.1, double:0.1, @array<float>[0.33333334, 3.4028235e+38]]")
    code, out, err = amqp_in_process("decode", MESSAGE.hex())
    assert code == 0, err
    assert "0.1 " in out and "0000000149" not in out


def test_json_is_short_and_reads_back_the_same_float() -> None:
    value = load_sections(Message.decode(MESSAGE)).body.value
    text = json.dumps(to_json(value))
    assert text == ('{"list": [{"float": 0.1}, {"double": 0.1}, {"array": [0.33333334, '
                    '3.4028235e+38], "type": "float"}], "code": "0xd0"}')
    back = from_json(json.loads(text))
    assert type(back[0]) is Float and _bits(back[0]) == _bits(TENTH) and back[0] == TENTH
    assert [_bits(x) for x in back[2]] == [bytes.fromhex("3eaaaaab"), bytes.fromhex("7f7fffff")]
    # a message's kept bytes still stand for its members (the floats read the same)
    obj = json.loads(json.dumps(message_to_json(load_sections(Message.decode(ANNOTATED)))))
    assert obj["message-annotations"] == {"x": {"float": 0.1}}
    assert "message-annotations" in obj["encoded-sections"]
    assert message_bytes_from_json(obj) == ANNOTATED
