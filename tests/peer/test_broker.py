"""The broker logic driven in memory: client endpoints of our engine wired to
`PeerEndpoint`s of one `Broker`, no sockets, no clock (unit tests)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Described, Symbol
from amqpcli.engine import (
    CreditChanged,
    Endpoint,
    Event,
    LinkDetached,
    LinkRefused,
    MessageReceived,
    TransactionDeclared,
    TransactionDischarged,
)
from amqpcli.errors import UserError
from amqpcli.peer import Broker, Decision, Faults, Incoming, PeerEndpoint, parse_rule


class Net:
    """One broker and any number of in-memory client connections."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.pairs: list[tuple[Endpoint, Any, list[Event]]] = []
        self.t = 0.0

    def connect(self, container_id: str | None = None,
                **client_kw: Any) -> tuple[Endpoint, list[Event]]:
        cid = container_id or f"cid-{len(self.pairs)}"
        client = Endpoint("client", hostname="localhost", container_id=cid, **client_kw)
        peer = PeerEndpoint()
        conn = self.broker.connect(peer, f"c{len(self.pairs) + 1}", "memory")
        events: list[Event] = []
        self.pairs.append((client, conn, events))
        client.open()
        self.pump()
        return client, events

    def pump(self) -> None:
        for _ in range(1000):
            moved = False
            for client, conn, events in self.pairs:
                self.t += 0.001
                self.broker.handle(conn, conn.endpoint.take_events())
                a = client.data_to_send()
                if a:
                    moved = True
                    self.broker.handle(conn, conn.endpoint.receive_data(a, self.t))
                b = conn.endpoint.data_to_send()
                if b:
                    moved = True
                    events += client.receive_data(b, self.t)
                events += client.take_events()
            if not moved:
                return
        raise AssertionError("never went quiet")


def _sender(net: Net, client: Endpoint, address: str, **kw: Any) -> Any:
    s = client.begin()
    link = client.attach_sender(s, f"snd-{address}", c.Source(), c.Target(address=address), **kw)
    net.pump()
    return link


def _receiver(net: Net, client: Endpoint, address: str, name: str = "rcv", **src: Any) -> Any:
    s = client.begin()
    link = client.attach_receiver(s, name, c.Source(address=address, **src), c.Target())
    net.pump()
    return link


def _put(net: Net, address: str, *bodies: str) -> None:
    client, _ = net.connect()
    link = _sender(net, client, address)
    for b in bodies:
        client.send(link, Message(b.encode()))
    net.pump()


def _in_transaction(net: Net) -> tuple[Any, list[Any], Any, Any, bytes]:
    """A client connected to `net`'s broker with a session, a coordinator link and a
    declared transaction: (client, its events, session, coordinator, txn-id)."""
    client, events = net.connect()
    s = client.begin()
    coord = client.attach_coordinator(s)
    net.pump()
    client.declare(coord)
    net.pump()
    txn = [e for e in events if isinstance(e, TransactionDeclared)][-1].txn_id
    return client, events, s, coord, txn


def _acquired_in_transaction(net: Net) -> tuple[Any, Any, bytes, list[Any]]:
    """Messages "a" and "b" on queue q, acquired by a receiver's flow in a transaction:
    (client, coordinator, txn-id, the deliveries)."""
    _put(net, "q", "a", "b")
    client, events, s, coord, txn = _in_transaction(net)
    link = client.attach_receiver(s, "r", c.Source(address="q"), c.Target())
    net.pump()
    client.flow(link, 2, txn_id=txn)
    net.pump()
    return client, coord, txn, _got(events, link)


def _got(events: list[Event], link: Any) -> list[Any]:
    return [e.delivery for e in events if isinstance(e, MessageReceived) and e.delivery.link is link]


def _body(d: Any) -> str:
    return bytes(d.message().body[0].value).decode()


