"""recv's text view says a transfer's message-format when it is not 0 (a vendor's
format), on the message's first line, as decode's tree writes the transfer's field; the
AMQP message format, 0, is not shown. The old view said nothing of it, so a vendor's
message read as an AMQP one (and bytes that are no AMQP message, as a decode error only)."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.render.message import payload_tree
from amqpcli.render.text import plain_lines
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

FORMAT = 0x80013700  # a vendor's format (Azure's batch format)
SHOWN = f"  message-format: {FORMAT}  (uint)"


def test_recv_text_shows_a_vendor_format_only(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/formats"
    lines = [{"body": {"value": "a"}, "message-format": FORMAT}, {"body": {"value": "b"}},
             {"encoded": "AAEC", "message-format": 7}]  # (bytes that are no AMQP message)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = amqp("send", url, "--from", str(path), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--drain", "-q")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[:3] == ["message 1  (6 bytes)", SHOWN,
                       '  body: amqp-value "a"  (0x77 = amqp:amqp-value:*)']
    assert out[3:5] == ["message 2  (6 bytes)",
                        '  body: amqp-value "b"  (0x77 = amqp:amqp-value:*)']
    assert out[5].startswith("message 3: decode error ")
    assert out[6:] == ["  message-format: 7  (uint)"]


def test_format_zero_is_not_shown() -> None:
    payload = bytes.fromhex("005377a10161")  # amqp-value "a"
    assert plain_lines(payload_tree(payload, "m", message_format=0)) == plain_lines(
        payload_tree(payload, "m"))
    assert "message-format" not in "\n".join(plain_lines(payload_tree(payload, "m")))
