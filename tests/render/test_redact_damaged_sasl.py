"""A SASL frame has no payload by the spec: bytes after its performative are the fields
of a damaged one (a sasl-init or sasl-response whose list constructor was cut to list0,
0x45, leaves its fields, the password among them, after an empty performative). The
views that give a payload's bytes (`decode` tree and JSON, `pcap-dump --json`) give
its size only, unless `--show-secrets`."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.dissect.helpers import C2S, S2C, Script, write
from tests.net.clirun import amqp, json_lines

PASSWORD = b"Sekrit99"
# sasl-init (0x41) and sasl-response (0x43) with their list8 constructor (0xc0) made 0x45
INIT = bytes.fromhex("0000002902010000005341451c02a305504c41494ea01261646d696e00626f62"
                     "00") + PASSWORD
RESPONSE = bytes.fromhex("0000001d02010000005343451001a00d00626f6200") + PASSWORD
B64 = base64.b64encode(INIT[12:]).decode()


@pytest.mark.parametrize("frame", [INIT, RESPONSE], ids=["sasl-init", "sasl-response"])
def test_decode_gives_the_size_only(frame: bytes) -> None:
    tree = amqp("decode", frame.hex())
    assert tree.returncode == 0, tree.stderr
    assert "payload: *** (may hold a SASL secret)" in tree.stdout
    assert PASSWORD.hex() not in tree.stdout, tree.stdout
    (obj,) = json_lines(amqp("decode", "--json", frame.hex()).stdout)
    assert obj["redacted"] is True and obj["payload-size"] == len(frame) - 12
    assert "payload" not in obj
    (shown,) = json_lines(amqp("decode", "--json", "--show-secrets", frame.hex()).stdout)
    assert base64.b64decode(shown["payload"]).endswith(PASSWORD)


def test_pcap_dump_json_gives_the_size_only(tmp_path: Path) -> None:
    s = Script().raw(C2S, b"AMQP\x03\x01\x00\x00").raw(S2C, b"AMQP\x03\x01\x00\x00")
    cap = write(tmp_path / "damaged-sasl.pcapng", s.raw(C2S, INIT))
    r = amqp("pcap-dump", str(cap), "--json")
    assert r.returncode == 0, r.stderr
    assert B64 not in r.stdout
    (frame,) = [o for o in json_lines(r.stdout) if o.get("record") == "frame"
                and o.get("type") == "sasl"]
    assert frame["redacted"] is True and frame["payload-size"] == len(INIT) - 12
    shown = amqp("pcap-dump", str(cap), "--json", "--show-secrets")
    assert B64 in shown.stdout
