"""Ctrl-C quits the TUI from anywhere, as `q` does, and the command then exits as
interrupted (130); ctrl+q quits from anywhere too; help lists every quit key."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.tui.app import TERMINATED, AmqpTui
from amqpcli.tui.keys import HELP


async def _open(app: AmqpTui, pilot: object, where: str) -> None:
    press = pilot.press  # type: ignore[attr-defined]
    if where == "help":
        await press("question_mark")
    elif where == "filter":
        await press("slash", "a")
    elif where == "palette":
        await press("ctrl+p")
    await pilot.pause()  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", ["main", "help", "filter", "palette"])
def test_ctrl_c_quits_from_anywhere(fake_source, where: str) -> None:
    async def run() -> int | None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await _open(app, pilot, where)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert not app.is_running
        return app.return_code

    assert asyncio.run(run()) == TERMINATED


@pytest.mark.parametrize("where", ["help", "filter"])
def test_ctrl_q_quits_from_anywhere(fake_source, where: str) -> None:
    async def run() -> int | None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            await _open(app, pilot, where)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running
        return app.return_code

    assert asyncio.run(run()) in (0, None)


def test_help_lists_every_quit_key() -> None:
    keys = {k for _, rows in HELP for k, _ in rows}
    assert {"q", "ctrl+q", "ctrl+c"} <= keys
