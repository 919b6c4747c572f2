"""`amqp send --from` against RabbitMQ: the messages in `amqp decode --json` and `amqp
pcap-dump --json` output go out as they were, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec.composites import (
    AmqpSequence,
    AmqpValue,
    ApplicationProperties,
    Data,
    Header,
    MessageAnnotations,
    Properties,
    Transfer,
)
from amqpcli.codec.decode import skip
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UByte, UInt, ULong
from amqpcli.render.message import message_bytes_from_json
from tests.net.clirun import amqp, json_lines, queue_name
from tests.paths import CAPTURES_DIR, require

pytestmark = pytest.mark.integration

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"

# Each with properties and at most one data section: RabbitMQ 3.10 gives a message without
# properties some (a subject), and several data sections back in reverse order.
MESSAGES = [
    Message([Data(b"first\x00\xff")], header=Header(durable=True, priority=UByte(7)),
            message_annotations=MessageAnnotations({Symbol("x-opt-a"): "b"}),
            properties=Properties(message_id=ULong(42), subject="s"),
            application_properties=ApplicationProperties({"k": 1})).encode(),
    Message(AmqpValue({"a": [1, 2.5, None]}), properties=Properties(message_id="m-2")).encode(),
    Message([AmqpSequence([1, "two"])], properties=Properties(message_id="m-3")).encode(),
    Message([Data(b"y" * 3000)], properties=Properties(message_id="in-frames")).encode(),
]


def _transfers() -> bytes:
    """A frame stream carrying MESSAGES, the last one in three frames."""
    out = bytearray(AMQP_HEADER)
    for i, m in enumerate(MESSAGES[:-1]):
        out += encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(i),
                                     delivery_tag=bytes([i])), 0, m)
    last, tag = MESSAGES[-1], bytes([len(MESSAGES)])
    for start in (0, 1000, 2000):
        out += encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(len(MESSAGES) - 1),
                                     delivery_tag=tag, more=start < 2000), 0,
                            last[start:start + 1000] if start < 2000 else last[start:])
    return bytes(out)


def _without_header(message: bytes) -> bytes:
    """The message after its header section: what RabbitMQ passes on as it came (it writes
    the header afresh)."""
    return message[skip(message, 0):] if message[:3] == b"\x00\x53\x70" else message


def _replayed(url: str, lines: list[str], tmp_path: Path) -> list[bytes]:
    """Sends the lines with `send --from`, returns the messages received back."""
    q = queue_name("replay")
    path = tmp_path / "in.jsonl"
    path.write_text("".join(lines))
    r = amqp("send", f"{url}//queue/{q}", "--from", str(path), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    count = summary["accepted"]
    r = amqp("recv", f"{url}//queue/{q}", "-c", str(count), "-t", "30", "--json")
    assert r.returncode == 0, r.stderr
    return [message_bytes_from_json(m) for m in json_lines(r.stdout)]


def _durable_priority(message: bytes) -> tuple[bool, int]:
    """What the header says of the message, its defaults (none, or not durable, priority
    4) written or not."""
    h = Message.decode(message).header
    if h is None:
        return False, 4
    return bool(h.durable), 4 if h.priority is None else int(h.priority)


def _same(got: list[bytes], sent: list[bytes]) -> None:
    assert [_without_header(m) for m in got] == [_without_header(m) for m in sent]
    assert [_durable_priority(m) for m in got] == [_durable_priority(m) for m in sent]


def test_send_from_decode_json(rabbitmq_url: str, tmp_path: Path) -> None:
    r = amqp("decode", "--json", "-", input=_transfers())
    assert r.returncode == 0, r.stderr
    frames = r.stdout.splitlines(keepends=True)
    r = amqp("decode", "--json", MESSAGES[0].hex())
    assert r.returncode == 0, r.stderr
    (message_item,) = r.stdout.splitlines(keepends=True)
    assert json.loads(message_item)["item"] == "message"
    got = _replayed(rabbitmq_url, [*frames, message_item], tmp_path)
    _same(got, [*MESSAGES, MESSAGES[0]])


@pytest.mark.parametrize("view", [[], ["--deliveries"]], ids=["frames", "deliveries"])
def test_send_from_pcap_dump_json(rabbitmq_url: str, tmp_path: Path, view: list[str]) -> None:
    r = amqp("pcap-dump", str(require(CAPTURE)), "--json", *view)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines(keepends=True)
    records: list[dict[str, Any]] = [json.loads(line) for line in lines]
    sent = [message_bytes_from_json(r["message"]) for r in records if "message" in r]
    assert len(sent) == 40  # each message twice: sent to the broker, delivered by it
    _same(_replayed(rabbitmq_url, lines, tmp_path), sent)


def test_arrays_of_numbers_go_through(rabbitmq_url: str, tmp_path: Path) -> None:
    """Numbers in arrays at their full width, as proton writes them: RabbitMQ 3.x resets
    the connection at an array of smallint (and of the other small forms), which the
    encoder used to write for small numbers (the send was in doubt, exit 7)."""
    lines = [json.dumps({"properties": {"message-id": f"a-{t}"},
                         "body": {"value": {"array": [1, 2, 3], "type": t}}}) + "\n"
             for t in ("int", "long", "uint", "ulong")]
    got = _replayed(rabbitmq_url, lines, tmp_path)
    assert [Message.decode(m).body.value for m in got] == [[1, 2, 3]] * 4
    assert bytes.fromhex("e00e0371000000010000000200000003") in got[0]  # (int: 0x71)
