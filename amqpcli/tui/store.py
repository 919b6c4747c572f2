"""The frame log's memory: every frame a source saw, in arrival order, bounded.

Sources append from their own thread; the UI reads at its refresh rate. Records are
addressed by a sequence number that never changes (`seq`), so a view can hold on to a
position while old records are dropped at the front. Appending is O(1); indexing by
sequence number is O(1); trimming drops half the excess at once so it stays amortised.

A store may be told to keep no transfer payload above `payload_limit` bytes (the proxy's
does): such a frame is kept with an `ElidedPayload` that has the payload's length only,
so the frame log still says how many bytes it carried, but a message of hundreds of MB
passing through does not stay in memory once per frame (its delivery in the engine model
holds it, for the Delivery tab). The frame log's line of a one-frame message that large
then gives its size without a glimpse of its body.
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


class ElidedPayload:
    """A transfer payload not kept: only its length (`len()`, truthiness), as the frame
    line needs it. Not bytes: decoding it fails, which the line takes for "(N bytes)"."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"ElidedPayload({self.size})"


def _elided(item: Any, limit: int) -> Any:
    """`item`, or a copy of a frame whose payload is longer than `limit` with the
    payload elided."""
    from amqpcli.codec.frames import Frame

    if item.__class__ is not Frame or len(item.payload) <= limit:
        return item
    copy = Frame(item.offset, item.size, item.doff, item.type, item.channel, item.ext,
                 item.body, ElidedPayload(len(item.payload)))  # type: ignore[arg-type]
    return copy


class FrameStore:
    """An append-only, front-trimmed list of `FrameRecord`s with stable sequence numbers."""

    def __init__(self, limit: int = 200_000, payload_limit: int | None = None) -> None:
        self.limit = max(16, limit)
        self.payload_limit = payload_limit  # longest transfer payload kept (None: all)
        self._items: list[FrameRecord] = []
        self._base = 0  # seq of _items[0]
        self._lock = threading.Lock()
        self.dropped = 0

    def append(self, time: float, conn: str, side: str, item: Any) -> FrameRecord:
        if self.payload_limit is not None and getattr(item, "payload", None):
            item = _elided(item, self.payload_limit)
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
