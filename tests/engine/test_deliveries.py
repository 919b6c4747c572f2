"""Deliveries: multi-frame transfers, states, settle modes, ranges, abort, resume, wrap."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol
from amqpcli.engine import (
    DeliverySettled,
    DeliveryStarted,
    MessageReceived,
    Phase,
    UnsettledReconciled,
    Violation,
)
from amqpcli.engine.delivery import Delivery

from .harness import Pair, of


def _received(p: Pair) -> list[Delivery]:
    return [e.delivery for e in of(p.peer_events, MessageReceived)]


def test_multi_frame_transfer_is_split_and_assembled() -> None:
    p = Pair(peer={"max_frame_size": 512})
    link, _plink = p.sender(credit=5)
    body = bytes(range(256)) * 10
    msg = Message(body, properties=c.Properties(message_id="m1", subject="big"))
    d = p.client.send(link, msg)
    p.pump()
    frames = [e for e in d.timeline if e.kind == "transfer"]
    assert len(frames) == d.frames > 5
    assert all(e.more for e in frames[:-1]) and not frames[-1].more
    assert sum(e.size for e in frames) == len(msg.encode())
    got = _received(p)
    assert len(got) == 1
    m = got[0].message()
    assert m.body[0].value == body and m.properties.subject == "big"
    assert got[0].payload == msg.encode()
    # no frame went over the peer's max-frame-size
    assert not of(p.peer_events, Violation)


def test_settled_at_send_is_final_at_once() -> None:
    p = Pair()
    link, plink = p.sender(credit=1, snd_settle_mode=1)
    d = p.client.send(link, b"x")
    p.pump()
    assert d.phase == Phase.SETTLED and d.presettled and d.settled_by == "client"
    assert d.outcome == "settled"
    pd = _received(p)[0]
    assert pd.phase == Phase.SETTLED
    assert not link.unsettled["client"] and not plink.unsettled["server"]
    assert of(p.peer_events, DeliverySettled)[0].delivery is pd


def test_every_terminal_state_reaches_the_sender() -> None:
    p = Pair()
    link, plink = p.sender(credit=10)
    ds = [p.client.send(link, b"m%d" % i) for i in range(5)]
    p.pump()
    got = _received(p)
    err = c.Error(condition=Symbol("amqp:precondition-failed"), description="bad")
    p.peer.accept(got[0])
    p.peer.reject(got[1], err)
    p.peer.release(got[2])
    p.peer.modify(got[3], delivery_failed=True, undeliverable_here=True,
                  message_annotations={Symbol("x-reason"): "retry"})
    p.peer.dispose(got[4], c.Received(section_number=0, section_offset=3))
    p.pump()
    assert [d.outcome for d in ds] == ["accepted", "rejected", "released", "modified",
                                       "unsettled"]
    assert str(ds[1].state.error.condition) == "amqp:precondition-failed"
    mod = ds[3].state
    assert mod.delivery_failed and mod.undeliverable_here
    assert mod.message_annotations == {Symbol("x-reason"): "retry"}
    assert ds[4].phase == Phase.UNSETTLED and ds[4].receiver_state.section_offset == 3
    # both sides' unsettled maps hold only what is still open, with its state
    assert list(link.unsettled["client"]) == [ds[4].tag]
    assert link.unsettled["server"][ds[4].tag].section_offset == 3
    assert list(plink.unsettled["client"]) == [ds[4].tag]
    for d in ds[:4]:
        assert d.settled_by == "server" and d.latency is not None and d.latency > 0


def test_timeline_of_an_unsettled_delivery() -> None:
    p = Pair()
    link, _ = p.sender(credit=1)
    d = p.client.send(link, b"payload")
    p.pump()
    p.peer.dispose(_received(p)[0], c.Accepted(), settled=False)
    p.pump()
    p.client.settle(d)
    p.pump()
    steps = [(e.kind, e.side, e.settled) for e in d.timeline]
    assert steps == [("transfer", "client", False), ("disposition", "server", False),
                     ("settle", "client", True)]
    assert d.settled_by == "client" and d.outcome == "accepted"
    assert d.timeline[1].state == c.Accepted()
    assert d.latency == d.timeline[-1].time - d.timeline[0].time


def test_receiver_settle_mode_second() -> None:
    p = Pair()
    link, plink = p.sender(credit=1, rcv_settle_mode=1)
    assert plink.rcv_settle_mode == 1
    d = p.client.send(link, b"x")
    p.pump()
    pd = _received(p)[0]
    p.peer.accept(pd, settled=False)
    p.pump()
    assert d.outcome == "accepted" and d.phase == Phase.UNSETTLED
    p.client.settle(d)
    p.pump()
    # the sender settled first; the receiver then settled (the engine does it)
    assert d.phase == Phase.SETTLED and pd.phase == Phase.SETTLED
    kinds = [(e.kind, e.side, e.settled) for e in d.timeline]
    assert kinds[-2:] == [("settle", "client", True), ("settle", "server", True)]
    assert d.settled_by == "client"


def test_mixed_settle_mode_per_delivery() -> None:
    p = Pair()
    link, _ = p.sender(credit=2, snd_settle_mode=2)
    a = p.client.send(link, b"a", settled=True)
    b = p.client.send(link, b"b", settled=False)
    p.pump()
    assert a.phase == Phase.SETTLED and b.phase == Phase.UNSETTLED


def test_disposition_ranges() -> None:
    p = Pair()
    link, _plink = p.sender(credit=10)
    ds = [p.client.send(link, b"%d" % i) for i in range(6)]
    p.pump()
    got = _received(p)
    p.peer.accept(got[:3] + got[4:])  # ids 0-2 and 4-5: two frames
    p.pump()
    disp = [f for f in _frames(p, "server") if f.body.NAME == "disposition"]
    assert [(f.body.first, f.body.last) for f in disp] == [(0, 2), (4, 5)]
    assert [d.outcome for d in ds] == ["accepted"] * 3 + ["unsettled"] + ["accepted"] * 2


def test_aborted_delivery() -> None:
    p = Pair(peer={"max_frame_size": 512})
    link, plink = p.sender(credit=2)
    d = p.client.start_delivery(link)
    p.client.send_more(d, b"x" * 1000)
    p.pump()
    assert d.phase == Phase.TRANSFERRING and d.frames >= 2 and d.size == 1000
    assert all(e.more for e in d.timeline)
    p.client.abort(d)
    p.pump()
    assert d.phase == Phase.ABORTED and d.outcome == "aborted"
    assert d.timeline[-1].kind == "abort"
    pd = of(p.peer_events, DeliveryStarted)[0].delivery
    assert pd.phase == Phase.ABORTED and not of(p.peer_events, MessageReceived)
    assert plink.aborted_count == 1 and not plink.live
    # the aborted delivery used its credit; the next one goes through
    d2 = p.client.send(link, b"ok")
    p.pump()
    assert d2.delivery_id == 1 and _received(p)[0].payload == b"ok"


def test_resume_after_reattach_reconciles_unsettled_maps() -> None:
    p = Pair()
    s = p.client.begin()
    link, _plink = p.sender("durable-out", credit=5, session=s)
    d1 = p.client.send(link, b"one")
    d2 = p.client.send(link, b"two")
    p.pump()
    p.peer.accept(_received(p)[0])
    p.pump()
    assert d1.outcome == "accepted" and d2.phase == Phase.UNSETTLED
    p.client.detach(link, closed=False)
    p.pump()
    assert p.client.connection.suspended and p.peer.connection.suspended
    # re-attach with our unsettled map, then resume d2
    link2 = p.client.attach_sender(s, "durable-out", c.Source(address="src"),
                                   c.Target(address="q"), unsettled={d2.tag: None})
    p.pump()
    assert link2 is link  # the same link, resumed
    rec = [e for e in of(p.client_events, UnsettledReconciled) if e.side == "client"]
    assert rec and rec[-1].only_in_model == () and rec[-1].only_in_attach == ()
    p.peer.flow(p.peer_link(link2), 5)
    p.pump()
    r = p.client.start_delivery(link2, tag=d2.tag, resume=True, settled=True)
    assert r is d2
    p.client.send_more(r, b"", more=False)
    p.pump()
    assert d2.resumed and d2.phase == Phase.SETTLED
    assert [e.kind for e in d2.timeline] == ["transfer", "resume"]
    assert d2.timeline[-1].detail == f"resumed as delivery-id {d2.delivery_id}"


def test_a_delivery_resumed_from_its_start_is_the_bytes_sent_again() -> None:
    """Part 2 §2.6.14: the receiver's re-attach holds no state for the delivery (it has
    none of it), so the sender sends it again whole: the delivery is those bytes, not
    the first attachment's part followed by them (the frame view joins them the same)."""
    from amqpcli.render.items import TransferAssembler

    p = Pair()
    s = p.client.begin()
    link, _plink = p.sender("durable-out", credit=5, session=s)
    whole = Message(body="y" * 300).encode()
    d = p.client.start_delivery(link, tag=b"t1")
    p.client.send_more(d, whole[:150], more=True)
    p.pump()
    p.client.detach(link, closed=False)
    p.pump()
    link2 = p.client.attach_sender(s, "durable-out", c.Source(address="src"),
                                   c.Target(address="q"), unsettled={b"t1": None})
    p.pump()
    p.peer.flow(p.peer_link(link2), 5)
    p.pump()
    r = p.client.start_delivery(link2, tag=b"t1", resume=True)
    p.client.send_more(r, whole[:100], more=True)  # (in two frames again)
    p.pump()
    p.client.send_more(r, whole[100:], more=False)
    p.pump()
    _obs, events = p.observe()
    seen = [e.delivery for e in of(events, DeliveryStarted)]
    assert len(seen) == 1 and seen[0].resumed
    assert seen[0].size == len(whole) and seen[0].payload == whole
    joiner = TransferAssembler()
    got = [m for f in _frames(p, "client") if (m := joiner.feed(f)) is not None]
    assert [m.body.value for m in got] == ["y" * 300]


