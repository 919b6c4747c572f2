"""`amqp recv --json` of what RabbitMQ 3.10 delivers: its header is written another way than
our encoder writes it (durable false and first-acquirer true spelt out, a trailing null),
so the line keeps that section's bytes (`encoded-sections`), and only those: not a second
copy of the body. `send --from` of the line sends the very message again."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from amqpcli.codec.message import Message
from tests.net.clirun import amqp, json_lines
from tests.peers import DirectReceiver

pytestmark = pytest.mark.integration

# RabbitMQ 3.10's header for a message sent with none: [false, null, null, true, null]
RABBITMQ_HEADER = bytes.fromhex("005370c006054240404140")


def _recv_line(url: str, out: Path) -> str:
    r = amqp("recv", url, "-c", "1", "-t", "30", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr.lower() and "amqp: message" not in r.stderr
    (line,) = out.read_text().splitlines()
    return line


def test_a_message_from_rabbitmq_keeps_its_header_bytes_and_replays_exactly(
    rabbitmq_url: str, rabbitmq_queue: str, tmp_path: Path,
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    body = tmp_path / "body"
    body.write_bytes(os.urandom(1 << 20))
    r = amqp("send", f"{rabbitmq_url}/{rabbitmq_queue}", "-f", str(body),
             "--message-id", "m-1", "-P", "k=v", "-q")
    assert r.returncode == 0, r.stderr
    first = tmp_path / "first.jsonl"
    line = _recv_line(f"{rabbitmq_url}/{rabbitmq_queue}", first)
    (obj,) = json_lines(line)
    assert obj["encoded-sections"] == {"header": base64.b64encode(RABBITMQ_HEADER).decode()}
    assert "encoded" not in obj
    assert obj["header"] == {"durable": False, "first-acquirer": True}
    # the body's base64 (4/3 of 1 MiB) and a few hundred bytes: not twice the body
    assert len(line) < len(body.read_bytes()) * 4 / 3 + 500

    # out again, to a peer that keeps the bytes: the header as RabbitMQ wrote it, the bare
    # message as it was
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/dst", "--from", str(first), "-q")
    assert r.returncode == 0, r.stderr
    (got,) = rcv.wait_for_messages(1)
    sent = Message.decode(got.raw)
    assert sent.section_bytes("header") == RABBITMQ_HEADER
    assert hashlib.sha256(sent.bare_bytes).hexdigest() == obj["bare-sha256"]
    assert sent.value == body.read_bytes()

    # and through RabbitMQ again: the same line, byte for byte where it counts
    r = amqp("send", f"{rabbitmq_url}/{rabbitmq_queue}", "--from", str(first), "-q")
    assert r.returncode == 0, r.stderr
    again = json_lines(_recv_line(f"{rabbitmq_url}/{rabbitmq_queue}", tmp_path / "again.jsonl"))
    assert again == [obj]
