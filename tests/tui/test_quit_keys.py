"""Ctrl-C quits the TUI from anywhere, as `q` does, and the command then exits as
interrupted (130); ctrl+q quits from anywhere too; `q` quits from the help screen as
from the main one (docs/tui.md: "everywhere"); help lists every quit key."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.tui.app import TERMINATED, AmqpTui
from amqpcli.tui.keys import HELP
from amqpcli.tui.widgets.help import HelpScreen


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


@pytest.mark.parametrize("where", ["help", "filter", "palette"])
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


@pytest.mark.parametrize("where", ["main", "help"])
def test_q_quits_from_the_main_and_the_help_screen(fake_source, where: str) -> None:
    async def run() -> int | None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            await _open(app, pilot, where)
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running
        return app.return_code

    assert asyncio.run(run()) in (0, None)


def test_escape_and_question_mark_close_the_help_screen(fake_source) -> None:
    async def run() -> None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            for close in ("escape", "question_mark"):
                await _open(app, pilot, "help")
                assert isinstance(app.screen, HelpScreen)
                await pilot.press(close)
                await pilot.pause()
                assert not isinstance(app.screen, HelpScreen) and app.is_running

    asyncio.run(run())


def test_help_lists_every_quit_key() -> None:
    keys = {k for _, rows in HELP for k, _ in rows}
    assert {"q", "ctrl+q", "ctrl+c"} <= keys
