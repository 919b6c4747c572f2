"""A link name attached, detached and attached again by one side before the other side
has answered: a link name may be used again once its link is detached (Part 2 §2.6.3),
and the other side's answers to the first attachment (its attach, then its detach,
§2.6.5) come before its answer to the second. python-qpid-proton writes such a
sequence for `create_sender(a); sender.close(); create_sender(a)` in one callback.

The engine used to take the second attach for a second link of a name already attached
(`link-name-in-use`, the session ended). Now the second attachment is a link of its own:
fresh after a detach with closed=true, resuming the first after closed=false.
"""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame, FrameReader
from amqpcli.engine import LinkAttached, LinkDetached, UnsettledReconciled, Violation

from .harness import Pair, of


def _frames_of(data: bytes, reader: FrameReader | None = None) -> list[Any]:
    reader = reader or FrameReader()
    return [i.body for i in reader.feed(data) if isinstance(i, Frame) and i.body is not None]


def _frames(p: Pair, side: str) -> list[Any]:
    """The performatives `side` wrote, in order."""
    reader = FrameReader()
    return [b for who, data, _t in p.wire if who == side for b in _frames_of(data, reader)]


def _attach_detach_attach(p: Pair, role: str, *, closed: bool = True) -> tuple[Any, Any]:
    """The client attaches `same`, detaches it and attaches it again in one write, before
    the (manual) peer answered: the peer's two links, first and second."""
    s = p.client.begin()
    p.pump()
    if role == "sender":
        def attach() -> Any:
            return p.client.attach_sender(s, "same", c.Source(), c.Target(address="q"))
    else:
        def attach() -> Any:
            return p.client.attach_receiver(s, "same", c.Source(address="q"), c.Target())
    p.client.detach(attach(), closed=closed)
    attach()
    p.pump()
    evs = [e for e in p.peer_events if isinstance(e, (LinkAttached, LinkDetached))]
    assert [(type(e).__name__, e.side) for e in evs] == [
        ("LinkAttached", "client"), ("LinkDetached", "client"), ("LinkAttached", "client")]
    first, second = evs[0].link, evs[2].link
    assert first is not second
    return first, second


@pytest.mark.parametrize("role", ["sender", "receiver"])
def test_attach_detach_attach_answered_in_order(role: str) -> None:
    p = Pair(peer={"link_policy": "manual"})
    first, second = _attach_detach_attach(p, role)
    assert not of(p.peer_events, Violation)
    p.peer.accept_link(first)  # attach, then detach: the client detached it
    p.peer.accept_link(second)
    p.pump()
    links = [b for b in _frames(p, "server") if isinstance(b, (c.Attach, c.Detach))]
    assert [type(b).__name__ for b in links] == ["Attach", "Detach", "Attach"]
    assert links[1].handle == links[0].handle and links[1].closed
    assert first.state == "detached" and second.state == "attached"
    assert list(second.session.links.values()) == [second] and not second.session.owing
    # the client's model: two links, the second attached both ways
    cs = p.client.connection.sessions[0]
    (clink,) = cs.links.values()
    assert clink.state == "attached" and not cs.owing
    assert not of(p.client_events, Violation) and not of(p.peer_events, Violation)
    # and an observer of the same bytes sees nothing wrong either
    _obs, events = p.observe()
    assert not of(events, Violation), of(events, Violation)


def _two_sent_then_reattached(p: Pair, *, closed: bool, **kw: Any) -> tuple[Any, Any]:
    """A sender with credit sends two unsettled messages, then detaches (`closed`) and
    attaches the name again (`kw`: the attach's fields) in the same write, before the
    peer's detach came back. The peer answers each frame as it comes; the client's model
    sees the pipelined sequence: its first and second link."""
    s = p.client.begin()
    link, _plink = p.sender("same", credit=10, session=s)
    p.client.send(link, b"one")
    p.client.send(link, b"two")
    p.pump()
    assert link.delivery_count == 2 and len(link.unsettled["client"]) == 2
    p.client.detach(link, closed=closed)
    link2 = p.client.attach_sender(s, "same", c.Source(), c.Target(address="q"), **kw)
    assert link2 is not link and link.state == "detaching"
    assert s.owing == {("same", "client"): [link]}
    return link, link2


def test_the_second_attachment_of_a_closed_link_is_fresh() -> None:
    """Detached with closed=true: the new link starts with nothing of the first."""
    p = Pair()
    link, link2 = _two_sent_then_reattached(p, closed=True)
    sent = list(link.live.values())
    assert not link2.reattached and link2.link_credit == 0
    assert link2.unsettled == {"client": {}, "server": {}} and not link2.live
    p.pump()
    # the peer's detach went to the first; its deliveries went with it (closed)
    assert link.state == "detached" and link2.state == "attached"
    assert not link.live and not link.session.owing
    assert [d.outcome for d in sent] == ["abandoned", "abandoned"]
    p.peer.flow(p.peer_link(link2), 5)
    p.pump()
    d = p.client.send(link2, b"three")
    p.pump()
    assert d.link is link2 and link2.delivery_count == 1 and link2.link_credit == 4
    assert not of(p.client_events, Violation) and not of(p.peer_events, Violation)
    _obs, events = p.observe()
    assert not of(events, Violation), of(events, Violation)


