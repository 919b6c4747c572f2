"""The engine model a source keeps: one observer per connection, plus what the TUI remembers.

The engine hands out settled deliveries and violations as events and forgets them; the TUI
keeps the most recent ones (bounded by `history`) so a delivery that settles while it is
on screen can still be shown, and so the tree can say what went wrong. Everything older is
summarised by the link's own counters (deliveries, settled, outcomes).

An AMQP 0-10 connection (from a capture) has no engine observer: `ConnWatch010` feeds its
assemblies to the 0-10 session model (`amqpcli.amqp010.SessionObserver`) and groups the
messages by session, sending side and destination as they come (`Destination`).

A `Watch` is what a replay checkpoints (it deep-copies), so it holds no locks or threads.

A live source (a proxy, a served broker, a live capture, a pipe) runs for as long as its
user likes: its watch keeps the open connections and the last `keep_ended` ended ones
(`end()`), so memory and each refresh's walk over the tree follow those, not every
connection ever seen. A replay keeps every connection (it steps back and forth).
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from amqpcli.engine.events import (
    DeliverySettled,
    DeliveryStarted,
    Event,
    LinkAttached,
    SessionBegun,
    Violation,
)
from amqpcli.engine.observer import Observer, explained_by_gap
from amqpcli.engine.shelf import LinkShelf
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


RATE_WINDOW = 1.0  # seconds a rate is taken over
RATE_SLOTS = 10  # ... counted in this many slots


class Recent:
    """How many things (deliveries) began in the `RATE_WINDOW` seconds up to a time, by
    the times they began, not by when someone looked: a replay's rates are the capture's,
    the same however it was moved through. Counted in slots of a tenth of the window."""

    __slots__ = ("slots",)

    def __init__(self) -> None:
        self.slots: deque[list[int]] = deque()  # [slot number, count], oldest first

    def add(self, t: float) -> None:
        n = int(t * RATE_SLOTS / RATE_WINDOW)
        slots = self.slots
        if slots and n <= slots[-1][0]:  # the same slot (or a packet's time gone back)
            slots[-1][1] += 1
        else:
            slots.append([n, 1])
            while slots[0][0] <= n - RATE_SLOTS:
                slots.popleft()

    def rate(self, now: float) -> float:
        """Per second, over the window that ends at `now`."""
        n = int(now * RATE_SLOTS / RATE_WINDOW)
        return sum(c for i, c in self.slots if n - RATE_SLOTS < i <= n) / RATE_WINDOW


class CaptureNotice:
    """A record that is not a frame: what the capture itself did, as the dissector's notice
    of `kind` says it (`text`). A `gap`: `size` bytes from one side are missing (the frame
    reader looked for the next frame after them); fed to the observer, what follows is
    taken as the engine takes it after a gap (`Connection.on_gap`), and the findings the
    lost frames could explain are notices, as `pcap-dump` has them (`explained_by_gap`).
    `midstream`: the capture starts after the connection was set up (no protocol header,
    or no TCP handshake); fed before its first frame, what was set up before the capture
    is taken as it comes (`Connection.midstream`), as `pcap-dump`'s observer takes it."""

    __slots__ = ("kind", "size", "text")
    channel = None

    def __init__(self, kind: str, text: str, size: int = 0) -> None:
        self.kind = kind
        self.text = text
        self.size = size

    @property
    def name(self) -> str:
        return self.kind

    def __repr__(self) -> str:
        return f"CaptureNotice({self.kind!r}, {self.text!r}, {self.size})"


NOT_FRAMES = (EndOfStream, CaptureNotice)  # records of a replay that are no frame


