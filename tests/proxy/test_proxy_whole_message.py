"""`amqp proxy` prints each frame as `amqp pcap-dump` of its recording prints it, in text
and in JSON: the last frame of a delivery sent in several transfers shows the whole
message (`… bytes in all`), and a transfer whose payload is no valid message says why.
The proxy sees every byte of a connection from its start, so it knows what pcap-dump of
the recording knows: it printed the last piece alone (`(5 bytes)`) and said nothing of a
payload that is no message."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from amqpcli.cli.proxy import LinePrinter
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.message import Message
from tests.proxy.dying_client import read_to_end, read_until_flow, sender_opening
from tests.proxy.recorded import proxied_and_dumped

BODY = b"0123456789" * 30
NOT_A_MESSAGE = b"\x00\x53\x75\xa0\x09short"  # a data section that claims 9 bytes, has 5


def _transfers() -> list[bytes]:
    """A message in three transfer frames, then one in one frame that is not a message."""
    payload = Message(body=BODY).encode()
    cuts = [payload[:100], payload[100:len(payload) - 5], payload[len(payload) - 5:]]
    frames = [encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0",
                                      message_format=0, settled=True, more=True), 0, cuts[0])]
    frames += [encode_frame(c.Transfer(handle=0, more=True), 0, cuts[1])]
    frames += [encode_frame(c.Transfer(handle=0), 0, cuts[2])]
    frames += [encode_frame(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1",
                                       message_format=0, settled=True), 0, NOT_A_MESSAGE)]
    return frames


class _Conn:
    key = "c1"
    frame_no = 0


def _printed(as_json: bool, capsys: pytest.CaptureFixture[str]) -> list[str]:
    printer = LinePrinter(as_json, False)
    reader = FrameReader()
    for data in [sender_opening("whole")] + _transfers():
        for item in reader.feed(data):
            printer.on_item(_Conn(), "client", item, 0.0, [])
    return capsys.readouterr().out.splitlines()


def test_last_piece_shows_the_whole_message(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(False, capsys)
    transfers = [x for x in lines if "transfer" in x]
    assert len(transfers) == 4
    assert 'data b"0123456789' in transfers[2], transfers[2]
    assert f"({len(Message(body=BODY).encode())} bytes in all)" in transfers[2]
    assert "not a message" in transfers[3] or "not a valid" in transfers[3], transfers[3]


def test_json_says_a_payload_is_no_message(capsys: pytest.CaptureFixture[str]) -> None:
    objs = [json.loads(x) for x in _printed(True, capsys)]
    transfers = [o for o in objs if o.get("performative", {}).get("name") == "transfer"
                 or "transfer" in json.dumps(o.get("performative"))]
    assert "message-error" in transfers[-1], transfers[-1]
    assert all("message" not in o for o in transfers[:3])  # the pieces are not messages


def _send(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(sender_opening("whole"))
        read_until_flow(sock)
        sock.sendall(b"".join(_transfers()))
        sock.sendall(encode_frame(c.Close()))
        read_to_end(sock)


@pytest.mark.parametrize("as_json", [False, True])
def test_frames_are_printed_as_pcap_dump_prints_the_recording(tmp_path: Path,
                                                              as_json: bool) -> None:
    out, dump = proxied_and_dumped(tmp_path, _send, as_json)
    if as_json:
        ours = [json.loads(x) for x in out.splitlines() if '"record":"frame"' in x]
        theirs = [json.loads(x) for x in dump.splitlines() if '"record":"frame"' in x]
        for o in theirs:
            o.pop("packet")
    else:
        ours = [x for x in out.splitlines() if " !! " not in x]
        theirs = [x for x in dump.splitlines() if " !! " not in x]
    assert len(ours) > 8
    assert ours == theirs
