"""Connection failures become one clear line with the right exit code (loopback only)."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from amqpcli.cli.options import build_config
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Client
from amqpcli.net.transport import Transport
from tests.peers.net import free_port


def _connect(url: str, **kw: Any) -> UserError:
    with pytest.raises(UserError) as ei:
        asyncio.run(Client.connect(build_config(url, **kw)))
    return ei.value


def test_refused() -> None:
    port = free_port()
    e = _connect(f"amqp://127.0.0.1:{port}/q")
    assert e.code == Exit.CONNECTION
    assert str(e) == f"cannot connect to 127.0.0.1:{port}: connection refused"


def test_silent_peer_times_out() -> None:
    with socket.socket() as ls:
        ls.bind(("127.0.0.1", 0))
        ls.listen(1)  # the kernel completes the handshake; nobody ever answers
        port = ls.getsockname()[1]
        e = _connect(f"amqp://127.0.0.1:{port}/q", connect_timeout=0.5)
    assert e.code == Exit.CONNECTION
    assert "no AMQP open from the peer within 0.5s" in str(e)


def test_peer_that_hangs_up() -> None:
    async def scenario() -> UserError:
        async def hang_up(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await r.read(8)
            w.close()

        server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await Client.connect(build_config(f"amqp://127.0.0.1:{port}/q"))
        except UserError as e:
            return e
        finally:
            server.close()
        raise AssertionError("connected to a peer that hung up")

    e = asyncio.run(scenario())
    assert e.code == Exit.CONNECTION and "connection closed by peer" in str(e)


def test_tls_to_a_plain_port_is_a_tls_error() -> None:
    async def scenario() -> UserError:
        async def plain(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await r.read(100)
            w.write(b"AMQP\x00\x01\x00\x00")
            await w.drain()
            w.close()

        server = await asyncio.start_server(plain, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await Client.connect(build_config(f"amqps://127.0.0.1:{port}/q"))
        except UserError as e:
            return e
        finally:
            server.close()
        raise AssertionError("TLS succeeded against a plain peer")

    e = asyncio.run(scenario())
    assert e.code == Exit.CONNECTION and "TLS" in str(e)
    assert str(e).endswith("(the peer did not answer with TLS: a plain amqp:// port?)"), e


class FakeEngine:
    """Records what the transport does: data in, flushes, timer calls."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.out = bytearray(b"hello")
        self.timer_at: float | None = None
        self.timer_calls = 0
        self.eof = False

    def receive_data(self, data: bytes, time: float) -> list[Any]:
        self.received.append(data)
        self.out += b"ack:" + data
        return [("got", data)]

    def receive_eof(self, time: float, how: str = "fin") -> list[Any]:
        self.eof = True
        return [("eof",)]

    def data_to_send(self) -> bytes:
        out, self.out = bytes(self.out), bytearray()
        return out

    def take_events(self) -> list[Any]:
        return []

    def set_time(self, now: float) -> None:
        pass

    def next_timer(self) -> float | None:
        return self.timer_at

    def handle_timer(self, now: float) -> list[Any]:
        self.timer_calls += 1
        self.timer_at = None
        self.out += b"beat"
        return [("timer",)]


def test_transport_pumps_bytes_events_and_timers() -> None:
    async def scenario() -> tuple[FakeEngine, list[Any], bytes]:
        got = bytearray()
        done = asyncio.Event()

        async def peer(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            got.extend(await r.readexactly(5))  # "hello" at start
            w.write(b"ping")
            await w.drain()
            got.extend(await r.readexactly(8))  # "ack:ping"
            got.extend(await r.readexactly(4))  # "beat" from the timer
            w.close()
            done.set()

        server = await asyncio.start_server(peer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        engine = FakeEngine()
        events: list[Any] = []
        t = Transport(engine, reader, writer, events.append)  # type: ignore[arg-type]
        t.start()
        while not engine.received:
            await asyncio.sleep(0.01)
        import time

        engine.timer_at = time.time()  # due now
        t.flush()  # wakes the timer task
        await done.wait()
        await t.finished.wait()
        await t.close()
        server.close()
        return engine, events, bytes(got)

    engine, events, got = asyncio.run(scenario())
    assert got == b"helloack:pingbeat"
    assert engine.received == [b"ping"] and engine.timer_calls == 1 and engine.eof
    assert events[:3] == [("got", b"ping"), ("timer",), ("eof",)]
    assert type(events[-1]).__name__ == "StreamEnded"
