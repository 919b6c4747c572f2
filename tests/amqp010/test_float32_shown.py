"""A 0-10 `float` (32-bit) is shown as the shortest decimal that reads back as the same 32
bits (0.1), as 1.0's floats are, in `decode`'s tree and JSON and in `pcap-dump`'s lines,
frame records and delivery records; a `double` as it is. They were shown at a double's
precision (0.10000000149011612, digits no float holds)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from amqpcli.amqp010 import PROTOCOL_HEADER, Array, Command, Struct, TypedFloat, encode_assembly
from tests.amqp010 import pcap_write
from tests.net.clirun import amqp_in_process

F32 = struct.unpack(">f", struct.pack(">f", 0.1))[0]  # the float nearest 0.1
LONG = repr(F32)  # 0.10000000149011612
FLOAT, DOUBLE = 0x23, 0x33


def _transfer() -> bytes:
    headers = {"f": TypedFloat(F32, FLOAT), "a": Array([TypedFloat(F32, FLOAT)], FLOAT),
               "m": {"g": TypedFloat(F32, FLOAT)},
               "d": TypedFloat(F32, DOUBLE)}  # a double of the same value: all its digits
    return encode_assembly(Command.make("message.transfer", destination="q"), 1,
                           (Struct.make("message.message-properties",
                                        application_headers=headers),), b"x")


def _run(*args: str) -> str:
    code, out, err = amqp_in_process(*args)
    assert code == 0, err
    return out


def _headers(obj: dict[str, Any]) -> Any:
    (props,) = obj["header"] if "header" in obj else obj["headers"]
    return props["fields"]["application-headers"]


EXPECTED_JSON = {"f": {"float": 0.1}, "a": {"array": [0.1], "type": "float"},
                 "m": {"map": {"g": {"float": 0.1}}}, "d": {"double": F32}}


def test_decode_shows_a_float_at_its_shortest(tmp_path: Path) -> None:
    path = tmp_path / "t.bin"
    path.write_bytes(PROTOCOL_HEADER + _transfer())
    text = _run("decode", str(path)).splitlines()
    assert {"      f: 0.1  (float)", "      a: [0.1]  (array)", "      m: {g: float:0.1}  (map)",
            f"      d: {LONG}  (double)"} <= set(text)
    (assembly,) = [json.loads(x) for x in _run("decode", str(path), "--json").splitlines()
                   if '"assembly"' in x]
    assert _headers(assembly) == EXPECTED_JSON


def test_pcap_dump_shows_a_float_at_its_shortest(tmp_path: Path) -> None:
    path = tmp_path / "t.pcap"
    pcap_write.write(path, [("client", PROTOCOL_HEADER), ("server", PROTOCOL_HEADER),
                            ("client", _transfer())])
    (line,) = [x for x in _run("pcap-dump", str(path)).splitlines() if "message.transfer d" in x]
    assert f"application-headers={{f=0.1, a=[0.1], m={{g=0.1}}, d={LONG}}}" in line
    records = [json.loads(x) for x in _run("pcap-dump", str(path), "--json").splitlines()]
    (frame,) = [r for r in records if r.get("method") == "message.transfer"]
    assert _headers(frame) == EXPECTED_JSON
    records = [json.loads(x) for x in _run("pcap-dump", "-d", str(path), "--json").splitlines()]
    (delivery,) = [r for r in records if r["record"] == "delivery"]
    assert _headers(delivery) == EXPECTED_JSON



def _strict_json(line: str) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(line, parse_constant=refuse)


def test_json_writes_nan_and_infinities_as_1_0_does(tmp_path: Path) -> None:
    # they were written as the bare tokens NaN and Infinity, which are not JSON
    nan, inf = float("nan"), float("inf")
    headers = {"n": TypedFloat(nan, FLOAT), "i": TypedFloat(inf, DOUBLE),
               "a": Array([TypedFloat(-inf, FLOAT)], FLOAT)}
    path = tmp_path / "t.bin"
    path.write_bytes(PROTOCOL_HEADER + encode_assembly(
        Command.make("message.transfer", destination="q"), 1,
        (Struct.make("message.message-properties", application_headers=headers),), b""))
    (assembly,) = [_strict_json(x) for x in _run("decode", str(path), "--json").splitlines()
                   if '"assembly"' in x]
    assert _headers(assembly) == {"n": {"float": "NaN"}, "i": {"double": "Infinity"},
                                  "a": {"array": ["-Infinity"], "type": "float"}}
