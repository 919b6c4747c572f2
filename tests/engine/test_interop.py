"""The client endpoint against a real AMQP 1.0 implementation (python-qpid-proton), and
a proton client against the peer endpoint. The sockets are driven here; the engine
does no I/O."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.engine import (
    ConnectionOpened,
    DeliverySettled,
    Endpoint,
    Event,
    MessageReceived,
    Observer,
    SaslConfig,
    Violation,
)

pytestmark = pytest.mark.integration

LIMIT = 20.0  # seconds before a stuck exchange fails the test (not a timing assertion)


class Driver:
    """Runs an endpoint over a connected socket, recording both directions."""

    def __init__(self, ep: Endpoint, sock: socket.socket) -> None:
        self.ep = ep
        self.sock = sock
        self.events: list[Event] = []
        self.wire: list[tuple[str, bytes, float]] = []
        self.eof = False

    def flush(self) -> None:
        out = self.ep.data_to_send()
        if out:
            self.wire.append((self.ep.local, out, time.time()))
            self.sock.sendall(out)

    def run_until(self, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + LIMIT
        self.flush()
        while not done():
            if self.eof:
                raise AssertionError("the peer closed the connection")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("the exchange did not finish")
            self.sock.settimeout(min(left, 0.5))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                self.events += self.ep.handle_timer(time.time())
                self.flush()
                continue
            now = time.time()
            if not data:
                self.eof = True
                self.events += self.ep.receive_eof(now)
                continue
            self.wire.append((self.ep.remote, data, now))
            self.events += self.ep.receive_data(data, now)
            self.flush()

    def of(self, cls: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]


def _connect(url: str) -> socket.socket:
    host, port = url.split("//")[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=LIMIT)


def test_client_sends_and_receives_through_proton_broker(broker: Any) -> None:
    sock = _connect(broker.url)
    ep = Endpoint("client", hostname="127.0.0.1", sasl=SaslConfig(), idle_timeout=30)
    d = Driver(ep, sock)
    ep.open()
    d.run_until(lambda: ep.is_open)
    s = ep.begin()
    out = ep.attach_sender(s, "out", c.Source(), c.Target(address="engine-q"))
    d.run_until(lambda: out.state == "attached" and out.link_credit > 0)
    sent = [ep.send(out, Message(f"message {i}".encode(),
                                 properties=c.Properties(message_id=f"id-{i}")))
            for i in range(3)]
    big = ep.send(out, Message(b"x" * 100_000))  # several frames at proton's max-frame-size
    d.run_until(lambda: all(x.phase == "settled" for x in [*sent, big]))
    assert [x.outcome for x in sent] == ["accepted"] * 3 and big.outcome == "accepted"
    assert big.frames > 1

    inn = ep.attach_receiver(s, "in", c.Source(address="engine-q"), c.Target())
    d.run_until(lambda: inn.state == "attached")
    ep.flow(inn, 10)
    d.run_until(lambda: len(d.of(MessageReceived)) == 4)
    got = [e.delivery for e in d.of(MessageReceived)]
    assert got[0].message().properties.message_id == "id-0"
    assert got[3].message().body[0].value == b"x" * 100_000
    ep.accept(got)
    ep.detach(inn)
    ep.detach(out)
    ep.end(s)
    ep.close()
    d.run_until(lambda: ep.connection.state == "closed")
    sock.close()
    assert not d.of(Violation)
    assert len(d.of(DeliverySettled)) == 8

    # an observer fed the same bytes agrees
    obs = Observer()
    oevents: list[Event] = []
    for side, data, t in d.wire:
        oevents += obs.feed_bytes(side, data, t)
    assert not [e for e in oevents if isinstance(e, Violation)]
    assert sorted((e.delivery.link.name, e.delivery.delivery_id, e.delivery.outcome)
                  for e in oevents if isinstance(e, DeliverySettled)) == sorted(
        (e.delivery.link.name, e.delivery.delivery_id, e.delivery.outcome)
        for e in d.of(DeliverySettled))


def _serve_once(on_event: Callable[[Endpoint, Any], None]) -> tuple[int, dict[str, Any],
                                                                    threading.Thread]:
    """A peer endpoint on a fresh port for one connection; `on_event` sees every event."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    result: dict[str, Any] = {}

    def serve() -> None:
        conn, _ = listener.accept()
        listener.close()
        ep = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS", "PLAIN")))
        d = Driver(ep, conn)
        result["driver"] = d
        seen = 0
        try:
            def step() -> bool:
                nonlocal seen
                for e in d.events[seen:]:
                    on_event(ep, e)
                seen = len(d.events)
                d.flush()
                return ep.connection.state == "closed" or d.eof
            d.run_until(step)
        except Exception as exc:  # noqa: BLE001 - reported to the test thread
            result["error"] = exc
        finally:
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return port, result, t


