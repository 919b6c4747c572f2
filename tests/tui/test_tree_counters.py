"""A link's tree row keeps its counters at every width: a long name (proton's UUID and
address) is cut in the middle harder instead. At 110 to 150 columns the tree's column
dropped `d:`, `c:` and the rate of such names; below 110 (the tree above the tabs) they
always showed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text


@pytest.mark.parametrize("columns", [109, 110, 120, 130, 150])
def test_link_rows_keep_their_counters(testdata: Path, columns: int) -> None:
    app = replay_app(testdata / "captures" / "rabbitmq-sasl-plain-send-recv.pcapng")

    async def run() -> list[str]:
        async with app.run_test(size=(columns, 40)) as pilot:
            await pilot.pause()
            app.pull()
            await pilot.pause()
            return [line.split("│")[0] for line in screen_text(app).splitlines()
                    if "→ " in line or "← " in line]

    rows = [r for r in asyncio.run(run()) if " u:" in r]
    assert len(rows) >= 2, rows
    for r in rows:
        assert " d:" in r and " u:" in r and " c:" in r, r
        if columns >= 120:  # the rate goes only when the name has no room left for it
            assert r.rstrip().endswith("/s"), r
        if columns >= 110:  # the tree beside the tabs: the name gave way, cut in the middle
            assert "…" in r and "-/queue/" not in r, r