def test_available_reported_and_drain_honoured() -> None:
    net = Net(Broker())
    _put(net, "q", "a", "b", "c")
    client, events = net.connect()
    link = _receiver(net, client, "q")
    client.flow(link, 1)
    net.pump()
    assert [_body(d) for d in _got(events, link)] == ["a"]
    flows = [e for e in events if isinstance(e, CreditChanged) and e.link is link and e.side == "server"]
    assert flows and flows[-1].available == 2
    client.drain(link, 5)  # two there: both come, then the rest of the credit is given back
    net.pump()
    assert [_body(d) for d in _got(events, link)] == ["a", "b", "c"]
    assert link.link_credit == 0 and not link.drain
    assert link.delivery_count == 6  # 3 sent + 3 credit used up by the drain


def _server_flows(events: list[Event], link: Any) -> list[tuple[Any, ...]]:
    """(delivery-count, link-credit, drain, available, echo) of each flow the server sent
    on `link`."""
    return [(e.delivery_count, e.link_credit, e.drain, e.available, e.echo) for e in events
            if isinstance(e, CreditChanged) and e.link is link and e.side == "server"]


def test_drain_held_back_by_the_client_window_is_answered() -> None:
    # the client takes two transfers at a time: three of the five wait for its window,
    # and the drain is answered once they are out, by one flow
    net = Net(Broker())
    _put(net, "q", "a", "b", "c", "d", "e", "f")
    client, events = net.connect(incoming_window=2)
    link = _receiver(net, client, "q")
    before = len(events)
    client.drain(link, 8)
    net.pump()
    assert [_body(d) for d in _got(events, link)] == ["a", "b", "c", "d", "e", "f"]
    assert link.link_credit == 0 and not link.drain
    assert link.delivery_count == 8  # 6 sent + 2 credit used up by the drain
    assert _server_flows(events[before:], link) == [(8, 0, True, 0, False)]


def test_drain_and_echo_get_one_flow_each_with_available() -> None:
    # a drain is answered by one flow (credit used up, drain echoed, what the node
    # still holds for the link); an echo by one flow with the same `available`
    net = Net(Broker())
    _put(net, "q", "a", "b", "c", "d")
    client, events = net.connect()
    link = _receiver(net, client, "q")
    before = len(events)
    client.flow(link, 1, echo=True)
    net.pump()
    assert _server_flows(events[before:], link) == [(1, 0, False, 3, False)]
    before = len(events)
    client.drain(link, 2)  # two of the three come, none left over
    net.pump()
    assert _server_flows(events[before:], link) == [(3, 0, True, 1, False)]
    before = len(events)
    client.drain(link, 3)  # the last one, and two given back
    net.pump()
    assert [_body(d) for d in _got(events, link)] == ["a", "b", "c", "d"]
    assert _server_flows(events[before:], link) == [(6, 0, True, 0, False)]


def test_transactional_drain_gets_every_message_before_the_credit_back() -> None:
    # each transactional transfer is queued and framed by the engine as the broker
    # feeds the drain: the drain is answered after the feeding, not after the first
    net = Net(Broker())
    _put(net, "q", "a", "b", "c")
    client, events, s, _coord, txn = _in_transaction(net)
    link = client.attach_receiver(s, "r", c.Source(address="q"), c.Target())
    net.pump()
    client.flow(link, 5, drain=True, txn_id=txn)
    net.pump()
    got = _got(events, link)
    assert [_body(d) for d in got] == ["a", "b", "c"]
    assert all(d.txn_id == txn for d in got)
    assert link.link_credit == 0 and not link.drain and link.delivery_count == 5


