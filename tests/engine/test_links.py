"""Links: attach/detach, refusal, requested vs granted termini, credit, drain, echo."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Described, Symbol, UInt
from amqpcli.engine import (
    CreditChanged,
    LinkAttached,
    LinkDetached,
    LinkRefused,
    TerminusMismatch,
    Violation,
)

from .harness import Pair, of


def _manual() -> Pair:
    return Pair(peer={"link_policy": "manual"})


def test_attach_and_detach_both_sides() -> None:
    p = Pair()
    link, plink = p.sender("out", "q1")
    assert link.state == "attached" and plink.state == "attached"
    assert link.sender == "client" and plink.receiver == "server"
    assert link.handle == {"client": 0, "server": 0}
    assert str(plink.target.address) == "q1"
    assert link.role_of("client") == "sender"
    p.client.detach(link)
    p.pump()
    dets = of(p.peer_events, LinkDetached)
    assert [(d.side, d.closed) for d in dets] == [("client", True), ("server", True)]
    assert link.state == "detached" and not link.session.links


def test_two_links_get_distinct_handles() -> None:
    p = Pair()
    s = p.client.begin()
    a = p.client.attach_sender(s, "a", c.Source(), c.Target(address="x"))
    b = p.client.attach_receiver(s, "b", c.Source(address="y"), c.Target())
    p.pump()
    assert a.handle["client"] == 0 and b.handle["client"] == 1
    assert p.peer_link(b).sender == "server"


def test_refused_receiver_link() -> None:
    p = _manual()
    s = p.client.begin()
    link = p.client.attach_receiver(s, "in", c.Source(address="nope"), c.Target())
    p.pump()
    plink = p.peer_link(link)
    err = c.Error(condition=Symbol("amqp:not-found"), description="no such queue")
    p.peer.refuse_link(plink, err)
    p.pump()
    refused = of(p.client_events, LinkRefused)
    assert len(refused) == 1
    assert refused[0].side == "server" and refused[0].link is link
    assert str(refused[0].error.condition) == "amqp:not-found"
    assert link.state == "refused"
    assert link.attach["server"].source is None
    assert not of(p.client_events, TerminusMismatch)
    # the client answered the detach
    assert [d.side for d in of(p.peer_events, LinkDetached)] == ["server", "client"]


def test_refused_sender_link_has_null_target() -> None:
    p = _manual()
    s = p.client.begin()
    link = p.client.attach_sender(s, "out", c.Source(), c.Target(address="nope"))
    p.pump()
    p.peer.refuse_link(p.peer_link(link), c.Error(condition=Symbol("amqp:unauthorized-access")))
    p.pump()
    assert of(p.client_events, LinkRefused)
    assert link.attach["server"].target is None


def test_client_refuses_links_the_peer_initiates() -> None:
    p = Pair()
    s = p.client.begin()
    p.pump()
    ps = p.peer_session(s)
    p.peer.attach_sender(ps, "push", c.Source(address="x"), c.Target(address="y"))
    p.pump()
    assert of(p.peer_events, LinkRefused)


def test_terminus_mismatch_reports_each_difference() -> None:
    p = _manual()
    s = p.client.begin()
    selector = Symbol("apache.org:selector-filter:string")
    requested = c.Source(
        address="topic", durable=UInt(2), expiry_policy=Symbol("never"), timeout=UInt(60),
        distribution_mode=Symbol("copy"),
        filter={Symbol("sel"): Described(selector, "colour = 'red'")},
        outcomes=[Symbol("amqp:accepted:list"), Symbol("amqp:rejected:list")],
        default_outcome=c.Released(),
    )
    link = p.client.attach_receiver(s, "sub", requested, c.Target(), snd_settle_mode=0)
    p.pump()
    plink = p.peer_link(link)
    granted = c.Source(address="topic", durable=UInt(0), expiry_policy=Symbol("link-detach"),
                       timeout=UInt(60), distribution_mode=Symbol("move"),
                       outcomes=[Symbol("amqp:accepted:list")], default_outcome=c.Released())
    p.peer.accept_link(plink, source=granted, snd_settle_mode=1)
    p.pump()
    mm = of(p.client_events, TerminusMismatch)
    assert len(mm) == 1 and mm[0].side == "server"
    fields = {d.field: d for d in mm[0].differences}
    assert set(fields) == {
        "snd-settle-mode", "source.durable", "source.expiry-policy",
        "source.distribution-mode", "source.filter.sel", "source.outcomes",
    }
    assert fields["source.filter.sel"].note == "filter dropped: sel"
    assert fields["source.durable"].requested == 2 and fields["source.durable"].granted == 0
    assert fields["source.outcomes"].note == "outcomes narrowed: amqp:rejected:list"
    assert link.snd_settle_mode == 1  # the sender's word is what holds


def test_dynamic_address_assigned_is_reported() -> None:
    p = Pair()
    s = p.client.begin()
    link = p.client.attach_receiver(s, "dyn", c.Source(dynamic=True), c.Target())
    p.pump()
    mm = of(p.client_events, TerminusMismatch)
    assert mm and mm[0].differences[0].note == "dynamic address assigned"
    assert str(link.source.address).startswith("dynamic-")


def test_no_mismatch_when_granted_as_requested() -> None:
    p = Pair()
    p.sender()
    p.receiver()
    assert not of(p.client_events, TerminusMismatch)


def test_credit_formula_and_delivery_count() -> None:
    p = Pair()
    link, plink = p.sender(credit=3, initial_delivery_count=2**32 - 2)
    assert link.link_credit == 3 and link.delivery_count == 2**32 - 2
    for i in range(2):
        p.client.send(link, b"m%d" % i, settled=True)
    p.pump()
    assert link.link_credit == 1 and link.delivery_count == 0  # wrapped
    assert plink.link_credit == 1 and plink.delivery_count == 0
    # the receiver re-grants 5 from its current delivery-count
    p.peer.flow(plink, 5)
    p.pump()
    assert link.link_credit == 5
    ev = [e for e in of(p.client_events, CreditChanged) if e.side == "server"][-1]
    assert ev.link is link and ev.link_credit == 5 and ev.delivery_count == 0


@pytest.mark.parametrize("initial", [0, 2**32 - 2])
def test_a_grant_of_half_the_serial_space_or_more_is_credit(initial: int) -> None:
    """link-credit is a uint: a grant of 2**31 or more (4294967295, "unlimited") is that
    much credit, not none (the serial distance of the limit wraps negative), and sending
    within it is no violation."""
    p = Pair()
    link, plink = p.sender(credit=2**32 - 1, initial_delivery_count=initial)
    assert link.link_credit == 2**32 - 1 and plink.link_credit == 2**32 - 1
    for i in range(3):
        p.client.send(link, b"m%d" % i, settled=True)
    p.pump()
    assert link.link_credit == plink.link_credit == 2**32 - 4
    assert not of(p.client_events + p.peer_events, Violation)
    ev = [e for e in of(p.client_events, CreditChanged) if e.side == "server"][-1]
    assert ev.link_credit == 2**32 - 1  # as the flow gave it


def test_sends_wait_for_credit() -> None:
    p = Pair()
    link, plink = p.sender()
    d = p.client.send(link, b"x")
    p.pump()
    assert d.delivery_id is None and p.client.outgoing(link) == [d]
    p.peer.flow(plink, 1)
    p.pump()
    assert d.delivery_id == 0 and p.client.outgoing(link) == []
    assert plink.link_credit == 0


def test_drain_with_nothing_to_send_returns_credit() -> None:
    p = Pair()
    link, plink = p.receiver(credit=10)
    p.client.drain(link)
    p.pump()
    # the peer (sender) had nothing: it advanced delivery-count and set credit 0
    assert plink.link_credit == 0 and plink.delivery_count == 10
    assert link.link_credit == 0 and link.delivery_count == 10
    flows = [e for e in of(p.client_events, CreditChanged) if e.side == "server"]
    assert flows[-1].drain and flows[-1].link_credit == 0
    assert not link.drain


def test_drain_after_sending_what_is_queued() -> None:
    p = Pair()
    link, plink = p.receiver()
    p.peer.send(plink, b"a")
    p.peer.send(plink, b"b")
    p.client.flow(link, 5, drain=True)
    p.pump()
    assert link.deliveries == 2
    assert link.link_credit == 0 and link.delivery_count == 5


def test_echo_is_answered() -> None:
    p = Pair()
    link, _ = p.receiver(credit=4)
    p.client.flow(link, 4, echo=True)
    evs = p.pump()
    echoed = [e for e in of(evs, CreditChanged) if e.side == "server" and e.link is not None]
    assert echoed and echoed[-1].link_credit == 4


def test_link_attached_events_carry_sides() -> None:
    p = Pair()
    link, _ = p.sender()
    att = [e for e in of(p.client_events, LinkAttached) if e.link is link]
    assert [e.side for e in att] == ["client", "server"]
    assert link.requested is link.attach["client"] and link.granted is link.attach["server"]


def test_session_ended_instead_of_an_attach_reply_is_a_refusal() -> None:
    p = _manual()
    s = p.client.begin()
    link = p.client.attach_receiver(s, "in", c.Source(address="nope"), c.Target())
    p.pump()
    p.peer.end(p.peer_session(s), c.Error(condition=Symbol("amqp:not-found"),
                                          description="no queue 'nope'"))
    p.pump()
    refused = of(p.client_events, LinkRefused)
    assert len(refused) == 1 and refused[0].link is link and refused[0].side == "server"
    assert str(refused[0].error.condition) == "amqp:not-found"
    assert link.state == "refused"


def _drain_answers(events: list, side: str, link: object) -> list[CreditChanged]:
    """The flows `side` (the sender) sent on `link` that answered a drain: credit 0."""
    return [e for e in of(events, CreditChanged)
            if e.side == side and e.link is link and e.drain and e.link_credit == 0]


def _flows(events: list, side: str, link: object) -> list[tuple[int, int, bool]]:
    """(link-credit, delivery-count, drain) of every flow `side` sent on `link`."""
    return [(e.link_credit, e.delivery_count, e.drain) for e in of(events, CreditChanged)
            if e.side == side and e.link is link]


def test_drain_held_back_by_the_session_window_is_answered_once() -> None:
    # The receiver's incoming window takes two transfers at a time: of the five queued,
    # the drain finds three still held back; they go out as the window reopens, and the
    # unused credit must then be given back, once.
    p = Pair(peer={"incoming_window": 2})
    link, plink = p.sender(initial_delivery_count=2**32 - 3)
    ds = [p.client.send(link, b"m%d" % i) for i in range(5)]
    p.pump()
    assert p.client.queued(link) == 5  # no credit yet
    p.peer.flow(plink, 10, drain=True)
    p.client.receive_data(p.peer.data_to_send(), p.tick())
    assert p.client.queued(link) == 3  # the window stopped the rest
    p.pump()
    assert [d.delivery_id for d in ds] == [0, 1, 2, 3, 4]
    assert plink.deliveries == 5
    # 5 sent and 5 used up: delivery-count 2**32 - 3 + 10, wrapped
    assert link.link_credit == 0 and link.delivery_count == 7
    assert plink.link_credit == 0 and plink.delivery_count == 7 and not plink.drain
    (answer,) = _drain_answers(p.peer_events, "client", plink)
    assert answer.delivery_count == 7
    assert len(_drain_answers(p.client_events, "client", link)) == 1  # as the sender saw it


def test_drain_held_back_by_the_session_window_on_the_peer_side() -> None:
    # the same with the roles swapped: the peer sends, the client's window is small
    p = Pair(client={"incoming_window": 2})
    link, plink = p.receiver()
    for i in range(5):
        p.peer.send(plink, b"m%d" % i)
    p.client.flow(link, 8, drain=True)
    p.pump()
    assert link.deliveries == 5
    assert link.link_credit == 0 and link.delivery_count == 8 and not link.drain
    (answer,) = _drain_answers(p.client_events, "server", link)
    assert answer.delivery_count == 8


def test_drain_after_send_many_filled_the_window_is_answered() -> None:
    # the batched send loop: send_many until the peer's window is full, the next message
    # queued by send(); the drain comes while it waits for the window
    p = Pair(client={"lean_events": True}, peer={"incoming_window": 2})
    link, plink = p.sender(credit=10)
    n, _ = p.client.send_many(link, [b"a", b"b", b"c"], settled=True)
    assert n == 2
    p.client.send(link, b"c", settled=True)
    assert p.client.queued(link) == 1
    p.peer.drain(plink)
    p.pump()
    assert plink.deliveries == 3
    assert link.link_credit == 0 and link.delivery_count == 10 and p.client.queued(link) == 0
    assert plink.link_credit == 0 and plink.delivery_count == 10 and not plink.drain
    (answer,) = _drain_answers(p.peer_events, "client", plink)
    assert answer.delivery_count == 10


def test_drain_and_echo_held_back_by_the_window() -> None:
    p = Pair(peer={"incoming_window": 2})
    link, plink = p.sender()
    for i in range(4):
        p.client.send(link, b"m%d" % i)
    p.peer.flow(plink, 6, drain=True, echo=True)
    p.pump()
    assert plink.deliveries == 4
    assert plink.link_credit == 0 and plink.delivery_count == 6
    # the echo is answered at once (two sent, drain still on), the drain once the rest
    # went out
    flows = _flows(p.peer_events, "client", plink)
    assert flows == [(4, 2, True), (0, 6, True)]


def test_drain_and_echo_answered_by_one_flow() -> None:
    p = Pair()
    link, plink = p.sender()
    for i in range(2):
        p.client.send(link, b"m%d" % i)
    p.peer.flow(plink, 5, drain=True, echo=True)
    p.pump()
    assert plink.deliveries == 2
    flows = _flows(p.peer_events, "client", plink)
    assert flows == [(0, 5, True)]  # the drain's answer is the echo's too


def test_drain_whose_credit_the_window_held_back_deliveries_used_up_is_answered_once() -> None:
    p = Pair(peer={"incoming_window": 2})
    link, plink = p.sender()
    for i in range(5):
        p.client.send(link, b"m%d" % i)
    p.peer.flow(plink, 5, drain=True)
    p.pump()
    assert plink.deliveries == 5 and plink.link_credit == 0 and plink.delivery_count == 5
    # the transfers used the credit up: the drain is over, and one flow says so (the
    # sender "send[s] the flow state to the receiver", Part 2 §2.7.4), so a receiver
    # waiting for the drain's answer is not left waiting
    assert _flows(p.peer_events, "client", plink) == [(0, 5, True)]
    assert not plink.drain


def test_drain_used_up_by_transfers_with_more_queued_is_answered_at_once() -> None:
    # more queued than the credit: the transfers use it up, the drain is complete and
    # answered, the rest waits for credit
    p = Pair()
    link, plink = p.sender()
    for i in range(5):
        p.client.send(link, b"m%d" % i)
    p.peer.flow(plink, 3, drain=True)
    p.pump()
    assert plink.deliveries == 3 and p.client.queued(link) == 2
    assert _flows(p.peer_events, "client", plink) == [(0, 3, True)]


def test_the_drain_answer_carries_available_when_the_application_knows_it() -> None:
    p = Pair()
    link, plink = p.sender()
    p.client.available_for = lambda lk: 7 if lk is link else None
    p.peer.flow(plink, 4, drain=True)
    p.pump()
    answers = [e for e in of(p.peer_events, CreditChanged)
               if e.side == "client" and e.link is plink]
    assert [(e.link_credit, e.delivery_count, e.drain, e.available) for e in answers] == [
        (0, 4, True, 7)]


class _Offer:
    """An application's say on whether it has more messages for a link (`offering_for`)."""

    def __init__(self, more: bool = True) -> None:
        self.more = more

    def __call__(self, link: Any) -> bool:
        return self.more


