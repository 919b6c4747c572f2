"""A stream that ends inside a frame: its sender went away (FIN, reset) or the capture
stopped. The frame is cut short, not undecodable: a `truncated` notice, no frame error and
no violation, and the delivery it was part of is incomplete. Bytes that cannot start a
frame are still a frame error, and a frame larger than its receiver takes still a
violation, cut or not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameError, encode_frame
from amqpcli.codec.message import Message
from amqpcli.dissect.streams import DirectionReader
from tests.dissect.helpers import Result, Script, dissect, write

CUT = 16339  # bytes of the last frame that came


def _interrupted() -> tuple[Script, int, int]:
    """A delivery accepted, then one in two transfer frames whose second the end of the
    stream cuts after CUT bytes: (script, the size of that frame, the payload seen)."""
    s = Script().open().sender_link()
    s.transfer(0).dispose(0, c.Accepted())
    msg = Message(body=b"x" * 100000).encode()
    first = msg[:65000]
    s.c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1", message_format=0, more=True),
        payload=first)
    last = encode_frame(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1"), 0,
                        msg[65000:])
    s.raw(C2S, last[:CUT])
    return s, len(last), len(first)


ENDINGS = {
    "rst": ({"rst": C2S}, "the connection was reset (RST)"),
    # the server reset the connection while the client's frame was coming
    "reset-by-peer": ({"rst": S2C}, "the connection was reset by the other side (RST)"),
    "fin": ({}, "the stream ended (FIN)"),
    "end": ({"fin": False}, "the capture ends"),
}


def _only_notice(res: Result) -> Any:
    [notice] = [n for n in res.notices if n.kind == "truncated"]
    return notice


@pytest.mark.parametrize("how", list(ENDINGS))
def test_a_stream_that_ends_inside_a_frame_cuts_it_short(tmp_path: Path, how: str) -> None:
    s, size, seen = _interrupted()
    kw, cause = ENDINGS[how]
    res = dissect(write(tmp_path / f"{how}.pcapng", s, **kw))
    conn = res.dissector.conns[0]
    assert conn.closed["client"] == how
    assert res.violations == []
    assert not [f for f in res.frames if isinstance(f.item, FrameError)]
    assert conn.frame_errors == 0
    frame_no = res.frames[-1].frame_no + 1  # the number the frame would have had
    text = (f"{cause} inside frame {frame_no} from the client (transfer, {CUT} of {size} "
            "bytes)")
    notice = _only_notice(res)
    assert (notice.side, notice.text) == ("client", text)
    assert text in conn.notes  # (--connections)
    d0, d1 = res.deliveries
    assert (d0.outcome, d0.incomplete) == ("accepted", False)
    # the delivery that frame was part of: given up with its connection, or still open
    # when the capture stopped; its message not seen whole either way
    assert d1.outcome == ("unsettled" if how == "end" else "abandoned")
    assert d1.at_end == (how == "end")
    assert d1.incomplete and d1.size == seen and d1.latency is None


def test_frames_only_says_the_same(tmp_path: Path) -> None:
    s, size, _ = _interrupted()
    res = dissect(write(tmp_path / "rst.pcapng", s, rst=C2S), engine=False)
    assert res.dissector.conns[0].frame_errors == 0
    assert not [f for f in res.frames if isinstance(f.item, FrameError)]
    frame_no = res.frames[-1].frame_no + 1
    assert _only_notice(res).text == (f"the connection was reset (RST) inside frame "
                                      f"{frame_no} from the client (transfer, {CUT} of "
                                      f"{size} bytes)")


def test_a_protocol_header_cut_short(tmp_path: Path) -> None:
    s = Script().sasl_plain().raw(C2S, b"AMQP\x00\x01")
    res = dissect(write(tmp_path / "h.pcapng", s))
    assert res.violations == []
    assert _only_notice(res).text == ("the stream ended (FIN) inside a protocol header from "
                                      "the client (6 of 8 bytes)")


def test_a_frame_whose_performative_is_cut_too(tmp_path: Path) -> None:
    s = Script().open()
    attach = encode_frame(c.Attach(name="n" * 200, handle=0, role=False))
    s.raw(C2S, attach[:40])
    res = dissect(write(tmp_path / "p.pcapng", s, rst=C2S))
    assert res.violations == []
    assert _only_notice(res).text.endswith(f"from the client (40 of {len(attach)} bytes)")


@pytest.mark.parametrize("tail", [
    b"\x00\x00\x01\x00\x00\x00\x00\x00" + b"\xee" * 20,  # data offset 0: no frame
    b"\x00\x00\x01\x00\x02\x00\x00\x00\x00\x53\x70\x45" + b"\xee" * 20,  # no performative
    b"\x00\x00\x00\x04",  # a size below 8
], ids=["doff", "descriptor", "size"])
@pytest.mark.parametrize("fin", [True, False], ids=["fin", "end"])
def test_bytes_that_cannot_start_a_frame_are_still_a_frame_error(
        tmp_path: Path, tail: bytes, fin: bool) -> None:
    s = Script().open().raw(C2S, tail)
    res = dissect(write(tmp_path / "g.pcapng", s, fin=fin))
    assert [n for n in res.notices if n.kind == "truncated"] == []
    assert [v.kind for v in res.violations] == ["framing-error"]
    assert res.dissector.conns[0].frame_errors == 1


def test_a_cut_frame_larger_than_its_receiver_takes_is_a_violation(tmp_path: Path) -> None:
    s = Script().open(max_frame=65536).sender_link()
    big = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0",
                                  message_format=0), 0, b"\x00Sw\xb0" + b"\0" * 70000)
    s.raw(C2S, big[:CUT])
    res = dissect(write(tmp_path / "big.pcapng", s, rst=C2S))
    [v] = res.violations
    assert (v.kind, v.side) == ("frame-too-large", "client")
    assert v.detail == f"{len(big)}-byte frame > max-frame-size 65536"
    assert f"inside frame {v.frame_no} from the client" in _only_notice(res).text
    assert res.dissector.conns[0].frame_errors == 0


def test_a_proxy_recording_of_a_client_that_died_mid_frame(tmp_path: Path) -> None:
    from amqpcli.proxy.record import Recorder

    s, size, _ = _interrupted()
    path = tmp_path / "proxy.pcapng"
    rec = Recorder(path)
    conn = SimpleNamespace(serial=1, started=1_700_000_000.0, client=("127.0.0.1", 40000),
                           upstream=("127.0.0.1", 5672))
    rec.open(conn)
    for d, data, t in s.steps:
        rec.data(conn, "client" if d == C2S else "server", data, conn.started + t)
    rec.reset(conn, "client", conn.started + 1)  # its socket failed: a reset
    rec.end(conn)
    rec.close()
    res = dissect(path)
    assert res.violations == []
    assert _only_notice(res).text.endswith(f"from the client (transfer, {CUT} of {size} bytes)")
    assert [(d.outcome, d.incomplete) for d in res.deliveries] == [
        ("accepted", False), ("abandoned", True)]


def test_the_stream_reader_keeps_the_cut_apart() -> None:
    flow = encode_frame(c.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0,
                               outgoing_window=10))
    transfer = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t"), 0,
                            b"\x00" * 100)
    r = DirectionReader()
    assert r.feed(flow + transfer[:40]) != []
    assert r.close() == [] and r.cut is not None
    assert (r.cut.received, r.cut.size, r.cut.header, r.cut.performative) == (
        40, len(transfer), False, "transfer")
    r = DirectionReader()
    r.feed(flow + flow[:12])  # its performative cut too: which one is not known
    assert r.close() == [] and r.cut is not None and r.cut.performative is None