def test_decider_leaves_messages_pending_until_settled_by_hand() -> None:
    seen: list[Incoming] = []

    def by_hand(inc: Incoming) -> Decision | None:
        seen.append(inc)
        return None

    net = Net(Broker(decide=by_hand))
    client, _ = net.connect()
    link = _sender(net, client, "q")
    d1 = client.send(link, Message(b"one"))
    d2 = client.send(link, Message(b"two"))
    net.pump()
    assert [i.number for i in net.broker.pending] == [1, 2]
    assert d1.receiver_state is None and d2.receiver_state is None
    net.broker.settle_incoming(seen[1], c.Rejected(error=c.Error(condition=Symbol("x:no"))))
    net.broker.settle_incoming(seen[0], c.Accepted())
    net.pump()
    assert isinstance(d1.receiver_state, c.Accepted) and isinstance(d2.receiver_state, c.Rejected)
    assert [bytes(e.payload) for e in net.broker.nodes.queue("q").entries.values()] == [
        Message(b"one").encode()]
    assert net.broker.pending == []


def test_transactional_accept_applies_on_commit_and_releases_on_rollback() -> None:
    net = Net(Broker())
    _put(net, "q", "a", "b")
    client, events, s, coord, txn = _in_transaction(net)
    link = client.attach_receiver(s, "r", c.Source(address="q"), c.Target())
    client.flow(link, 2)
    net.pump()
    a, b = _got(events, link)
    client.accept_in([a, b], txn)
    net.pump()
    q = net.broker.nodes.queue("q")
    assert len(q) == 2 and q.ready_count == 0  # held by the transaction
    client.discharge(coord, txn, fail=True)  # roll back: both come back
    net.pump()
    assert [e.outcome for e in events if isinstance(e, TransactionDischarged)] == ["rolled-back"]
    assert len(q) == 2
    # they are delivered again; accepted in a committed transaction they are gone
    client.declare(coord)
    net.pump()
    txn2 = [e for e in events if isinstance(e, TransactionDeclared)][-1].txn_id
    client.flow(link, 2)
    net.pump()
    again = _got(events, link)[2:]
    assert [_body(d) for d in again] == ["a", "b"]
    client.accept_in(again, txn2)
    client.discharge(coord, txn2)
    net.pump()
    assert [e.outcome for e in events if isinstance(e, TransactionDischarged)][-1] == "committed"
    assert len(q) == 0


def test_transactional_send_held_until_commit() -> None:
    net = Net(Broker())
    client, _events, s, coord, txn = _in_transaction(net)
    link = client.attach_sender(s, "s", c.Source(), c.Target(address="q"))
    net.pump()
    d = client.send(link, Message(b"x"), txn_id=txn)
    net.pump()
    assert isinstance(d.receiver_state, c.TransactionalState)
    assert isinstance(d.receiver_state.outcome, c.Accepted)
    assert len(net.broker.nodes.queue("q")) == 0
    client.discharge(coord, txn)
    net.pump()
    assert len(net.broker.nodes.queue("q")) == 1
    unknown = client.discharge(coord, b"nope")
    net.pump()
    assert isinstance(unknown.receiver_state, c.Rejected)
    assert str(unknown.receiver_state.error.condition) == "amqp:transaction:unknown-id"


def test_copy_is_echoed_and_does_not_consume() -> None:
    net = Net(Broker())
    _put(net, "q", "a", "b")
    client, events = net.connect()
    link = _receiver(net, client, "q", distribution_mode=Symbol("copy"))
    assert str(link.granted.source.distribution_mode) == "copy"
    client.flow(link, 10)
    net.pump()
    got = _got(events, link)
    assert [_body(d) for d in got] == ["a", "b"]
    client.accept(got)
    net.pump()
    assert len(net.broker.nodes.queue("q")) == 2


