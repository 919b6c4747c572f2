"""The one-frame send path writes exactly what the generic frame encoder writes, and
leaves the model as the generic path does."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.engine import DeliverySettled, DeliveryStarted, Observer

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
    assert len(of(p.client_events, DeliverySettled)) == 2
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
