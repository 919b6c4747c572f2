"""Bytes held beyond a TCP hole that is given up keep the time and packet of the segment
that carried them: the frames they complete are stamped by the packet carrying their last
byte, as tshark numbers it, whatever gave the hole up — a FIN, a reset, the other side's
acknowledgement past it, the gap timeout, the buffer limit or the end of the capture. The
gap itself is reported at the packet after the hole (where tshark says "previous segment
not captured"). A hole that a late packet fills is another matter: the bytes held become
readable with that packet, and take its time and number."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from amqpcli.capture import C2S, S2C, Data, Gap, read_capture
from amqpcli.capture.decode import ACK, FIN, PSH, RST, PacketDecoder
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.dissect import Dissector, FrameRecord, Notice

START = 1_700_000_000_000_000_000
STEP = 1_000_000  # 1 ms between packets
N = 8  # server frames after the open, one per segment; the third is lost


def _flow(i: int) -> bytes:
    """A flow frame, the same size for every `i` below 100 (so one per segment)."""
    return encode_frame(c.Flow(next_incoming_id=100 + i, incoming_window=1000,
                               next_outgoing_id=100 + i, outgoing_window=1000))


@dataclass
class Crafted:
    path: Path
    # (packet number, time in ns) of the segment that carried each server frame after
    # the hole, in order
    after: list[tuple[int, int]]
    hole: int  # index of the lost frame


def craft(path: Path, how: str, *, fill: bool = False) -> Crafted:
    """A connection whose server sends its header and open, then N small frames, one per
    segment (the client acknowledging none of them), the segment of frame `hole` not in
    the capture; then `how` gives the hole up: "fin", "rst", "ack" (the client
    acknowledges everything), "timeout" (a client frame 31 s later), "end" (the
    capture stops). `fill`: the lost segment comes last instead (a late packet)."""
    hole = 2
    after: list[tuple[int, int]] = []
    with CaptureWriter(path) as w:
        conv = TcpConversation(w, start_ns=START, step_ns=STEP)
        conv.handshake()
        conv.send(C2S, encode_protocol_header("amqp"))
        conv.send(C2S, encode_frame(c.Open(container_id="client")))
        conv.send(C2S, encode_frame(c.Begin(next_outgoing_id=0, incoming_window=1000,
                                            outgoing_window=1000)))
        conv.send(S2C, encode_protocol_header("amqp"))
        conv.send(S2C, encode_frame(c.Open(container_id="server")))
        conv.send(S2C, encode_frame(c.Begin(remote_channel=0, next_outgoing_id=0,
                                            incoming_window=1000, outgoing_window=1000)))
        acked = conv.seq[S2C]  # the client acknowledges nothing after this
        lost: tuple[int, bytes] | None = None
        for i, (seq, data) in enumerate(conv.segments(S2C, b"".join(_flow(i) for i in range(N)),
                                                      mss=len(_flow(0)))):
            if i == hole:
                lost = (seq, data)
                continue
            t = conv.now
            conv.packet(S2C, seq, data, ACK | PSH)
            if i > hole:
                after.append((w.packets, t))
        assert lost is not None
        if fill:
            conv.packet(S2C, *lost, ACK | PSH)
        elif how == "fin":
            conv.packet(S2C, conv.seq[S2C], flags=FIN | ACK)
        elif how == "rst":
            conv.packet(C2S, conv.seq[C2S], flags=RST | ACK, ack=acked)
        elif how == "ack":
            conv.packet(C2S, conv.seq[C2S], ack=conv.seq[S2C])
        elif how == "timeout":
            conv.now += 31_000_000_000
            conv.packet(C2S, conv.seq[C2S], _flow(0), ACK | PSH, ack=acked)
        else:
            assert how == "end"
    return Crafted(path, after, hole)


def _records(path: Path) -> tuple[list[FrameRecord], list[Notice]]:
    recs = list(Dissector().read(str(path)))
    return ([r for r in recs if isinstance(r, FrameRecord) and r.side == "server"],
            [r for r in recs if isinstance(r, Notice) and r.kind == "gap"])


HOW = ["fin", "rst", "ack", "timeout", "end"]


@pytest.mark.parametrize("how", HOW)
def test_frames_after_a_hole_given_up_keep_their_packets(tmp_path: Path, how: str) -> None:
    cr = craft(tmp_path / f"{how}.pcapng", how)
    frames, gaps = _records(cr.path)
    # header, open, begin, then the flows but the lost one
    flows = frames[3:]
    assert len(flows) == N - 1
    got = [(f.packet, round(f.time * 1e9)) for f in flows[cr.hole:]]
    assert got == [(p, pytest.approx(t, abs=1000)) for p, t in cr.after]
    assert [f.item.body.next_incoming_id for f in flows] == [
        100 + i for i in range(N) if i != cr.hole]
    # the gap is reported at the packet after the hole
    assert [(g.packet, round(g.time * 1e9)) for g in gaps] == [
        (cr.after[0][0], pytest.approx(cr.after[0][1], abs=1000))]


def test_a_hole_filled_late_stamps_what_it_completes_with_its_packet(tmp_path: Path) -> None:
    cr = craft(tmp_path / "fill.pcapng", "end", fill=True)
    frames, gaps = _records(cr.path)
    assert not gaps
    flows = frames[3:]
    assert len(flows) == N
    last = flows[-1].packet
    assert last == cr.after[-1][0] + 1  # the late segment, the last packet
    assert [f.packet for f in flows[cr.hole:]] == [last] * (N - cr.hole)


def _capture_events(path: Path, **kw: object) -> list[tuple[str, int, int, int, int]]:
    """(kind, direction, offset, packet, time) of the server's Data and Gap events."""
    dec = PacketDecoder()
    out = []
    for ev in read_capture(path, decoder=dec, **kw):  # type: ignore[arg-type]
        if isinstance(ev, (Data, Gap)) and ev.direction == S2C:
            out.append((type(ev).__name__, ev.direction, ev.offset, dec.packets, ev.time_ns))
    return out


