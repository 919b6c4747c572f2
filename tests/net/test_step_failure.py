"""The transport tells a step of ours that raised (a bug) from the socket failing: both end
the stream at once, but only the socket's failure is a lost connection. By where it was
raised, not by its type: an OSError from a step is still ours. Its users say so: the client
raises the step's own exception (never `ConnectionLost`), the server logs an internal
error, the TUI's sources show one."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from typing import Any

import pytest

from amqpcli.cli.options import build_config
from amqpcli.engine.endpoint import Endpoint
from amqpcli.net.client import Client, ConnectionLost
from amqpcli.net.transport import StreamEnded, Transport
from amqpcli.peer import Broker, Server
from amqpcli.tui.messages import SourceNotice
from amqpcli.tui.sources.client import INTERNAL, ClientSource
from amqpcli.tui.sources.serve import ServeSource
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers
from tests.peer.serverlog import internal_error_on_connect

_WAIT = 30.0  # a hang guard, never reached when the stream ends as it should


class _Engine:
    """The least of an engine: takes bytes, never answers; `fail` raises from a step."""

    def __init__(self, fail: str = "") -> None:
        self.fail = fail
        self.events: list[Any] = []

    def receive_data(self, data: bytes, time: float) -> list[Any]:
        if self.fail == "receive":
            raise BrokenPipeError("ours, though an OSError")
        return []

    def receive_eof(self, time: float, how: str = "fin") -> list[Any]:
        return []

    def data_to_send(self) -> bytes:
        return b""

    def take_events(self) -> list[Any]:
        events, self.events = self.events, []
        return events

    def set_time(self, now: float) -> None:
        pass

    def next_timer(self) -> float | None:
        if self.fail == "timer":
            raise ConnectionResetError("ours too")
        return None

    def handle_timer(self, now: float) -> list[Any]:
        return []


async def _ended(fail: str, peer_does: str) -> tuple[list[StreamEnded], Transport]:
    """A transport over a loopback socket: its `StreamEnded` events once the stream ended."""
    peer: list[asyncio.StreamWriter] = []
    came = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer.append(writer)
        came.set()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    await came.wait()
    engine = _Engine(fail)
    ended: list[StreamEnded] = []

    def on_event(e: Any) -> None:
        if isinstance(e, StreamEnded):
            ended.append(e)
        elif e == "handled badly":
            raise ValueError("a handler failed")

    t = Transport(engine, reader, writer, on_event)
    t.start()
    if peer_does == "write":
        peer[0].write(b"bytes")
    elif peer_does == "close":
        peer[0].close()
    elif peer_does == "reset":  # RST, as a peer that crashed
        peer[0].get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        peer[0].transport.abort()
    elif peer_does == "event":  # an event our handler fails on, from a flush of ours
        engine.events.append("handled badly")
        t.flush()  # does not raise: the stream ends instead
    await asyncio.wait_for(t.finished.wait(), _WAIT)
    await t.close()
    for w in peer:
        w.close()
    server.close()
    return ended, t


@pytest.mark.parametrize(("fail", "peer_does", "raised"), [
    ("receive", "write", BrokenPipeError),
    ("timer", "", ConnectionResetError),
    ("", "event", ValueError),
])
def test_a_step_that_raises_ends_the_stream_as_ours(fail: str, peer_does: str,
                                                    raised: type) -> None:
    ended, t = asyncio.run(_ended(fail, peer_does))
    assert len(ended) == 1 and type(ended[0].error) is raised
    assert ended[0].internal and t.internal and t.lost is ended[0].error


@pytest.mark.parametrize(("peer_does", "raised"), [("close", EOFError),
                                                 ("reset", ConnectionResetError)])
def test_the_peer_ending_the_socket_is_not_ours(peer_does: str, raised: type) -> None:
    ended, t = asyncio.run(_ended("", peer_does))
    assert len(ended) == 1 and type(ended[0].error) is raised
    assert not ended[0].internal and not t.internal


def test_the_client_raises_the_steps_exception_and_a_drop_as_lost() -> None:
    async def run() -> None:
        server = Server(("127.0.0.1", 0), Broker())
        host, port = await server.start()
        try:
            client = await Client.connect(build_config(f"amqp://{host}:{port}/q"))
            receiver = await client.open_receiver("q")
            failing = RuntimeError("a step of ours failed")

            def boom(*args: Any) -> list[Any]:
                raise failing

            client.engine.receive_data = boom
            client.transport.receive(b"anything")  # as the read loop hands them on
            with pytest.raises(RuntimeError) as caught:
                await receiver.get(_WAIT)
            assert caught.value is failing and client.lost is None
            with pytest.raises(RuntimeError):
                await client.close()
            # the peer going away is what it always was
            client = await Client.connect(build_config(f"amqp://{host}:{port}/q"))
            receiver = await client.open_receiver("q")
            receiver.flow(1)
            for t in list(server._transports.values()):
                t.writer.transport.abort()
            with pytest.raises(ConnectionLost, match="cannot keep the connection to"):
                await receiver.get(_WAIT)
            assert client.failed is None
            await client.abort()
        finally:
            await server.close()

    asyncio.run(run())


def test_serve_logs_a_failed_step_as_an_internal_error() -> None:
    # A watcher that fails (the TUI's, say) with an OSError: the old test by type took it
    # for the client going away and logged nothing.
    lines: list[str] = []

    def on_events(conn: Any, events: list[Any]) -> None:
        raise BrokenPipeError("the watcher failed on b'\\x00me\\x00s3cret-pw'")

    server = Server(("127.0.0.1", 0), Broker(log=lines.append), on_events=on_events,
                    password="s3cret-pw", user="me", sasl="required")
    error, logged = internal_error_on_connect(server, lines, "me:s3cret-pw", timeout=_WAIT)
    assert "cannot connect to" in str(error)  # the server went
    assert logged.endswith(
        ": internal error: BrokenPipeError: the watcher failed on b'\\x00me\\x00***'"), logged


class _App:
    """What a source posts to the app, kept."""

    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post_message(self, msg: Any) -> None:
        self.posted.append(msg)


def _until(cond: Any) -> None:
    done = threading.Event()
    for _ in range(int(_WAIT * 100)):
        if cond():
            return
        done.wait(0.01)
    raise AssertionError("never happened")


@pytest.mark.integration
def test_the_tui_client_shows_a_failed_step_as_an_internal_error(
        serve: ServePeers, monkeypatch: pytest.MonkeyPatch) -> None:
    url = serve()
    assert amqp("send", f"{url}/q", "m0").returncode == 0
    armed = threading.Event()
    take = Endpoint.receive_data

    def receive_data(self: Endpoint, data: bytes, time: float) -> Any:
        if armed.is_set():
            raise RuntimeError("a step of ours failed")
        return take(self, data, time)

    monkeypatch.setattr(Endpoint, "receive_data", receive_data)
    src = ClientSource(build_config(f"{url}/q"), receive=True)
    src.start(_App())  # type: ignore[arg-type]
    try:
        _until(lambda: src.link is not None or src.error is not None)
        assert src.error is None
        armed.set()
        link = src.link
        src._call(lambda: link.flow(1))  # the peer sends m0: the engine fails on it
        _until(lambda: src.error is not None)
    finally:
        src.stop()
    assert src.error == "internal error: RuntimeError: a step of ours failed"
    assert src.status() == src.error
    assert src.cw is not None and src.cw.ended == INTERNAL


@pytest.mark.integration
def test_the_tui_serve_shows_a_failed_step_as_an_internal_error(
        free_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from amqpcli.peer.endpoint import PeerEndpoint

    take = PeerEndpoint.receive_data

    def receive_data(self: PeerEndpoint, data: bytes, time: float) -> Any:
        if self.connection.open.get("client") is not None:
            raise RuntimeError("a step of ours failed")
        return take(self, data, time)

    monkeypatch.setattr(PeerEndpoint, "receive_data", receive_data)
    app = _App()
    src = ServeSource(("127.0.0.1", free_port))
    src.start(app)  # type: ignore[arg-type]
    try:
        _until(src.ready.is_set)
        assert src.error is None
        r = amqp("send", f"amqp://127.0.0.1:{free_port}/q", "m0")
        assert r.returncode == 3, r.stderr  # the client sees the server go
        notices = [m for m in app.posted if isinstance(m, SourceNotice) and m.severity == "error"]
        assert [m.text for m in notices] == ["c1: internal error: RuntimeError: a step of ours failed"]
        (cw,) = src.watch.conns.values()
        assert cw.ended == INTERNAL
    finally:
        src.stop()
