"""The `g` prompt: its question is read whole at 80x24 (it was cut at the box's 60
columns), and values it cannot go to are refused with a notice, not taken as the nearest
place (`-5` as frame 0, `t+nan` as the end, `c1:0` as the connection's first frame)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.tui.widgets.prompt import Prompt
from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text
from tests.tui.terminal import terminal_keys

CAPTURE = ("captures", "rabbitmq-sasl-plain-send-recv.pcapng")


def test_the_whole_question_shows_at_80x24(testdata: Path) -> None:
    app = replay_app(testdata.joinpath(*CAPTURE))

    async def run() -> tuple[str, str]:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press(*terminal_keys("g"))
            await pilot.pause()
            assert isinstance(app.screen, Prompt)
            return app.screen.question, screen_text(app)

    question, text = asyncio.run(run())
    # inside the box's border (its lines between the first and the last █), words in order
    inside = [line[line.index("█") + 1:line.rindex("█")] for line in text.splitlines()
              if line.count("█") >= 2]
    shown = " ".join(" ".join(part.split()) for part in inside)
    words = question.split()
    assert "t+SECONDS" in shown and "c3:N" in shown
    # every word of the question, in order, on the screen
    at = 0
    for w in words:
        found = shown.find(w, at)
        assert found >= 0, (w, shown)
        at = found + len(w)
