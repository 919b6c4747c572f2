"""The proxy as a TUI source: a proton client talks to RabbitMQ through it while the app watches."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.cli.proxy import upstream_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.proxy import ProxySource
from amqpcli.tui.sources.replay import ReplaySource
from amqpcli.tui.watch import EndOfStream
from amqpcli.tui.widgets.framelog import FrameLog

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