def test_a_drain_waits_for_the_messages_the_application_offers() -> None:
    # Part 2 §2.6.7: the sender uses up the credit "after sending all available
    # messages"; a sender loop that has messages sends them first, then says it has none
    p = Pair(client={"lean_events": True})
    link, plink = p.sender()
    offer = p.client.offering_for = _Offer()
    p.peer.flow(plink, 10, drain=True)
    p.pump()
    assert _flows(p.peer_events, "client", plink) == []  # the credit is not given back
    assert link.link_credit == 10 and link.drain
    n, _ = p.client.send_many(link, [b"a", b"b"], settled=False)
    p.client.send(link, b"c")
    p.pump()
    assert n == 2 and plink.deliveries == 3
    assert _flows(p.peer_events, "client", plink) == []  # it may have more yet
    offer.more = False
    p.client.drained(link)
    p.pump()
    # the 7 unused: delivery-count advanced over them, one flow
    assert _flows(p.peer_events, "client", plink) == [(0, 10, True)]
    assert plink.link_credit == 0 and not plink.drain and not link.drain
    p.client.drained(link)  # answered once: nothing more
    p.pump()
    assert len(_flows(p.peer_events, "client", plink)) == 1


@pytest.mark.parametrize("how", ["send", "send_many"])
def test_a_drain_whose_credit_the_application_uses_up_is_answered_by_its_last_transfer(
        how: str) -> None:
    # credit 1 with drain after each message (a receiver that fetches one at a time):
    # each message goes, and its transfer completes the drain without a drained()
    p = Pair(client={"lean_events": True})
    link, plink = p.sender()
    p.client.offering_for = _Offer()
    for i in range(3):
        p.peer.flow(plink, 1, drain=True)
        p.pump()
        if how == "send":
            p.client.send(link, b"m%d" % i)
        else:
            assert p.client.send_many(link, [b"m%d" % i, b"more"], settled=False)[0] == 1
        p.pump()
        assert plink.deliveries == i + 1
        assert _flows(p.peer_events, "client", plink)[-1] == (0, i + 1, True)
    assert len(_flows(p.peer_events, "client", plink)) == 3
    assert not plink.drain


