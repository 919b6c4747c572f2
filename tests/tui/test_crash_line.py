"""A bug of ours inside the TUI ends it with the command's one "internal error" line
(exit 1), not Textual's crash screen, which prints every frame's local variables — frame
bytes and SASL credentials among them — and left the command exiting 0."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource
from amqpcli.tui.synth import write_conversation


def test_a_bug_ends_the_app_without_the_crash_screen(tmp_path: Path) -> None:
    path = tmp_path / "synth.pcapng"
    write_conversation(path, 3, batch=1)
    src = ReplaySource(path, interval=40)
    src.load()
    app = AmqpTui(src)

    def bug() -> None:
        secret = "Zq9Secret"  # a local variable the crash screen would have shown
        raise RuntimeError(f"a bug near {len(secret)} bytes")

    async def run() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            app.call_later(bug)
            await pilot.pause()

    with pytest.raises(RuntimeError):  # (the test harness raises what ended the app)
        asyncio.run(run())
    assert isinstance(app.crashed, RuntimeError)
    assert not app._exit_renderables  # nothing of Textual's to print at exit