def test_proton_receiver_against_the_peer_endpoint() -> None:
    from proton.utils import BlockingConnection

    def on_event(ep: Endpoint, e: Any) -> None:
        if e.__class__.__name__ == "LinkAttached" and e.side == "client" and (
                e.link.sender == "server"):
            for i in range(3):
                ep.send(e.link, Message(f"from the peer {i}"))

    port, result, t = _serve_once(on_event)
    bc = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=LIMIT)
    rcv = bc.create_receiver("source-q", credit=10)
    bodies = []
    for _ in range(3):
        m = rcv.receive(timeout=LIMIT)
        bodies.append(m.body)
        rcv.accept()
    bc.close()
    t.join(LIMIT)
    assert "error" not in result, result.get("error")
    assert bodies == ["from the peer 0", "from the peer 1", "from the peer 2"]
    d = result["driver"]
    settled = [e.delivery for e in d.of(DeliverySettled)]
    assert [x.outcome for x in settled] == ["accepted"] * 3
    assert all(x.settled_by == "client" for x in settled)
    assert not d.of(Violation)


def test_proton_client_against_the_peer_endpoint() -> None:
    from proton import Message as PMessage
    from proton.utils import BlockingConnection

    def on_event(ep: Endpoint, e: Any) -> None:
        # credit for every link on which the client sends; every message accepted
        if isinstance(e, MessageReceived):
            ep.accept(e.delivery)
        elif (e.__class__.__name__ == "LinkAttached" and e.side == "client"
              and e.link.receiver == "server"):
            ep.flow(e.link, 10)

    port, result, t = _serve_once(on_event)
    bc = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=LIMIT)
    snd = bc.create_sender("target-q")
    for i in range(3):
        snd.send(PMessage(body=f"hello {i}"))  # blocks until settled by our peer
    bc.close()
    t.join(LIMIT)
    assert "error" not in result, result.get("error")
    d = result["driver"]
    got = [e.delivery for e in d.of(MessageReceived)]
    assert [x.message().body.value for x in got] == ["hello 0", "hello 1", "hello 2"]
    assert all(x.outcome == "accepted" for x in got)
    assert [e.side for e in d.of(ConnectionOpened)] == ["client", "server"]
    assert not d.of(Violation)


def test_client_against_rabbitmq(rabbitmq_url: str) -> None:
    from urllib.parse import urlsplit

    u = urlsplit(rabbitmq_url)
    sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 5672), timeout=LIMIT)
    ep = Endpoint("client", hostname=u.hostname,
                  sasl=SaslConfig(username=u.username or "guest", password=u.password or "guest"))
    d = Driver(ep, sock)
    ep.open()
    d.run_until(lambda: ep.is_open)
    sasl = [e for e in d.events if e.__class__.__name__ == "SaslOutcome"]
    assert sasl and sasl[0].ok and sasl[0].mechanism == "PLAIN"
    s = ep.begin()
    out = ep.attach_sender(s, "engine-out", c.Source(), c.Target(address="/queue/engine-interop"))
    d.run_until(lambda: out.state == "attached" and out.link_credit > 0)
    ds = [ep.send(out, Message(f"rabbit {i}")) for i in range(3)]
    d.run_until(lambda: all(x.phase == "settled" for x in ds))
    assert [x.outcome for x in ds] == ["accepted"] * 3
    inn = ep.attach_receiver(s, "engine-in", c.Source(address="/queue/engine-interop"),
                             c.Target())
    d.run_until(lambda: inn.state == "attached")
    ep.flow(inn, 3)
    d.run_until(lambda: len(d.of(MessageReceived)) == 3)
    got = [e.delivery for e in d.of(MessageReceived)]
    assert [x.message().body.value for x in got] == ["rabbit 0", "rabbit 1", "rabbit 2"]
    ep.accept(got)
    ep.close()
    d.run_until(lambda: ep.connection.state == "closed")
    sock.close()
    assert not d.of(Violation)


