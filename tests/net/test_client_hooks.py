"""`Client.connect(on_engine=, on_events=, lock=)` and the transport's hooks, against the
project's own peer (`amqpcli.peer.Server`) on the same event loop: loopback only."""

from __future__ import annotations

import asyncio
from typing import Any

from amqpcli.cli.options import build_config
from amqpcli.codec import composites as c
from amqpcli.engine import ConnectionOpened, LinkAttached, MessageReceived
from amqpcli.engine.endpoint import Endpoint
from amqpcli.net.client import Client
from amqpcli.net.transport import Transport
from amqpcli.peer import Broker, Server
from tests.hooks import DepthLock, Tap, round_trip


async def _serve(**kw: Any) -> tuple[Server, str]:
    server = Server(("127.0.0.1", 0), Broker(), **kw)
    host, port = await server.start()
    return server, f"amqp://{host}:{port}"


def test_hooks_see_the_engine_its_events_and_bytes_under_the_lock() -> None:
    lock = DepthLock()
    engines: list[Any] = []
    batches: list[list[Any]] = []
    tap = Tap(lock)
    peer_tap = Tap()
    unlocked_batches = 0

    def on_engine(engine: Any) -> None:
        assert isinstance(engine, Endpoint)
        assert lock.entered == 0  # before anything moved
        engines.append(engine)
        engine.set_tap(tap)

    def on_events(events: list[Any]) -> None:
        nonlocal unlocked_batches
        assert events
        if lock.depth == 0:
            unlocked_batches += 1
        batches.append(list(events))

    async def scenario() -> list[bytes]:
        server, url = await _serve(on_connect=lambda conn: conn.endpoint.set_tap(peer_tap))
        try:
            client = await Client.connect(build_config(f"{url}/q"), on_engine=on_engine,
                                          on_events=on_events, lock=lock)
            got = await round_trip(client, 3)
            await client.close()
            await asyncio.sleep(0.05)  # the peer reads the close
            return got
        finally:
            await server.close()

    got = asyncio.run(scenario())
    assert got == [b"m0", b"m1", b"m2"]
    assert len(engines) == 1
    # The exact bytes both ways: what our tap saw go out is what the peer's tap saw come in.
    assert bytes(tap.out).startswith(b"AMQP")
    assert bytes(tap.out) == bytes(peer_tap.into)
    assert bytes(tap.into) == bytes(peer_tap.out)
    assert tap.unlocked == 0 and unlocked_batches == 0
    assert lock.depth == 0 and lock.entered > 0
    seen = [type(e) for batch in batches for e in batch]
    assert ConnectionOpened in seen and LinkAttached in seen
    assert seen.count(MessageReceived) == 3


def test_no_hooks_change_nothing() -> None:
    async def scenario() -> tuple[Client, list[bytes]]:
        server, url = await _serve()
        try:
            client = await Client.connect(build_config(f"{url}/q"))
            got = await round_trip(client, 3)
            await client.close()
            return client, got
        finally:
            await server.close()

    client, got = asyncio.run(scenario())
    assert got == [b"m0", b"m1", b"m2"]
    assert client.engine.tap is None
    assert "receive_data" not in vars(client.engine) and "data_to_send" not in vars(client.engine)
    t = client.transport
    assert t.on_events is None and t.lock is None
    for step in ("flush", "receive", "_dispatch", "_timer_step", "_eof_step"):
        assert step not in vars(t), step
    assert t._dispatch.__func__ is Transport._dispatch  # type: ignore[attr-defined]


def test_settlements_go_out_before_the_credit_that_follows_them() -> None:
    # A peer that counts unsettled deliveries against the prefetch must see the window
    # freed before it is granted again: disposition, then flow.
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import Frame, FrameReader

    tap = Tap()

    async def scenario() -> None:
        server, url = await _serve()
        try:
            client = await Client.connect(build_config(f"{url}/q"),
                                          on_engine=lambda e: e.set_tap(tap))
            sender = await client.open_sender("q")
            for p in [sender.send(f"m{i}".encode(), settled=False) for i in range(4)]:
                await asyncio.wait_for(p.wait(), 10)
            receiver = await client.open_receiver("q")
            receiver.flow(2)
            accepted = c.Accepted()  # one state: one disposition for the run
            for _ in range(2):
                inc = await receiver.get(10)
                assert inc is not None
                receiver.settle(inc, accepted)
            receiver.flow(2)  # in the same turn as the settlements, as recv does
            for _ in range(2):
                assert await receiver.get(10) is not None
            await client.close()
        finally:
            await server.close()

    asyncio.run(scenario())
    sent = [f.body.__class__.__name__ for f in FrameReader().feed(bytes(tap.out))
            if isinstance(f, Frame) and isinstance(f.body, (c.Flow, c.Disposition))]
    assert sent == ["Flow", "Disposition", "Flow"]  # it was flow, flow, disposition


def test_a_failure_an_earlier_wait_took_ends_the_next_wait_at_once() -> None:
    # The peer's close came with its transfer: `get` hands out the message, consuming the
    # change; closing the link then must fail at once with the peer's close, not wait its
    # whole timeout for a detach that cannot come. And the settlement made after the end
    # is never sent: counted as unsent (the peer delivers the message again).
    from amqpcli.codec import composites as c
    from amqpcli.errors import Exit, UserError
    from amqpcli.peer.faults import Faults

    async def scenario() -> None:
        server = Server(("127.0.0.1", 0), Broker(Faults(close_after=1)))
        host, port = await server.start()
        url = f"amqp://{host}:{port}"
        try:
            sender = await Client.connect(build_config(f"{url}/q"))
            p = (await sender.open_sender("q")).send(b"m0", settled=False)
            await asyncio.wait_for(p.wait(), 10)
            await sender.abort()
            client = await Client.connect(build_config(f"{url}/q"))
            receiver = await client.open_receiver("q")
            receiver.flow(1)
            inc = await receiver.get(10)
            assert inc is not None and receiver.ended
            receiver.settle(inc, c.Accepted())
            try:
                await receiver.close(timeout=60)
            except UserError as e:
                assert e.code == Exit.REFUSED and "amqp:connection:forced" in str(e)
            else:
                raise AssertionError("the link closed as if the connection were up")
            assert receiver.unsent == 1
            await client.abort()
        finally:
            await server.close()

    asyncio.run(scenario())


def test_links_closed_and_answered_are_let_go() -> None:
    # a client that opens a link per request keeps the open ones, not every one it had
    async def scenario() -> tuple[list[int], list[int], list[bytes]]:
        server, url = await _serve()
        try:
            client = await Client.connect(build_config(f"{url}/q"))
            opened, held = [], []
            for i in range(5):
                s = await client.open_sender("r")
                p = s.send(b"m%d" % i, settled=False)
                await asyncio.wait_for(p.wait(), 10)
                assert isinstance(p.state, c.Accepted)
                opened.append(len(client._links))
                await s.close()
                held.append(len(client._links))
            got = await round_trip(client, 2)  # (and the client goes on as before)
            await client.close()
            return opened, held, got
        finally:
            await server.close()

    opened, held, got = asyncio.run(scenario())
    assert opened == [1] * 5 and held == [0] * 5
    assert got == [b"m0", b"m1"]