def test_selector_refused_with_invalid_field_and_echoed_when_good() -> None:
    net = Net(Broker())
    client, events = net.connect()
    bad = {Symbol("jms-selector"): Described(Symbol("apache.org:selector-filter:string"), "n >>")}
    link = _receiver(net, client, "q", filter=bad)
    refused = [e for e in events if isinstance(e, LinkRefused) and e.link is link]
    assert refused and str(refused[0].error.condition) == "amqp:invalid-field"
    # a selector that is no condition (it selected nothing) is refused as well
    sum_ = {Symbol("jms-selector"): Described(Symbol("apache.org:selector-filter:string"), "n + 1")}
    link = _receiver(net, client, "q", name="r1", filter=sum_)
    refused = [e for e in events if isinstance(e, LinkRefused) and e.link is link]
    assert refused and str(refused[0].error.condition) == "amqp:invalid-field"
    assert str(refused[0].error.description).startswith(
        "bad selector 'n + 1': expected a condition at position 1, found 'n + 1', an "
        "arithmetic expression")
    good = {Symbol("jms-selector"): Described(Symbol("apache.org:selector-filter:string"), "n = 1")}
    link = _receiver(net, client, "q", name="r2", filter=good)
    assert link.granted.source.filter == good


def test_a_long_bad_selector_is_quoted_cut_in_the_refusal() -> None:
    """The refusal's description quotes a long selector (and the token it stopped at)
    cut in the middle: a selector of 50,000 characters made a detach of twice that, over the max-frame-size."""
    net = Net(Broker())
    client, events = net.connect()
    text = "n = '" + "x" * 50_000 + "' AND AND"
    bad = {Symbol("jms-selector"): Described(Symbol("apache.org:selector-filter:string"), text)}
    link = _receiver(net, client, "q", filter=bad)
    refused = [e for e in events if isinstance(e, LinkRefused) and e.link is link]
    description = str(refused[0].error.description)
    assert description.startswith("bad selector \"n = '" + "x" * 44 + "…(49916 characters)…")
    assert len(description) < 400, description


def test_release_returns_to_the_same_place_and_modify_counts() -> None:
    net = Net(Broker())
    _put(net, "q", "a", "b")
    client, events = net.connect()
    link = _receiver(net, client, "q")
    client.flow(link, 1)
    net.pump()
    (a,) = _got(events, link)
    client.modify(a, delivery_failed=True, message_annotations={Symbol("x-opt-why"): "test"})
    net.pump()
    client.flow(link, 1)
    net.pump()
    a2 = _got(events, link)[1]
    m = a2.message()
    assert _body(a2) == "a" and m.header.delivery_count == 1
    assert m.message_annotations.value[Symbol("x-opt-why")] == "test"
    assert m.bare_bytes == Message(b"a").bare_bytes


def test_detached_receiver_gives_its_messages_back() -> None:
    net = Net(Broker())
    _put(net, "q", "a")
    client, events = net.connect()
    link = _receiver(net, client, "q")
    client.flow(link, 1)
    net.pump()
    assert len(_got(events, link)) == 1
    client.detach(link)
    net.pump()
    q = net.broker.nodes.queue("q")
    assert q.ready_count == 1


def test_credit_zero_grants_nothing() -> None:
    net = Net(Broker(Faults(credit=0)))
    client, _ = net.connect()
    link = _sender(net, client, "q")
    assert link.link_credit == 0


@pytest.mark.parametrize(("text", "picked"), [
    ("every:3", [3, 6, 9]), ("first:2", [1, 2]), ("after:8", [9, 10]), ("at:2,5", [2, 5]),
    ("all", list(range(1, 11))), ("none", []), ("0", []), ("1", list(range(1, 11))),
])
def test_rules(text: str, picked: list[int]) -> None:
    import random

    rule = parse_rule(text, "--reject")
    assert [n for n in range(1, 11) if rule.picks(n, random.Random(0))] == picked


@pytest.mark.parametrize("text", ["every:0", "1.5", "sometimes", "at:", "first:x", "at:0",
                                  "", "at:1,,2", "at:3,"])
def test_bad_rules(text: str) -> None:
    with pytest.raises(UserError):
        parse_rule(text, "--reject")


