"""The dissector on crafted captures: deliveries and their outcomes, reassembly cases as
pcap-dump sees them (reordering, retransmits, gaps with resync, mid-stream start, frames
split over many segments and many frames in one segment), and violations."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol
from tests.dissect.helpers import C2S, S2C, Script, basic, dissect, gap_capture, write

C2S_ = C2S


def _outcomes(res) -> list[tuple[int | None, str, str | None]]:
    return [(d.delivery_id, d.outcome, d.settled_by) for d in res.deliveries]


def test_basic_conversation(tmp_path: Path) -> None:
    res = dissect(write(tmp_path / "a.pcapng", basic(4)))
    assert _outcomes(res) == [(i, "accepted", "receiver") for i in range(4)]
    names = res.names()
    assert names[:7] == ["header", "header", "sasl-mechanisms", "sasl-init", "sasl-outcome",
                         "header", "header"]
    assert names.count("transfer") == 4 and names.count("disposition") == 4
    assert not res.violations
    conn = res.dissector.conns[0]
    assert conn.label == "c1" and conn.client == "10.0.0.1:40000"
    assert conn.server == "10.0.0.2:5672"
    assert conn.sasl_outcome == 0
    (ls,) = conn.links
    assert ls.name == "sender" and ls.address() == "q1" and ls.handles == {"client": 0,
                                                                            "server": 0}
    assert ls.outcomes == {"accepted": 4} and len(ls.latencies) == 4
    # every delivery carries its timeline: the transfer, then the settling disposition
    d = res.deliveries[0]
    assert [e.kind for e in d.timeline] == ["transfer", "disposition"]
    assert d.latency == pytest.approx(0.001, abs=1e-6)


def _same_records(a, b) -> None:
    assert a.names() == b.names()
    assert _outcomes(a) == _outcomes(b)
    pa = [bytes(f.item.payload) for f in a.frames if f.item.__class__.__name__ == "Frame"]
    pb = [bytes(f.item.payload) for f in b.frames if f.item.__class__.__name__ == "Frame"]
    assert pa == pb


@pytest.mark.parametrize("how", [
    {"reorder": True}, {"duplicate": (0, 1, 2)}, {"mss": 7}, {"coalesce": True},
    {"coalesce": True, "mss": 50, "reorder": True},
])
def test_reassembly_cases_give_the_same_records(tmp_path: Path, how: dict) -> None:
    s = basic(6)
    clean = dissect(write(tmp_path / "clean.pcapng", s))
    other = dissect(write(tmp_path / "other.pcapng", s, **how))
    _same_records(clean, other)
    assert not other.notices and not other.violations


def test_frames_split_over_many_segments(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    big = "x" * 5000
    s.transfer(0, big).dispose(0, c.Accepted()).close()
    res = dissect(write(tmp_path / "a.pcapng", s, mss=3), keep_payload=True)
    (d,) = res.deliveries
    assert Message.decode(d.payload).body.value == big
    # one frame record per frame, each completed by the packet carrying its last byte
    t = [f for f in res.frames if f.item.__class__.__name__ == "Frame"
         and f.item.body.NAME == "transfer"]
    assert len(t) == 1 and t[0].packet > 1000


def test_gap_then_resync(tmp_path: Path) -> None:
    # all transfers go in one send of 100-byte segments; segment 12 of it is lost
    res = dissect(gap_capture(tmp_path / "gap.pcapng"))
    kinds = [n.kind for n in res.notices]
    assert "gap" in kinds and "resync" in kinds
    gap = next(n for n in res.notices if n.kind == "gap")
    assert gap.side == "client" and "100 bytes" in gap.text
    # the frames after the gap are found again: every disposition and the close
    names = res.names()
    assert names.count("disposition") == 10 and names.count("close") == 2
    assert 7 <= names.count("transfer") < 10
    outcomes = {d.delivery_id: d.outcome for d in res.deliveries}
    seen = [f.item.body.delivery_id for f in res.frames
            if getattr(f.item, "body", None) is not None and f.item.body.NAME == "transfer"]
    for did in seen:
        assert outcomes[did] == "accepted"
    # dispositions for transfers lost in the gap are not called violations
    assert not [v for v in res.violations if v.kind == "unknown-delivery"]


def test_capture_starting_mid_connection(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    for i in range(5):
        s.transfer(i, f"m{i}")
    for i in range(5):
        s.dispose(i, c.Accepted())
    s.close()
    # the capture begins at the third transfer, in the middle of a segment run
    res = dissect(write(tmp_path / "mid.pcapng", s, skip_first=11, handshake=False))
    assert res.dissector.conns[0].midstream
    assert "midstream" in [n.kind for n in res.notices]
    names = res.names()
    assert names.count("transfer") == 3 and names.count("disposition") == 5
    assert {d.delivery_id: d.outcome for d in res.deliveries} == {
        2: "accepted", 3: "accepted", 4: "accepted"}
    assert not res.violations


def test_midstream_start_inside_a_frame(tmp_path: Path) -> None:
    """The first captured bytes are the tail of a frame: they are skipped, and the
    reader finds the next frame boundary."""
    s = Script().open().sender_link()
    first = len(s.steps)
    for i in range(4):
        s.transfer(i, "y" * 300)
    s.dispose(0, c.Accepted(), last=3).close()
    path = tmp_path / "cut.pcapng"
    write(path, s, coalesce=True, mss=100, skip_first=first, drop=[(first, 0)],
          handshake=False)
    res = dissect(path)
    seen = [f.item.body.delivery_id for f in res.frames if f.item.body.NAME == "transfer"]
    assert seen == [1, 2, 3]
    (resync,) = [n for n in res.notices if n.kind == "resync"]
    assert resync.side == "client" and "skipping" in resync.text
    assert {d.delivery_id: d.outcome for d in res.deliveries} == {
        1: "accepted", 2: "accepted", 3: "accepted"}
    assert not res.violations


def test_outcomes_presettled_second_mode_and_rejections(tmp_path: Path) -> None:
    s = Script().open().sender_link("a", "qa", 0).sender_link("b", "qb", 1, rcv_mode=1)
    s.transfer(0, "acc").dispose(0, c.Accepted())
    s.transfer(1, "rej").dispose(1, c.Rejected(error=c.Error(condition=Symbol("amqp:x"))))
    s.transfer(2, "rel").dispose(2, c.Released())
    s.transfer(3, "mod").dispose(3, c.Modified(delivery_failed=True))
    s.transfer(4, "pre", settled=True)
    # second mode on link b: the receiver says accepted unsettled, the sender settles,
    # then the receiver settles
    s.transfer(5, "two", handle=1)
    s.dispose(5, c.Accepted(), settled=False)
    s.dispose(5, c.Accepted(), settled=True, side=C2S)
    s.dispose(5, None, settled=True)
    s.close()
    res = dissect(write(tmp_path / "o.pcapng", s))
    by_id = {d.delivery_id: d for d in res.deliveries}
    assert by_id[0].outcome == "accepted" and by_id[0].settled_by == "receiver"
    assert by_id[1].outcome == "rejected" and str(by_id[1].state.error.condition) == "amqp:x"
    assert by_id[2].outcome == "released" and by_id[3].outcome == "modified"
    assert by_id[4].presettled and by_id[4].outcome == "settled"
    d5 = by_id[5]
    assert d5.second_mode and d5.outcome == "accepted" and d5.settled_by == "sender"
    assert [(e.kind, e.side) for e in d5.timeline][:3] == [
        ("transfer", "client"), ("disposition", "server"), ("disposition", "client")]
    assert not res.violations


def test_multi_frame_and_aborted_deliveries(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    msg = Message(body="z" * 300).encode()
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"m", message_format=0, more=True),
        payload=msg[:100])
    s.c(c.Transfer(handle=0, more=True), payload=msg[100:200])
    s.c(c.Transfer(handle=0), payload=msg[200:])
    s.dispose(0, c.Accepted())
    s.c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"a", message_format=0, more=True),
        payload=msg[:100])
    s.c(c.Transfer(handle=0, aborted=True))
    s.close()
    res = dissect(write(tmp_path / "m.pcapng", s), keep_payload=True)
    by_id = {d.delivery_id: d for d in res.deliveries}
    assert by_id[0].frames == 3 and by_id[0].payload == msg and by_id[0].outcome == "accepted"
    assert by_id[1].outcome == "aborted" and by_id[1].aborted


def test_unsettled_at_the_end_of_the_capture(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.transfer(0).transfer(1).dispose(0, c.Accepted())
    res = dissect(write(tmp_path / "u.pcapng", s, fin=False))
    by_id = {d.delivery_id: d for d in res.deliveries}
    assert by_id[0].outcome == "accepted"
    assert by_id[1].outcome == "unsettled" and by_id[1].at_end


def test_transactional_state(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.transfer(0)
    s.dispose(0, c.TransactionalState(txn_id=b"tx1", outcome=c.Accepted()))
    s.close()
    res = dissect(write(tmp_path / "t.pcapng", s))
    (d,) = res.deliveries
    # its transaction is never discharged in the capture: the acceptance may not count
    assert d.outcome == "undecided" and d.state.NAME == "transactional-state"
    assert d.txn_result == "undecided" and d.state.outcome.NAME == "accepted"


@pytest.mark.parametrize("bad, kind", [
    (lambda s: s.transfer(0, handle=7), "unknown-handle"),
    (lambda s: s.dispose(42, c.Accepted()), "unknown-delivery"),
    (lambda s: s.transfer(0).transfer(1).transfer(2), "transfer-beyond-credit"),
    (lambda s: s.c(c.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1), ch=0),
     "channel-in-use"),
    (lambda s: s.c(c.Open(container_id="again")), "out-of-order"),
    (lambda s: s.transfer(0).dispose(0, c.Accepted()).dispose(0, c.Accepted()),
     "already-settled"),
])
def test_violations_with_frame_numbers(tmp_path: Path, bad, kind: str) -> None:
    s = Script().open().sender_link(credit=2)
    bad(s)
    s.close()
    res = dissect(write(tmp_path / "v.pcapng", s))
    kinds = [v.kind for v in res.violations]
    assert kind in kinds, kinds
    v = next(v for v in res.violations if v.kind == kind)
    frame = next(f for f in res.frames if f.frame_no == v.frame_no)
    assert frame.packet == v.packet and v.packet > 0


def test_conflicting_outcomes(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.transfer(0).dispose(0, c.Accepted(), settled=False)
    s.dispose(0, c.Rejected(), settled=True, side=C2S).close()
    res = dissect(write(tmp_path / "conflict.pcapng", s))
    assert "conflicting-outcome" in [v.kind for v in res.violations]


def test_transfer_beyond_session_window(tmp_path: Path) -> None:
    s = Script().open(window=2).sender_link()
    # the link's flow re-states the session window: 2 transfers from id 0
    s.steps[-1] = (s.steps[-1][0], encode_frame(c.Flow(
        next_incoming_id=0, incoming_window=2, next_outgoing_id=0, outgoing_window=1000,
        handle=0, delivery_count=0, link_credit=100)), s.steps[-1][2])
    s.transfer(0).transfer(1).transfer(2).close()
    res = dissect(write(tmp_path / "window.pcapng", s))
    (v,) = [v for v in res.violations if v.kind == "transfer-beyond-window"]
    assert v.side == "client" and v.frame_no == res.frames[-3].frame_no


def test_frame_larger_than_max_frame_size(tmp_path: Path) -> None:
    s = Script().open(max_frame=512).sender_link()
    s.transfer(0, "q" * 2000).close()
    res = dissect(write(tmp_path / "big.pcapng", s))
    assert "frame-too-large" in [v.kind for v in res.violations]


def test_idle_timeout_exceeded(tmp_path: Path) -> None:
    s = Script().open(idle_ms=1000).sender_link()
    s.at(5.0).transfer(0)
    s.dispose(0, c.Accepted()).close()
    res = dissect(write(tmp_path / "idle.pcapng", s))
    (v,) = [v for v in res.violations if v.kind == "idle-timeout"]
    assert v.side == "client" and "idle-timeout of 1 s stands for a 2 s threshold" in v.detail
    assert res.frames[[f.frame_no for f in res.frames].index(v.frame_no)].item.body.NAME == (
        "transfer")


def test_delivery_ids_wrap_around(tmp_path: Path) -> None:
    s = Script().open()
    s.c(c.Attach(name="w", handle=0, role=False, source=c.Source(address="x"),
                 target=c.Target(address="q"), initial_delivery_count=0xFFFFFFFE))
    s.s(c.Attach(name="w", handle=0, role=True, source=c.Source(address="x"),
                 target=c.Target(address="q")))
    s.s(c.Flow(next_incoming_id=0xFFFFFFFE, incoming_window=100, next_outgoing_id=0,
               outgoing_window=100, handle=0, delivery_count=0xFFFFFFFE, link_credit=10))
    ids = [0xFFFFFFFE, 0xFFFFFFFF, 0, 1]
    for i in ids:
        s.transfer(i)
    s.dispose(0xFFFFFFFE, c.Accepted(), last=1)
    s.close()
    # the client's begin said next-outgoing-id 0: start it where the ids start
    s.steps[4] = (C2S, encode_frame(c.Begin(next_outgoing_id=0xFFFFFFFE, incoming_window=100,
                                            outgoing_window=100)), s.steps[4][2])
    res = dissect(write(tmp_path / "wrap.pcapng", s))
    assert sorted(d.delivery_id for d in res.deliveries) == sorted(ids)
    assert {d.outcome for d in res.deliveries} == {"accepted"}
    assert not res.violations


def test_tls_and_other_flows(tmp_path: Path) -> None:
    from amqpcli.capture.writer import CaptureWriter, TcpConversation

    path = tmp_path / "tls.pcapng"
    with CaptureWriter(path) as w:
        tls = TcpConversation(w, server=("10.0.0.2", 5671))
        tls.handshake()
        tls.send(C2S, b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00")
        tls.close()
        http = TcpConversation(w, client=("10.0.0.3", 40001), server=("10.0.0.4", 80))
        http.handshake()
        http.send(C2S, b"GET / HTTP/1.1\r\n\r\n")
        http.close()
    res = dissect(path)
    (n,) = res.notices
    assert n.kind == "encrypted" and "--tls-keylog" in n.text
    assert res.dissector.other_flows == {"unknown": 1}


def test_an_encrypted_connection_runs_to_its_last_packet(tmp_path: Path) -> None:
    """Its packets are not read, yet `--connections` gives the first and the last with
    payload (it gave the first twice): the flow keeps the time of its last one."""
    from amqpcli.capture.writer import CaptureWriter, TcpConversation

    path = tmp_path / "tls.pcapng"
    start = 1_700_000_000_000_000_000
    with CaptureWriter(path) as w:
        tls = TcpConversation(w, server=("10.0.0.2", 5671), start_ns=start,
                              step_ns=1_000_000)
        tls.handshake()
        tls.send(C2S, b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00")
        tls.now += 5_000_000_000
        last = tls.now
        tls.send(S2C, b"\x17\x03\x03\x00\x03abc")  # application data, 5 s later
        tls.close()
    (conn,) = dissect(path).dissector.conns
    assert conn.protocol == "tls"
    assert round(conn.last_time * 1e9) == pytest.approx(last, abs=1000)


def test_unsettled_map_on_reattach_is_reconciled(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.transfer(0).transfer(1)
    s.dispose(0, c.Accepted())
    # suspend the link, then resume it: the client's attach names what it holds unsettled
    s.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s.c(c.Attach(name="sender", handle=0, role=False, source=c.Source(address="client"),
                 target=c.Target(address="q1"), initial_delivery_count=2,
                 unsettled={b"t1": None, b"t9": None}))
    s.s(c.Attach(name="sender", handle=0, role=True, source=c.Source(address="client"),
                 target=c.Target(address="q1"), unsettled={b"t1": None}))
    s.close()
    res = dissect(write(tmp_path / "re.pcapng", s))
    notes = [n for n in res.notices if n.kind == "link"]
    assert notes, [n.text for n in res.notices]
    assert any("unsettled map" in n.text and "1 only in the attach" in n.text for n in notes)
    (ls,) = {id(x.link): x for x in res.dissector.conns[0].links}.values()
    assert any("unsettled map" in n for n in ls.notes)


def test_a_first_attach_after_an_early_transfer_is_no_reattach(tmp_path: Path) -> None:
    """The client sends a transfer before the server's attach (beyond credit: a
    violation). The server's attach that follows is its first for the link: no note
    compares its unsettled map "on re-attach"."""
    s = Script().open()
    s.c(c.Attach(name="early", handle=0, role=False, source=c.Source(),
                 target=c.Target(address="q1"), initial_delivery_count=0))
    s.transfer(0)
    s.s(c.Attach(name="early", handle=0, role=True, source=c.Source(),
                 target=c.Target(address="q1")))
    s.s(c.Flow(next_incoming_id=1, incoming_window=1000, next_outgoing_id=0,
               outgoing_window=1000, handle=0, delivery_count=1, link_credit=10))
    s.dispose(0, c.Accepted())
    s.close()
    res = dissect(write(tmp_path / "early.pcapng", s))
    assert [v.kind for v in res.violations] == ["transfer-beyond-credit"]
    assert [n.text for n in res.notices if "re-attach" in n.text] == []
    (ls,) = {id(x.link): x for x in res.dissector.conns[0].links}.values()
    assert ls.notes == []
    assert _outcomes(res) == [(0, "accepted", "receiver")]


def test_credit_stall(tmp_path: Path) -> None:
    """Credit runs out while the sender says it has more; the receiver grants again
    3 s later: one stall of 3 s. A 0.5 s wait is below the threshold."""
    s = Script().open().sender_link(credit=1)
    s.transfer(0).dispose(0, c.Accepted())
    s.c(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=1,
               outgoing_window=1000, handle=0, delivery_count=1, link_credit=0, available=5))
    t = s.t
    s.at(t + 3.0).s(c.Flow(next_incoming_id=1, incoming_window=1000, next_outgoing_id=0,
                           outgoing_window=1000, handle=0, delivery_count=1, link_credit=1))
    s.transfer(1).dispose(1, c.Accepted())
    s.at(s.t + 0.5).s(c.Flow(next_incoming_id=2, incoming_window=1000, next_outgoing_id=0,
                             outgoing_window=1000, handle=0, delivery_count=2, link_credit=1))
    s.transfer(2).dispose(2, c.Accepted()).close()
    res = dissect(write(tmp_path / "stall.pcapng", s))
    (ls,) = res.dissector.conns[0].links
    assert len(ls.stalls) == 1
    start, seconds = ls.stalls[0]
    assert start == res.deliveries[0].first_time  # the transfer that used the last credit
    assert seconds == pytest.approx(3.0, abs=0.01)
    assert ls.flows == 4 and ls.max_credit == 1
