"""Every key of docs/tui.md's key table reaches a binding when pressed in a terminal: its
bytes go through Textual's input parser, and the key name that comes out is bound. A key
bound by a name no terminal sends (`period` for `.`) did nothing in a real terminal."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from amqpcli.tui import keys
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.widgets.help import HelpScreen
from tests.paths import REPO_ROOT
from tests.tui.terminal import terminal_keys
from tests.tui.test_footer_keys import SOURCES


def documented_keys() -> list[str]:
    text = (REPO_ROOT / "docs" / "tui.md").read_text()
    table = text.split("\n## Keys\n", 1)[1].split("\n\n", 1)[0]
    found = []
    for row in table.splitlines():
        if row.startswith("| `"):
            found += re.findall(r"`([^`]+)`", row.split("|")[1])
    return found


def test_the_key_table_is_read() -> None:
    got = documented_keys()
    for k in ("?", ".", ",", ">", "<", "+", "-", "/", "g", "ctrl+q", "Enter"):
        assert k in got


def test_every_documented_key_reaches_a_binding() -> None:
    """With the tree focused, as the app opens; a source's own keys are bound (enabled)
    only with that source, so each source is opened in turn."""
    async def bound_with(src: Any) -> set[str]:
        app = AmqpTui(src)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause()
            assert app.conn_tree.has_focus
            return {k for k, b in app.screen.active_bindings.items() if b.enabled}

    bound: set[str] = set()
    for name in ("pcap", "recv", "send", "serve"):
        bound |= asyncio.run(bound_with(SOURCES[name]()))
    unbound = {k: [n for n in terminal_keys(k) if n not in bound] for k in documented_keys()}
    assert {k: v for k, v in unbound.items() if v} == {}
    assert all(terminal_keys(k) for k in documented_keys())


def test_every_binding_is_a_key_a_terminal_sends() -> None:
    sent = {n for c in map(chr, range(1, 127)) for n in terminal_keys(c)}
    sent |= {n for k in ("↑", "↓", "Enter", "Tab", "Esc") for n in terminal_keys(k)}
    names = [n for k, *_ in keys.KEYS for n in k.split(",")]
    names += [n for b in HelpScreen.BINDINGS for n in b.key.split(",")]  # type: ignore[union-attr]
    assert [n for n in names if n not in sent] == []


def test_dot_and_comma_step_a_replay() -> None:
    assert terminal_keys(".") == ["full_stop"] and terminal_keys(",") == ["comma"]
    assert {k: a for k, a, *_ in keys.KEYS}["full_stop"] == "step(1)"
