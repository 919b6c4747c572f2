"""The proxy against a scripted broker on loopback: bytes untouched, model fed, recording read back."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture import Data, read_capture
from amqpcli.cli.proxy import upstream_config
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.types import UInt, UShort
from amqpcli.errors import UserError
from amqpcli.proxy import Proxy, Recorder, parse_listen
from tests.proxy.relay import LoopThread, Relay

CLIENT_BYTES = (
    encode_protocol_header("amqp")
    + encode_frame(c.Open(container_id="app"))
    + encode_frame(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(10), outgoing_window=UInt(10)))
)
SERVER_BYTES = (
    encode_protocol_header("amqp")
    + encode_frame(c.Open(container_id="broker"))
    + encode_frame(c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                           incoming_window=UInt(10), outgoing_window=UInt(10)))
    + b"\x00\x00\x00\x0c\x02\x00\x00\x00\x00\x53\x99\x45"  # a frame whose body is garbage
)


async def _scripted_broker() -> tuple[asyncio.base_events.Server, list[bytes]]:
    got: list[bytes] = []

    async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        data = await r.readexactly(len(CLIENT_BYTES))
        got.append(data)
        # Dribble the answer a few bytes at a time: the proxy must not care.
        for i in range(0, len(SERVER_BYTES), 7):
            w.write(SERVER_BYTES[i : i + 7])
            await w.drain()
        w.write_eof()
        rest = await r.read()
        got.append(rest)
        w.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, got


def test_parse_listen() -> None:
    assert parse_listen("5673") == ("127.0.0.1", 5673)
    assert parse_listen(":5673") == ("127.0.0.1", 5673)
    assert parse_listen("0.0.0.0:1") == ("0.0.0.0", 1)
    assert parse_listen("[::1]:5673") == ("::1", 5673)
    for bad in ("x", "host:port", "[::1]5673", "70000"):
        with pytest.raises(UserError):
            parse_listen(bad)


def test_upstream_url_must_have_a_scheme() -> None:
    with pytest.raises(UserError):
        upstream_config("localhost:5672")
    assert upstream_config("amqps://h:1").endpoint.tls


def test_bytes_forwarded_untouched_and_observed(loop_thread: LoopThread, tmp_path: Path) -> None:
    items: list[tuple[str, str, str]] = []
    closed: list[str] = []
    ended: list[Any] = []
    record = tmp_path / "rec.pcapng"

    async def setup() -> tuple[Proxy, Relay, list[bytes], asyncio.base_events.Server]:
        server, got = await _scripted_broker()
        port = server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_item=lambda conn, side, item, t, ev: items.append((conn.key, side, type(item).__name__)),
                      on_close=lambda conn, how: (closed.append(how), ended.append(conn)),
                      recorder=Recorder(record))
        bound = await proxy.start()
        relay = Relay(bound)  # the application's side of the proxy, recorded
        await relay.start()
        return proxy, relay, got, server

    proxy, relay, got, server = loop_thread.run(setup())
    with socket.create_connection(("127.0.0.1", relay.port)) as s:
        for i in range(0, len(CLIENT_BYTES), 5):
            s.sendall(CLIENT_BYTES[i : i + 5])
        received = bytearray()
        while chunk := s.recv(65536):
            received += chunk
        s.shutdown(socket.SHUT_WR)
    loop_thread.run(relay.done.wait())
    loop_thread.run(proxy.wait_idle())
    loop_thread.run(proxy.close())
    loop_thread.close_server(server)

    # Byte for byte, both ways.
    assert got[0] == CLIENT_BYTES
    assert bytes(received) == SERVER_BYTES
    assert bytes(relay.down) == SERVER_BYTES
    assert closed == ["closed"]
    # The copy went through the frame reader into the observer.
    assert not proxy.connections  # an ended connection is handed to on_close, then dropped
    conn = ended[0]
    assert conn.bytes == {"client": len(CLIENT_BYTES), "server": len(SERVER_BYTES)}
    model = conn.observer.connection
    assert model.open["client"].container_id == "app"
    assert model.open["server"].container_id == "broker"
    assert len(model.sessions) == 1 and model.sessions[0].state == "mapped"
    kinds = [k for _, side, k in items if side == "server"]
    assert kinds == ["ProtocolHeader", "Frame", "Frame", "FrameError"]
    # The recording holds exactly the forwarded bytes.
    streams: dict[int, bytearray] = {0: bytearray(), 1: bytearray()}
    for ev in read_capture(record):
        if isinstance(ev, Data):
            streams[int(ev.direction)] += ev.data
    assert bytes(streams[0]) == CLIENT_BYTES and bytes(streams[1]) == SERVER_BYTES


def test_unreachable_broker_closes_the_application_side(loop_thread: LoopThread) -> None:
    closed: list[str] = []
    with socket.socket() as tmp:
        tmp.bind(("127.0.0.1", 0))
        dead = tmp.getsockname()[1]  # nothing listens here once closed

    async def setup() -> Proxy:
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{dead}", connect_timeout=5),
                      on_close=lambda conn, how: closed.append(how))
        await proxy.start()
        return proxy

    proxy = loop_thread.run(setup())
    assert proxy.bound is not None
    with socket.create_connection(proxy.bound) as s:
        s.sendall(CLIENT_BYTES)
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass  # closed with our bytes still unread in its buffer: the kernel resets
    loop_thread.run(proxy.close())
    assert len(closed) == 1 and closed[0].startswith(f"cannot connect to 127.0.0.1:{dead}")


def test_closing_the_proxy_drops_open_connections_quietly(loop_thread: LoopThread) -> None:
    closed: list[str] = []
    opened: list[str] = []

    async def setup() -> tuple[Proxy, asyncio.base_events.Server]:
        async def silent(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await r.read()  # a broker that never answers
            w.close()

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_open=lambda conn: opened.append(conn.key),
                      on_close=lambda conn, how: closed.append(how))
        await proxy.start()
        return proxy, server

    proxy, server = loop_thread.run(setup())
    assert proxy.bound is not None
    with socket.create_connection(proxy.bound) as s:
        s.sendall(CLIENT_BYTES)
        for _ in range(200):  # until the proxy has connected upstream
            if opened:
                break
            loop_thread.run(asyncio.sleep(0.05))
        assert opened == ["c1"]
        loop_thread.run(proxy.close())
        assert s.recv(100) == b""  # the application's side was closed
    loop_thread.close_server(server)
    assert closed == ["dropped: the proxy stopped"]