def test_the_second_attachment_after_closed_false_resumes_the_first() -> None:
    """Detached with closed=false: the new link resumes the first (its unsettled
    deliveries move to it and can be resumed), and the first is not kept for a resume."""
    p = Pair()
    link, link2 = _two_sent_then_reattached(p, closed=False, unsettled={})
    assert link2.reattached and len(link2.live) == 2 and not link.live
    assert all(d.link is link2 for d in link2.live.values())
    p.pump()
    assert link.state == "detached" and link2.state == "attached"
    assert not link.session.owing and not p.client.connection.suspended
    rec = [e for e in of(p.client_events, UnsettledReconciled) if e.link is link2]
    assert [(e.side, len(e.only_in_model)) for e in rec] == [("client", 2), ("server", 2)]
    p.peer.flow(p.peer_link(link2), 5)
    p.pump()
    d = next(iter(link2.live.values()))
    r = p.client.start_delivery(link2, tag=d.tag, resume=True, settled=True)
    p.client.send_more(r, b"", more=False)
    p.pump()
    assert r is d and d.resumed and d.link is link2
    assert [e.kind for e in d.timeline] == ["transfer", "resume"]
    assert not of(p.client_events, Violation) and not of(p.peer_events, Violation)
    _obs, events = p.observe()
    assert not of(events, Violation), of(events, Violation)


def test_proton_order_attach_attach_detach() -> None:
    """python-qpid-proton writes the attaches of a callback before its detaches: attach,
    attach again, then the detach of the first. The same answers, in the same order."""
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    p.pump()
    ch = s.channel["client"]
    for body in (c.Attach(name="same", handle=0, role=False, source=c.Source(),
                          target=c.Target(address="q"), initial_delivery_count=0),
                 c.Attach(name="same", handle=1, role=False, source=c.Source(),
                          target=c.Target(address="q"), initial_delivery_count=0),
                 c.Detach(handle=0, closed=True)):
        p.inject("peer", body, channel=ch)  # (the client's engine is not told: no pump)
    first, second = [e.link for e in of(p.peer_events, LinkAttached)]
    assert first is not second and not of(p.peer_events, Violation)
    ps = first.session
    assert not ps.attached_before(second, "client")
    p.peer.accept_link(first)
    p.peer.accept_link(second)
    data = p.peer.data_to_send()
    p.wire.append(("server", data, p.tick()))  # for the observer: the client reads nothing
    sent = [b for b in _frames_of(data) if isinstance(b, (c.Attach, c.Detach))]
    assert [type(b).__name__ for b in sent] == ["Attach", "Detach", "Attach"]
    assert first.state == "detached" and second.state == "attached"
    assert not of(p.peer.take_events(), Violation)
    _obs, events = p.observe()
    assert not of(events, Violation), of(events, Violation)


def test_attached_twice_without_a_detach() -> None:
    """Attach, attach again, no detach: the second waits while the first is answered;
    `attached_before` says so (serve then ends the session, as for any name in use)."""
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    p.pump()
    ch = s.channel["client"]
    for h in (0, 1):
        p.inject("peer", c.Attach(name="same", handle=h, role=False, source=c.Source(),
                                  target=c.Target(address="q"), initial_delivery_count=0),
                 channel=ch)
    first, second = [e.link for e in of(p.peer_events, LinkAttached)]
    assert first.session.attached_before(second, "client")
    assert not first.session.attached_before(first, "client")


def test_the_name_stays_in_use_while_its_link_is_attached() -> None:
    """Attaching a name again while its answered link is attached is link-name-in-use."""
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    p.pump()
    p.client.attach_sender(s, "same", c.Source(), c.Target(address="q"))
    p.pump()
    (first,) = [e.link for e in of(p.peer_events, LinkAttached)]
    p.peer.accept_link(first)
    p.pump()
    # the client's own engine would refuse the second attach: write it by hand
    p.inject("peer", c.Attach(name="same", handle=1, role=False, source=c.Source(),
                              target=c.Target(address="q"), initial_delivery_count=0),
             channel=s.channel["client"])
    assert [v.kind for v in of(p.peer_events, Violation)] == ["link-name-in-use"]


def test_the_transport_ending_abandons_what_an_owed_attachment_holds() -> None:
    """The transport ends while the first attachment still waits for its answers: its
    unsettled deliveries are in doubt as every link's are (they were left live)."""
    p = Pair()
    link, _link2 = _two_sent_then_reattached(p, closed=True)
    sent = list(link.live.values())
    assert len(sent) == 2
    p.client.receive_eof(p.tick())
    assert [d.outcome for d in sent] == ["abandoned", "abandoned"]
    assert all(d.timeline[-1].detail == "transport ended" for d in sent)
