"""A one-line progress display on stderr for long runs (only when asked: TTY by default)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from amqpcli.net.reporting import Beat

__all__ = ["Progress"]

_EVERY = 0.25  # seconds between redraws
_AFTER = 1.0  # stay quiet for short runs


class Progress:
    """`update(count)` as the run goes; `status(now)`, if given, says what the run waits
    for (appended to the line, none when it waits for nothing). Between `start` and
    `close` the line is also redrawn on a timer of the running loop, so a run where
    nothing moves (no credit) still shows how long it has waited."""

    def __init__(self, verb: str, total: int | None, enabled: bool, out: TextIO | None = None,
                 status: Callable[[float], str | None] | None = None) -> None:
        self.verb = verb
        self.total = total
        self.enabled = enabled
        self.out = out or sys.stderr
        self.status = status
        self.start_time = time.monotonic()
        self.last = self.start_time
        self.drawn = False
        self.count = 0
        self._beat: Beat | None = None

    def start(self) -> None:
        """Redraw on the running loop's timer too, until `close`."""
        if self.enabled and self._beat is None:
            self._beat = Beat(_EVERY, self._tick)
            self._beat.start()

    def update(self, count: int) -> None:
        self.count = count
        self._draw_if_due(time.monotonic())

    def _tick(self) -> bool:
        t = time.monotonic()
        if t - self.start_time >= _AFTER:  # (on the beat: no need to be due)
            self.last = t
            self._draw(t)
        return True

    def _draw_if_due(self, t: float) -> None:
        if not self.enabled or t - self.last < _EVERY or t - self.start_time < _AFTER:
            return
        self.last = t
        self._draw(t)

    def _draw(self, t: float) -> None:
        rate = self.count / (t - self.start_time) if t > self.start_time else 0.0
        if self.total:
            width = 30
            done = int(width * min(self.count, self.total) / self.total)
            bar = "#" * done + "-" * (width - done)
            line = f"{self.verb} [{bar}] {self.count}/{self.total} {rate:.0f} msg/s"
        else:
            line = f"{self.verb} {self.count} {rate:.0f} msg/s"
        note = self.status(t) if self.status is not None else None
        if note:
            line += f", {note}"
        self.out.write("\r" + line + "\x1b[K")
        self.out.flush()
        self.drawn = True

    def clear(self) -> None:
        """Take the line away (something else is to be written on stderr); the next
        redraw brings it back."""
        if self.drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.drawn = False

    def close(self) -> None:
        if self._beat is not None:
            self._beat.stop()
            self._beat = None
        self.clear()