def test_reconciliation_reports_differences() -> None:
    p = Pair()
    s = p.client.begin()
    link, _ = p.sender("l", credit=5, session=s)
    d = p.client.send(link, b"x")
    p.pump()
    p.client.detach(link, closed=False)
    p.pump()
    p.client.attach_sender(s, "l", c.Source(), c.Target(address="q"),
                           unsettled={b"ghost": c.Accepted()})
    p.pump()
    rec = [e for e in of(p.peer_events, UnsettledReconciled) if e.side == "client"][-1]
    assert rec.only_in_model == (d.tag,) and rec.only_in_attach == (b"ghost",)


def test_delivery_ids_wrap_around() -> None:
    p = Pair()
    s = p.client.begin(first_delivery_id=2**32 - 2, next_outgoing_id=2**32 - 1)
    link, _plink = p.sender(credit=10, session=s)
    ds = [p.client.send(link, b"%d" % i) for i in range(4)]
    p.pump()
    assert [d.delivery_id for d in ds] == [2**32 - 2, 2**32 - 1, 0, 1]
    got = _received(p)
    p.peer.accept(got)  # one range across the wrap
    p.pump()
    disp = [f for f in _frames(p, "server") if f.body.NAME == "disposition"]
    assert [(f.body.first, f.body.last) for f in disp] == [(2**32 - 2, 1)]
    assert all(d.outcome == "accepted" for d in ds)
    assert not of(p.peer_events + p.client_events, Violation)
    assert s.next_outgoing_id["client"] == 3  # transfer-ids wrapped too


