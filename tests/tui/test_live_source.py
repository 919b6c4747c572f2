"""Live capture as a TUI source (tshark through the capture package) on loopback."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.live import LiveSource
from tests.peers.broker import Broker

TRIES = 60


def _send_one(port: int, body: str) -> None:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        conn.create_sender("live").send(Message(body=body))
    finally:
        conn.close()


def _poke(port: int) -> None:
    # One more packet matching the filter, so the capture thread sees that it must stop.
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


@pytest.mark.integration
@pytest.mark.parametrize("fast", [False, True])
def test_live_capture_shows_connections(broker: Broker, fast: bool) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    port = int(broker.url.rsplit(":", 1)[1])
    src = LiveSource("lo", bpf_filter=f"tcp port {port}", fast=fast)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            # tshark takes a moment to start: send until a whole exchange was seen.
            for i in range(TRIES):
                await asyncio.to_thread(_send_one, port, f"live {i}")
                await pilot.pause(0.2)
                app.pull()
                links = [lk for c in app.conn_tree.conn_rows for s in c.sessions for lk in s.links]
                if any(lk.deliveries == 1 for lk in links):
                    break
            assert src.error is None
            links = [lk for c in app.conn_tree.conn_rows for s in c.sessions for lk in s.links]
            assert any(lk.deliveries == 1 and lk.role == "sender" for lk in links), app.conn_tree.conn_rows
            assert any(" transfer " in app.log_view.line_text(r) for r in src.store.since(0))
            src.stop()
            await asyncio.to_thread(_poke, port)

    seen: list[BaseException | None] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_value)
    try:
        asyncio.run(run())
        assert src._thread is not None
        src._thread.join(30)
        gc.collect()
    finally:
        sys.unraisablehook = hook
    # the capture's pipes were closed with it: collected later, after their loop was
    # closed, each printed an "Exception ignored ... Event loop is closed" traceback
    assert not [e for e in seen if "Event loop is closed" in str(e)], seen
