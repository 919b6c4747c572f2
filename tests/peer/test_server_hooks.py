"""`Server(on_connect=, on_events=, lock=, trace=)`: the hooks the TUI's `--serve` watches a
broker through, driven by our own client on the same event loop (loopback only)."""

from __future__ import annotations

import asyncio
from typing import Any

from amqpcli.cli.options import build_config
from amqpcli.codec.frames import Frame, ProtocolHeader
from amqpcli.engine import ConnectionOpened, MessageReceived
from amqpcli.net.client import Client
from amqpcli.peer import Broker, Faults, PeerConnection, Server
from tests.hooks import DepthLock, Tap, round_trip


class WatchedBroker(Broker):
    """Records whether the broker is called with the lock held."""

    def __init__(self, lock: DepthLock, **kw: Any) -> None:
        super().__init__(**kw)
        self.lock = lock
        self.calls: list[tuple[str, bool]] = []

    def _note(self, what: str) -> None:
        self.calls.append((what, self.lock.depth > 0))

    def connect(self, endpoint: Any, name: str, peer: str = "") -> PeerConnection:
        self._note("connect")
        return super().connect(endpoint, name, peer)

    def handle(self, conn: PeerConnection, events: list[Any]) -> None:
        self._note("handle")
        super().handle(conn, events)

    def settle_incoming(self, inc: Any, outcome: Any) -> None:
        self._note("settle")
        super().settle_incoming(inc, outcome)

    def disconnect(self, conn: PeerConnection) -> None:
        self._note("disconnect")
        super().disconnect(conn)


async def _send_and_receive(url: str, tap: Tap | None = None) -> list[bytes]:
    client = await Client.connect(build_config(f"{url}/q"),
                                  on_engine=None if tap is None else lambda e: e.set_tap(tap))
    try:
        return await round_trip(client, 2)
    finally:
        await client.close()


async def _until(cond: Any) -> None:
    for _ in range(200):
        if cond():
            return
        await asyncio.sleep(0.01)
    assert cond()


def test_on_connect_on_events_and_the_lock() -> None:
    lock = DepthLock()
    # A settle delay: the outcome comes from a timer the broker asked the server for.
    broker = WatchedBroker(lock, faults=Faults(settle_delay=0.01))
    conns: list[PeerConnection] = []
    batches: list[tuple[PeerConnection, list[Any], bool]] = []
    taps: dict[str, Tap] = {}
    client_tap = Tap()

    def on_connect(conn: PeerConnection) -> None:
        assert lock.depth > 0
        assert conn.endpoint.connection.open == {}  # before any byte moved
        conns.append(conn)
        taps[conn.name] = tap = Tap()
        conn.endpoint.set_tap(tap)

    def on_events(conn: PeerConnection, events: list[Any]) -> None:
        batches.append((conn, list(events), lock.depth > 0))

    async def scenario() -> list[bytes]:
        server = Server(("127.0.0.1", 0), broker, on_connect=on_connect,
                        on_events=on_events, lock=lock)
        host, port = await server.start()
        try:
            got = await _send_and_receive(f"amqp://{host}:{port}", client_tap)
            await _until(lambda: ("disconnect", True) in broker.calls)
            return got
        finally:
            await server.close()

    assert asyncio.run(scenario()) == [b"m0", b"m1"]
    (conn,) = conns
    assert conn.name in taps
    # The peer's tap saw exactly what the client's saw, the other way round.
    tap = taps[conn.name]
    assert bytes(tap.into).startswith(b"AMQP") and bytes(tap.out).startswith(b"AMQP")
    assert bytes(tap.into) == bytes(client_tap.out)
    assert bytes(tap.out) == bytes(client_tap.into)
    # Every batch of events came for that connection, before the broker saw them, locked.
    assert batches and all(b[0] is conn and b[2] for b in batches)
    seen = [type(e) for _, evs, _ in batches for e in evs]
    assert ConnectionOpened in seen and seen.count(MessageReceived) == 2
    kinds = {what for what, _ in broker.calls}
    assert {"connect", "handle", "settle", "disconnect"} <= kinds
    assert all(held for _, held in broker.calls), broker.calls
    assert lock.depth == 0


def test_trace_still_sees_every_frame() -> None:
    lines: list[tuple[str, str, Any]] = []

    async def scenario() -> list[bytes]:
        server = Server(("127.0.0.1", 0), Broker(),
                        trace=lambda name, arrow, item, t: lines.append((name, arrow, item)))
        host, port = await server.start()
        try:
            return await _send_and_receive(f"amqp://{host}:{port}")
        finally:
            await server.close()

    assert asyncio.run(scenario()) == [b"m0", b"m1"]
    assert lines[0][1] == "->" and isinstance(lines[0][2], ProtocolHeader)
    assert any(a == "<-" and isinstance(i, ProtocolHeader) for _, a, i in lines)
    bodies = [(a, type(i.body).__name__) for _, a, i in lines if isinstance(i, Frame)]
    assert ("->", "Open") in bodies and ("<-", "Open") in bodies
    assert sum(1 for b in bodies if b == ("->", "Transfer")) == 2
    assert sum(1 for b in bodies if b == ("<-", "Transfer")) == 2


def test_no_hooks_leave_endpoints_and_transports_plain() -> None:
    seen: list[Any] = []
    transports: list[Any] = []

    class Peek(Broker):
        def connect(self, endpoint: Any, name: str, peer: str = "") -> PeerConnection:
            conn = super().connect(endpoint, name, peer)
            seen.append(conn)
            return conn

        def handle(self, conn: PeerConnection, events: list[Any]) -> None:
            if not transports:
                transports.extend(server._transports.values())  # while it runs
            super().handle(conn, events)

    server = Server(("127.0.0.1", 0), Peek())

    async def scenario() -> list[bytes]:
        host, port = await server.start()
        try:
            return await _send_and_receive(f"amqp://{host}:{port}")
        finally:
            await server.close()

    assert asyncio.run(scenario()) == [b"m0", b"m1"]
    (conn,) = seen
    assert conn.endpoint.tap is None
    assert "receive_data" not in vars(conn.endpoint) and "data_to_send" not in vars(conn.endpoint)
    (t,) = transports
    assert t.lock is None and t.on_events is None
    assert not {"flush", "receive", "_dispatch", "_timer_step", "_eof_step"} & set(vars(t))
