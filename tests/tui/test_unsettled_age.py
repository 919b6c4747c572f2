"""The unsettled table's age column: an age is never cut into another unit."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.widgets.link import UnsettledTable, _age


@pytest.mark.parametrize("secs", [0.0, 0.004, 0.117, 0.9996, 1.9, 12.5, 119.96, 300.0,
                                  7199.0, 5 * 3600.0, 400 * 3600.0, 1e12])
def test_every_age_fits_the_column(secs: float) -> None:
    assert len(_age(secs)) <= 6


def test_age_column_shows_the_whole_value_as_it_changes(fake_source) -> None:
    src = fake_source

    class Aging(type(src)):  # type: ignore[misc]
        age = 0.0

        def snapshot(self, link, delivery, now, conn=None):  # type: ignore[no-untyped-def]
            snap = super().snapshot(link, delivery, now, conn=conn)
            if snap.link is not None:
                for r in snap.link.unsettled:
                    r.age = self.age
                    r.sender_state = "-" if self.age < 1 else "accepted"
            return snap

    aging = Aging()

    async def run() -> None:
        app = AmqpTui(aging)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.select_link("c1/s0/l0")
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            for age, want, state in ((0.117, "117ms", "-"), (12.5, "12.5s", "accepted"),
                                     (0.004, "4ms", "-")):
                aging.age = age
                app.pull()
                await pilot.pause()
                line = table.render_line(1).text  # the first row under the header
                assert f" {want} " in line, line
                assert f" {state} " in line, line

    asyncio.run(run())
