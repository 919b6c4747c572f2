"""A transfer whose payload is not a valid message is shown as bytes, and a SASL
performative in it is then not masked as a message's would be: when one may begin in it,
the payload is hidden (its size only) in every view, unless --show-secrets; the reason it
is no message is still said."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Symbol
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run

SECRET = b"hunter2"
SASL = encode(c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0user\0" + SECRET))
VALID = b"\x00\x53\x77" + SASL  # a message whose amqp-value is a sasl-init
INVALID = VALID + b"\xff"  # the same, and a byte that begins no section
REASON = ("not a valid message at payload byte 31: expected a message section (a described "
          "type), found 0xff")


def transfer(payload: bytes, did: int = 1, fmt: int = 0) -> bytes:
    return encode_frame(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t",
                                   message_format=fmt, settled=True), 0, payload=payload)


def leaks(text: str) -> bool:
    return (SECRET.hex() in text or SECRET.decode() in text
            or base64.b64encode(INVALID).decode() in text)


def test_decode_views_hide_it() -> None:
    frames = transfer(VALID) + transfer(INVALID, 2) + transfer(INVALID, 3, fmt=0x80013700)
    code, out, err = run("decode", frames.hex())
    assert code == 0, err
    assert not leaks(out + err)
    assert out.count(f"payload: *** (may hold a SASL secret)  ({len(INVALID)} bytes)") == 2
    assert "message: not a valid message at payload byte 31 (offset" in out
    code, out, err = run("decode", "--brief", frames.hex())
    assert code == 0 and not leaks(out + err)
    assert f"{REASON} ({len(INVALID)} bytes)" in out
    code, out, err = run("decode", "--json", frames.hex())
    assert code == 0 and not leaks(out + err)
    objs = [json.loads(x) for x in out.splitlines()]
    for o in objs[1:]:
        assert o["redacted"] and o["payload-size"] == len(INVALID) and "payload" not in o
    assert objs[1]["message-error"]["payload-offset"] == 31
    # asked for: shown
    code, out, _ = run("decode", "--show-secrets", frames.hex())
    assert SECRET.hex() in out
    code, out, _ = run("decode", "--json", "--show-secrets", frames.hex())
    assert base64.b64encode(INVALID).decode() in out


def _capture(tmp_path: Path) -> str:
    """A capture of one transfer whose payload is INVALID."""
    s = Script().open().sender_link()
    s.raw(0, transfer(INVALID, 0))
    s.close()
    return str(write(tmp_path / "sasl-in-message.pcapng", s))


def test_pcap_dump_views_hide_it(tmp_path: Path) -> None:
    cap = _capture(tmp_path)
    code, out, err = run("pcap-dump", cap)
    assert code == 0, err
    assert not leaks(out + err)
    assert f"{REASON} ({len(INVALID)} bytes)" in out
    for args in (["--deliveries", "--bodies"], ["--frames-only"]):
        code, out, err = run("pcap-dump", *args, cap)
        assert not leaks(out + err)
    code, out, err = run("pcap-dump", "--json", cap)
    assert code == 0 and not leaks(out + err)
    t = [json.loads(x) for x in out.splitlines() if '"transfer"' in x]
    assert t[0]["payload-size"] == len(INVALID) and "payload" not in t[0]
    assert t[0]["message-error"]["payload-offset"] == 31
    code, out, _ = run("pcap-dump", "--json", "--show-secrets", cap)
    assert base64.b64encode(INVALID).decode() in out


def test_pcap_dump_delivery_records_hide_it(tmp_path: Path) -> None:
    # the delivery record's message fell back to the payload's bytes, password and all
    cap = _capture(tmp_path)
    code, out, err = run("pcap-dump", "--deliveries", "--json", cap)
    assert code == 0, err
    assert not leaks(out + err)
    (rec,) = [json.loads(x) for x in out.splitlines()]
    assert rec["redacted"] and rec["message"]["size"] == len(INVALID)
    assert "encoded" not in rec["message"] and rec["message"]["undecodable"]
    code, out, _ = run("pcap-dump", "--deliveries", "--json", "--show-secrets", cap)
    assert base64.b64encode(INVALID).decode() in out