def test_transactions_against_proton_broker(broker: Any) -> None:
    from amqpcli.engine import TransactionDeclared, TransactionDischarged

    sock = _connect(broker.url)
    ep = Endpoint("client", sasl=SaslConfig())
    d = Driver(ep, sock)
    ep.open()
    d.run_until(lambda: ep.is_open)
    s = ep.begin()
    coord = ep.attach_coordinator(s)
    out = ep.attach_sender(s, "tx-out", c.Source(), c.Target(address="tx-q"))
    d.run_until(lambda: coord.link_credit > 0 and out.link_credit > 0)

    def txn() -> bytes:
        n = len(d.of(TransactionDeclared))
        ep.declare(coord)
        d.run_until(lambda: len(d.of(TransactionDeclared)) > n)
        return d.of(TransactionDeclared)[-1].txn_id

    t1 = txn()
    sent = [ep.send(out, Message(f"t1-{i}"), txn_id=t1) for i in range(2)]
    d.run_until(lambda: all(x.outcome != "unsettled" and x.phase == "settled" for x in sent))
    assert broker.queue_bodies("tx-q") == []  # not before the commit
    ep.discharge(coord, t1)
    d.run_until(lambda: len(d.of(TransactionDischarged)) == 1)
    assert d.of(TransactionDischarged)[0].outcome == "committed"
    assert len(broker.queue_bodies("tx-q")) == 2

    t2 = txn()
    ep.send(out, Message("t2"), txn_id=t2)
    ep.discharge(coord, t2, fail=True)
    d.run_until(lambda: len(d.of(TransactionDischarged)) == 2)
    assert d.of(TransactionDischarged)[1].outcome == "rolled-back"
    assert len(broker.queue_bodies("tx-q")) == 2
    assert ep.connection.transactions == {t1: "committed", t2: "rolled-back"}
    ep.close()
    d.run_until(lambda: ep.connection.state == "closed")
    sock.close()
    assert not d.of(Violation)


def test_rabbitmq_refuses_an_unknown_queue_by_ending_the_session(rabbitmq_url: str) -> None:
    from urllib.parse import urlsplit

    from amqpcli.codec.types import Described, Symbol
    from amqpcli.engine import LinkRefused, SessionEnded, TerminusMismatch

    u = urlsplit(rabbitmq_url)
    sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 5672), timeout=LIMIT)
    ep = Endpoint("client", sasl=SaslConfig(username=u.username or "guest",
                                             password=u.password or "guest"))
    d = Driver(ep, sock)
    ep.open()
    d.run_until(lambda: ep.is_open)
    s = ep.begin()
    # RabbitMQ echoes a selector it will ignore: no mismatch can be seen on the wire
    sel = Described(Symbol("apache.org:selector-filter:string"), "color = 'red'")
    ok = ep.attach_receiver(s, "sel", c.Source(address="/queue/engine-sel",
                                               filter={Symbol("sel"): sel}), c.Target())
    d.run_until(lambda: len(ok.attach) == 2)
    assert ok.granted.source.filter == {Symbol("sel"): sel}
    assert not d.of(TerminusMismatch)
    bad = ep.attach_receiver(s, "bad", c.Source(address="/amq/queue/engine-no-such-queue"),
                             c.Target())
    d.run_until(lambda: bool(d.of(LinkRefused)))
    r = d.of(LinkRefused)[0]
    assert r.link is bad and str(r.error.condition) == "amqp:not-found"
    assert [e.side for e in d.of(SessionEnded)] == ["server", "client"]
    ep.close()
    d.run_until(lambda: ep.connection.state == "closed")
    sock.close()
