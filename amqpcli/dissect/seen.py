"""What `pcap-dump` reads of every connection once the capture is read, when no view
keeps the connections themselves: its closing notes (a `--connection` value that named
none, AMQP 0-10 connections `--messages` and `--selector` leave out) and its exit status
(frames that did not decode, bytes skipped, no AMQP at all). Tallied as each connection
is forgotten (`Dissector(closed="forget")`) and, at the end, of those still held, so the
views that print connections as they go keep none once closed."""

from __future__ import annotations

from collections.abc import Iterable

from amqpcli.dissect.filters import Filter
from amqpcli.dissect.records import AMQP010, Conn

__all__ = ["SeenConns"]


class SeenConns:
    def __init__(self, flt: Filter) -> None:
        self.flt = flt
        self.count = 0
        self.first: tuple[int, str] | None = None  # (index, label) of the first made
        self.last: tuple[int, str] | None = None
        self.frame_errors = 0
        # bytes skipped to find a frame where no gap or mid-stream start explains it
        self.skipped_bytes = 0
        self.chosen = 0  # connections `--connection` chooses
        self.chosen_010 = 0  # of them, AMQP 0-10
        self._named: set[str] = set()  # `--connection` values that named one

    def add(self, c: Conn) -> None:
        self.count += 1
        key = (c.index, c.label)
        if self.first is None or key < self.first:
            self.first = key
        if self.last is None or key > self.last:
            self.last = key
        self.frame_errors += c.frame_errors
        if not c.midstream and not c.gaps:
            self.skipped_bytes += c.skipped_bytes
        flt = self.flt
        chosen = True  # (`Filter.conn`: any value names it, or none was given)
        if flt.connections:
            named = flt.naming(c)
            self._named.update(named)
            chosen = bool(named)
            flt.forget(c)
        if chosen:
            self.chosen += 1
            self.chosen_010 += c.protocol == AMQP010

    def add_all(self, conns: Iterable[Conn]) -> None:
        for c in conns:
            self.add(c)

    def unnamed(self) -> list[str]:
        """The `--connection` values that named no connection, in the order given."""
        return [x for x in self.flt.connections if x not in self._named]

    @property
    def labels(self) -> str:
        """"c1" or "c1 to c9": the connections there are, as the notes name them."""
        if self.first is None or self.last is None:
            return ""
        return self.first[1] + (f" to {self.last[1]}" if self.count > 1 else "")
