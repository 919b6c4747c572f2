"""The proton peers behave as their docstrings say, checked with proton's own client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from proton import (
    ConnectionException,
    Delivery,
    Described,
    Link,
    LinkException,
    Message,
    SSLDomain,
    Terminus,
    symbol,
    ulong,
)
from proton.handlers import MessagingHandler
from proton.reactor import Container, Copy, DurableSubscription, Filter, LinkOption, Selector
from proton.utils import BlockingConnection, SendException

from tests.peers import sections
from tests.peers.broker import Broker, data_object
from tests.peers.direct import DirectReceiver, DirectSender, Received
from tests.peers.outcomes import Accept, Hold, Modify, Reject, Release
from tests.peers.tls import Certs, client_domain

pytestmark = pytest.mark.integration

TIMEOUT = 30  # a hang guard for every blocking call; nothing here measures time


def connect(url: str, **kwargs: Any) -> BlockingConnection:
    return BlockingConnection(url, timeout=TIMEOUT, **kwargs)


def queue_length_becomes(broker: Broker, name: str, count: int) -> None:
    """Wait until the broker has applied the client's dispositions. A blocking client only
    writes frames inside its blocking calls, so close the link (or connection) first."""
    broker.wait_for(lambda: len(broker.handler.registry.queues[name].entries) == count)


# --- broker: queues, outcomes -----------------------------------------------------------


def test_broker_send_then_receive_in_order(broker: Broker) -> None:
    conn = connect(broker.url)
    sender = conn.create_sender("orders")
    for i in range(3):
        sender.send(Message(body=f"m{i}"))
    assert broker.queue_bodies("orders") == ["m0", "m1", "m2"]
    receiver = conn.create_receiver("orders", credit=10)
    got = []
    for _ in range(3):
        got.append(receiver.receive(timeout=TIMEOUT).body)
        receiver.accept()
    assert got == ["m0", "m1", "m2"]
    receiver.close()
    queue_length_becomes(broker, "orders", 0)
    conn.close()


def test_broker_keeps_bare_message_bytes(broker: Broker) -> None:
    msg = Message(body=b"\x00\x01", id="id-1", properties={"k": "v"}, annotations={"x-opt-a": 1})
    raw = bytes(msg.encode())
    broker.put("raw", raw)
    conn = connect(broker.url)
    receiver = conn.create_receiver("raw", credit=1)
    got = receiver.receive(timeout=TIMEOUT)
    receiver.accept()
    assert sections.bare(bytes(got.encode())) == sections.bare(raw)
    receiver.close()
    queue_length_becomes(broker, "raw", 0)
    conn.close()


def test_broker_move_shares_messages_between_receivers(broker: Broker) -> None:
    conn = connect(broker.url)
    # proton names links after the address: two on one address need names of their own
    r1 = conn.create_receiver("shared", name="r1", credit=2)
    r2 = conn.create_receiver("shared", name="r2", credit=2)
    # the blocking client grants credit after the attach: let it reach the broker first
    conn.wait(
        lambda: broker.call(
            lambda: [o.link.credit >= 2 for o in broker.handler.out_links.values()] == [True] * 2
        ),
        timeout=TIMEOUT,
    )
    broker.put("shared", *(Message(body=i) for i in range(4)))
    holders = broker.call(
        lambda: [e.acquired_by for e in broker.handler.registry.queues["shared"].entries]
    )
    assert None not in holders
    assert len(set(holders)) == 2  # handed out in turn to both receivers
    bodies = []
    for r in (r1, r2):
        for _ in range(holders.count(holders[0])):
            bodies.append(r.receive(timeout=TIMEOUT).body)
            r.accept()
    assert sorted(bodies) == [0, 1, 2, 3]  # each message went to exactly one receiver
    conn.close()
    queue_length_becomes(broker, "shared", 0)


def test_broker_copy_browses_without_consuming(broker: Broker) -> None:
    broker.put("browse", Message(body="a"), Message(body="b"))
    conn = connect(broker.url)
    browser = conn.create_receiver("browse", credit=10, options=Copy())
    assert browser.link.remote_source.distribution_mode == Terminus.DIST_MODE_COPY
    seen = []
    for _ in range(2):
        seen.append(browser.receive(timeout=TIMEOUT).body)
        browser.accept()
    assert seen == ["a", "b"]
    assert broker.queue_bodies("browse") == ["a", "b"]
    consumer = conn.create_receiver("browse", name="consumer", credit=10)
    assert consumer.link.remote_source.distribution_mode == Terminus.DIST_MODE_MOVE
    taken = []
    for _ in range(2):
        taken.append(consumer.receive(timeout=TIMEOUT).body)
        consumer.accept()  # settles the oldest unsettled delivery
    assert taken == ["a", "b"]
    consumer.close()
    queue_length_becomes(broker, "browse", 0)
    conn.close()


def test_broker_selector_filters(broker: Broker) -> None:
    broker.put(
        "colours",
        Message(body=1, properties={"colour": "red", "n": 1}),
        Message(body=2, properties={"colour": "blue", "n": 2}),
        Message(body=3),
        Message(body=4, properties={"colour": "red", "n": 7}),
    )
    conn = connect(broker.url)
    receiver = conn.create_receiver(
        "colours", credit=10, options=Selector("colour = 'red' AND n > 3")
    )
    echoed = data_object(receiver.link.remote_source.filter)
    assert echoed[symbol("selector")].value == "colour = 'red' AND n > 3"
    assert receiver.receive(timeout=TIMEOUT).body == 4
    receiver.accept()
    receiver.close()
    queue_length_becomes(broker, "colours", 3)
    assert broker.queue_bodies("colours") == [1, 2, 3]
    conn.close()


def test_broker_refuses_a_bad_selector(broker: Broker) -> None:
    conn = connect(broker.url)
    with pytest.raises(LinkException, match="invalid-field"):
        conn.create_receiver("colours", options=Selector("colour === 'red'"))
    assert broker.refused()[0][1] == "amqp:invalid-field"
    conn.close()


def test_broker_dynamic_source_is_temporary(broker: Broker) -> None:
    conn = connect(broker.url)
    receiver = conn.create_receiver(None, dynamic=True, credit=1)
    address = receiver.link.remote_source.address
    assert address
    assert address in broker.queue_names()
    conn.create_sender(address).send(Message(body="to temp"))
    assert receiver.receive(timeout=TIMEOUT).body == "to temp"
    receiver.accept()
    receiver.close()
    broker.wait_for(lambda: address not in broker.handler.registry.queues)
    conn.close()


def test_broker_anonymous_relay_routes_by_to(broker: Broker) -> None:
    conn = connect(broker.url)
    assert symbol("ANONYMOUS-RELAY") in (conn.conn.remote_offered_capabilities or [])
    sender = conn.create_sender(None)
    sender.send(Message(address="relayed", body="r"))
    assert broker.queue_bodies("relayed") == ["r"]
    conn.close()


def test_broker_outcomes_reject_release(broker: Broker) -> None:
    broker.put("out", Message(body="rejected"), Message(body="released"))
    conn = connect(broker.url)
    receiver = conn.create_receiver("out", credit=1)
    assert receiver.receive(timeout=TIMEOUT).body == "rejected"
    receiver.reject()
    msg = receiver.receive(timeout=TIMEOUT)
    assert msg.body == "released"
    receiver.release(delivered=False)
    again = receiver.receive(timeout=TIMEOUT)
    assert again.body == "released"
    assert again.delivery_count == 0  # released does not count as a delivery attempt
    receiver.accept()
    receiver.close()
    queue_length_becomes(broker, "out", 0)
    conn.close()


class ScriptedReceiver(MessagingHandler):
    """Receives from ``address`` and answers each delivery by ``decide(n, event)``."""

    def __init__(self, url: str, address: str, count: int, decide: Callable[[int, Any], None]):
        super().__init__(prefetch=0, auto_accept=False)
        self.url, self.address, self.count, self.decide = url, address, count, decide
        self.messages: list[Message] = []
        self.timed_out = False

    def on_start(self, event: Any) -> None:
        self.timer = event.container.schedule(TIMEOUT, self)
        conn = event.container.connect(self.url)
        self.receiver = event.container.create_receiver(conn, self.address)
        self.receiver.flow(1)

    def on_message(self, event: Any) -> None:
        self.messages.append(event.message)
        self.decide(len(self.messages) - 1, event.delivery)
        if len(self.messages) == self.count:
            self.timer.cancel()
            event.connection.close()
        else:
            self.receiver.flow(1)

    def on_timer_task(self, event: Any) -> None:
        self.timed_out = True
        event.container.stop()


def run(handler: Any) -> Any:
    Container(handler).run()
    assert not getattr(handler, "timed_out", False), "proton client gave up waiting"
    return handler


def test_broker_modified_delivery_failed_counts_and_annotates(broker: Broker) -> None:
    broker.put("redeliver", Message(body="x", annotations={"x-opt-keep": 1}))

    def decide(n: int, dlv: Delivery) -> None:
        if n == 0:
            dlv.local.failed = True
            dlv.local.annotations = {symbol("x-opt-why"): "try again"}
            dlv.update(Delivery.MODIFIED)
        else:
            dlv.update(Delivery.ACCEPTED)
        dlv.settle()

    client = run(ScriptedReceiver(broker.url, "redeliver", 2, decide))
    first, second = client.messages
    assert first.delivery_count == 0 and first.first_acquirer is False
    assert second.delivery_count == 1
    assert second.annotations == {symbol("x-opt-keep"): 1, symbol("x-opt-why"): "try again"}
    queue_length_becomes(broker, "redeliver", 0)


def test_broker_undeliverable_here_skips_that_link(broker: Broker) -> None:
    broker.put("picky", Message(body="only once here"))

    def decide(n: int, dlv: Delivery) -> None:
        dlv.local.undeliverable = True
        dlv.update(Delivery.MODIFIED)
        dlv.settle()

    run(ScriptedReceiver(broker.url, "picky", 1, decide))
    assert broker.queue_bodies("picky") == ["only once here"]
    conn = connect(broker.url)
    other = conn.create_receiver("picky", credit=1)
    assert other.receive(timeout=TIMEOUT).body == "only once here"
    other.accept()
    conn.close()


def test_broker_releases_unsettled_messages_when_a_link_closes(broker: Broker) -> None:
    broker.put("held", Message(body="h"))
    conn = connect(broker.url)
    receiver = conn.create_receiver("held", credit=1)
    assert receiver.receive(timeout=TIMEOUT).body == "h"
    conn.close()  # never settled
    broker.wait_for(
        lambda: [e.acquired_by for e in broker.handler.registry.queues["held"].entries] == [None]
    )


# --- broker: topics and durable subscriptions -------------------------------------------


def test_broker_durable_subscription_survives_detach(broker: Broker) -> None:
    def subscriber() -> tuple[BlockingConnection, Any]:
        container = Container()
        container.container_id = "durable-client"
        conn = BlockingConnection(broker.url, timeout=TIMEOUT, container=container)
        rcv = conn.create_receiver(
            "/topic/news", name="news-sub", credit=10, options=DurableSubscription()
        )
        return conn, rcv

    conn, receiver = subscriber()
    publisher = connect(broker.url)
    news = publisher.create_sender("/topic/news")
    news.send(Message(body="first"))
    assert receiver.receive(timeout=TIMEOUT).body == "first"
    receiver.accept()
    receiver.link.detach()  # detach, not close: the subscription stays
    conn.wait(lambda: not broker.call(lambda: bool(broker.handler.out_links)), timeout=TIMEOUT)
    conn.close()

    news.send(Message(body="while away"))
    subs = [n for n in broker.queue_names() if n.startswith("/topic/news#")]
    assert len(subs) == 1
    assert broker.queue_bodies(subs[0]) == ["while away"]

    conn, receiver = subscriber()
    assert receiver.receive(timeout=TIMEOUT).body == "while away"
    receiver.accept()
    receiver.close()  # closed=true ends the subscription
    broker.wait_for(lambda: not any(n.startswith("/topic/news#") for n in broker.handler.registry.queues))
    conn.close()
    publisher.close()


def test_broker_topic_without_subscribers_drops(broker: Broker) -> None:
    conn = connect(broker.url)
    conn.create_sender("/topic/void").send(Message(body="nobody"))
    assert broker.queue_names() == []
    conn.close()


# --- broker: transactions ---------------------------------------------------------------


class TxnClient(MessagingHandler):
    """Declares a transaction, sends ``bodies`` in it, accepts ``take`` messages in it, then
    commits or rolls back."""

    def __init__(self, url: str, address: str, bodies: list[str], take: int, commit: bool):
        super().__init__(prefetch=0, auto_accept=False)
        self.url, self.address, self.bodies, self.take, self.commit = (
            url, address, bodies, take, commit,
        )  # fmt: skip
        self.received: list[str] = []
        self.result: str | None = None
        self.timed_out = False

    def on_start(self, event: Any) -> None:
        self.timer = event.container.schedule(TIMEOUT, self)
        self.conn = event.container.connect(self.url)
        self.sender = event.container.create_sender(self.conn, self.address)
        self.receiver = event.container.create_receiver(self.conn, self.address)
        event.container.declare_transaction(self.conn, handler=self)

    def on_transaction_declared(self, event: Any) -> None:
        self.txn = event.transaction
        for body in self.bodies:
            self.txn.send(self.sender, Message(body=body))
        if self.take:
            self.receiver.flow(self.take)
        else:
            self._finish()

    def on_message(self, event: Any) -> None:
        self.received.append(event.message.body)
        self.txn.accept(event.delivery)
        if len(self.received) == self.take:
            self._finish()

    def _finish(self) -> None:
        if self.commit:
            self.txn.commit()
        else:
            self.txn.abort()

    def on_transaction_committed(self, event: Any) -> None:
        self._done("committed", event)

    def on_transaction_aborted(self, event: Any) -> None:
        self._done("aborted", event)

    def on_transaction_failed(self, event: Any) -> None:
        self._done("failed", event)

    def on_transaction_declare_failed(self, event: Any) -> None:
        self._done("declare failed", event)

    def _done(self, result: str, event: Any) -> None:
        self.result = result
        self.timer.cancel()
        self.conn.close()

    def on_timer_task(self, event: Any) -> None:
        self.timed_out = True
        event.container.stop()


def test_broker_transaction_commit_publishes(broker: Broker) -> None:
    client = run(TxnClient(broker.url, "txq", ["t1", "t2"], take=0, commit=True))
    assert client.result == "committed"
    assert broker.queue_bodies("txq") == ["t1", "t2"]
    assert broker.transactions() == {"open": 0, "committed": 1, "rolled_back": 0}


def test_broker_transaction_rollback_drops_sends(broker: Broker) -> None:
    client = run(TxnClient(broker.url, "txq", ["t1", "t2"], take=0, commit=False))
    assert client.result == "aborted"
    assert broker.queue_bodies("txq") == []
    assert broker.transactions() == {"open": 0, "committed": 0, "rolled_back": 1}


def test_broker_transactional_accept_applies_on_commit_only(broker: Broker) -> None:
    broker.put("txq", Message(body="a"), Message(body="b"))
    client = run(TxnClient(broker.url, "txq", [], take=1, commit=False))
    assert client.received == ["a"]
    broker.wait_for(lambda: broker.handler.coordinator.rolled_back == 1)
    assert broker.queue_bodies("txq") == ["a", "b"]  # the accept was undone
    client = run(TxnClient(broker.url, "txq", [], take=1, commit=True))
    assert client.received == ["a"]
    queue_length_becomes(broker, "txq", 1)
    assert broker.queue_bodies("txq") == ["b"]


def test_broker_rejects_unknown_transaction(broker: Broker) -> None:
    conn = connect(broker.url)
    sender = conn.create_sender("txq")
    dlv = sender.link.send(Message(body="stray"))
    dlv.local.data = [b"no-such-txn"]
    dlv.update(0x34)
    conn.wait(lambda: dlv.remote_state != 0)
    assert dlv.remote_state == Delivery.REJECTED
    assert dlv.remote.condition.name == "amqp:transaction:unknown-id"
    assert broker.queue_bodies("txq") == []
    conn.close()


# --- TLS --------------------------------------------------------------------------------


def test_tls_broker_send_receive(tls_broker: Broker, tls_certs: Certs) -> None:
    assert tls_broker.url.startswith("amqps://127.0.0.1:")
    conn = connect(tls_broker.url, ssl_domain=client_domain(tls_certs))
    conn.create_sender("secure").send(Message(body="over tls"))
    receiver = conn.create_receiver("secure", credit=1)
    assert receiver.receive(timeout=TIMEOUT).body == "over tls"
    receiver.accept()
    conn.close()


def test_tls_broker_certificate_names_localhost(tls_broker: Broker, tls_certs: Certs) -> None:
    url = f"amqps://localhost:{tls_broker.port}"
    conn = connect(url, ssl_domain=client_domain(tls_certs, verify_name=True))
    conn.close()


def test_tls_client_refuses_untrusted_server(tls_broker: Broker, tls_certs: Certs) -> None:
    domain = SSLDomain(SSLDomain.MODE_CLIENT)
    domain.set_trusted_ca_db(str(tls_certs.untrusted_cert))  # not the CA that signed it
    domain.set_peer_authentication(SSLDomain.VERIFY_PEER)
    with pytest.raises(ConnectionException, match="certificate verify failed"):
        connect(tls_broker.url, ssl_domain=domain)


def test_tls_broker_requires_client_certificate(
    tls_broker_client_auth: Broker, tls_certs: Certs
) -> None:
    url = tls_broker_client_auth.url
    with pytest.raises(ConnectionException):
        connect(url, ssl_domain=client_domain(tls_certs))
    conn = connect(url, ssl_domain=client_domain(tls_certs, with_client_cert=True))
    conn.create_sender("mutual").send(Message(body="with cert"))
    assert tls_broker_client_auth.queue_bodies("mutual") == ["with cert"]
    conn.close()


def test_plain_client_cannot_talk_to_tls_broker(tls_broker: Broker) -> None:
    with pytest.raises(ConnectionException):
        connect(tls_broker.url.replace("amqps://", "amqp://"))


# --- direct receiver --------------------------------------------------------------------


def test_direct_receiver_records_raw_bytes_and_answers(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    def outcome(rec: Received) -> Any:
        return [Accept(), Reject("amqp:not-allowed", "no"), Release(), Modify(failed=True)][
            rec.index
        ]

    peer = direct_receiver(outcome=outcome)
    conn = connect(peer.url)
    sender = conn.create_sender("anywhere")
    msgs = [Message(body=f"b{i}", properties={"i": i}) for i in range(4)]
    assert sender.send(msgs[0]).remote_state == Delivery.ACCEPTED
    with pytest.raises(SendException) as rejected:
        sender.send(msgs[1])
    assert rejected.value.state == Delivery.REJECTED
    with pytest.raises(SendException) as released:
        sender.send(msgs[2])
    assert released.value.state == Delivery.RELEASED
    modified = sender.send(msgs[3])
    assert modified.remote_state == Delivery.MODIFIED and modified.remote.failed
    got = peer.wait_for_messages(4)
    assert [r.raw for r in got] == [bytes(m.encode()) for m in msgs]
    assert [r.message.body for r in got] == ["b0", "b1", "b2", "b3"]
    assert got[0].bare == sections.bare(bytes(msgs[0].encode()))
    assert peer.links()[0].target == "anywhere"
    conn.close()


def test_direct_receiver_grants_credit_explicitly(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    peer = direct_receiver(credit=1, replenish=False)
    conn = connect(peer.url)
    sender = conn.create_sender("credit")
    conn.wait(lambda: sender.link.credit == 1)
    sender.send(Message(body=1))
    assert sender.link.credit == 0
    peer.grant(3)
    conn.wait(lambda: sender.link.credit == 3)
    conn.close()


def test_direct_receiver_holds_until_decided(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    peer = direct_receiver(outcome=Hold())
    conn = connect(peer.url)
    sender = conn.create_sender("hold")
    dlv = sender.link.send(Message(body="wait"))
    # a blocking client writes only while it waits: wait on the peer's record
    conn.wait(lambda: len(peer.messages()) == 1, timeout=TIMEOUT)
    assert not dlv.remote_state
    peer.decide(0, Reject("amqp:precondition-failed", "decided later"))
    conn.wait(lambda: dlv.settled)
    assert dlv.remote_state == Delivery.REJECTED
    assert dlv.remote.condition.description == "decided later"
    conn.close()


def test_direct_receiver_records_presettled(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    from proton.reactor import AtMostOnce

    peer = direct_receiver()
    conn = connect(peer.url)
    sender = conn.create_sender("fire", options=AtMostOnce())
    sender.send(Message(body="f"))  # returns at once: settled on send
    conn.wait(lambda: len(peer.messages()) == 1, timeout=TIMEOUT)
    got = peer.messages()
    assert got[0].presettled and got[0].outcome is None
    conn.close()


# --- direct sender ----------------------------------------------------------------------


def test_direct_sender_sends_list_and_records_outcomes(
    direct_sender: Callable[..., DirectSender],
) -> None:
    raw = bytes(Message(body="pre-encoded", subject="s").encode())
    peer = direct_sender([Message(body="one"), raw, Message(body="three"), Message(body="four")])

    def decide(n: int, dlv: Delivery) -> None:
        if n == 3:
            dlv.local.failed = True
            dlv.local.undeliverable = True
        dlv.update([Delivery.ACCEPTED, Delivery.REJECTED, Delivery.RELEASED, Delivery.MODIFIED][n])
        dlv.settle()

    client = run(ScriptedReceiver(peer.url, "src", 4, decide))
    assert [m.body for m in client.messages] == ["one", "pre-encoded", "three", "four"]
    assert client.messages[1].subject == "s"
    outcomes = peer.wait_for_outcomes(4)
    assert [(o.index, o.state.kind) for o in outcomes] == [
        (0, "accepted"), (1, "rejected"), (2, "released"), (3, "modified"),
    ]  # fmt: skip
    assert outcomes[3].state.failed and outcomes[3].state.undeliverable
    assert all(o.state.settled for o in outcomes)
    assert peer.links()[0].source == "src"


class RcvSecond(LinkOption):
    def apply(self, link: Any) -> None:
        link.rcv_settle_mode = Link.RCV_SECOND


class SecondModeSender(MessagingHandler):
    """Sends one message asking for rcv-settle-mode second and records what comes back."""

    def __init__(self, url: str) -> None:
        super().__init__(auto_settle=False)
        self.url = url
        self.events: list[str] = []
        self.timed_out = False

    def on_start(self, event: Any) -> None:
        self.timer = event.container.schedule(TIMEOUT, self)
        conn = event.container.connect(self.url)
        event.container.create_sender(conn, "second", options=RcvSecond())

    def on_link_opened(self, event: Any) -> None:
        self.events.append(f"mode={event.link.remote_rcv_settle_mode}")

    def on_sendable(self, event: Any) -> None:
        if "sent" not in self.events:
            self.events.append("sent")
            event.sender.send(Message(body="2nd"))

    def on_accepted(self, event: Any) -> None:
        # In mode second the receiver answers without settling and settles after us.
        self.events.append(f"accepted, receiver settled={event.delivery.settled}")
        event.delivery.settle()
        self.timer.cancel()
        event.connection.close()

    def on_timer_task(self, event: Any) -> None:
        self.timed_out = True
        event.container.stop()


def test_direct_receiver_rcv_settle_mode_second(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    peer = direct_receiver()
    client = run(SecondModeSender(peer.url))
    assert client.events == ["mode=1", "sent", "accepted, receiver settled=False"]
    assert peer.links()[0].rcv_settle_mode == Link.RCV_SECOND


class DynamicTarget(LinkOption):
    def apply(self, link: Any) -> None:
        link.target.dynamic = True


def test_broker_dynamic_target_is_temporary(broker: Broker) -> None:
    conn = connect(broker.url)
    sender = conn.create_sender(None, options=DynamicTarget())
    address = sender.link.remote_target.address
    assert address and sender.link.remote_target.dynamic
    sender.send(Message(body="into temp"))
    assert broker.queue_bodies(address) == ["into temp"]
    sender.close()
    broker.wait_for(lambda: address not in broker.handler.registry.queues)
    conn.close()


def test_broker_selector_by_numeric_descriptor(broker: Broker) -> None:
    broker.put("num", Message(body=1, properties={"k": 1}), Message(body=2, properties={"k": 2}))
    selector = Filter({symbol("jms-selector"): Described(ulong(0x0000468C00000004), "k = 2")})
    conn = connect(broker.url)
    receiver = conn.create_receiver("num", credit=1, options=selector)
    assert receiver.receive(timeout=TIMEOUT).body == 2
    receiver.accept()
    conn.close()


class Drainer(MessagingHandler):
    """Attaches a receiver, drains ``credit`` and records the credit the peer leaves."""

    def __init__(self, url: str, address: str, credit: int) -> None:
        super().__init__(prefetch=0, auto_accept=True)
        self.url, self.address, self.credit = url, address, credit
        self.bodies: list[Any] = []
        self.credit_after: int | None = None
        self.timed_out = False

    def on_start(self, event: Any) -> None:
        self.timer = event.container.schedule(TIMEOUT, self)
        conn = event.container.connect(self.url)
        self.receiver = event.container.create_receiver(conn, self.address)

    def on_link_opened(self, event: Any) -> None:
        event.link.drain(self.credit)

    def on_message(self, event: Any) -> None:
        self.bodies.append(event.message.body)

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        if link.is_receiver and link.credit == 0 and not link.draining():
            self.credit_after = link.credit
            self.timer.cancel()
            event.connection.close()

    def on_timer_task(self, event: Any) -> None:
        self.timed_out = True
        event.container.stop()


def test_broker_answers_drain(broker: Broker) -> None:
    broker.put("drain", Message(body="only"))
    client = run(Drainer(broker.url, "drain", 5))
    assert client.bodies == ["only"]
    assert client.credit_after == 0  # the unused 4 credits were given back


def test_direct_sender_answers_drain(direct_sender: Callable[..., DirectSender]) -> None:
    peer = direct_sender([Message(body=1), Message(body=2)])
    client = run(Drainer(peer.url, "src", 10))
    assert client.bodies == [1, 2]
    assert client.credit_after == 0


def test_peer_records_connection_details(broker: Broker) -> None:
    container = Container()
    container.container_id = "details-client"
    conn = BlockingConnection(
        broker.url, timeout=TIMEOUT, container=container, virtual_host="vhost-a",
        properties={symbol("product"): "probe"},
    )  # fmt: skip
    conn.close()
    (info,) = broker.connections()
    assert info.container_id == "details-client"
    assert info.hostname == "vhost-a"
    assert info.mechanism == "ANONYMOUS"
    assert info.properties == {symbol("product"): "probe"}


def test_tls_broker_sasl_external(tls_broker_client_auth: Broker, tls_certs: Certs) -> None:
    conn = connect(
        tls_broker_client_auth.url,
        ssl_domain=client_domain(tls_certs, with_client_cert=True),
        allowed_mechs="EXTERNAL",
    )
    conn.close()
    (info,) = tls_broker_client_auth.connections()
    assert info.mechanism == "EXTERNAL"
    assert "amqpcli-test-client" in (info.user or "")


def test_broker_small_frames_split_and_join_large_messages(
    peers: Callable[[Any], Any],
) -> None:
    broker = peers(Broker(max_frame_size=512))
    body = bytes(range(256)) * 400  # 100 KiB: about 200 frames each way
    conn = connect(broker.url)
    assert conn.conn.transport.remote_max_frame_size == 512
    conn.create_sender("big").send(Message(body=body))
    receiver = conn.create_receiver("big", credit=1)
    got = receiver.receive(timeout=TIMEOUT)  # kept: a binary body is a view into it
    assert bytes(got.body) == body
    receiver.accept()
    conn.close()


def test_peer_idle_timeout_is_announced(direct_receiver: Callable[..., DirectReceiver]) -> None:
    peer = direct_receiver(idle_timeout=4)
    conn = connect(peer.url)
    # proton announces half its timeout, so that heartbeats arrive in time (Part 2 §2.4.5)
    assert conn.conn.transport.remote_idle_timeout == 2
    conn.close()
