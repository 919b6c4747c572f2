"""Bottom bar of a replay: where we are in the capture, how fast it plays.

One line whatever the width: the progress bar takes what the words leave (30 cells at
most); on a narrow terminal it goes first, then the times, then the speed; the state and
the frame number stay."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from amqpcli.render.traffic import UNKNOWN_TIME

BAR_MAX = 30
BAR_MIN = 8  # a shorter bar says nothing: left out


def _bar(frac: float, width: int = BAR_MAX) -> str:
    n = int(max(0.0, min(1.0, frac)) * width)
    return "█" * n + "░" * (width - n)


def bar_text(position: int, total: int, elapsed: float | None, duration: float | None,
             speed: float, playing: bool, width: int | None = None) -> Text:
    """The bar's line for `width` cells (None: as wide as it likes). No `elapsed` and
    `duration`: the capture's times are unknown (a frame-trace log without times)."""
    state = Text("▶ playing " if playing else "⏸ paused  ", style="bold green" if playing else "bold")
    speed_s = "max" if speed <= 0 else f"{speed:g}×"
    frame = Text(f"  frame {position}/{total}")
    times = Text(f"  t {UNKNOWN_TIME}" if elapsed is None or duration is None
                 else f"  t+{elapsed:.3f}s/{duration:.3f}s")
    speed_t = Text(f"  speed {speed_s}", style="dim")
    frac = position / total if total else 1.0
    # the words kept, fewer as the room shrinks
    for parts in ([frame, times, speed_t], [frame, speed_t], [frame]):
        words = sum(p.cell_len for p in parts)
        room = BAR_MAX if width is None else width - state.cell_len - words
        if room >= BAR_MIN:
            return Text.assemble(state, _bar(frac, min(BAR_MAX, room)), *parts)
        if room + 2 >= 0:  # no bar: the state's two trailing spaces go too
            return Text.assemble(state[:-2], *parts)
    t = Text.assemble(state[:1], frame)  # the symbol alone
    t.truncate(max(1, width or 1), overflow="ellipsis")
    return t


class ReplayBar(Static):
    def show(
        self, position: int, total: int, elapsed: float | None, duration: float | None,
        speed: float, playing: bool,
    ) -> None:
        width = self.size.width or None
        t = bar_text(position, total, elapsed, duration, speed, playing, width)
        self.update(t, layout=False)  # one line, always: no layout pass needed
