"""Bottom bar of a replay: where we are in the capture, how fast it plays."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def _bar(frac: float, width: int = 30) -> str:
    n = int(max(0.0, min(1.0, frac)) * width)
    return "█" * n + "░" * (width - n)


class ReplayBar(Static):
    def show(
        self, position: int, total: int, elapsed: float, duration: float, speed: float, playing: bool
    ) -> None:
        t = Text()
        t.append("▶ playing " if playing else "⏸ paused  ", style="bold green" if playing else "bold")
        t.append(_bar(position / total if total else 1.0))
        t.append(f"  frame {position}/{total}")
        t.append(f"  t+{elapsed:.3f}s/{duration:.3f}s")
        speed_s = "max" if speed <= 0 else f"{speed:g}×"
        t.append(f"  speed {speed_s}", style="dim")
        self.update(t, layout=False)  # one line, always: no layout pass needed