def test_fault_order_reject_then_release_then_modify() -> None:
    f = Faults(reject=parse_rule("every:2", "r"), release=parse_rule("every:3", "r"),
               modify=parse_rule("all", "m"))
    names = [type(f.outcome_for(n)).__name__ for n in range(1, 7)]
    assert names == ["Modified", "Rejected", "Released", "Rejected", "Modified", "Rejected"]
    assert f.refuses("a.b") is False
    assert Faults(refuse=["secret.*"]).refuses("secret.x")


def test_anonymous_relay_routes_by_to() -> None:
    net = Net(Broker())
    client, _ = net.connect()
    s = client.begin()
    link = client.attach_sender(s, "relay", c.Source(), None)
    net.pump()
    assert link.state == "attached"
    d1 = client.send(link, Message(b"x", properties=c.Properties(to="a")))
    d2 = client.send(link, Message(b"y"))
    net.pump()
    assert isinstance(d1.receiver_state, c.Accepted)
    assert isinstance(d2.receiver_state, c.Rejected)
    assert str(d2.receiver_state.error.condition) == "amqp:not-found"
    assert len(net.broker.nodes.queue("a")) == 1


def test_topic_fans_out_and_durable_subscription_survives_a_dropped_connection() -> None:
    net = Net(Broker())
    c1, ev1 = net.connect()
    sub = _receiver(net, c1, "/topic/t", name="sub", durable=1, expiry_policy=Symbol("never"))
    c2, ev2 = net.connect()
    plain = _receiver(net, c2, "/topic/t", name="plain")
    client, _ = net.connect()
    snd = _sender(net, client, "/topic/t")
    client.send(snd, Message(b"one"))
    net.pump()
    for cl, link in ((c1, sub), (c2, plain)):
        cl.flow(link, 5)
    net.pump()
    assert [_body(d) for d in _got(ev1, sub)] == ["one"]
    assert [_body(d) for d in _got(ev2, plain)] == ["one"]
    # the subscriber's transport goes away without a detach: the subscription stays
    conn1 = net.pairs[0][1]
    net.broker.handle(conn1, conn1.endpoint.receive_eof(net.t))
    net.pairs.pop(0)
    client.send(snd, Message(b"two"))
    net.pump()
    assert list(net.broker.nodes.durable) == [("cid-0", "sub")]
    q = net.broker.nodes.durable[("cid-0", "sub")][1]
    assert sorted(_payload_bodies(q)) == ["one", "two"]  # "one" was unsettled: given back
    # the same container attaches the same link name again: resumed
    c3, ev3 = net.connect("cid-0")
    again = _receiver(net, c3, "/topic/t", name="sub", durable=1, expiry_policy=Symbol("never"))
    c3.flow(again, 5)
    net.pump()
    assert [_body(d) for d in _got(ev3, again)] == ["one", "two"]
    c3.accept(_got(ev3, again))
    c3.detach(again, closed=True)  # closing it deletes the subscription
    net.pump()
    assert net.broker.nodes.durable == {}


def test_a_durable_subscription_attached_on_another_topic_is_a_new_one() -> None:
    """(container-id, link name) attached again with another topic: the attach's source
    and what is delivered agree — the new topic's messages (it got the old one's, while
    its attach said the new topic), the old subscription gone, as JMS has it."""
    net = Net(Broker())
    kw: dict[str, Any] = {"name": "S", "durable": 1, "expiry_policy": Symbol("never")}
    c1, _ = net.connect("qa7")
    first = _receiver(net, c1, "/topic/A7", **kw)
    c1.detach(first, closed=False)
    second = _receiver(net, c1, "/topic/B7", **kw)
    c1.detach(second, closed=False)
    net.pump()
    client, _ = net.connect()
    for topic in ("/topic/B7", "/topic/A7"):
        client.send(_sender(net, client, topic), Message(f"to-{topic[-2]}".encode()))
    net.pump()
    c2, ev = net.connect("qa7")
    again = _receiver(net, c2, "/topic/B7", **kw)
    assert str(again.granted.source.address) == "/topic/B7"
    c2.flow(again, 5)
    net.pump()
    assert [_body(d) for d in _got(ev, again)] == ["to-B"]
    assert [t for t, _ in net.broker.nodes.durable.values()] == ["/topic/B7"]
    assert net.broker.nodes.topics["/topic/A7"] == []


