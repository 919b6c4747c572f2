"""`amqp tui URL --recv`: a broker that goes away is noticed when it happens, not at the
next key press: the tree and the title say so and an error notification appears."""

from __future__ import annotations

import asyncio
import socket

import pytest
from proton import Message

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from tests.net.cutproxy import CutProxy
from tests.peers.broker import Broker
from tests.tui.waiting import until


@pytest.mark.integration
def test_a_lost_connection_is_shown_without_a_key_press(broker: Broker) -> None:
    broker.put("q", Message(body="m0"))
    with CutProxy("127.0.0.1", int(broker.url.rsplit(":", 1)[1]), cuts=[]) as proxy:
        src = ClientSource(build_config(f"amqp://127.0.0.1:{proxy.port}/q"), receive=True)

        async def run() -> None:
            app = AmqpTui(src)
            async with app.run_test(size=(140, 44)) as pilot:
                await until(app, pilot, lambda: bool(app.conn_tree.link_keys)
                             and src.link is not None)
                (key,) = app.conn_tree.link_keys
                assert app.select_link(key)
                await pilot.pause()
                # The broker dies: both its sockets end, nobody presses a key.
                for s in list(proxy._socks):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                await until(app, pilot, lambda: app.failed is not None)
                assert "cannot keep the connection to" in str(app.sub_title)
                (conn,) = app.conn_tree.conn_rows
                assert "lost" in conn.label
                (session,) = conn.sessions
                assert "connection lost" in session.label
                (link,) = session.links
                assert "connection lost" in link.warnings
                assert app.link_panel.detail is not None
                assert "connection lost" in app.link_panel.detail.warnings
                errors = [n.message for n in app._notifications if n.severity == "error"]
                assert any("cannot keep the connection to" in m for m in errors)
                # A key now says why it cannot act.
                await pilot.press("c")
                await pilot.pause()
                warnings = [n.message for n in app._notifications if n.severity == "warning"]
                assert any("cannot keep the connection to" in m for m in warnings)

        asyncio.run(run())
