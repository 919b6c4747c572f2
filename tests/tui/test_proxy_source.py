"""The proxy as a TUI source: a proton client talks to RabbitMQ through it while the app watches."""

from __future__ import annotations

import asyncio
import socket
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.proxy import ProxySource
from amqpcli.tui.sources.replay import ReplaySource
from amqpcli.tui.watch import EndOfStream
from amqpcli.tui.widgets.framelog import FrameLog
from amqpcli.tui.widgets.link import LinkPanel
from tests.tui.waiting import until

N = 5
TRIES = 600


def _client(port: int, address: str) -> list[str]:
    conn = BlockingConnection(f"amqp://guest:guest@127.0.0.1:{port}", timeout=30,
                              allowed_mechs="PLAIN", allow_insecure_mechs=True)
    try:
        sender = conn.create_sender(address)
        for i in range(N):
            sender.send(Message(body=f"p{i}"))
        receiver = conn.create_receiver(address, credit=N)
        out = []
        for _ in range(N):
            out.append(receiver.receive(timeout=30).body)
            receiver.accept()
        return out
    finally:
        conn.close()


def _wrong_password(port: int) -> None:
    """SASL PLAIN with a wrong password; the socket closed once the broker refused it."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(encode_protocol_header("sasl") + encode_frame(
            c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0guest\0wrong"), type=1))
        reader = FrameReader()
        items: list[object] = []
        while not any(isinstance(getattr(i, "body", None), c.SaslOutcome) for i in items):
            data = sock.recv(4096)
            assert data, "the broker closed before its sasl-outcome"
            items += reader.feed(data)


@pytest.mark.integration
def test_a_login_refused_through_the_proxy_says_so(rabbitmq_url: str) -> None:
    broker = urlsplit(rabbitmq_url)
    src = ProxySource(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{broker.port}"))

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await asyncio.to_thread(src.ready.wait, 30)
            assert src.bound is not None and src.error is None
            await asyncio.to_thread(_wrong_password, src.bound[1])
            # the broker resets the connection once refused: ended as the proxy says
            await until(app, pilot, lambda: bool(src.watch.conns) and all(
                cw.ended for cw in src.watch.conns.values()))
            ended = src.watch.conns["c1"].ended
            (conn,) = app.conn_tree.conn_rows
            assert conn.label.startswith(f"c1 [login refused (auth), {ended}] ")
            assert app.conn_tree.select_key("c1")
            await pilot.pause()
            app.pull()
            panel = app.query_one(LinkPanel)
            assert panel.conn is not None
            assert panel.conn.title.endswith(f"[login refused (auth), {ended}]")
            fields = {what: (a, b) for what, a, b in panel.conn.fields}
            assert fields["sasl outcome"] == ("", "auth: login refused")
            log = app.query_one(FrameLog)
            assert any("sasl-outcome" in x and "code=auth" in x
                       for x in (log.line_text(r) for r in src.store.since(0)))

    asyncio.run(run())


@pytest.mark.integration
def test_proxy_source_shows_live_links(rabbitmq_url: str, tmp_path: Path) -> None:
    broker = urlsplit(rabbitmq_url)
    record = tmp_path / "tui-proxy.pcapng"
    src = ProxySource(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{broker.port}"),
                      record=str(record))
    address = f"/queue/amqpcli-tui-{uuid.uuid4().hex[:8]}"

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await asyncio.to_thread(src.ready.wait, 30)
            assert src.bound is not None and src.error is None
            bodies = await asyncio.to_thread(_client, src.bound[1], address)
            assert bodies == [f"p{i}" for i in range(N)]
            for _ in range(TRIES):
                app.pull()
                conns = app.conn_tree.conn_rows
                # closed, and both TCP streams' ends recorded (the close frames come first)
                ends = sum(isinstance(r.item, EndOfStream) for r in src.store.since(0))
                if conns and "closed" in conns[0].label and ends == 2:
                    break
                await pilot.pause(0.05)
            (conn,) = app.conn_tree.conn_rows
            assert conn.key == "c1" and "closed" in conn.label
            log = app.query_one(FrameLog)
            lines = [log.line_text(r) for r in src.store.since(0)]
            transfers = [x for x in lines if " transfer " in x]
            assert len(transfers) == 2 * N
            assert sum("-> " in x for x in transfers) == N  # N sent by the client
            assert any("sasl-init" in x and "***" in x for x in lines)
        # The recording replays to the same frames.
        replay = ReplaySource(record)
        replay.load()
        assert replay.controller is not None
        assert len(replay.controller) == len(src.store.since(0))

    asyncio.run(run())
