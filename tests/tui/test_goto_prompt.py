"""The `g` prompt: its question is read whole at 80x24 (it was cut at the box's 60
columns), and values it cannot go to are refused with a notice, not taken as the nearest
place (`-5` as frame 0, `t+nan` as the end, `c1:0` as the connection's first frame)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from amqpcli.tui.sources.replay import ReplaySource, load_capture
from amqpcli.tui.widgets.prompt import Prompt
from tests.tui.replaying import replay_app, replayed
from tests.tui.screen import screen_text
from tests.tui.terminal import terminal_keys
from tests.tui.test_trace_log_times import PROTON_TRACE

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


@pytest.mark.parametrize(("spec", "message"), [
    ("-5", "not a frame number or t+seconds: '-5'"),
    ("t+-1", "not a frame number or t+seconds: 't+-1'"),
    ("-1s", "not a frame number or t+seconds: '-1s'"),
    ("t+nan", "not a frame number or t+seconds: 't+nan'"),
    ("t+inf", "not a frame number or t+seconds: 't+inf'"),
    ("infs", "not a frame number or t+seconds: 'infs'"),
    ("nan", "not a frame number or t+seconds: 'nan'"),
    ("99999999999999999999", "the capture has 77 frames: no frame 99999999999999999999"),
    ("78", "the capture has 77 frames: no frame 78"),
    ("c1:0", "c1's frames are numbered from 1: no frame 0"),
    # a time is plain ASCII seconds: no `1_000`, spaces or other scripts' digits
    ("t+1_000", "not a frame number or t+seconds: 't+1_000'"),
    ("t+ 5", "not a frame number or t+seconds: 't+ 5'"),
    ("+1e3", "not a frame number or t+seconds: '+1e3'"),
    ("t+\u0661", "not a frame number or t+seconds: 't+\u0661'"),
    ("\u0662s", "not a frame number or t+seconds: '\u0662s'"),
    # a frame number too: Arabic-Indic ١٢ is not frame 12
    ("\u0661\u0662", "not a frame number or t+seconds: '\u0661\u0662'"),
    ("c1:\u0661", "not a frame number or t+seconds: 'c1:\u0661'"),
])
def test_values_it_cannot_go_to_are_refused(testdata: Path, spec: str, message: str) -> None:
    src = replayed(testdata.joinpath(*CAPTURE))
    with pytest.raises(ValueError, match=re.escape(message)):
        src.parse_goto(spec)


def test_what_it_can_go_to(testdata: Path) -> None:
    src = replayed(testdata.joinpath(*CAPTURE))
    assert src.controller is not None
    assert src.parse_goto("0") == 0
    assert src.parse_goto("77") == len(src.controller)
    assert src.parse_goto("t+0") == src.parse_goto("0s")
    assert src.parse_goto("c1:1") > 0
    assert src.parse_goto("t+1.5") == src.parse_goto("1.5s") == src.parse_goto("+1.5")
    assert src.parse_goto("12") == src.parse_goto(" 12 ")


def test_a_log_without_times_refuses_every_time_form(tmp_path: Path) -> None:
    log = tmp_path / "client.trace"
    log.write_text(PROTON_TRACE)
    src = ReplaySource(loaded=load_capture(log))
    assert not src.timed
    for spec in ("t+2.5", "+2.5", "2.5s", "0s"):
        with pytest.raises(ValueError, match="no times to go by"):
            src.parse_goto(spec)
    assert src.parse_goto("5") == 5


def test_a_refused_value_is_a_notice_and_the_replay_stays(testdata: Path) -> None:
    app = replay_app(testdata.joinpath(*CAPTURE))

    async def run() -> tuple[int, list[str]]:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press(*terminal_keys("g"), *[k for ch in "c1:0" for k in terminal_keys(ch)],
                              *terminal_keys("Enter"))
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.source.controller is not None  # type: ignore[attr-defined]
            return app.source.controller.position, [n.message for n in app._notifications]  # type: ignore[attr-defined]

    position, notes = asyncio.run(run())
    assert "c1's frames are numbered from 1: no frame 0" in notes
    assert position == len(app.source.controller)  # type: ignore[attr-defined]