def _payload_bodies(q: Any) -> list[str]:
    return [bytes(Message.decode(e.payload).value).decode() for e in q.entries.values()]


def test_dynamic_target_gets_a_temporary_queue_removed_on_detach() -> None:
    net = Net(Broker())
    client, _ = net.connect()
    s = client.begin()
    link = client.attach_sender(s, "dyn", c.Source(), c.Target(dynamic=True))
    net.pump()
    address = str(link.granted.target.address)
    assert address == "amqp-serve.tmp.1.dyn"  # the creating link's name in it
    client.send(link, Message(b"x"))
    net.pump()
    assert len(net.broker.nodes.queues[address]) == 1
    client.detach(link)
    net.pump()
    assert address not in net.broker.nodes.queues


def test_a_dynamic_node_is_named_after_its_link_in_a_safe_form() -> None:
    net = Net(Broker())
    client, _ = net.connect()
    s = client.begin()
    names = ["reply to/ü:1 " + "x" * 60, "", "a.b_c-D9"]
    links = [client.attach_receiver(s, name, c.Source(dynamic=True), c.Target())
             for name in names]
    net.pump()
    got = [str(link.granted.source.address) for link in links]
    assert got == [
        "amqp-serve.tmp.1.reply_to___1_" + "x" * 35,  # 48 characters of the name
        "amqp-serve.tmp.2",  # a link without a name adds nothing
        "amqp-serve.tmp.3.a.b_c-D9",
    ]
    assert all(a in net.broker.nodes.queues for a in got)


def test_payload_that_is_not_a_message_is_kept_as_is() -> None:
    net = Net(Broker())
    client, events = net.connect()
    snd = _sender(net, client, "q")
    junk = b"\x00Sw\xa1"  # an amqp-value section cut short
    d = client.send(snd, junk)
    net.pump()
    assert isinstance(d.receiver_state, c.Accepted)
    sel = {Symbol("jms-selector"): Described(Symbol("apache.org:selector-filter:string"), "n = 1")}
    picky = _receiver(net, client, "q", name="picky", filter=sel)
    client.flow(picky, 5)
    link = _receiver(net, client, "q")
    client.flow(link, 1)
    net.pump()
    assert _got(events, picky) == []  # matches no selector
    (got,) = _got(events, link)
    assert bytes(got.payload) == junk
    client.modify(got, delivery_failed=True)  # cannot be rewritten: back as it came
    net.pump()
    client.flow(link, 1)
    net.pump()
    assert bytes(_got(events, link)[1].payload) == junk


def test_transactional_acquisition_rolled_back_gives_the_messages_back() -> None:
    net = Net(Broker())
    client, coord, txn, got = _acquired_in_transaction(net)
    assert [_body(d) for d in got] == ["a", "b"]
    assert all(d.txn_id == txn for d in got)  # the transfers carried the transaction
    q = net.broker.nodes.queue("q")
    assert q.ready_count == 0
    client.discharge(coord, txn, fail=True)
    net.pump()
    assert q.ready_count == 2 and len(q) == 2


# --- dynamic node lifetimes (Part 3 §3.5.9-13) ------------------------------------------

def _errors(events: list[Event], link: Any) -> set[str]:
    """The conditions of the detaches and refusals the server sent on `link`."""
    return {str(e.error.condition) for e in events
            if isinstance(e, (LinkDetached, LinkRefused)) and e.link is link
            and e.side == "server" and e.error is not None}