def test_session_window_limits_sending() -> None:
    p = Pair(peer={"incoming_window": 2})
    link, _plink = p.sender(credit=10)
    ds = [p.client.send(link, b"%d" % i) for i in range(6)]
    p.pump()
    # the peer re-opens its window as it fills: every message arrives, no violation
    assert all(d.delivery_id is not None for d in ds)
    assert len(_received(p)) == 6
    assert not of(p.peer_events, Violation)


def _frames(p: Pair, side: str) -> list:
    from amqpcli.codec.frames import Frame, FrameReader

    r = FrameReader()
    out = []
    for s, data, _ in p.wire:
        if s == side:
            out += [f for f in r.feed(data) if isinstance(f, Frame) and f.body is not None]
    return out


def test_transport_lost_leaves_deliveries_in_doubt() -> None:
    from amqpcli.engine import TransportClosed

    p = Pair()
    link, _ = p.sender(credit=2)
    d = p.client.send(link, b"x")
    p.pump()
    evs = p.client.receive_eof(p.tick())
    tc = of(evs, TransportClosed)
    assert tc and tc[0].side == "server" and not tc[0].clean
    assert d.phase == Phase.ABANDONED and d.outcome == "abandoned"
    assert d.timeline[-1].detail == "transport ended" and d.timeline[-1].side == "server"
    assert of(evs, DeliverySettled)[0].delivery is d
    obs, _ = p.observe()
    oevs = obs.close(p.t)
    assert [e.delivery.outcome for e in of(oevs, DeliverySettled)] == ["abandoned"]


def test_mode_second_receiver_accept_waits_for_the_sender() -> None:
    p = Pair()
    _, plink = p.receiver(credit=1, rcv_settle_mode=1)
    pd = p.peer.send(plink, b"x")
    p.pump()
    d = of(p.client_events, MessageReceived)[0].delivery
    p.client.accept(d)  # settled=True asked; the engine holds the settlement back
    p.pump()
    assert d.phase == Phase.UNSETTLED and d.receiver_state == c.Accepted()
    assert not of(p.client_events + p.peer_events, Violation)
    p.peer.settle(pd)
    p.pump()
    assert d.phase == Phase.SETTLED and pd.phase == Phase.SETTLED
    assert [(e.kind, e.side, e.settled) for e in d.timeline][-2:] == [
        ("settle", "server", True), ("settle", "client", True)]
