"""`amqp send --from`: which lines of `recv --json`, `decode --json` and `pcap-dump --json`
carry a message to replay, which are skipped, and which are an error that names the line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.send import NoMessage, replayed_message
from amqpcli.codec.composites import AmqpValue, Data, Flow, Header, Properties, Transfer
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import UByte, UInt
from amqpcli.render.message import message_to_json
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers
from tests.paths import CAPTURES_DIR, require

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
MESSAGE = Message([Data(b"hello")], header=Header(durable=True, priority=UByte(4)),
                  properties=Properties(message_id="m-1")).encode()
OTHER = Message(AmqpValue("other")).encode()


def transfer(payload: bytes, delivery_id: int = 0, **fields: Any) -> bytes:
    return encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(delivery_id),
                                 delivery_tag=delivery_id.to_bytes(4, "big"), **fields), 0,
                        payload)


def decoded(data: bytes, *args: str) -> list[dict[str, Any]]:
    """The lines `amqp decode --json` writes for `data`."""
    code, out, err = amqp_in_process("decode", "--json", *args, "-", stdin=data)
    assert code in (0, 8), err
    return [json.loads(line) for line in out.splitlines()]


def captured(*args: str) -> list[dict[str, Any]]:
    """The lines `amqp pcap-dump --json` writes for the RabbitMQ capture."""
    code, out, err = amqp_in_process("pcap-dump", str(require(CAPTURE)), "--json", *args)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_a_line_of_recv_json_is_the_message() -> None:
    assert replayed_message(message_to_json(Message.decode(MESSAGE))) == MESSAGE


def test_decode_items_that_carry_a_message() -> None:
    (item,) = decoded(MESSAGE)
    assert item["item"] == "message" and replayed_message(item) == MESSAGE
    stream = (AMQP_HEADER + transfer(MESSAGE) + transfer(OTHER[:5], 1, more=True)
              + transfer(OTHER[5:], 1) + transfer(b"", 2, aborted=True)
              + encode_frame(Flow(next_incoming_id=UInt(0), incoming_window=UInt(9),
                                  next_outgoing_id=UInt(0), outgoing_window=UInt(9))))
    items = decoded(stream)
    got = [replayed_message(item) for item in items]
    # the protocol header, the first frame of a delivery in two, the aborted transfer and
    # the flow are no messages; the delivery in two is whole on its last frame
    assert got == [None, MESSAGE, None, OTHER, None, None]
    assert [replayed_message(i) for i in decoded(bytes.fromhex("a10568656c6c6f41"))] == [None] * 2


def test_pcap_dump_frame_and_delivery_records_that_carry_a_message() -> None:
    frames = captured()
    deliveries = captured("--deliveries")
    sent = [m for m in map(replayed_message, frames) if m is not None]
    assert len(sent) == 40 == len(deliveries)  # 20 sent to the broker, 20 delivered by it
    assert sent == [replayed_message(r) for r in deliveries]
    for record in frames:
        if replayed_message(record) is None:
            assert record.get("performative", {}).get("transfer") is None


@pytest.mark.parametrize(("line", "why"), [
    ({"item": "frame", "performative": {"transfer": {"handle": 0, "delivery-id": 0}},
      "payload": "AFN1oAFh"}, "a transfer without a whole message"),
    ({"record": "delivery", "protocol": "amqp-1.0", "frames": 2},
     "a delivery without its message"),
    ({"record": "delivery", "protocol": "amqp-1.0", "incomplete": True,
      "message": message_to_json(Message.decode(MESSAGE))}, "the capture lost bytes of"),
    ({"record": "delivery", "protocol": "amqp-1.0",
      "message": {"undecodable": "at offset 3: ...", "encoded": "AFN1"}},
     "its message does not decode (at offset 3: ...)"),
    ({"record": "delivery", "protocol": "amqp-0-10", "body": "aGk="}, "an AMQP 0-10 message"),
    ({"item": "assembly", "method": "message.transfer"}, "an AMQP 0-10 message"),
])
def test_a_line_that_should_carry_a_message_and_does_not(line: dict[str, Any],
                                                         why: str) -> None:
    with pytest.raises(NoMessage, match=re.escape(why)):
        replayed_message(line)


@pytest.mark.parametrize("line", [
    {"record": "link", "protocol": "amqp-1.0", "connection": "c1"},
    {"record": "summary"},
    {"record": "notice", "protocol": "amqp-1.0", "text": "a gap"},
    {"record": "delivery", "protocol": "amqp-1.0", "aborted": True,
     "message": message_to_json(Message.decode(MESSAGE))},
    {"item": "error", "offset": 3, "expected": "x", "found": "y"},
    {"item": "frame", "performative": {"transfer": {"handle": 0, "aborted": True}},
     "payload": "AFN3oQJoaQ==", "message": {"body": {"value": "hi"}}},
    {"item": "protocol-header", "offset": 0, "protocol": "amqp0-10", "version": [1, 1, 0, 10]},
    {"item": "assembly", "method": "connection.open"},
])
def test_lines_that_are_no_message_are_skipped(line: dict[str, Any]) -> None:
    assert replayed_message(line) is None


@pytest.mark.parametrize(("line", "error"), [
    ([1, 2], "a message is a JSON object"),
    ({"bodyy": {}}, "unknown message member(s): bodyy"),
    ({"item": "message", "message": {"body": {"value": {"nope": 1}}}}, "nope"),
    # no sections: it would go out as a transfer with no payload
    ({}, "an object with no sections is no message: nothing to send"),
    ({"bare-sha256": "00"}, "an object with no sections is no message"),
    ({"encoded": ""}, "an object with no sections is no message"),
    ({"item": "message", "message": {}}, "an object with no sections is no message"),
])
def test_json_that_is_no_message_is_an_error(line: Any, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        replayed_message(line)


@pytest.mark.integration
def test_the_summary_counts_the_lines_skipped(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/replay-skip"
    path = tmp_path / "decoded.jsonl"
    lines = decoded(AMQP_HEADER + transfer(MESSAGE) + transfer(OTHER, 1))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = amqp("send", url, "--from", str(path), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["accepted"], summary["skipped"]) == (2, 1)
    r = amqp("send", url, "--from", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        f"skipped 1 line(s) of {path} that carry no message (protocol headers, frames other "
        "than transfers, link and summary records, ...) or one already sent (a delivery's "
        "record after its transfer frame's)")
    got = json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout)
    assert len(got) == 4


@pytest.mark.integration
def test_a_line_that_carries_no_message_stops_the_input_there(serve: ServePeers,
                                                              tmp_path: Path) -> None:
    url = serve("-q") + "/replay-stop"
    path = tmp_path / "frames.jsonl"
    # pcap-dump's frame records hold no message of a delivery in several frames
    lines = decoded(AMQP_HEADER + transfer(MESSAGE) + transfer(OTHER[:5], 1, more=True)
                    + transfer(OTHER[5:], 1))
    del lines[-1]["message"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = amqp("send", url, "--from", str(path))
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (
        f"amqp: error: {path}:4: a transfer without a whole message: the last frame of a "
        "delivery in several (pcap-dump --json --deliveries has the delivery whole), a "
        "payload that is no message, or --frames-only")
    assert len(json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout)) == 1
    only_skipped = tmp_path / "flows.jsonl"
    only_skipped.write_text(json.dumps(lines[0]) + "\n" + json.dumps(lines[2]) + "\n")
    r = amqp("send", url, "--from", str(only_skipped))
    assert r.returncode == 2 and r.stderr == (
        f"amqp: error: {only_skipped} holds no messages (its 2 lines carry none): nothing to "
        "send\n")


@pytest.mark.integration
def test_an_empty_object_stops_the_input_there(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/replay-empty"
    path = tmp_path / "empty.jsonl"
    path.write_text('{"body": {"value": "a"}}\n{}\n{"body": {"value": "c"}}\n')
    r = amqp("send", url, "--from", str(path))
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (
        f"amqp: error: {path}:2: not a message in the JSON format: $: an object with no "
        "sections is no message: nothing to send")
    got = json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout)
    assert [m["body"] for m in got] == [{"value": "a"}]


@pytest.mark.integration
@pytest.mark.parametrize("view", [(), ("--deliveries",), ("--deliveries", "--frames")])
def test_a_capture_replays_each_delivery_once(view: tuple[str, ...], serve: ServePeers,
                                              tmp_path: Path) -> None:
    """`--deliveries --frames` writes a delivery's message twice, in the record of the
    transfer that ends it and in the delivery's record: it goes out once."""
    lines = captured(*view)
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    deliveries = [o for o in captured("--deliveries") if o.get("record") == "delivery"]
    r = amqp("send", serve("-q") + "/replay-once", "--from", str(path), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["sent"] == len(deliveries) > 0
    assert summary["skipped"] == len(lines) - len(deliveries)