def _dynamic_sender(net: Net, client: Endpoint, policy: Any) -> tuple[Any, str]:
    props = {Symbol("lifetime-policy"): policy} if policy is not None else None
    s = client.begin()
    link = client.attach_sender(s, "dyn", c.Source(),
                                c.Target(dynamic=True, dynamic_node_properties=props))
    net.pump()
    return link, str(link.granted.target.address)


@pytest.mark.parametrize("policy", [None, c.DeleteOnClose()])
def test_dynamic_node_delete_on_close_goes_with_its_link(policy: Any) -> None:
    net = Net(Broker())
    client, events = net.connect()
    link, address = _dynamic_sender(net, client, policy)
    granted = link.granted.target.dynamic_node_properties
    assert granted == {Symbol("lifetime-policy"): c.DeleteOnClose()}  # the default, said
    client.send(link, Message(b"x"))
    net.pump()
    client.detach(link)
    net.pump()
    assert net.broker.nodes.queues.get(address) is None
    late = _receiver(net, client, address, name="late")
    assert _errors(events, late) == {"amqp:not-found"}  # not re-created implicitly


@pytest.mark.parametrize("policy", [c.DeleteOnNoMessages(), c.DeleteOnNoLinksOrMessages(),
                                    c.DeleteOnNoLinks()])
def test_dynamic_node_outlives_its_link_as_its_policy_says(policy: Any) -> None:
    net = Net(Broker())
    client, events = net.connect()
    link, address = _dynamic_sender(net, client, policy)
    assert link.granted.target.dynamic_node_properties == {Symbol("lifetime-policy"): policy}
    for body in (b"m1", b"m2"):
        client.send(link, Message(body))
    net.pump()
    rcv = _receiver(net, client, address, name="r")  # a link to it before the creator goes
    client.detach(link)
    net.pump()
    q = net.broker.nodes.queues[address]  # the accepted messages are still there
    client.flow(rcv, 1)
    net.pump()
    client.accept(_got(events, rcv)[0])
    net.pump()
    assert len(q) == 1 and not q.deleted
    client.flow(rcv, 1)
    net.pump()
    got = _got(events, rcv)
    assert [_body(d) for d in got] == ["m1", "m2"]
    client.accept(got[1])
    net.pump()
    if isinstance(policy, c.DeleteOnNoMessages):
        # creator gone, no messages: deleted, and the link still on it told so
        assert q.deleted and _errors(events, rcv) == {"amqp:resource-deleted"}
    else:
        assert not q.deleted  # a link remains
        client.detach(rcv)
        net.pump()
        assert q.deleted and address not in net.broker.nodes.queues


def test_links_to_a_deleted_node_are_detached_and_nothing_recreates_it() -> None:
    net = Net(Broker())
    client, events = net.connect()
    s = client.begin()
    rcv = client.attach_receiver(s, "dynr", c.Source(dynamic=True), c.Target())
    net.pump()
    address = str(rcv.granted.source.address)
    assert rcv.granted.source.dynamic_node_properties == {
        Symbol("lifetime-policy"): c.DeleteOnClose()}
    snd = _sender(net, client, address)
    client.detach(rcv)
    net.pump()
    assert _errors(events, snd) == {"amqp:resource-deleted"}
    assert address not in net.broker.nodes.queues
    again = _sender(net, client, address)
    assert _errors(events, again) == {"amqp:not-found"}
    relay = client.attach_sender(s, "relay", c.Source(), c.Target())
    net.pump()
    d = client.send(relay, Message(b"x", properties=c.Properties(to=address)))
    net.pump()
    assert isinstance(d.receiver_state, c.Rejected)
    assert str(d.receiver_state.error.condition) == "amqp:not-found"
    assert address not in net.broker.nodes.queues


