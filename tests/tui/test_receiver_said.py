"""The Link tab's flow line before the receiver's first flow: `receiver said -`, as the
TUI shows every missing value, not Python's `None`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from tests.tui.waiting import our_link_shown, until


def _said(app: AmqpTui) -> str | None:
    detail = app.link_panel.detail
    return None if detail is None else dict(detail.flow)["receiver said"]


@pytest.mark.integration
def test_receiver_said_nothing_yet(direct_receiver: Callable[..., Any]) -> None:
    peer = direct_receiver(credit=0, replenish=False)  # no flow until the test grants
    src = ClientSource(build_config(f"{peer.url}/out"), receive=False)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await our_link_shown(app, pilot, src)
            await until(app, pilot, lambda: _said(app) is not None)
            assert _said(app) == "-"
            peer.grant(2)
            await until(app, pilot, lambda: _said(app) == "dc 0 credit 2")

    asyncio.run(run())
