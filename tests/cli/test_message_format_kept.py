"""A transfer's message-format (Part 2 §2.7.5) kept end to end: `recv --json` writes it
(`message-format`, only when not 0), `pcap-dump --json` delivery records write it in
their message as recv does, `send --from` sends each message with the one it names, and
`amqp serve` stores and forwards it. The old code sent and stored every message as 0,
and `send --from` refused the member."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from amqpcli.cli.send import replayed_format, replayed_message
from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers

# a vendor's format (Azure's batch format, 0x80013700): its top bit set, a uint's range
FORMAT = 0x80013700


def _capture(tmp_path: Path) -> str:
    s = Script().open().sender_link()
    for did, fmt in enumerate((FORMAT, 0)):
        s.c(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t%d" % did,
                       message_format=fmt, settled=True),
            payload=Message(body=f"m{did}").encode())
    s.close()
    return str(write(tmp_path / "formats.pcapng", s))


def _records(*args: str) -> list[dict[str, Any]]:
    code, out, err = amqp_in_process("pcap-dump", "--json", *args)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_pcap_dump_delivery_records_say_the_format_as_recv_does(tmp_path: Path) -> None:
    capture = _capture(tmp_path)
    deliveries = [r for r in _records("--deliveries", capture) if r["record"] == "delivery"]
    assert [d["message"].get("message-format") for d in deliveries] == [FORMAT, None]
    assert [replayed_format(d) for d in deliveries] == [FORMAT, 0]
    # a frame record says it in its transfer ("message-format" too), and replays with it
    frames = [r for r in _records(capture) if r["record"] == "frame" and replayed_message(r)]
    assert [f["performative"]["transfer"]["message-format"] for f in frames] == [FORMAT, 0]
    assert [replayed_format(f) for f in frames] == [FORMAT, 0]


def test_send_from_serve_and_recv_keep_the_format(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/formats"
    path = tmp_path / "in.jsonl"
    # one of another format between two of 0: a run of sends is cut at it
    lines = [{"body": {"value": "a"}}, {"body": {"value": "b"}, "message-format": FORMAT},
             {"body": {"value": "c"}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = amqp("send", url, "--from", str(path), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--drain", "--json", "-q")
    assert r.returncode == 0, r.stderr
    got = json_lines(r.stdout)
    assert [(m["body"], m.get("message-format")) for m in got] == [
        ({"value": "a"}, None), ({"value": "b"}, FORMAT), ({"value": "c"}, None)]