@pytest.mark.parametrize("commit", [False, True])
def test_plain_outcome_for_a_transactional_acquisition_waits_for_the_discharge(
        commit: bool) -> None:
    net = Net(Broker(log=(lines := []).append))
    client, coord, txn, (a, b) = _acquired_in_transaction(net)
    client.accept(a)  # a plain outcome: still inside the transaction that acquired it
    client.accept_in(b, txn)
    net.pump()
    q = net.broker.nodes.queue("q")
    assert len(q) == 2 and q.ready_count == 0
    client.discharge(coord, txn, fail=not commit)
    net.pump()
    if commit:
        assert len(q) == 0
    else:  # a rollback gives both back, whatever the receiver said
        assert len(q) == 2 and q.ready_count == 2
    held = [x for x in lines if "in transaction" in x]
    assert held == [f"c2 'r' <- 'q': delivery {n} accepted in transaction {txn!r}"
                    for n in (0, 1)]


def test_no_message_larger_than_the_receivers_max_message_size() -> None:
    lines: list[str] = []
    net = Net(Broker(log=lines.append))
    _put(net, "q", "x" * 1000, "small", "x" * 2000, "also small")
    client, events = net.connect()
    s = client.begin()
    picky = client.attach_receiver(s, "picky", c.Source(address="q"), c.Target(),
                                   max_message_size=200)
    net.pump()
    client.drain(picky, 5)
    net.pump()
    # the large ones do not hold back the small ones behind them
    assert [_body(d) for d in _got(events, picky)] == ["small", "also small"]
    assert picky.link_credit == 0  # the drain completed: the big ones are not for it
    q = net.broker.nodes.queue("q")
    assert q is not None and len(q) == 4  # held for someone who can take them
    # said once per message and link, however often the link looks again
    client.flow(picky, 3)
    net.pump()
    client.drain(picky, 3)
    net.pump()
    skipped = [x for x in lines if "max-message-size" in x and "attach" not in x]
    assert skipped == [
        f"c2 'picky' <- 'q': a message of {n} bytes is over the link's max-message-size "
        "200: not sent to it, kept in the queue" for n in (1008, 2008)]
    client.accept(_got(events, picky))
    net.pump()
    other = _receiver(net, client, "q", name="other")
    client.flow(other, 5)
    net.pump()
    assert [len(_body(d)) for d in _got(events, other)] == [1000, 2000]


def test_a_link_attached_again_from_another_connection_steals_it() -> None:
    net = Net(Broker())
    durable = {"durable": 2, "expiry_policy": Symbol("never")}
    a, ev_a = net.connect("dur")
    old = _receiver(net, a, "/topic/st", name="D", **durable)
    a.flow(old, 10)
    net.pump()
    b, ev_b = net.connect("dur")
    new = _receiver(net, b, "/topic/st", name="D", **durable)
    b.flow(new, 10)
    net.pump()
    assert _errors(ev_a, old) == {"amqp:link:stolen"}
    assert not any(e.closed for e in ev_a if isinstance(e, LinkDetached) and e.link is old)
    _put(net, "/topic/st", "p0", "p1", "p2", "p3")
    assert _got(ev_a, old) == []
    assert [_body(d) for d in _got(ev_b, new)] == ["p0", "p1", "p2", "p3"]
    assert list(net.broker.nodes.durable) == [("dur", "D")]  # one subscription, kept


def test_relay_rejection_of_a_message_without_to_is_logged() -> None:
    lines: list[str] = []
    net = Net(Broker(log=lines.append))
    client, _ = net.connect()
    s = client.begin()
    relay = client.attach_sender(s, "relay", c.Source(), c.Target())
    net.pump()
    d = client.send(relay, Message(b"x"))
    net.pump()
    assert isinstance(d.receiver_state, c.Rejected)
    why = "amqp:not-found: anonymous relay: the message has no 'to' address"
    assert [x for x in lines if "rejected" in x] == [
        f"c1 'relay' -> None: message 1 rejected ({why})"]
