"""`amqp tui URL --send` with no credit from the peer: a key press makes a message the
engine holds until the peer grants credit. The title counts it as waiting, not as sent,
and says `sent` only for what went out (as `amqp send` counts)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from tests.tui.waiting import our_link_shown, until


@pytest.mark.integration
def test_messages_without_credit_wait(direct_receiver: Callable[..., Any]) -> None:
    peer = direct_receiver(credit=0, replenish=False)  # credit only when the test grants
    src = ClientSource(build_config(f"{peer.url}/out"), receive=False)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await our_link_shown(app, pilot, src)
            await pilot.pause()
            await pilot.press("s", "s", "s")
            # the three presses handled (the old title said "sent 3" at once)
            await until(app, pilot, lambda: any(x in src.status() for x in ("3 waiting", "sent 3")))
            assert src.status().endswith(": credit 0, sent 0, 3 waiting for credit")
            assert src.sent == 0 and peer.messages() == []
            warnings = [n.message for n in app._notifications if n.severity == "warning"]
            assert warnings == ["no credit from the peer: messages wait until it grants some"]
            peer.grant(2)
            await until(app, pilot, lambda: src.sent == 2)
            assert src.status().endswith(": credit 0, sent 2, 1 waiting for credit")
            assert [r.message.id for r in peer.wait_for_messages(2)] == \
                ["tui-1", "tui-2"]
            peer.grant(1)
            await until(app, pilot, lambda: src.sent == 3)
            assert src.status().endswith(": credit 0, sent 3")

    asyncio.run(run())