class ConnWatch:
    def __init__(self, key: str, label: str, history: int = 1000, observer: Any = None) -> None:
        self.key = key
        self.label = label
        self.observer = observer if observer is not None else Observer(SIDES)
        self.violations: deque[Violation] = deque(maxlen=200)
        # What the capture lost: gaps (both sides) and bytes per side. After a gap, the
        # violations the lost frames could explain are kept here instead, as notices.
        self.gaps = 0
        self.gap_bytes: dict[str, int] = {}
        self.after_gap: deque[Violation] = deque(maxlen=200)
        self.after_gap_total = 0
        self.recent: dict[Any, Recent] = {}  # link -> its deliveries of the last second
        self.settled: deque[Any] = deque(maxlen=max(1, history))
        # Every session and link seen, in order, so ended ones stay on screen (the engine
        # drops them from its maps); the oldest go first when there are too many.
        self.sessions: deque[Any] = deque(maxlen=MAX_SESSIONS)
        self.links: deque[Any] = deque(maxlen=MAX_LINKS)
        self.ended = ""  # "" while the transport is up; else how it ended
        # its input says when each frame came: false for a frame-trace log's connection
        # without times (proton's), whose times and latencies the views call unknown
        self.timed = True
        # a frame-trace log's connection: the transfer payloads the log cut short (proton
        # shows about 1 KiB of a frame), the size each line gives by frame number; None
        # for any other input
        self.log_cut: dict[int, int] | None = None

    @property
    def connection(self) -> Any:
        return self.observer.connection

    def take(self, events: list[Event]) -> list[Event]:
        for e in events:
            t = type(e)
            if t is DeliveryStarted:
                link = e.delivery.link  # type: ignore[attr-defined]
                recent = self.recent.get(link)
                if recent is None:
                    recent = self.recent[link] = Recent()
                recent.add(e.time)  # type: ignore[attr-defined]
            elif t is DeliverySettled:
                self.settled.append(e.delivery)  # type: ignore[attr-defined]
            elif t is Violation:
                if explained_by_gap(e.kind, self.gaps):  # type: ignore[attr-defined]
                    self.after_gap.append(e)  # type: ignore[arg-type]
                    self.after_gap_total += 1
                else:
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

    @property
    def violations_total(self) -> int:
        """Violations found, the ones a gap explains left out (the engine counts them all)."""
        return self.connection.violations - self.after_gap_total

    def feed(self, side: str, item: Any, time: float) -> list[Event]:
        if isinstance(item, EndOfStream):
            return self.take(self.observer.transport_closed(side, time, item.how))
        if isinstance(item, CaptureNotice):
            if item.kind == "midstream":  # what was set up before it is taken as it comes
                self.connection.midstream = True
            if item.kind != "gap":
                return []
            self.gaps += 1
            self.gap_bytes[side] = self.gap_bytes.get(side, 0) + item.size
            self.connection.on_gap(side, item.size, time)
            return []
        return self.take(self.observer.feed(side, item, time))


class Destination:
    """The messages one side transferred to one destination on one 0-10 session. Their
    states (`Message.state`: "unsettled", "completed" or an outcome) are counted as the
    model changes them; the unsettled ones (neither completed nor given an outcome, as
    `pcap-dump` says) are kept in order for the link tab."""

    def __init__(self, session: int, sender: str, name: str) -> None:
        self.session = session  # the session's index in the model's `sessions`
        self.sender = sender
        self.name = name
        self.transfers = 0
        self.states: dict[str, int] = {}  # state -> messages in it
        self.messages: dict[int, Any] = {}  # command id -> amqp010 Message
        self.unsettled: dict[int, Any] = {}
        self._counted: dict[int, str] = {}  # command id -> the state it is counted in
        self.recent = Recent()  # transfers of the last second

    def update(self, msg: Any, time: float) -> None:
        cid = msg.command_id
        if self.messages.get(cid) is not msg:  # a new transfer (an id may come again after a wrap)
            self.transfers += 1
            self.messages[cid] = msg
            self.recent.add(time)
        old = self._counted.get(cid)
        if old is not None:
            self._count(old, -1)
        self._counted[cid] = msg.state
        self._count(msg.state, 1)
        if msg.state == "unsettled":
            self.unsettled[cid] = msg
        else:
            self.unsettled.pop(cid, None)

    def _count(self, state: str, n: int) -> None:
        left = self.states.get(state, 0) + n
        if left:
            self.states[state] = left
        else:
            self.states.pop(state, None)


