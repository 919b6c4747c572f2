"""A one-line progress display on stderr for long runs (only when asked: TTY by default)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_EVERY = 0.25  # seconds between redraws
_AFTER = 1.0  # stay quiet for short runs


class Progress:
    def __init__(self, verb: str, total: int | None, enabled: bool, out: TextIO | None = None) -> None:
        self.verb = verb
        self.total = total
        self.enabled = enabled
        self.out = out or sys.stderr
        self.start = time.monotonic()
        self.last = self.start
        self.drawn = False
        self.count = 0

    def update(self, count: int) -> None:
        self.count = count
        if not self.enabled:
            return
        t = time.monotonic()
        if t - self.last < _EVERY or t - self.start < _AFTER:
            return
        self.last = t
        self._draw(t)

    def _draw(self, t: float) -> None:
        rate = self.count / (t - self.start) if t > self.start else 0.0
        if self.total:
            width = 30
            done = int(width * min(self.count, self.total) / self.total)
            bar = "#" * done + "-" * (width - done)
            line = f"{self.verb} [{bar}] {self.count}/{self.total} {rate:.0f} msg/s"
        else:
            line = f"{self.verb} {self.count} {rate:.0f} msg/s"
        self.out.write("\r" + line + "\x1b[K")
        self.out.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.drawn = False
