"""A transfer that seems a whole delivery (proton repeats the delivery-id on every frame
of one) may be the tail of a delivery in several frames whose first frames the capture
does not hold: on a connection the capture joined mid-stream, or after bytes it lost.
Such a transfer's payload is not judged as a whole message; once the link's delivery
ends (or the link is attached) the next transfers are judged again. The delivery views
(`--deliveries --bodies`, `--messages`) leave the first delivery of a link attached before
the capture unjudged the same way."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run

GOOD = Message(body=b"x" * 40).encode()
BAD = b"\x00\x53\x77\xff\x01"  # an amqp-value whose value has the format code 0xff


def transfer(payload: bytes, did: int, *, more: bool = False) -> bytes:
    return encode_frame(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t%d" % did,
                                   message_format=0, settled=True, more=more),
                        0, payload=payload)


def _capture(tmp_path: Path) -> str:
    s = Script().open().sender_link()
    first = len(s.steps)
    s.raw(0, transfer(GOOD[:7], 0, more=True))
    s.raw(0, transfer(GOOD[7:], 0))  # (the capture begins here: a tail, no message alone)
    s.raw(0, transfer(BAD, 1))  # a whole delivery, after one that ended: judged
    s.close()
    return str(write(tmp_path / "tail.pcapng", s, skip_first=first + 1, handshake=False))


def _transfers(out: str) -> list[str]:
    return [x for x in out.splitlines() if " transfer " in x]


def test_frame_lines(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", _capture(tmp_path))
    assert code == 0, err
    assert "the capture starts mid-connection" in out
    tail, bad = _transfers(out)
    assert "valid message" not in tail and tail.endswith(f"({len(GOOD) - 7} bytes)")
    assert bad.endswith("not a valid message at payload byte 3: expected a format code, "
                        "found 0xff (5 bytes)")


def test_json(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", "--json", _capture(tmp_path))
    assert code == 0, err
    tail, bad = [o for o in map(json.loads, out.splitlines())
                 if "transfer" in (o.get("performative") or {})]
    assert "message-error" not in tail and "message" not in tail
    assert bad["message-error"]["payload-offset"] == 3


def test_after_a_gap(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.raw(0, transfer(BAD, 0))  # judged: the connection has lost nothing yet
    lost = len(s.steps)
    s.raw(0, transfer(GOOD[:7], 1, more=True))  # lost
    s.raw(0, transfer(GOOD[7:], 1))  # the tail
    s.raw(0, transfer(BAD, 2))
    s.close()
    cap = str(write(tmp_path / "gap.pcapng", s, drop=[(lost, 0)]))
    code, out, err = run("pcap-dump", cap)
    assert code == 0, err
    first, tail, bad = _transfers(out)
    assert "not a valid message" in first and "not a valid message" in bad
    assert "valid message" not in tail and tail.endswith(f"({len(GOOD) - 7} bytes)")


def test_delivery_lines(tmp_path: Path) -> None:
    # The delivery view knows the first delivery on a link attached before the capture
    # as the one that may have begun there; the next is judged.
    code, out, err = run("pcap-dump", "--deliveries", "--bodies", _capture(tmp_path))
    assert code == 0, err
    tail, bad = [x for x in out.splitlines() if " #0 " in x or " #1 " in x]
    assert " #0 " in tail and "valid message" not in tail
    assert " #1 " in bad and "not a valid message at payload byte 3" in bad


def test_messages_count_only_the_judged(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", "--messages", _capture(tmp_path))
    assert code == 0, err
    assert ("(2 deliveries without a readable message are not followed, 1 of them not a "
            "valid message)") in out


def test_delivery_json_says_which_may_be_a_tail(tmp_path: Path) -> None:
    # its message is given as it came (it does not decode alone), marked as what may be
    # only the end of one; the next delivery is not
    code, out, err = run("pcap-dump", "--deliveries", "--json", _capture(tmp_path))
    assert code == 0, err
    tail, bad = [o for o in map(json.loads, out.splitlines()) if o["record"] == "delivery"]
    assert tail["delivery-id"] == 0 and tail["may-be-tail"] is True
    assert bad["delivery-id"] == 1 and "may-be-tail" not in bad
    assert "undecodable" in bad["message"]


def test_what_is_known_of_a_forgotten_connection_goes_with_it() -> None:
    # (the frame views forget a connection closed both ways: what told its tails apart
    # goes too, or a capture of many lossy connections would keep a key per link)
    from types import SimpleNamespace

    from amqpcli.cli.pcap_dump import _Pieces
    from amqpcli.dissect.records import Conn

    pieces = _Pieces(json_out=False, show_secrets=False)
    conns = [Conn(i, f"c{i}", "a:1", "b:5672", "amqp-1.0", 0.0, midstream=True)
             for i in (1, 2)]
    for conn in conns:
        for side in ("client", "server"):
            item = SimpleNamespace(channel=0, body=c.Transfer(handle=0, delivery_id=0))
            pieces.sure(SimpleNamespace(item=item, conn=conn, side=side))
    assert len(pieces.known) == 4
    pieces.forget(conns[0])
    assert [k[0] for k in pieces.known] == [conns[1], conns[1]]
