"""Maps whose keys are distinct AMQP values but equal in Python (int 1, long 1, true) or
unhashable (a list, a map) in the views: every entry is shown with its key's AMQP type,
and the JSON form (`{"map": [[k, v], …]}`) reads back to the same value and bytes, in a
value, a message's annotations, application-properties and body, and through `amqp send
--from` of `decode --json` / `recv --json` lines. The tree showed one entry (`1 (int):
"b"`) or failed ("expected a hashable map key, found AmqpList")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import Int, Long, decode, encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import key_value
from amqpcli.render.jsonvalues import from_json, same_value, to_json
from amqpcli.render.message import load_sections, message_bytes_from_json, message_to_json
from amqpcli.render.text import format_value, plain_lines, value_tree
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

INT_LONG = "d10000000e000000045401a101615501a10162"  # map32 {int 1: "a", long 1: "b"}
LIST_KEY = "d10000001200000002d000000006000000015401a10161"  # map32 {[int 1]: "a"}
# int 1, long 1, true, ubyte 1, double 1.0, "x", char 'x', {null: null}, the same "x" again
MIXED = ("c13b125401a101615501a1016241a101635001a10164823ff0000000000000a10165"
         "a10178a1016673000000785201c103024040a10167a10178a10168")
BODY = "005377d100000012000000065401a101615501a1016241a10163"
# message-annotations {x-opt-a: 1, int 1: "i", long 1: "l", [1, 2]: "list", true: 3},
# application-properties {"a": 1, char 'a': 2}, body {int 1: 1, ubyte 1: 2}
MESSAGE = ("005372c1260aa307782d6f70742d6155015401a101695501a1016cc0050255015502a1046c697374"
           "415503005374c10d04a10161550173000000615502005377c109045401550150015502")


def _lines(h: str) -> list[str]:
    return plain_lines(value_tree(decode(bytes.fromhex(h))[0]))


def test_the_tree_shows_every_entry_with_its_key_type() -> None:
    assert [x.strip() for x in _lines(INT_LONG)] == [
        "(map, 2 entries)", '1 (int): "a"', '1 (long): "b"']
    assert [x.strip() for x in _lines(LIST_KEY)[1:]] == ['[int:1] (list): "a"']
    got = [x.strip() for x in _lines(MIXED)[1:]]
    assert got == ['1 (int): "a"', '1 (long): "b"', 'true: "c"', '1 (ubyte): "d"',
                   '1.0 (double): "e"', '"x": "f"', "'x' (char): 1  (uint)",
                   '{null: null} (map): "g"', '"x": "h"']
    assert format_value(decode(bytes.fromhex(INT_LONG))[0]) == '{int:1: "a", long:1: "b"}'


@pytest.mark.parametrize("h", [INT_LONG, LIST_KEY, MIXED])
def test_json_reads_back_to_the_same_value_and_bytes(h: str) -> None:
    raw = bytes.fromhex(h)
    v, _ = decode(raw)
    obj = json.loads(json.dumps(to_json(v)))
    assert type(obj["map"]) is list and len(obj["map"]) == len(v)
    back = from_json(obj)
    assert same_value(back, v)
    assert encode(back) == raw


def test_json_keys_are_the_values_themselves() -> None:
    obj = to_json(decode(bytes.fromhex(INT_LONG))[0])
    assert obj["map"] == [[{"int": 1}, "a"], [1, "b"]]
    # written by hand: a long 1 after an int 1, and a list key
    m = from_json({"map": [[{"int": 1}, "a"], [1, "b"], [[1], "c"], [[1], "d"]]})
    assert [key_value(k) for k in m] == [Int(1), Long(1), [1], [1]]
    assert list(m.values()) == ["a", "b", "c", "d"]


@pytest.mark.parametrize("h", [BODY, MESSAGE])
def test_message_json_reads_back_to_the_same_bytes(h: str) -> None:
    raw = bytes.fromhex(h)
    obj = json.loads(json.dumps(message_to_json(load_sections(Message.decode(raw)))))
    assert "encoded-sections" not in obj and "encoded" not in obj  # the members say it all
    assert message_bytes_from_json(obj) == raw


def test_decode_cli_shows_and_writes_every_entry() -> None:
    r = amqp("decode", "--as", "values", LIST_KEY)
    assert r.returncode == 0, r.stderr
    assert '[int:1] (list): "a"' in r.stdout
    r = amqp("decode", BODY)
    assert r.returncode == 0, r.stderr
    assert "map, 3 entries" in r.stdout and "1 (long)" in r.stdout
    r = amqp("decode", "--json", BODY)
    (item,) = json_lines(r.stdout)
    assert item["message"]["body"] == {"value": {"map": [[{"int": 1}, "a"], [1, "b"],
                                                         [True, "c"]], "code": "0xd1"}}


@pytest.mark.integration
def test_replayed_maps_arrive_with_their_bytes(serve: ServePeers, tmp_path: Path) -> None:
    payloads = [bytes.fromhex(h) for h in (BODY, MESSAGE)]
    decoded = tmp_path / "decoded.jsonl"
    out = []
    for p in payloads:
        r = amqp("decode", "--json", p.hex())
        assert r.returncode == 0, r.stderr
        out.append(r.stdout)
    decoded.write_text("".join(out))
    url = serve("-q") + "/maps"
    r = amqp("send", url, "--from", str(decoded), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--count", str(len(payloads)), "--json", "-q")
    assert r.returncode == 0, r.stderr
    received = [message_bytes_from_json(m) for m in json_lines(r.stdout)]
    assert received == payloads
    # and again from recv's own lines
    again = tmp_path / "received.jsonl"
    again.write_text(r.stdout)
    r = amqp("send", url, "--from", str(again), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--count", str(len(payloads)), "--json", "-q")
    assert [message_bytes_from_json(m) for m in json_lines(r.stdout)] == payloads
