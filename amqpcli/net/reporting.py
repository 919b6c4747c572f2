"""`--report-every SECONDS` (send, recv): the run's figures so far on stderr, every
SECONDS, as qpid-send/qpid-receive's `--report-every` and cli-proton-python's
`--log-stats` give them.

The reports come from a timer on the event loop, not from the messages: a run where
nothing moves (no credit, an empty queue, a reconnect under way) still reports on time,
and shows the stall (`+0, 0/s`). The message loops themselves do nothing for it; the
timer reads the counters they keep anyway. Each report is one line of text, or with
`as_json` one JSON object, `{"report": {...}}`."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Beat", "Interval", "Reports"]


class Beat:
    """Calls `fn()` every `every` seconds of the running loop, on a fixed beat from
    `start` until `stop` or until `fn` returns False. A beat missed (the loop was held
    up, by a slow write say) is dropped, not made up for with calls in a burst."""

    def __init__(self, every: float, fn: Callable[[], bool]) -> None:
        self.every = every
        self.fn = fn
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._next = loop.time() + self.every
        self._handle = loop.call_at(self._next, self._fire)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        loop = self._loop
        assert loop is not None
        if not self.fn():
            self._handle = None
            return
        self._next += self.every
        now = loop.time()
        if self._next <= now:
            self._next = now + self.every
        self._handle = loop.call_at(self._next, self._fire)


class Interval:
    """How much a count grew since the last report, and at what rate; `start`: when the
    run started (a report's elapsed time counts from it)."""

    def __init__(self, start: float) -> None:
        self.start = self.t = start
        self.count = 0

    def step(self, count: int, now: float) -> tuple[int, float]:
        delta, dt = count - self.count, now - self.t
        self.t, self.count = now, count
        return delta, (delta / dt if dt > 0 else 0.0)


class Reports:
    """Calls `make(now)` every `every` seconds of the running loop, from `start` until
    `stop`, and writes what it returns: (the JSON object's members, the text line)."""

    def __init__(self, every: float, make: Callable[[float], tuple[dict[str, Any], str]],
                 as_json: bool, out: TextIO | None = None) -> None:
        self.make = make
        self.as_json = as_json
        self.out = out
        self._beat = Beat(every, self._report)

    def start(self) -> None:
        self._beat.start()

    def stop(self) -> None:
        self._beat.stop()

    def _report(self) -> bool:
        try:
            obj, text = self.make(time.monotonic())
            out = self.out or sys.stderr
            line = json.dumps({"report": obj}) if self.as_json else f"amqp: {text}"
            print(line, file=out, flush=True)
        except Exception as e:  # noqa: BLE001 - a report must never end the run
            print(f"amqp: warning: no more reports: {type(e).__name__}: {e}",
                  file=self.out or sys.stderr, flush=True)
            return False
        return True
