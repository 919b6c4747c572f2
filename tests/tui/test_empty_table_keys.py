"""Arrow keys and Enter in an empty unsettled table (a receiver before its first delivery,
a serve nobody is connected to) do nothing: they highlighted row -1, whose key is None,
and the TUI ended with an internal error."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.tui.widgets.link import UnsettledTable
from tests.tui.replaying import replay_app


def test_keys_in_an_empty_unsettled_table(testdata: Path) -> None:
    # every delivery of this capture is settled: the table is empty at its end
    app = replay_app(testdata / "captures" / "rabbitmq-sasl-plain-send-recv.pcapng")

    async def run() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            assert table.row_count == 0
            table.focus()
            await pilot.press("up", "down", "down", "up", "enter")
            await pilot.pause()
            assert app.is_running

    asyncio.run(run())
