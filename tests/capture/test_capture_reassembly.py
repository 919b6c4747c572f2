"""TCP reassembly, roles and protocol detection on crafted captures."""

from __future__ import annotations

from pathlib import Path

import pytest
from capture_helpers import AMQP_HDR, SASL_HDR, collect, frames

from amqpcli.capture import C2S, S2C, FlowTracker, detect, read_segments, reassemble
from amqpcli.capture.decode import ACK, FIN, PSH, SYN
from amqpcli.capture.writer import CaptureWriter, TcpConversation

CLIENT_DATA = AMQP_HDR + frames(60, 100, tag=1)
SERVER_DATA = AMQP_HDR + frames(45, 130, tag=7)


def write_conv(path: Path, *, handshake: bool = True, close: bool = True, mss: int = 256,
               **send_kw: object) -> None:
    with CaptureWriter(path) as w:
        c = TcpConversation(w, mss=mss)
        if handshake:
            c.handshake()
        c.send(C2S, CLIENT_DATA, **send_kw)  # type: ignore[arg-type]
        c.send(S2C, SERVER_DATA, **send_kw)  # type: ignore[arg-type]
        if close:
            c.close()


def test_in_order(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    write_conv(p)
    r = collect(p)
    assert len(r.flows) == 1
    f = r.flows[0]
    assert f.protocol == "amqp-1.0" and f.selected and f.handshake
    assert (f.client_ip, f.client_port, f.server_ip, f.server_port) == (
        "10.0.0.1", 40000, "10.0.0.2", 5672)
    assert r.stream(0, C2S) == CLIENT_DATA
    assert r.stream(0, S2C) == SERVER_DATA
    assert not r.gaps
    assert sorted((c.direction, c.how) for c in r.closed) == [(C2S, "fin"), (S2C, "fin")]
    # Opened comes first, Closed last
    assert r.order[0] is r.opened[0]
    assert all(type(e).__name__ == "Closed" for e in r.order[-2:])


@pytest.mark.parametrize("kw", [
    {"reorder": True},
    {"duplicate": {0, 3, 7, 20}},
    {"overlap": 50},
    {"overlap": 256},  # every segment repeats the whole previous one
    {"reorder": True, "duplicate": {1, 2}, "overlap": 13},
    {"mss": 1},  # frames split across many segments
    {"mss": 7},
    {"mss": 65000},  # many frames in one segment
])
def test_misbehaving_senders_give_the_same_bytes(tmp_path: Path, kw: dict[str, object]) -> None:
    p = tmp_path / "a.pcapng"
    write_conv(p, **kw)  # type: ignore[arg-type]
    r = collect(p)
    assert r.stream(0, C2S) == CLIENT_DATA
    assert r.stream(0, S2C) == SERVER_DATA
    assert not r.gaps


def test_dropped_segment_is_a_gap_when_acked_past(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    write_conv(p, drop={5})
    r = collect(p)
    g = [g for g in r.gaps if g.direction == C2S]
    assert [(x.offset, x.size) for x in g] == [(5 * 256, 256)]
    got = r.stream(0, C2S)
    assert got == CLIENT_DATA[: 5 * 256] + CLIENT_DATA[6 * 256 :]
    # the gap is reported before the bytes after it
    c2s = [e for e in r.order if getattr(e, "direction", None) == C2S]
    idx = c2s.index(g[0])
    assert c2s[idx + 1].offset == 6 * 256


def test_gap_at_end_of_input_without_ack(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, mss=100)
        c.handshake()
        segs = c.segments(C2S, CLIENT_DATA[:1000])
        for i, (seq, data) in enumerate(segs):
            if i != 3:
                c.packet(C2S, seq, data, ACK | PSH)
    r = collect(p)
    assert [(g.offset, g.size) for g in r.gaps] == [(300, 100)]
    assert r.stream(0, C2S) == CLIENT_DATA[:300] + CLIENT_DATA[400:1000]
    assert sorted(c.how for c in r.closed) == ["end", "end"]


def test_gap_before_fin(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, mss=100)
        c.handshake()
        segs = c.segments(C2S, CLIENT_DATA[:500])
        for seq, data in segs[:-1]:
            c.packet(C2S, seq, data, ACK | PSH)
        c.packet(C2S, c.seq[C2S], flags=0x11)  # FIN|ACK; the last segment was not captured
    r = collect(p)
    assert [(g.offset, g.size, g.direction) for g in r.gaps] == [(400, 100, C2S)]
    assert [(x.direction, x.how) for x in r.closed if x.direction == C2S] == [(C2S, "fin")]


def test_bounded_buffer_gives_up_on_a_hole(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, mss=100)
        c.handshake()
        segs = c.segments(C2S, CLIENT_DATA[:3000])
        for seq, data in segs[1:]:  # the first segment never comes
            c.packet(C2S, seq, data, ACK | PSH, ack=c.seq[S2C])
    r = collect(p, max_buffer=1000, ports=[5672])  # the header was lost with the hole
    g = r.gaps[0]
    assert (g.offset, g.size) == (0, 100)
    # the gap was declared while packets were still coming, not at the end
    assert r.order.index(g) < len(r.order) - 3
    assert r.stream(0, C2S) == CLIENT_DATA[100:3000]


def test_hole_times_out(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, mss=100, step_ns=1_000_000_000)  # one packet a second
        c.handshake()
        segs = c.segments(C2S, CLIENT_DATA[:1000])
        for seq, data in segs[1:]:
            c.packet(C2S, seq, data, ACK | PSH)
    r = collect(p, gap_timeout=3.0, ports=[5672])
    assert (r.gaps[0].offset, r.gaps[0].size) == (0, 100)
    assert r.order.index(r.gaps[0]) < len(r.order) - 4


def test_mid_stream_start(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    write_conv(p, handshake=False)
    r = collect(p)
    f = r.flows[0]
    assert not f.handshake
    assert f.client_port == 40000  # the first sender's bytes are an AMQP header
    assert r.stream(0, C2S) == CLIENT_DATA
    assert r.stream(0, S2C) == SERVER_DATA


def test_mid_stream_without_header_needs_ports(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, client=("10.0.0.1", 40000), server=("10.0.0.2", 15672),
                            mss=200)
        c.send(S2C, frames(10, 64))  # the server speaks first in what was captured
        c.send(C2S, frames(10, 80))
    assert collect(p).data == []
    r = collect(p, ports=[15672])
    f = r.flows[0]
    assert f.selected and f.by_port and f.protocol == "unknown"
    assert (f.client_port, f.server_port) == (40000, 15672)
    assert r.stream(0, S2C) == frames(10, 64)
    assert r.stream(0, C2S) == frames(10, 80)


def test_role_by_higher_port_without_anything_else(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, client=("10.0.0.1", 50000), server=("10.0.0.2", 7000))
        c.send(S2C, b"hello there")
    r = collect(p, all_flows=True)
    assert (r.flows[0].client_port, r.flows[0].server_port) == (50000, 7000)
    assert r.stream(0, S2C) == b"hello there"


def test_syn_ack_only_sets_roles(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, client=("10.0.0.1", 1000), server=("10.0.0.2", 2000))
        c.packet(S2C, c.seq[S2C], flags=SYN | ACK, ack=c.seq[C2S] + 1)
        c.seq[S2C] += 1
        c.seq[C2S] += 1
        c.send(S2C, b"server first")  # would make the server the client by other rules
    r = collect(p, all_flows=True)
    assert (r.flows[0].client_port, r.flows[0].server_port) == (1000, 2000)
    assert r.stream(0, S2C) == b"server first"


def test_sequence_wraparound(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, isn=(0xFFFFFF00, 0xFFFFFFF0), mss=64)
        c.handshake()
        c.send(C2S, CLIENT_DATA, reorder=True, duplicate={2, 3, 4, 5})
        c.send(S2C, SERVER_DATA, overlap=10)
        c.close()
    r = collect(p)
    assert r.stream(0, C2S) == CLIENT_DATA
    assert r.stream(0, S2C) == SERVER_DATA
    assert not r.gaps


def test_rst_closes_both_directions(tmp_path: Path) -> None:
    """The RST is the side's that sent it; the other side's direction ends with it, that
    side having sent nothing to end it (both said "rst")."""
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w)
        c.handshake()
        c.send(C2S, CLIENT_DATA)
        c.reset(S2C)
    r = collect(p)
    assert sorted((x.direction, x.how) for x in r.closed) == [
        (C2S, "reset-by-peer"), (S2C, "rst")]
    assert r.stream(0, C2S) == CLIENT_DATA


@pytest.mark.parametrize("lost", [(), [1], [-1]], ids=["none", "inside", "last"])
def test_rst_after_the_other_sides_fin(tmp_path: Path, lost: list[int]) -> None:
    """A side whose FIN was seen ended with it, once, whether the capture lost bytes
    before it (a hole inside or at the end of its stream) or not."""
    p = tmp_path / "a.pcapng"
    segments = -(-len(CLIENT_DATA) // 1460)
    with CaptureWriter(p) as w:
        c = TcpConversation(w)
        c.handshake()
        c.send(C2S, CLIENT_DATA, drop=[i % segments for i in lost], ack=False)
        c.packet(C2S, c.seq[C2S], flags=FIN | ACK)  # (its bytes not yet acknowledged)
        c.reset(S2C)
    r = collect(p)
    assert sorted((x.direction, x.how) for x in r.closed) == [(C2S, "fin"), (S2C, "rst")]


def test_refused_connection_on_given_port(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w)
        c.packet(C2S, c.seq[C2S], flags=SYN, ack=0)
        c.packet(S2C, 0, flags=0x14, ack=c.seq[C2S] + 1)  # RST|ACK
    assert collect(p).data == []
    r = collect(p, ports=[5672])
    assert r.flows[0].selected and r.flows[0].protocol == "unknown"
    assert sorted((x.direction, x.how) for x in r.closed) == [
        (C2S, "reset-by-peer"), (S2C, "rst")]


def test_port_reuse_makes_a_new_flow(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        for i in range(2):
            c = TcpConversation(w, isn=(1000 + i * 7777, 9000 + i), start_ns=10**18 + i * 10**9)
            c.handshake()
            c.send(C2S, AMQP_HDR + bytes([i]) * 50)
            c.send(S2C, AMQP_HDR)
            c.close()
            c.packet(C2S, c.seq[C2S] - 20, b"x" * 10, ACK)  # a late straggler
    r = collect(p)
    assert [f.index for f in r.flows] == [0, 1]
    assert r.stream(0, C2S) == AMQP_HDR + b"\0" * 50
    assert r.stream(1, C2S) == AMQP_HDR + b"\1" * 50
    assert len(r.closed) == 4


def test_skipped_flows_are_not_buffered(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        tls = TcpConversation(w, server=("10.0.0.2", 443), mss=100)
        tls.handshake()
        tls.send(C2S, b"\x16\x03\x01\x00\x50\x01" + bytes(200), reorder=True)
        amqp = TcpConversation(w, client=("10.0.0.3", 40001), start_ns=tls.now + 1)
        amqp.handshake()
        amqp.send(C2S, SASL_HDR + frames(3))
        tls.send(S2C, b"\x16\x03\x03" + bytes(500), drop={0}, ack=False)
    tracker = FlowTracker()
    for _key, ts, seg in read_segments(p):
        tracker.feed_segment(ts, seg)
    # the TLS flow's segments after the hole were not kept: it was recognised and skipped
    assert tracker.buffered_bytes() == 0
    tracker.finish()
    r = collect(p)
    protos = {f.server_port: (f.protocol, f.selected) for f in r.flows}
    assert protos == {443: ("tls", False), 5672: ("amqp-sasl", True)}
    assert {d.flow.server_port for d in r.data} == {5672}
    # with all flows selected, the same capture does keep them (so the check above can fail)
    tracker = FlowTracker(all_flows=True)
    for _key, ts, seg in read_segments(p):
        tracker.feed_segment(ts, seg)
    assert tracker.buffered_bytes() == 403


def test_short_first_segments_are_joined_for_detection(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, server=("10.0.0.2", 9999), mss=3)
        c.handshake()
        c.send(C2S, AMQP_HDR + b"abc")
    r = collect(p)
    assert r.flows[0].protocol == "amqp-1.0"
    assert r.stream(0, C2S) == AMQP_HDR + b"abc"
    assert [d.offset for d in r.data] == [0, 3, 6, 9]


@pytest.mark.parametrize("first, proto", [
    (b"AMQP\x00\x01\x00\x00", "amqp-1.0"),
    (b"AMQP\x03\x01\x00\x00", "amqp-sasl"),
    (b"AMQP\x02\x01\x00\x00", "amqp-tls"),
    (b"AMQP\x01\x01\x00\x0a", "amqp-0-10"),
    (b"AMQP\x00\x00\x09\x01", "amqp-0-9-1"),
    (b"AMQP\x09\x09\x09\x09", "amqp-other"),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01", "tls"),
    (b"GET / HTTP/1.1\r\n", "unknown"),
    (b"", "unknown"),
])
def test_detect(first: bytes, proto: str) -> None:
    assert detect(first) == proto


def test_per_flow_reassembly_from_keyed_segments(tmp_path: Path) -> None:
    """The layout a distributed executor uses: segments keyed by flow from several files,
    grouped, sorted by time and fed flow by flow to a tracker, give the same streams."""
    import pickle
    from collections import defaultdict

    from amqpcli.capture import flow_key

    a, b = tmp_path / "a.pcapng", tmp_path / "b.pcapng"
    with CaptureWriter(a) as wa, CaptureWriter(b) as wb:
        convs = [TcpConversation(w, client=(f"10.0.0.{i + 1}", 40000 + i), mss=90,
                                 start_ns=1_700_000_000_000_000_000 + i)
                 for i, w in enumerate([wa, wb, wa])]
        for c in convs:
            c.handshake()
            c.send(C2S, CLIENT_DATA, reorder=True)
            c.send(S2C, SERVER_DATA, drop={4})
            c.close()
    whole = collect([a, b])
    groups: dict[object, list[tuple[int, int, object]]] = defaultdict(list)
    for fi, path in enumerate((a, b)):
        for i, (key, ts, seg) in enumerate(read_segments(path)):
            seg = pickle.loads(pickle.dumps(seg))  # it must travel between processes
            assert key == flow_key(seg.src, seg.sport, seg.dst, seg.dport)
            groups[key].append((ts, fi * 10**9 + i, seg))
    assert len(groups) == 3
    for key, items in groups.items():
        items.sort(key=lambda x: (x[0], x[1]))
        events = list(reassemble((ts, seg) for ts, _i, seg in items))
        (flow,) = {e.flow for e in events}
        assert flow.key == key
        ref = next(f for f in whole.flows if f.key == key)
        got = {d: b"".join(bytes(e.data) for e in events
                           if type(e).__name__ == "Data" and e.direction == d)
               for d in (C2S, S2C)}
        assert got[C2S] == whole.stream(ref.index, C2S) == CLIENT_DATA
        assert got[S2C] == whole.stream(ref.index, S2C)
        assert [(g.offset, g.size) for g in events if type(g).__name__ == "Gap"] == [
            (g.offset, g.size) for g in whole.gaps if g.flow is ref] == [(4 * 90, 90)]


def test_new_syn_on_an_open_four_tuple_starts_a_new_flow(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        old = TcpConversation(w, isn=(5000, 6000))
        old.handshake()
        old.packet(C2S, old.seq[C2S] - 1, flags=SYN, ack=0)  # a retransmitted SYN: same flow
        old.send(C2S, AMQP_HDR + b"old")
        new = TcpConversation(w, isn=(90000, 7000), start_ns=old.now + 10)
        new.handshake()  # same addresses and ports, no FIN/RST for the old one seen
        new.send(C2S, AMQP_HDR + b"new")
        new.close()
    r = collect(p)
    assert len(r.flows) == 2
    assert r.stream(0, C2S) == AMQP_HDR + b"old"
    assert r.stream(1, C2S) == AMQP_HDR + b"new"
    assert sorted((c.flow.index, c.how) for c in r.closed) == [
        (0, "end"), (0, "end"), (1, "fin"), (1, "fin")]


def test_detection_does_not_wait_forever_for_a_quiet_first_sender(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, server=("10.0.0.2", 7777), mss=50)
        c.handshake()
        c.send(C2S, b"hi")  # two bytes, then nothing from the client
        c.send(S2C, bytes(20000))
        tracker = FlowTracker()
    for _key, ts, seg in read_segments(p):
        tracker.feed_segment(ts, seg)
    # decided (unknown, skipped) long before the end: nothing is held for it
    assert [type(e).__name__ for e in tracker.events] == ["Opened"]
    assert tracker.events[0].flow.protocol == "unknown"


def test_state_follows_open_connections_not_input_size(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        t = 1_700_000_000_000_000_000
        for i in range(300):  # one after the other, three open at a time at most
            c = TcpConversation(w, client=("10.0.0.1", 20000 + i), start_ns=t + i * 10**6)
            c.handshake()
            c.send(C2S, AMQP_HDR + bytes(100))
            c.send(S2C, AMQP_HDR)
            c.close()
    tracker = FlowTracker(closed_memory=50)
    most = 0
    for _key, ts, seg in read_segments(p):
        tracker.feed_segment(ts, seg)
        tracker.events.clear()
        most = max(most, tracker.open_flows())
    assert tracker.flow_count == 300
    assert most == 1 and tracker.open_flows() == 0
    assert len(tracker._recent) <= 50


@pytest.mark.parametrize("client, server, first, expect_client_port", [
    # the header sender is the client, though its port is the lower one
    (("10.0.0.1", 1000), ("10.0.0.2", 30000), AMQP_HDR, 1000),
    # no header: the side on an AMQP port is the server, though its port is the higher
    (("10.0.0.1", 2000), ("10.0.0.2", 5672), frames(2), 2000),
    # nothing else to go by: the higher port is the client
    (("10.0.0.1", 2000), ("10.0.0.2", 3000), frames(2), 3000),
])
def test_role_rules_without_handshake(tmp_path: Path, client: tuple[str, int],
                                      server: tuple[str, int], first: bytes,
                                      expect_client_port: int) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, client=client, server=server)
        c.send(C2S, first + frames(3))
        c.send(S2C, frames(1))
    r = collect(p, all_flows=True)
    f = r.flows[0]
    assert f.client_port == expect_client_port
    sent_by_client = first + frames(3) if expect_client_port == client[1] else frames(1)
    assert r.stream(0, C2S) == sent_by_client


def test_flow_counts_retransmitted_bytes_and_reordered_segments(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    write_conv(p, duplicate={2, 5}, reorder=True)
    f = collect(p).flows[0]
    # two duplicated 256-byte segments per direction
    assert f.retransmitted == 4 * 256
    # 24 and 23 segments, pairs swapped: 12 + 11 arrive early, and so does each
    # duplicate of segment 5 (sent before segment 4)
    assert f.reordered == 12 + 11 + 2
    clean = tmp_path / "b.pcapng"
    write_conv(clean)
    g = collect(clean).flows[0]
    assert (g.retransmitted, g.reordered) == (0, 0)


def test_fin_seen_before_the_last_segment(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w, mss=100)
        c.handshake()
        segs = c.segments(C2S, CLIENT_DATA[:300])
        for seq, data in segs[:-1]:
            c.packet(C2S, seq, data, ACK | PSH)
        c.packet(C2S, c.seq[C2S], flags=FIN | ACK)  # the FIN overtakes the last segment
        last = c.now  # the time of the next packet
        c.packet(C2S, *segs[-1], ACK | PSH)
        c.packet(S2C, c.seq[S2C], AMQP_HDR, ACK | PSH)  # the flow goes on the other way
    r = collect(p)
    assert r.stream(0, C2S) == CLIENT_DATA[:300]
    closed = [x for x in r.closed if x.direction == C2S]
    assert [(x.how, x.time_ns) for x in closed] == [("fin", last)]
    # closed when the last byte came, before the server's data
    assert r.order.index(closed[0]) < r.order.index(r.data[-1])