@pytest.mark.parametrize("how", [*HOW, "buffer"])
def test_the_capture_layer_hands_held_bytes_out_with_their_own_packets(
        tmp_path: Path, how: str) -> None:
    cr = craft(tmp_path / f"{how}.pcapng", "end" if how == "buffer" else how)
    kw = {"max_buffer": 3 * len(_flow(0))} if how == "buffer" else {}
    events = _capture_events(cr.path, **kw)
    i = next(k for k, e in enumerate(events) if e[0] == "Gap")
    size = len(_flow(0))
    gap, held = events[i], events[i + 1:]
    assert [(e[0], e[3], e[4]) for e in held] == [("Data", p, t) for p, t in cr.after]
    assert gap[3:] == cr.after[0]
    assert [e[2] - gap[2] for e in held] == [size * k for k in range(1, N - cr.hole)]


def test_pcap_dump_json_packets_after_a_gap(tmp_path: Path) -> None:
    from tests.net.clirun import amqp_in_process

    cr = craft(tmp_path / "fin.pcapng", "fin")
    _code, out, _err = amqp_in_process("pcap-dump", str(cr.path), "--json")
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    flows = [r for r in lines if r.get("record") == "frame" and r.get("from") == "server"
             and "flow" in r.get("performative", {})]
    assert [r["packet"] for r in flows[cr.hole:]] == [p for p, _t in cr.after]


def test_several_files_number_held_bytes_by_their_own_file_and_packet(tmp_path: Path) -> None:
    """Read with another file (merged by time), the frames after the hole keep their
    packets, each a number in its own file with that file's name."""
    cr = craft(tmp_path / "fin.pcapng", "fin")
    other = tmp_path / "other.pcapng"  # another connection, its packets among these
    with CaptureWriter(other) as w:
        conv = TcpConversation(w, client=("10.0.0.3", 41000), start_ns=START + STEP // 2,
                               step_ns=STEP)
        conv.handshake()
        for _ in range(12):
            conv.send(C2S, encode_protocol_header("amqp"))
    recs = list(Dissector().read([str(other), str(cr.path)]))
    flows = [r for r in recs if isinstance(r, FrameRecord) and r.side == "server"
             and getattr(r.item, "body", None).__class__ is c.Flow]
    assert [(int(f.packet), f.packet.file) for f in flows[cr.hole:]] == [
        (p, str(cr.path)) for p, _t in cr.after]


def test_the_tables_number_held_bytes_by_their_own_packet(tmp_path: Path) -> None:
    from amqpcli.pipeline.run import write_tables
    from tests.pipeline.helpers import rows

    cr = craft(tmp_path / "fin.pcapng", "fin")
    write_tables([str(cr.path)], str(tmp_path / "t"))
    frames = sorted((r["frame_no"], r["packet"], r["capture"])
                    for r in rows(tmp_path / "t", "frames")
                    if r["side"] == "server" and r["performative"] == "flow")
    assert [(p, cap) for _n, p, cap in frames[cr.hole:]] == [
        (p, str(cr.path)) for p, _t in cr.after]


def test_the_connection_ends_with_its_last_packet_not_with_held_bytes(tmp_path: Path) -> None:
    """Bytes held beyond a hole are handed out, with their own earlier time, when the hole
    is given up (here by a client frame 31 s later): the connection's last time stays that
    frame's (it went back to the held bytes' time)."""
    cr = craft(tmp_path / "timeout.pcapng", "timeout")
    dis = Dissector()
    list(dis.read(str(cr.path)))
    (conn,) = dis.conns
    last_client = cr.after[-1][1] + 31_000_000_000 + STEP  # (the client frame's time)
    assert round(conn.last_time * 1e9) >= last_client - 1000
    assert round(dis.last_time * 1e9) >= last_client - 1000
