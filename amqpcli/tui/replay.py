"""Replay controller: a position in a recorded list of frames and the model at that position.

Theory of operation: the capture is read once into a list of `FrameRecord`s (time order).
The controller owns a model (the engine's observers, one per connection) that reflects
exactly the first `position` records. Moving forward feeds the next records. Moving back
cannot un-feed, so the controller restores the nearest checkpoint at or before the target
(a deep copy of the model taken while feeding forward) and feeds from there. Checkpoints are
taken every `interval` records; when more than `max_checkpoints` exist, every other one is
dropped and the interval doubles, so memory stays bounded on long captures while a seek
never re-feeds more than one interval.

Nothing here knows about Textual or threads beyond one lock: the app drives `play_until`,
`step`, `seek` from a worker thread and reads `model` under `lock` at its refresh rate.
"""

from __future__ import annotations

import bisect
import copy
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from amqpcli.tui.store import FrameRecord

M = TypeVar("M")


class ReplayController(Generic[M]):
    def __init__(
        self,
        records: Sequence[FrameRecord],
        new_model: Callable[[], M],
        feed: Callable[[M, FrameRecord], None],
        *,
        interval: int = 5_000,
        max_checkpoints: int = 32,
        clone: Callable[[M], M] = copy.deepcopy,
        times: Sequence[float] | None = None,
    ) -> None:
        self.records = records
        # the clock the replay moves by: the records' own times, or (`times`) one given
        # for records whose times are no times (a frame-trace log without any)
        self._times = [r.time for r in records] if times is None else times
        self._new_model = new_model
        self._feed = feed
        self._clone = clone
        self.interval = max(1, interval)
        self.max_checkpoints = max(2, max_checkpoints)
        self.lock = threading.RLock()
        self.model: M = new_model()
        self.position = 0
        # Sorted positions and the model copies taken there. Position 0 is a fresh model.
        self._cp_pos: list[int] = []
        self._cp_model: list[M] = []
        self.clone_failed = False
        self.refed = 0  # records fed while restoring (for tests and the status line)

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.records)

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.records)

    @property
    def start_time(self) -> float:
        return self._times[0] if self._times else 0.0

    @property
    def end_time(self) -> float:
        return self._times[-1] if self._times else 0.0

    @property
    def current_time(self) -> float:
        """Time of the last record applied (the start time before the first)."""
        if self.position == 0:
            return self.start_time
        return self._times[self.position - 1]

    @property
    def next_time(self) -> float:
        """Time of the next record to apply (not at the end)."""
        return self._times[self.position]

    def index_at_time(self, t: float) -> int:
        """Number of records with time <= t."""
        return bisect.bisect_right(self._times, t)

    # -- moving --------------------------------------------------------------------------

    def step(self, n: int = 1) -> int:
        return self.seek(self.position + n)

    def seek(self, target: int) -> int:
        """Make the model reflect the first `target` records; returns the new position."""
        target = max(0, min(len(self.records), target))
        with self.lock:
            if target < self.position:
                self._restore(target)
            self._forward(target)
            return self.position

    def seek_time(self, t: float) -> int:
        return self.seek(self.index_at_time(t))

    def play_until(self, t: float, limit: int | None = None) -> int:
        """Feed every record with time <= t (at most `limit` of them); returns how many."""
        end = self.index_at_time(t)
        if limit is not None:
            end = min(end, self.position + limit)
        before = self.position
        if end > before:
            self.seek(end)
        return self.position - before

    # -- internals -----------------------------------------------------------------------

    def _forward(self, target: int) -> None:
        records, feed, model = self.records, self._feed, self.model
        pos = self.position
        while pos < target:
            # Feed up to the next checkpoint boundary (or the target) in one tight loop.
            interval = self.interval  # may double at a checkpoint
            next_cp = (pos // interval + 1) * interval
            stop = min(target, next_cp)
            for i in range(pos, stop):
                feed(model, records[i])
            pos = stop
            self.position = pos
            if pos == next_cp:
                self._checkpoint(pos)

    def _checkpoint(self, pos: int) -> None:
        if self.clone_failed or (self._cp_pos and self._cp_pos[-1] >= pos):
            return
        try:
            snap = self._clone(self.model)
        except Exception:  # noqa: BLE001 - uncopyable model: seeks back re-feed from the start
            self.clone_failed = True
            return
        self._cp_pos.append(pos)
        self._cp_model.append(snap)
        if len(self._cp_pos) > self.max_checkpoints:
            self._cp_pos = self._cp_pos[1::2]
            self._cp_model = self._cp_model[1::2]
            self.interval *= 2

    def _restore(self, target: int) -> None:
        i = bisect.bisect_right(self._cp_pos, target) - 1
        if i >= 0:
            # Copy again: the checkpoint must stay pristine for the next seek.
            self.model = self._clone(self._cp_model[i])
            self.position = self._cp_pos[i]
        else:
            self.model = self._new_model()
            self.position = 0
        self.refed += target - self.position

    @property
    def checkpoints(self) -> list[int]:
        return list(self._cp_pos)
