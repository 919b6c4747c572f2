"""The footer shows, and the app accepts, only the keys that work with the current source;
it fits 80 columns with every source; the help screen shows each group's title whole."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.widgets import Footer

from amqpcli.cli.options import build_config
from amqpcli.cli.proxy import upstream_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from amqpcli.tui.sources.live import LiveSource
from amqpcli.tui.sources.proxy import ProxySource
from amqpcli.tui.sources.replay import Loaded, ReplaySource
from amqpcli.tui.sources.serve import ServeSource
from tests.tui.screen import screen_text


class IdleClient(ClientSource):
    def start(self, app: Any) -> None:  # no network: only the keys are looked at
        self.app = app


class IdleServe(ServeSource):
    def start(self, app: Any) -> None:
        self.app = app


class IdleProxy(ProxySource):
    def start(self, app: Any) -> None:
        self.app = app


class IdleLive(LiveSource):
    def start(self, app: Any) -> None:
        self.app = app


SOURCES = {
    "pcap": lambda: ReplaySource(loaded=Loaded()),
    "proxy": lambda: IdleProxy(("127.0.0.1", 1), upstream_config("amqp://127.0.0.1:2")),
    "live": lambda: IdleLive("lo"),
    "recv": lambda: IdleClient(build_config("amqp://127.0.0.1:1/q"), receive=True),
    "send": lambda: IdleClient(build_config("amqp://127.0.0.1:1/q"), receive=False),
    "serve": lambda: IdleServe(("127.0.0.1", 1)),
}


def _footer(src: Any) -> set[str]:
    async def run() -> set[str]:
        app = AmqpTui(src)
        async with app.run_test(size=(160, 30)) as pilot:
            await pilot.pause()
            return {key for key, b in app.screen.active_bindings.items()
                    if b.binding.show and b.enabled}

    return asyncio.run(run())


OURS = {"c", "d", "a", "s"}  # the footer's keys of our own links (r, l, m are in help only)


@pytest.mark.parametrize(("make", "want"), [
    (SOURCES["recv"], {"c", "d", "a"}),
    (SOURCES["send"], {"s"}),
    (SOURCES["serve"], {"a"}),
], ids=["recv", "send", "serve"])
def test_footer_shows_only_keys_that_work(make: Any, want: set[str]) -> None:
    src = make()
    shown = _footer(src)
    assert shown & OURS == want
    app = AmqpTui(src)
    for action, works in (("credit", "c" in want), ("drain", "d" in want),
                          ("settle", "a" in want), ("send", "s" in want)):
        assert bool(app.check_action(action, ())) == works, action


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_footer_fits_80_columns(name: str) -> None:
    async def run() -> tuple[str, list[str], int]:
        app = AmqpTui(SOURCES[name]())
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(100):  # (a loaded machine may take more than one refresh)
                await pilot.pause()
                if screen_text(app).splitlines()[-1].strip():
                    break
            keys = [f"{b.binding.key_display} {b.binding.description}"
                    for b in app.screen.active_bindings.values() if b.binding.show and b.enabled]
            return screen_text(app).splitlines()[-1], keys, app.query_one(Footer).max_scroll_x

    footer, keys, overflow = asyncio.run(run())
    assert overflow == 0  # nothing past the right edge
    for key in ("? Help", "q Quit", *keys):
        assert key in footer, f"{key!r} not in the footer {footer!r}"


def test_help_group_titles_are_whole(fake_source: Any) -> None:
    async def run() -> str:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(130, 60)) as pilot:
            await pilot.press("question_mark")
            await pilot.pause()
            return screen_text(app)

    text = asyncio.run(run())
    assert "Replay (--pcap)" in text
    assert "Our receiving link (URL --recv)" in text
    assert "Settling by hand (URL --recv, and --serve" in text
    assert "Our sending link (URL --send)" in text