class ConnWatch010:
    """An AMQP 0-10 connection: its assemblies fed to the 0-10 session model, its messages
    grouped by session, sending side and destination (a subscription's destination shows
    from its message.subscribe on)."""

    protocol = "AMQP 0-10"
    settled = ()  # nothing to share between checkpoints (see `clone_watch`)

    def __init__(self, key: str, label: str) -> None:
        from amqpcli.amqp010 import SessionObserver

        self.key = key
        self.label = label
        self.model = SessionObserver()
        self.frames = dict.fromkeys(SIDES, 0)  # assemblies per side
        self.controls: dict[tuple[str, str], Any] = {}  # (side, connection.* name) -> the last
        self.errors: dict[str, str] = {}  # side -> why the decoding of its bytes stopped
        self.stream_ends: dict[str, str] = {}  # side -> fin / rst
        self.destinations: dict[int, dict[tuple[str, str], Destination]] = {}  # by session
        self._session_on: dict[int, int] = {}  # channel -> its session's index in the model
        self._fed: list[tuple[str, Any, float]] = []  # every item, for `__deepcopy__`

    def __deepcopy__(self, memo: dict[int, Any]) -> ConnWatch010:
        """A replay checkpoint's copy: a new watch fed the same items. Decoded 0-10 values
        cannot be deep-copied (typed strings and numbers keep their type code) and need not
        be: the model never changes an item it was fed."""
        twin = ConnWatch010(self.key, self.label)
        for side, item, time in self._fed:
            twin.feed(side, item, time)
        return twin

    def feed(self, side: str, item: Any, time: float) -> list[Any]:
        from amqpcli.amqp010 import Assembly, StreamError
        from amqpcli.amqp010.session import CommandRecord, MessageEvent, peer_of

        self._fed.append((side, item, time))
        if isinstance(item, EndOfStream):
            self.stream_ends[side] = item.how
            return []
        if isinstance(item, StreamError):
            self.errors[side] = str(item.error)
            return []
        if isinstance(item, CaptureNotice):
            if item.kind == "gap":  # 0-10 has no resynchronisation (as pcap-dump)
                self.errors.setdefault(side, f"{item.size} bytes missing from the capture; "
                                             "the rest of that direction is not decoded")
            return []
        if not isinstance(item, Assembly):
            return []  # the protocol header
        self.frames[side] += 1
        if item.method.klass == "connection":
            self.controls[(side, item.method.qname)] = item
        model = self.model
        known = len(model.sessions)
        events = model.feed(item, time, side)
        for i in range(known, len(model.sessions)):  # attached, or made up for a stray command
            self._session_on[model.sessions[i].channel] = i
        for ev in events:
            if isinstance(ev, MessageEvent):
                msg = ev.message
                self._destination(msg.channel, msg.sender, msg.destination or "").update(msg, time)
            elif isinstance(ev, CommandRecord) and ev.qname == "message.subscribe":
                sub = model.subscriptions[-1]  # the one this command made
                self._destination(sub.channel, peer_of(ev.side), sub.destination)
        return events

    def _destination(self, channel: int, sender: str, name: str) -> Destination:
        session = self._session_on[channel]
        dests = self.destinations.setdefault(session, {})
        d = dests.get((sender, name))
        if d is None:
            d = dests[(sender, name)] = Destination(session, sender, name)
        return d

    def state(self) -> str:
        """As the connection.* controls left it: opening, opened, closing, closed."""
        sent = {name for _, name in self.controls}
        if "connection.close-ok" in sent:
            return "closed"
        if "connection.close" in sent:
            return "closing"
        return "opened" if "connection.open-ok" in sent else "opening"


KEEP_ENDED = 100  # ended connections a source shown as it comes keeps, by default


class Watch:
    """Connections by key, in the order they appeared."""

    def __init__(self, history: int = 1000, keep_ended: int | None = None) -> None:
        self.history = history
        self.keep_ended = keep_ended  # ended connections kept (None: all of them)
        self.ended: dict[str, None] = {}  # the keys of those kept, oldest first
        self.dropped = 0  # ended connections no longer kept
        self.conns: dict[str, ConnWatch | ConnWatch010] = {}
        self.labels: dict[str, str] = {}
        self.amqp010: set[str] = set()  # keys of the connections that speak AMQP 0-10
        self.untimed: set[str] = set()  # keys of the connections without times
        # keys of a frame-trace log's connections → the payloads it cut short (`log_cut`)
        self.cut: dict[str, dict[int, int]] = {}
        # links a connection ended with attached, for a later connection between the same
        # containers to resume (link recovery, as pcap-dump follows it)
        self.shelf = LinkShelf()

    def conn(self, key: str, label: str | None = None) -> ConnWatch | ConnWatch010:
        cw = self.conns.get(key)
        if cw is None:
            label = label or self.labels.get(key, key)
            if key in self.amqp010:
                cw = ConnWatch010(key, label)
            else:
                cw = ConnWatch(key, label, self.history)
                cw.timed = key not in self.untimed
                cw.log_cut = self.cut.get(key)
                model = cw.observer.connection
                # (named by its key, as a delivery's timeline names a frame: `g c3:18`)
                model.shelf, model.label = self.shelf, key
            self.conns[key] = cw
        return cw

    def engine_conn(self, key: str) -> ConnWatch | None:
        """The AMQP 1.0 connection under `key` (one the engine models), if there is one."""
        cw = self.conns.get(key)
        return cw if isinstance(cw, ConnWatch) else None

    def feed(self, rec: FrameRecord) -> list[Event]:
        return self.conn(rec.conn).feed(rec.side, rec.item, rec.time)

    def items(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        return list(self.conns.items())

    def end(self, key: str) -> None:
        """The connection under `key` ended (its transport is gone; no item of it will
        come again): the oldest ended one goes once more than `keep_ended` are kept."""
        if self.keep_ended is None or key not in self.conns or key in self.ended:
            return
        self.ended[key] = None
        while len(self.ended) > self.keep_ended:
            old = next(iter(self.ended))
            del self.ended[old]
            del self.conns[old]
            self.labels.pop(old, None)
            self.amqp010.discard(old)
            self.cut.pop(old, None)
            self.dropped += 1

    def counts(self) -> str:
        """The status line's connection count: how many are shown, and how many ended
        ones no longer are."""
        text = f"{len(self.conns)} connection(s)"
        if self.dropped:
            text += f", {self.dropped} ended earlier not kept"
        return text


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
