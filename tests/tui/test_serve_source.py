"""Playing the broker by hand (`amqp tui --serve`): a proton client's sends wait for our keys."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection, SendException

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.serve import ServeSource
from amqpcli.tui.widgets.link import UnsettledTable
from tests.tui.waiting import until


def _send_in_thread(port: int, body: str, result: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=60)
        try:
            conn.create_sender("orders").send(Message(body=body))  # waits for the outcome
            result["outcome"] = "accepted"
        except SendException as e:
            result["outcome"] = f"refused: {e.state}"
        finally:
            conn.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _receive(port: int) -> Any:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        return conn.create_receiver("orders", credit=1).receive(timeout=30).body
    finally:
        conn.close()



@pytest.mark.integration
def test_messages_wait_for_a_key(free_port: int) -> None:
    src = ServeSource(("127.0.0.1", free_port))

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert await asyncio.to_thread(src.ready.wait, 30) and src.error is None
            first: dict[str, Any] = {}
            t = _send_in_thread(free_port, "keep me", first)
            await until(app, pilot, lambda: bool(app.conn_tree.link_keys))
            (key,) = app.conn_tree.link_keys
            app.select_link(key)
            table = app.query_one(UnsettledTable)
            await until(app, pilot, lambda: len(table.keys) == 1)
            assert "1 message(s) waiting" in src.status()
            assert first == {}  # the sender is still waiting for us
            table.focus()
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("a")
            await asyncio.to_thread(t.join, 60)
            assert first == {"outcome": "accepted"}
            # Accepted means stored: a receiver gets it.
            assert await asyncio.to_thread(_receive, free_port) == "keep me"
            # A second message, rejected by key.
            second: dict[str, Any] = {}
            t2 = _send_in_thread(free_port, "drop me", second)
            await until(app, pilot, lambda: len(app.conn_tree.link_keys) >= 3)
            new = app.conn_tree.link_keys[-1]
            app.select_link(new)
            await until(app, pilot, lambda: len(table.keys) == 1)
            table.focus()
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("r")
            await asyncio.to_thread(t2.join, 60)
            assert second["outcome"].startswith("refused")

    asyncio.run(run())
    src.stop()
