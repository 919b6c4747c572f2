"""`amqp send --from`: which lines of `recv --json`, `decode --json` and `pcap-dump --json`
carry a message to replay, which are skipped, and which are an error that names the line.

What is there before the connection is checked before it, and a mistake in it sends
nothing: every line of a regular file (named or on stdin), of a pipe only the first line,
if it has come. A later line of a pipe that fails stops the input there, and what was sent
before it is sent, reported and on the node. Errors found before connecting are told
apart from those after by a URL that nothing listens on: the old code connected first and
said `cannot connect` (exit 3)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.send import NoMessage, replayed_message
from amqpcli.codec.composites import AmqpValue, Data, Flow, Header, Properties, Transfer
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import UByte, UInt
from amqpcli.render.message import message_to_json
from tests.cli.test_send_lines_bad_line import _filled_pipe, _send_reading
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

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


# what `send --from` says of a last transfer without its message
WITHOUT_MESSAGE = ("a transfer without a whole message: the last frame of a delivery in several "
                   "(pcap-dump --json --deliveries has the delivery whole), or --frames-only")


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
      "message": message_to_json(Message.decode(MESSAGE))}, "the capture did not see whole"),
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


def _lines(*objs: Any) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def _bodies(url: str) -> list[Any]:
    r = amqp("recv", url, "--drain", "--json", "-q")
    assert r.returncode in (0, 5), r.stderr
    return [m["body"] for m in json_lines(r.stdout)]


A, B, C = ({"body": {"value": v}} for v in "abc")


@pytest.mark.parametrize(("content", "args", "said"), [
    (_lines({"bodyy": {}}, A), [],
     "{f}:1: not a message in the JSON format: $: unknown message member(s): bodyy"),
    (_lines(*[A] * 499) + "nope\n" + _lines(B), [],
     "{f}:500: not a message in the JSON format: Expecting value"),
    ("", [], "{f} holds no messages: nothing to send"),
    ("\n", [], "{f} holds no messages: nothing to send"),
    (_lines({"record": "summary"}, {"record": "link"}), [],
     "{f} holds no messages (its 2 lines carry none): nothing to send"),
    # what --sequence does to each message: bytes that do not decode cannot be numbered
    (_lines(A, B, {"encoded": "AFN3"}), ["--sequence"],
     "{f}:3: not a message in the JSON format: at offset 3: expected more bytes"),
    (_lines(A, {"body": {"value": "b"}, "message-format": -1}), [],
     ("{f}:2: not a message in the JSON format: message-format: expected an integer "
      "0..4294967295 (a uint)")),
], ids=["bad-first-line", "bad-line-500", "empty", "blank", "only-skipped", "sequence",
        "message-format"])
def test_a_regular_file_is_checked_whole_before_connecting(
        free_port: int, tmp_path: Path, content: str, args: list[str], said: str) -> None:
    _check_before_connecting(f"amqp://127.0.0.1:{free_port}/q", tmp_path, content, args, said)


@pytest.mark.parametrize(("content", "said"), [
    (_lines(A).encode("utf-16"),
     "{f}:1: the input is UTF-16 (it starts with a UTF-16 byte-order mark): JSON lines must be UTF-8"),
    (_lines(A).encode("utf-32"),
     "{f}:1: the input is UTF-32 (it starts with a UTF-32 byte-order mark): JSON lines must be UTF-8"),
    (_lines(A).encode() + b'{"body": {"value": "\xff"}}\n',
     "{f}:2: not UTF-8 text: byte 0xff at column 21"),
], ids=["utf-16", "utf-32", "latin-1"])
def test_text_that_is_not_utf8_is_said_so(free_port: int, tmp_path: Path, content: bytes,
                                          said: str) -> None:
    """(Was the codec's own message: "'utf-16-le' codec can't decode byte 0x0a in position
    26: truncated data".)"""
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    r = amqp("send", f"amqp://127.0.0.1:{free_port}/q", "--from", str(path))
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == "amqp: error: " + said.format(f=path) + "\n"


def test_a_message_with_no_to_for_the_anonymous_relay_is_found_before_connecting(
        free_port: int, tmp_path: Path) -> None:
    # no address in the URL: each message goes to its to, which line 2 does not have
    _check_before_connecting(f"amqp://127.0.0.1:{free_port}", tmp_path, _lines(
        {"properties": {"to": "q"}, "body": {"value": "a"}}, B), [],
        "{f}:2: a message with no 'to'")


def _check_before_connecting(url: str, tmp_path: Path, content: str, args: list[str],
                             said: str) -> None:
    """`send URL --from FILE` with FILE holding `content` says `said` (with {f} the file)
    alone, where nothing listens at URL."""
    path = tmp_path / "in.jsonl"
    path.write_text(content)
    # (--reconnect: a run that connected first would wait here, then fail to connect)
    r = amqp("send", url, "--from", str(path), "--reconnect", "3", "--json", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("amqp: error: " + said.format(f=path)), r.stderr


@pytest.mark.integration
def test_a_bad_line_of_a_file_sends_nothing(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/replay-bad-file"
    path = tmp_path / "in.jsonl"
    # pcap-dump's frame records hold no message of a delivery in several frames
    lines = decoded(AMQP_HEADER + transfer(MESSAGE) + transfer(OTHER[:5], 1, more=True)
                    + transfer(OTHER[5:], 1))
    del lines[-1]["message"]
    path.write_text(_lines(*lines))
    r = amqp("send", url, "--from", str(path))
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == f"amqp: error: {path}:4: {WITHOUT_MESSAGE}\n"
    path.write_text(_lines(A, B, {}, C))
    r = amqp("send", url, "--from", str(path))
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == (
        f"amqp: error: {path}:3: not a message in the JSON format: $: an object with no "
        "sections is no message: nothing to send\n")
    assert _bodies(url) == []
    # the lines past the --count-th message are not read
    r = amqp("send", url, "--from", str(path), "-c", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": "a"}, {"value": "b"}]


@pytest.mark.integration
def test_stdin_from_a_regular_file_is_checked_then_sent_from_where_it_stood(
        serve: ServePeers, free_port: int, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(_lines(A, B) + "nope\n")
    with open(path, "rb") as stdin:
        r = _send_reading(stdin.fileno(), f"amqp://127.0.0.1:{free_port}/q", "--from", "-")
    assert r.returncode == 2 and r.stderr.startswith(
        "amqp: error: line 3 of standard input: not a message in the JSON format"), r.stderr
    # read twice (checked, then sent): the second time from where the input stood
    url = serve("-q") + "/replay-stdin-file"
    path.write_text(_lines(A, B, C))
    with open(path, "rb") as stdin:
        stdin.seek(len(_lines(A)))
        r = _send_reading(stdin.fileno(), url, "--from", "-", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": "b"}, {"value": "c"}]


def test_the_first_line_of_a_pipe_is_checked_before_connecting_when_it_has_come(
        free_port: int) -> None:
    nowhere = f"amqp://127.0.0.1:{free_port}/q"
    r = _send_reading(_filled_pipe(b"nope\n" + _lines(A).encode()), nowhere, "--from", "-",
                      "--reconnect", "3")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(
        "amqp: error: line 1 of standard input: not a message in the JSON format"), r.stderr
    r = _send_reading(_filled_pipe(b""), nowhere, "--from", "-")
    assert r.returncode == 2 and r.stderr == (
        "amqp: error: standard input holds no messages: nothing to send\n"), r.stderr
    # past the first line a pipe is read as it is sent, not before connecting
    r = _send_reading(_filled_pipe(_lines(A).encode() + b"nope\n"), nowhere, "--from", "-")
    assert r.returncode == 3 and "cannot connect" in r.stderr, r.stderr


@pytest.mark.integration
def test_a_pipe_streams_up_to_its_bad_line(serve: ServePeers) -> None:
    url = serve("-q") + "/replay-pipe"
    r = _send_reading(_filled_pipe(_lines(A, B, {}, C).encode()), url, "--from", "-",
                      "--json")
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["sent"], summary["accepted"]) == (2, 2)
    assert summary["error"].startswith("line 3 of standard input: not a message in the JSON format"), summary
    assert _bodies(url) == [{"value": "a"}, {"value": "b"}]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_fifo_is_not_waited_for_before_connecting(free_port: int, tmp_path: Path) -> None:
    # opening a FIFO waits for its writer: with none, the run connects (and fails to)
    # instead of waiting before it
    fifo = tmp_path / "replay.fifo"
    os.mkfifo(fifo)
    r = amqp("send", f"amqp://127.0.0.1:{free_port}/q", "--from", str(fifo), timeout=60)
    assert r.returncode == 3 and "cannot connect" in r.stderr, r.stderr


@pytest.mark.integration
def test_count_ends_the_run_without_waiting_for_another_line(serve: ServePeers) -> None:
    url = serve("-q") + "/replay-count"
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "send", url, "--from", "-", "-c", "1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=REPO_ROOT, env=cli_env())
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    try:
        # the producer keeps its end open: the run ends with its one message
        p.stdin.write(_lines(A))
        p.stdin.flush()
        assert p.wait(60) == 0, p.stderr.read()
        assert p.stdout.read().startswith("sent 1, accepted 1")
    finally:
        p.stdin.close()
        p.kill()
        p.wait()
    assert _bodies(url) == [{"value": "a"}]


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


def _multi_frame_capture(path: Path) -> Path:
    """A capture of a message in one frame, then one in two (BIG), each accepted."""
    from amqpcli.codec.composites import Accepted
    from amqpcli.codec.composites import Transfer as T
    from tests.dissect.helpers import Script, write

    s = Script().open().sender_link()
    s.transfer(0, "small")
    s.c(T(handle=0, delivery_id=1, delivery_tag=b"t1", message_format=0, more=True),
        payload=BIG[:100])
    s.c(T(handle=0, more=False), payload=BIG[100:])
    s.dispose(0, Accepted(), last=1)
    return write(path, s.close())


BIG = Message(AmqpValue("x" * 300)).encode()


@pytest.mark.integration
def test_a_delivery_in_several_frames_replays_from_its_delivery_record(
        serve: ServePeers, tmp_path: Path) -> None:
    """`--deliveries --frames`: the last frame of a delivery in several has no message, its
    delivery's record (which follows) has it: the message goes out once, from there.
    Frames alone hold no such message: an error naming the frame's line, nothing sent."""
    cap = _multi_frame_capture(tmp_path / "multi.pcapng")
    url = serve("-q") + "/replay-multi"
    both = tmp_path / "both.jsonl"
    code, out, err = amqp_in_process("pcap-dump", str(cap), "--json", "--deliveries",
                                     "--frames")
    assert code == 0, err
    both.write_text(out)
    r = amqp("send", url, "--from", str(both), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sent"] == 2
    assert _bodies(url) == [{"value": "small"}, {"value": "x" * 300}]

    frames = tmp_path / "frames.jsonl"
    code, out, err = amqp_in_process("pcap-dump", str(cap), "--json")
    assert code == 0, err
    frames.write_text(out)
    last = next(i for i, line in enumerate(out.splitlines(), 1)
                if '"more":false' in line.replace(" ", "") and '"message"' not in line)
    r = amqp("send", url, "--from", str(frames))
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == (f"amqp: error: {frames}:{last}: {WITHOUT_MESSAGE} (no record of its "
                        "delivery followed)\n")
    assert _bodies(url) == []
