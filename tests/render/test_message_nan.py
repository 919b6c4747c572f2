"""NaN in a message keeps the JSON format lossless: a NaN with a payload or sign that
"NaN" does not keep makes the object keep its section's bytes (`encoded-sections`), and
they are used when the members still say the same (NaN != NaN must not make them look
edited)."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from amqpcli.codec.composites import AmqpValue, Header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Array, Described, Float, Symbol
from amqpcli.render.message import load_sections, message_bytes_from_json, message_to_json
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

HEADER32 = bytes.fromhex("005370d00000000500000001" "41")  # a list32 header (not canonical)


def _round_trip(raw: bytes) -> tuple[dict, bytes]:  # type: ignore[type-arg]
    obj = message_to_json(load_sections(Message.decode(raw)))
    obj = json.loads(json.dumps(obj))
    return obj, message_bytes_from_json(obj)


@pytest.mark.parametrize("value", [
    "727fc00001",  # float, another payload
    "72ffc00000",  # float, the sign bit set
    "727f800001",  # float, signalling
    "827ff8000000000001",  # double, another payload
    "82fff8000000000000",  # double, the sign bit set
    "e00a02727fc000017fc00000",  # an array of floats, one of them odd
    "c10d02a1016b827ff0000000000001",  # a map's value
])
def test_an_odd_nan_keeps_its_section_and_comes_back(value: str) -> None:
    raw = bytes.fromhex("005377" + value)
    obj, back = _round_trip(raw)
    assert obj["encoded-sections"] == {"body": base64.b64encode(raw).decode()}
    assert back == raw


def test_an_odd_nan_keeps_only_its_own_section() -> None:
    props = bytes.fromhex("005373c00401a10178")  # message-id "x": canonical
    footer = bytes.fromhex("005378c10902a3017a727fc00001")  # {z: an odd float NaN}
    raw = HEADER32 + props + bytes.fromhex("005377a10141") + footer
    obj, back = _round_trip(raw)
    assert obj["encoded-sections"] == {"header": base64.b64encode(HEADER32).decode(),
                                       "footer": base64.b64encode(footer).decode()}
    assert list(obj["encoded-sections"]) == ["header", "footer"]  # in section order
    assert back == raw


@pytest.mark.parametrize("value", ["727fc00000", "827ff8000000000000"])
def test_the_nan_that_nan_reads_back_as_needs_no_encoded(value: str) -> None:
    raw = bytes.fromhex("005377" + value)
    obj, back = _round_trip(raw)
    assert "encoded-sections" not in obj
    assert back == raw


@pytest.mark.parametrize("value", ["727fc00000", "727fc00001", "827ff8000000000001"])
def test_kept_bytes_are_used_with_a_nan_in_the_members(value: str) -> None:
    # the list32 header keeps its bytes; the NaN must not make the members look edited
    raw = HEADER32 + bytes.fromhex("005377" + value)
    obj, back = _round_trip(raw)
    assert "header" in obj["encoded-sections"]
    assert back == raw


@pytest.mark.parametrize("value", ["727fc00000", "727fc00001", "827ff8000000000001"])
def test_whole_encoded_of_older_versions_is_used_with_a_nan_in_the_members(value: str) -> None:
    raw = HEADER32 + bytes.fromhex("005377" + value)
    obj, _ = _round_trip(raw)
    del obj["encoded-sections"]
    obj["encoded"] = base64.b64encode(raw).decode()  # as older versions wrote it
    assert message_bytes_from_json(obj) == raw


def test_an_edited_member_still_wins_over_encoded() -> None:
    raw = HEADER32 + bytes.fromhex("005377727fc00001")
    obj, _ = _round_trip(raw)
    obj["header"]["durable"] = False
    back = Message.decode(message_bytes_from_json(obj))
    assert back.header == Header(durable=False)
    obj["header"]["durable"] = True
    obj["body"]["value"] = {"float": 1.5}
    back = Message.decode(message_bytes_from_json(obj))
    assert back.body == AmqpValue(Float(1.5))


def test_same_value_tells_floats_by_their_bits() -> None:
    from amqpcli.render.jsonvalues import same_value

    nan = float("nan")
    (odd,) = struct.unpack(">d", bytes.fromhex("fff8000000000001"))
    assert same_value(nan, odd) and same_value(Float(nan), Float(odd))
    assert not same_value(0.0, -0.0)
    assert not same_value(Float(1.5), 1.5)
    assert not same_value(nan, 1.0)
    assert same_value(AmqpValue([nan, {"k": Float(nan)}]), AmqpValue([nan, {"k": Float(nan)}]))
    assert not same_value(AmqpValue([nan]), AmqpValue([1.0]))
    assert same_value(Array([nan], "double"), Array([nan], "double"))
    assert not same_value(Array([nan], "double"), Array([nan], "float"))
    assert same_value(Described(Symbol("d"), nan), Described(Symbol("d"), nan))
    assert not same_value(Described(Symbol("d"), nan), Described("d", nan))
    assert not same_value({"a": 1, "b": 2}, {"b": 2, "a": 1})  # a map's order is its bytes


@pytest.mark.integration
def test_replayed_nans_arrive_with_their_bytes(serve: ServePeers, tmp_path: Path) -> None:
    payloads = [bytes.fromhex(h) for h in (
        "005377727fc00001", "005377827ff8000000000001", "005377727f800001",
        HEADER32.hex() + "005377727fc00000")]
    lines = tmp_path / "nan.jsonl"
    lines.write_text("".join(
        json.dumps(message_to_json(load_sections(Message.decode(p)))) + "\n" for p in payloads))
    url = serve("-q") + "/nan"
    r = amqp("send", url, "--from", str(lines), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--count", str(len(payloads)), "--json", "-q")
    assert r.returncode == 0, r.stderr
    got = [message_bytes_from_json(m) for m in json_lines(r.stdout)]
    assert got == payloads


def test_an_odd_nan_in_a_kept_map_key_comes_back() -> None:
    """A map whose key is a list holding an odd NaN (a key Python cannot hash, kept
    wrapped as a MapKey) in a performative: its kept bytes are used, so the NaN and the
    frame's other odd encodings (null fields written out) come back as they were."""
    from amqpcli.render.items import item_bytes_from_json

    raw = bytes.fromhex("0000002602000000005310c0190aa101634040404040404040c10b02c006"
                        "0172ffc000005401")
    (obj,) = json_lines(amqp("decode", "--json", raw.hex()).stdout)
    assert item_bytes_from_json(json.loads(json.dumps(obj))) == raw
