"""`amqp tui` on a failover list: it connects to the host that answers, says so, and the
title names the list."""

from __future__ import annotations

import asyncio
import socket

import pytest

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from tests.peers.broker import Broker
from tests.tui.waiting import until


@pytest.mark.integration
def test_the_tui_fails_over_to_the_host_that_answers(broker: Broker) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    live = broker.url.rpartition(":")[2]
    src = ClientSource(build_config(f"amqp://127.0.0.1:{dead},{broker.url}/q"), receive=True)
    assert src.title == f"receiving from q at 127.0.0.1:{dead} (or 1 more: failover)"

    async def run() -> list[str]:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            said = lambda: [str(n.message) for n in app._notifications]
            await until(app, pilot, lambda: any("attached receiver" in x for x in said()))
            return said()

    notes = asyncio.run(run())
    assert (f"failover: connected to 127.0.0.1:{live} (passed over 127.0.0.1:{dead}: "
            "connection refused)") in notes
