"""The engine model a source keeps: one observer per connection, plus what the TUI remembers.

The engine hands out settled deliveries and violations as events and forgets them; the TUI
keeps the most recent ones (bounded by `history`) so a delivery that settles while it is
on screen can still be shown, and so the tree can say what went wrong. Everything older is
summarised by the link's own counters (deliveries, settled, outcomes).

A `Watch` is what a replay checkpoints (it deep-copies), so it holds no locks or threads.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from amqpcli.engine.events import DeliverySettled, Event, LinkAttached, SessionBegun, Violation
from amqpcli.engine.observer import Observer
from amqpcli.tui.store import FrameRecord

SIDES = ("client", "server")
MAX_SESSIONS = 64  # per connection, kept for the tree after they end
MAX_LINKS = 256


class EndOfStream:
    """A record that is not a frame: the bytes from one side stopped (FIN, RST, end of
    capture). Fed to the observer, it abandons what is left unsettled."""

    __slots__ = ("how",)
    channel = None
    name = "end-of-stream"

    def __init__(self, how: str) -> None:
        self.how = how

    def __repr__(self) -> str:
        return f"EndOfStream({self.how!r})"


class ConnWatch:
    def __init__(self, key: str, label: str, history: int = 1000, observer: Any = None) -> None:
        self.key = key
        self.label = label
        self.observer = observer if observer is not None else Observer(SIDES)
        self.violations: deque[Violation] = deque(maxlen=200)
        self.settled: deque[Any] = deque(maxlen=max(1, history))
        # Every session and link seen, in order, so ended ones stay on screen (the engine
        # drops them from its maps); the oldest go first when there are too many.
        self.sessions: deque[Any] = deque(maxlen=MAX_SESSIONS)
        self.links: deque[Any] = deque(maxlen=MAX_LINKS)
        self.ended = ""  # "" while the transport is up; else how it ended

    @property
    def connection(self) -> Any:
        return self.observer.connection

    def take(self, events: list[Event]) -> list[Event]:
        for e in events:
            t = type(e)
            if t is DeliverySettled:
                self.settled.append(e.delivery)  # type: ignore[attr-defined]
            elif t is Violation:
                self.violations.append(e)  # type: ignore[arg-type]
            elif t is SessionBegun:
                s = e.session  # type: ignore[attr-defined]
                if not any(x is s for x in self.sessions):
                    self.sessions.append(s)
            elif t is LinkAttached:
                lk = e.link  # type: ignore[attr-defined]
                if not any(x is lk for x in self.links):
                    self.links.append(lk)
        return events

    def keep_settled(self, d: Any) -> None:
        """Keep a delivery that we settled ourselves: an endpoint that settles what it
        received reports no event for it (it knows), so nothing else puts it here, and
        the delivery tab would lose it."""
        if not any(x is d for x in self.settled):
            self.settled.append(d)

    def feed(self, side: str, item: Any, time: float) -> list[Event]:
        if isinstance(item, EndOfStream):
            return self.take(self.observer.transport_closed(side, time))
        return self.take(self.observer.feed(side, item, time))


class Watch:
    """Connections by key, in the order they appeared."""

    def __init__(self, history: int = 1000) -> None:
        self.history = history
        self.conns: dict[str, ConnWatch] = {}
        self.labels: dict[str, str] = {}

    def conn(self, key: str, label: str | None = None) -> ConnWatch:
        cw = self.conns.get(key)
        if cw is None:
            cw = ConnWatch(key, label or self.labels.get(key, key), self.history)
            self.conns[key] = cw
        return cw

    def feed(self, rec: FrameRecord) -> list[Event]:
        return self.conn(rec.conn).feed(rec.side, rec.item, rec.time)

    def items(self) -> list[tuple[str, ConnWatch]]:
        return list(self.conns.items())


def clone_watch(watch: Watch) -> Watch:
    """A deep copy for a replay checkpoint, sharing the settled deliveries kept for viewing.

    A settled delivery is final: the engine has handed it out and never changes it again,
    so every checkpoint may share it. Copying the history each time would make a
    checkpoint cost as much as the history is long."""
    memo: dict[int, Any] = {}
    for cw in watch.conns.values():
        for d in cw.settled:
            memo[id(d)] = d
    return copy.deepcopy(watch, memo)


def feed_record(watch: Watch, rec: FrameRecord) -> None:
    """The replay controller's feed function."""
    watch.feed(rec)