def test_drained_waits_for_what_the_session_window_holds_back() -> None:
    p = Pair(peer={"incoming_window": 2})
    link, plink = p.sender()
    offer = p.client.offering_for = _Offer()
    p.peer.flow(plink, 10, drain=True)
    p.pump()
    for i in range(4):
        p.client.send(link, b"m%d" % i)
    assert p.client.queued(link) == 2  # the peer's window took two
    offer.more = False
    p.client.drained(link)  # the two held back go first
    p.pump()
    assert plink.deliveries == 4
    assert _flows(p.peer_events, "client", plink) == [(0, 10, True)]


def test_drained_without_a_drain_sends_nothing() -> None:
    p = Pair()
    link, plink = p.sender(credit=5)
    p.client.offering_for = _Offer(False)
    p.client.drained(link)
    p.pump()
    assert _flows(p.peer_events, "client", plink) == [] and link.link_credit == 5


def test_a_drain_on_a_link_the_application_offers_nothing_for_is_answered_at_once() -> None:
    p = Pair()
    link, plink = p.sender()
    p.client.offering_for = lambda lk: lk is not link
    p.peer.flow(plink, 4, drain=True)
    p.pump()
    assert _flows(p.peer_events, "client", plink) == [(0, 4, True)]


def _attached_then_detached_at_once(p: Pair, role: str) -> tuple[Any, Any]:
    """The client attaches a link and detaches it in the same write, before the (manual)
    peer has answered: (client link, the peer's link)."""
    s = p.client.begin()
    p.pump()
    if role == "sender":
        link = p.client.attach_sender(s, "quick", c.Source(), c.Target(address="q"))
    else:
        link = p.client.attach_receiver(s, "quick", c.Source(address="q"), c.Target())
    handle = link.handle["client"]
    p.client.detach(link)
    p.pump()
    evs = [e for e in p.peer_events if isinstance(e, (LinkAttached, LinkDetached))]
    assert [(type(e).__name__, e.side) for e in evs] == [
        ("LinkAttached", "client"), ("LinkDetached", "client")]
    plink = evs[0].link
    assert evs[1].link is plink and "server" not in plink.attach
    # the link waits for the peer's attach and detach (Part 2 §2.6.5): it is kept
    assert plink.state == "detached" and plink in plink.session.links.values()
    assert handle not in plink.session.handles["client"]
    return link, plink


