"""The one-frame send path writes exactly what the generic frame encoder writes, and
leaves the model as the generic path does."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.engine import DeliveriesSettled, DeliverySettled, DeliveryStarted, Observer

from .harness import Pair, of


def _frames(data: bytes) -> list:  # type: ignore[type-arg]
    return list(FrameReader().feed(data))


@pytest.mark.parametrize("settled", [False, True])
@pytest.mark.parametrize("first_id", [0, 200, 70000])
def test_one_frame_transfer_bytes_match_encode_frame(settled: bool, first_id: int) -> None:
    p = Pair()
    s = p.client.begin(first_delivery_id=first_id)
    link, _ = p.sender(credit=10, session=s)
    payloads = [b"", b"x" * 100, b"y" * 3000]
    tags = [None, b"my-tag", None]
    for payload, tag in zip(payloads, tags, strict=True):
        p.client.data_to_send()
        d = p.client.send(link, payload, tag=tag, settled=settled)
        raw = p.client.data_to_send()
        want = encode_frame(c.Transfer(handle=link.handle["client"], delivery_id=d.delivery_id,
                                       delivery_tag=d.tag, message_format=0, settled=settled,
                                       more=False), s.channel["client"], payload)
        assert raw == want
        p.peer.receive_data(raw, p.t)
    p.pump()


def test_fast_and_queued_sends_build_the_same_model() -> None:
    # The same conversation, once with credit up front (one-frame path) and once with
    # the messages queued before credit arrives (the generic path).
    def run(credit_first: bool) -> tuple[Pair, list]:  # type: ignore[type-arg]
        p = Pair()
        link, plink = p.sender(credit=5 if credit_first else 0)
        ds = [p.client.send(link, f"m{i}".encode(), settled=i == 2) for i in range(5)]
        if not credit_first:
            p.peer.flow(plink, 5)
        p.pump()
        p.peer.accept([d for d in plink.live.values()])
        p.pump()
        return p, ds

    fast, fds = run(True)
    _slow, sds = run(False)
    for a, b in zip(fds, sds, strict=True):
        assert (a.delivery_id, a.tag, a.phase, a.outcome, a.presettled, a.settled_by,
                a.frames, a.size) == (b.delivery_id, b.tag, b.phase, b.outcome, b.presettled,
                                      b.settled_by, b.frames, b.size)
        assert [(e.kind, e.side, e.settled, e.more, e.size) for e in a.timeline] == [
            (e.kind, e.side, e.settled, e.more, e.size) for e in b.timeline]
    lf = fds[0].link
    ls = sds[0].link
    assert (lf.deliveries, lf.settled_count, lf.outcomes, lf.delivery_count, lf.link_credit) == (
        ls.deliveries, ls.settled_count, ls.outcomes, ls.delivery_count, ls.link_credit)
    assert fast.client.connection.frames["client"] == fast.peer.connection.frames["client"]
    assert len(of(fast.client_events, DeliverySettled)) == 5
    assert len(of(fast.client_events, DeliveryStarted)) == 5
    # an observer of the wire agrees with the sender
    obs = Observer()
    for side, data, t in fast.wire:
        obs.feed_bytes(side, data, t)
    olink = next(ln for ss in obs.connection.sessions for ln in ss.links.values())
    assert olink.outcomes == lf.outcomes


def test_lean_events_leave_out_our_own_transfers() -> None:
    p = Pair(client={"lean_events": True})
    link, plink = p.sender(credit=5)
    p.client.send(link, b"a")
    p.client.send(link, b"b", settled=True)
    p.pump()
    p.peer.accept(list(plink.live.values()))
    p.pump()
    assert not of(p.client_events, DeliveryStarted)
    # "b" went pre-settled (reported as settled at once); the peer's accept of "a" comes
    # as one DeliveriesSettled for the run it settled
    assert [e.delivery.tag for e in of(p.client_events, DeliverySettled)] == [b"2"]
    runs = of(p.client_events, DeliveriesSettled)
    assert [[d.tag for d in e.deliveries] for e in runs] == [[b"1"]]
    assert runs[0].deliveries[0].outcome == "accepted"
    assert link.outcomes == {"accepted": 1, "settled": 1}


def test_lean_events_report_a_received_message_once() -> None:
    from amqpcli.engine import MessageReceived

    p = Pair(client={"lean_events": True})
    link, plink = p.receiver(credit=5)
    p.peer.send(plink, b"a")
    p.peer.send(plink, b"b", settled=True)
    p.pump()
    got = [e.delivery for e in of(p.client_events, MessageReceived)]
    assert [d.payload for d in got] == [b"a", b"b"]
    assert not of(p.client_events, DeliveryStarted)
    assert not of(p.client_events, DeliverySettled)  # "b" arrived settled: reported once
    assert got[1].phase == "settled"
    p.client.accept(got[0])
    p.pump()
    # our own settlement of what we received is not reported back to us either
    assert not of(p.client_events, DeliverySettled)
    assert got[0].phase == "settled" and got[0].outcome == "accepted"
    assert not link.live and not link.unsettled["client"] and not link.unsettled["server"]
    assert link.outcomes == {"accepted": 1, "settled": 1}


def _model(link, s) -> tuple:  # type: ignore[no-untyped-def,type-arg]
    return (link.deliveries, link.delivery_count, link.link_credit, link.settled_count,
            dict(link.outcomes), dict(link.unsettled["client"]), dict(link.unsettled["server"]),
            s.next_outgoing_id["client"], s.transfers["client"], s.deliveries["client"],
            s.first_id["client"], dict(s.recent["client"]), sorted(s.inflight["client"]))


@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("settled", [False, True])
@pytest.mark.parametrize("first_id", [0, 250, 0xFFFFFFFE])
def test_send_many_is_send_one_at_a_time(lean: bool, settled: bool, first_id: int) -> None:
    # The same wire bytes and model as send() per message; the run stops where credit
    # stops; a lean endpoint keeps no Delivery for what it sent pre-settled.
    payloads = [b"", b"x" * 100, b"y" * 3000, b"z"] * 3

    def run(many: bool) -> tuple[bytes, tuple, list, Pair]:  # type: ignore[type-arg]
        p = Pair(client={"lean_events": lean})
        s = p.client.begin(first_delivery_id=first_id)
        link, plink = p.sender(credit=10, session=s)
        p.client.data_to_send()
        p.client.take_events()
        if many:
            n, ds = p.client.send_many(link, payloads, settled=settled)
            assert n == 10
        else:
            ds = [p.client.send(link, pl, settled=settled) for pl in payloads[:10]]
        raw = p.client.data_to_send()
        model = _model(link, s)
        p.peer.receive_data(raw, p.t)
        p.pump()
        assert plink.deliveries == 10  # the peer took ten whole messages either way
        assert [bytes(d.payload) for d in plink.live.values()] == (
            [] if settled else payloads[:10])
        return raw, model, ds, p

    raw1, model1, ds1, _ = run(False)
    raw2, model2, ds2, _ = run(True)
    assert raw2 == raw1
    assert model2 == model1
    if settled and lean:
        assert ds2 == []
    else:
        assert [(d.delivery_id, d.tag, d.phase, d.size, d.frames, d.first_time,
                 [(e.kind, e.side, e.frame_no, e.settled, e.size) for e in d.timeline])
                for d in ds2] == [
            (d.delivery_id, d.tag, d.phase, d.size, d.frames, d.first_time,
             [(e.kind, e.side, e.frame_no, e.settled, e.size) for e in d.timeline])
            for d in ds1]


def test_send_many_stops_at_the_window_and_the_frame_size() -> None:
    p = Pair(client={"lean_events": True})
    link, _ = p.sender(credit=100)
    s = link.session
    s.in_limit["server"] = (s.next_outgoing_id["client"] + 3) & 0xFFFFFFFF  # 3 fit
    n, ds = p.client.send_many(link, [b"a"] * 10, settled=False)
    assert n == 3 and [d.delivery_id for d in ds] == [0, 1, 2]
    s.in_limit["server"] = None
    big = b"x" * (p.client.connection._frame_limit["client"])  # needs two frames
    n, ds = p.client.send_many(link, [b"b", big, b"c"], settled=False)
    assert n == 1  # the big one is send()'s to split
    assert p.client.send(link, big, settled=False).delivery_id == 4
