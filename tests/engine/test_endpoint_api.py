"""Endpoint API edges: usage errors, aborting unsent deliveries, echo, closing with
unsettled deliveries, dynamic nodes."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame, FrameReader
from amqpcli.codec.types import Described, Symbol
from amqpcli.engine import (
    CreditChanged,
    DeliverySettled,
    Endpoint,
    EngineUsageError,
    Phase,
    TerminusMismatch,
)

from .harness import Pair, of


def test_usage_errors_are_exceptions_not_events() -> None:
    ep = Endpoint("client")
    with pytest.raises(EngineUsageError, match="not open"):
        ep.begin()
    with pytest.raises(ValueError):
        Endpoint("broker")
    with pytest.raises(ValueError):
        Endpoint("peer", link_policy="maybe")
    p = Pair()
    link, _ = p.receiver()
    with pytest.raises(EngineUsageError, match="not the sender"):
        p.client.send(link, b"x")
    with pytest.raises(EngineUsageError, match="already called"):
        p.client.open()


def test_abort_before_any_frame_went_out() -> None:
    p = Pair()
    link, _ = p.sender()  # no credit: nothing is sent
    d = p.client.send(link, b"x")
    p.client.abort(d)
    assert d.phase == Phase.ABORTED and p.client.outgoing(link) == []
    p.pump()
    r = FrameReader()
    names = [f.name for side, data, _ in p.wire if side == "client" for f in r.feed(data)
             if isinstance(f, Frame)]
    assert "attach" in names and "transfer" not in names


def test_session_and_sender_echo() -> None:
    p = Pair()
    link, plink = p.sender(credit=3)
    s = link.session
    # the peer asks the client (sender) to echo its link state, then the session state
    p.peer.flow(plink, 3, echo=True)
    evs = p.pump()
    echoed = [e for e in of(evs, CreditChanged) if e.side == "client" and e.link is not None]
    assert echoed and echoed[-1].link_credit == 3
    ps = p.peer_session(s)
    p.peer._send(p.peer._flow_body(ps, 100, 100, echo=True), channel=ps.channel["server"])
    evs = p.pump()
    assert [e for e in of(evs, CreditChanged) if e.side == "client" and e.link is None]


def test_closing_with_unsettled_deliveries_abandons_them() -> None:
    p = Pair()
    link, _ = p.sender(credit=3)
    ds = [p.client.send(link, b"%d" % i) for i in range(2)]
    p.pump()
    p.client.close()
    p.pump()
    assert all(d.phase == Phase.ABANDONED and d.outcome == "abandoned" for d in ds)
    gone = [e.delivery for e in of(p.peer_events, DeliverySettled)]
    assert sorted(d.delivery_id for d in gone) == [0, 1]
    assert all(d.timeline[-1].kind == "abandon" for d in gone)
    assert {d.timeline[-1].detail for d in gone} == {"connection closed"}


def test_peer_assigns_an_address_to_a_dynamic_target() -> None:
    p = Pair()
    s = p.client.begin()
    link = p.client.attach_sender(s, "dyn", c.Source(), c.Target(dynamic=True))
    p.pump()
    assert str(link.target.address).startswith("dynamic-")
    mm = of(p.client_events, TerminusMismatch)
    assert [d.note for d in mm[0].differences] == ["dynamic address assigned"]


def test_every_kind_of_terminus_difference() -> None:
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    sel = Symbol("apache.org:selector-filter:string")
    req = c.Source(address="a", capabilities=[Symbol("queue"), Symbol("shared")],
                   filter={Symbol("f1"): Described(sel, "x = 1"),
                           Symbol("f2"): Described(sel, "y = 2")})
    link = p.client.attach_receiver(s, "l", req, c.Target())
    p.pump()
    granted = c.Source(address="b", capabilities=[Symbol("queue")],
                       filter={Symbol("f1"): Described(sel, "x = 2"),
                               Symbol("f3"): Described(sel, "z = 3")})
    p.peer.accept_link(p.peer_link(link), source=granted)
    p.pump()
    notes = sorted(d.note for d in of(p.client_events, TerminusMismatch)[0].differences)
    assert notes == ["address changed", "capabilities dropped: shared", "filter added: f3",
                     "filter changed: f1", "filter dropped: f2"]


def test_a_coordinator_answered_with_a_plain_target_is_a_type_change() -> None:
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    coord = p.client.attach_coordinator(s)
    p.pump()
    p.peer.accept_link(p.peer_link(coord), target=c.Target(address="x"))
    p.pump()
    d = of(p.client_events, TerminusMismatch)[0].differences
    assert [(x.field, x.requested, x.granted) for x in d] == [("target", "Coordinator", "Target")]


def test_deliveries_that_never_left_are_abandoned_on_detach() -> None:
    p = Pair()
    link, _ = p.sender()  # no credit
    d = p.client.send(link, b"x")
    p.client.detach(link)
    evs = p.client.take_events()
    assert d.phase == Phase.ABANDONED and d.outcome == "abandoned"
    assert [e.delivery for e in of(evs, DeliverySettled)] == [d]
    assert p.client.outgoing(link) == []
