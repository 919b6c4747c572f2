"""`amqp recv --json` of messages that do not decode: a subject that is not UTF-8, bytes
that are no message. Each is written with a warning (the bytes of the section that does
not decode in `encoded-sections`, bytes that are no message whole in `encoded`), accepted,
and `send --from` sends the very bytes again; the text views show the decode error."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from proton.utils import BlockingConnection

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.peers import DirectReceiver

pytestmark = pytest.mark.integration

BAD_SUBJECT = bytes.fromhex("005373c00804404040a102fffe" "005377a10141")
NOT_A_MESSAGE = b"\x01\x02\x03"
GOOD = bytes.fromhex("005377a10142")


class _Raw:
    """Sent by proton as these bytes, not as a proton Message."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def send(self, sender: Any, tag: Any = None) -> Any:
        dlv = sender.delivery(tag or sender.delivery_tag())
        sender.stream(self.raw)
        sender.advance()
        return dlv


def _put(url: str, address: str, *raws: bytes) -> None:
    conn = BlockingConnection(url, allowed_mechs="ANONYMOUS", timeout=30)
    try:
        snd = conn.create_sender(address)
        for raw in raws:
            snd.send(_Raw(raw))
    finally:
        conn.close()


def test_json_keeps_what_does_not_decode_and_send_from_replays_it(
    serve: ServePeers, direct_receiver: Callable[..., DirectReceiver], tmp_path: Path,
) -> None:
    url = serve("-q")
    _put(url, "q", BAD_SUBJECT, NOT_A_MESSAGE, GOOD)
    out = tmp_path / "m.jsonl"
    r = amqp("recv", f"{url}/q", "--json", "--out", str(out), "--drain")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr
    assert ('amqp: warning: message 1: its properties section does not decode (at offset 11: expected '
            'UTF-8 string, found byte 0xff); kept as bytes in "encoded-sections"') in r.stderr
    assert "amqp: warning: message 2: not an AMQP message (at offset 0:" in r.stderr
    assert 'found 0x01); written whole in "encoded"' in r.stderr
    assert "amqp: warning: message 3" not in r.stderr
    assert "received 3, accept 3 " in r.stderr
    objs = json_lines(out.read_text())
    assert base64.b64decode(objs[0]["encoded-sections"]["properties"]) == BAD_SUBJECT[:13]
    assert "encoded" not in objs[0]
    assert base64.b64decode(objs[1]["encoded"]) == NOT_A_MESSAGE
    assert objs[0]["body"] == {"value": "A"} and "properties" not in objs[0]
    assert objs[2]["body"] == {"value": "B"}
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/dst", "--from", str(out))
    assert r.returncode == 0, r.stderr
    assert [g.raw for g in rcv.wait_for_messages(3)] == [BAD_SUBJECT, NOT_A_MESSAGE, GOOD]


def test_text_shows_the_decode_errors(serve: ServePeers) -> None:
    url = serve("-q")
    _put(url, "q", BAD_SUBJECT, NOT_A_MESSAGE)
    r = amqp("recv", f"{url}/q", "--drain")
    assert r.returncode == 0, r.stderr
    assert "properties: decode error at offset 11: expected UTF-8 string" in r.stdout
    assert "message 2: decode error at offset 0: expected a message section" in r.stdout
    assert "received 2, accept 2 " in r.stderr