@pytest.mark.parametrize("role", ["sender", "receiver"])
def test_a_link_detached_before_the_peers_attach_gets_attach_then_detach(role: str) -> None:
    p = _manual()
    link, plink = _attached_then_detached_at_once(p, role)
    p.peer.accept_link(plink)
    assert plink.state == "detached" and not plink.session.links  # detached both ways
    # what the peer still asks for on the link (a broker granting credit) is dropped
    p.peer.flow(plink, 10)
    p.pump()
    sent = [type(e).__name__ for e in p.peer_events
            if isinstance(e, (LinkAttached, LinkDetached, CreditChanged)) and e.side == "server"]
    assert sent == ["LinkAttached", "LinkDetached"]
    # the client's own link got both, and neither refused nor re-attached anything
    seen = [(type(e).__name__, e.side) for e in p.client_events
            if isinstance(e, (LinkAttached, LinkDetached, LinkRefused))]
    assert seen == [("LinkAttached", "client"), ("LinkDetached", "client"),
                    ("LinkAttached", "server"), ("LinkDetached", "server")]
    assert all(e.link is link for e in p.client_events
               if isinstance(e, (LinkAttached, LinkDetached)))
    assert link.state == "detached" and not link.session.links
    assert not of(p.client_events, Violation) and not of(p.peer_events, Violation)


def test_a_link_detached_before_the_peers_attach_can_still_be_refused() -> None:
    p = _manual()
    link, plink = _attached_then_detached_at_once(p, "sender")
    p.peer.refuse_link(plink, c.Error(condition=Symbol("amqp:not-found")))
    p.pump()
    refused = of(p.client_events, LinkRefused)
    assert len(refused) == 1 and str(refused[0].error.condition) == "amqp:not-found"
    assert not link.session.links and not plink.session.links
    assert not of(p.client_events, Violation) and not of(p.peer_events, Violation)
