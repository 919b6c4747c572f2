"""The frame log's memory: every frame a source saw, in arrival order, bounded.

Sources append from their own thread; the UI reads at its refresh rate. Records are
addressed by a sequence number that never changes (`seq`), so a view can hold on to a
position while old records are dropped at the front. Appending is O(1); indexing by
sequence number is O(1); trimming drops half the excess at once so it stays amortised.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True, frozen=True)
class FrameRecord:
    """One item as it arrived: a frame, a protocol header or a frame error."""

    seq: int  # position in the source's stream of items, from 0
    time: float  # seconds since the Unix epoch (capture time for replays)
    conn: str  # connection key, as shown in the tree
    side: str  # who sent it: the engine's side name ("client" / "server")
    item: Any  # codec Frame, ProtocolHeader or FrameError


class FrameStore:
    """An append-only, front-trimmed list of `FrameRecord`s with stable sequence numbers."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = max(16, limit)
        self._items: list[FrameRecord] = []
        self._base = 0  # seq of _items[0]
        self._lock = threading.Lock()
        self.dropped = 0

    def append(self, time: float, conn: str, side: str, item: Any) -> FrameRecord:
        with self._lock:
            rec = FrameRecord(self._base + len(self._items), time, conn, side, item)
            self._items.append(rec)
            if len(self._items) > self.limit + self.limit // 2:
                cut = len(self._items) - self.limit
                del self._items[:cut]
                self._base += cut
                self.dropped += cut
            return rec

    def truncate(self, end_seq: int) -> None:
        """Forget every record with seq >= end_seq (a replay stepping back)."""
        with self._lock:
            keep = max(0, end_seq - self._base)
            del self._items[keep:]

    def clear(self) -> None:
        with self._lock:
            self._base += len(self._items)
            self._items.clear()

    @property
    def first_seq(self) -> int:
        return self._base

    @property
    def end_seq(self) -> int:
        """One past the last record's seq."""
        return self._base + len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, seq: int) -> FrameRecord | None:
        i = seq - self._base
        items = self._items
        if 0 <= i < len(items):
            try:
                return items[i]
            except IndexError:  # trimmed by the writer meanwhile
                return None
        return None

    def since(self, seq: int) -> list[FrameRecord]:
        """Records with seq >= `seq` (a copy, taken under the lock)."""
        with self._lock:
            return self._items[max(0, seq - self._base) :]
