"""Frames tab: every frame, one line each, with a filter and a freeze that loses nothing.

The log draws only the lines on screen (Textual's line API), so a store of hundreds of
thousands of frames costs nothing until it is looked at. With a filter, matching sequence
numbers are collected incrementally, a bounded number and a few milliseconds per refresh,
so typing a filter over a long capture never blocks the UI.

Filter syntax (all terms must hold, case-insensitive):
  word        the frame's line contains `word`        -word   it does not
  side:NAME   sent by that side (client / server)     ch:N    on channel N
  conn:TEXT   the connection's key contains TEXT
  -side:NAME, -ch:N, -conn:TEXT   the opposite (validated as the term itself)

A term that cannot hold (`side:bogus`, `ch:x`, `conn:` with nothing after it) is not
applied: the filter keeps the other terms, and `FrameFilter.problems` says what was wrong
with it (the app shows it under the filter while typing and as a notice on Enter).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.validation import ValidationResult, Validator

from amqpcli.render.types import quoted
from amqpcli.tui.store import FrameRecord

_PLAIN = Style()

SCAN_PER_REFRESH = 20_000  # frames tested against a filter per refresh, at most...
SCAN_BUDGET = 0.012  # ...and seconds spent on it: a key press never waits on a long scan


class FrameSeq(Protocol):
    @property
    def first_seq(self) -> int: ...
    @property
    def end_seq(self) -> int: ...
    def get(self, seq: int) -> FrameRecord | None: ...


Formatter = Callable[[FrameRecord], Text]


@dataclass(slots=True)
class FrameFilter:
    words: list[str] = field(default_factory=list)
    nots: list[str] = field(default_factory=list)
    side: str | None = None
    channel: int | None = None
    conn: str | None = None
    text: str = ""

    problems: list[str] = field(default_factory=list)  # terms not applied, and why

    not_sides: list[str] = field(default_factory=list)  # -side:NAME, -ch:N, -conn:TEXT
    not_channels: list[int] = field(default_factory=list)
    not_conns: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> FrameFilter:
        """The filter `text` says; a term that cannot hold is ignored, and said in
        `problems` (`side:` takes client or server or the start of one, `ch:` a channel
        number, `conn:` some text). A leading `-` negates a structured term as it does a
        word (`-side:server`, `-ch:0`, `-conn:c1`), validated as the term itself."""
        f = cls(text=text.strip())
        for typed in text.split():
            term = typed.lower()
            negated = term.startswith("-") and term[1:].startswith(("side:", "ch:", "conn:"))
            if negated:
                term = term[1:]
            if term.startswith("side:"):
                side = term[5:]
                if side and ("client".startswith(side) or "server".startswith(side)):
                    if negated:
                        f.not_sides.append(side)
                    else:
                        f.side = side
                else:
                    f.problems.append(f"{quoted(typed)} ignored: side: takes client or server")
            elif term.startswith("ch:"):
                n = term[3:]
                if n.isascii() and n.isdigit() and int(n) <= 0xFFFF:
                    if negated:
                        f.not_channels.append(int(n))
                    else:
                        f.channel = int(n)
                else:
                    f.problems.append(f"{quoted(typed)} ignored: ch: takes a channel number (0-65535)")
            elif term.startswith("conn:"):
                if term[5:]:
                    if negated:
                        f.not_conns.append(term[5:])
                    else:
                        f.conn = term[5:]
                else:
                    f.problems.append(f"{quoted(typed)} ignored: conn: takes text the connection's key contains")
            elif term.startswith("-") and len(term) > 1:
                f.nots.append(term[1:])
            else:
                f.words.append(term)
        return f

    @property
    def empty(self) -> bool:
        return not (self.words or self.nots or self.side or self.conn or self.channel is not None
                    or self.not_sides or self.not_channels or self.not_conns)

    def matches(self, rec: FrameRecord, line: Callable[[FrameRecord], str]) -> bool:
        if self.side is not None and not rec.side.lower().startswith(self.side):
            return False
        if self.conn is not None and self.conn not in rec.conn.lower():
            return False
        if self.channel is not None and getattr(rec.item, "channel", None) != self.channel:
            return False
        if self.not_sides and any(rec.side.lower().startswith(s) for s in self.not_sides):
            return False
        if self.not_conns and any(c in rec.conn.lower() for c in self.not_conns):
            return False
        if self.not_channels and getattr(rec.item, "channel", None) in self.not_channels:
            return False
        if self.words or self.nots:
            s = line(rec).lower()
            if any(w not in s for w in self.words) or any(w in s for w in self.nots):
                return False
        return True


class FilterCheck(Validator):
    """The filter input's validator: what `FrameFilter.parse` finds wrong (the input's
    `-invalid` class, kept as it loses and regains focus)."""

    def validate(self, value: str) -> ValidationResult:
        problems = FrameFilter.parse(value).problems
        return self.failure("; ".join(problems)) if problems else self.success()


class FrameLog(ScrollView, can_focus=True):
    """A virtual list over a `FrameSeq`; call `sync()` at the refresh rate.

    It follows new frames (stays at the bottom) until the user scrolls up; End follows
    again. Freezing keeps the lines on screen while new frames are counted."""

    DEFAULT_CSS = "FrameLog { height: 1fr; }"
    BINDINGS: ClassVar = [
        Binding("up", "line(-1)", show=False),
        Binding("down", "line(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "top", show=False),
        Binding("end", "bottom", show=False),
    ]

    def __init__(self, formatter: Formatter, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.formatter = formatter
        self.frames: FrameSeq | None = None
        self.filter = FrameFilter()
        self.frozen = False  # shows what was there when frozen; new frames keep arriving
        self._frozen_at = 0  # end_seq when frozen: a filter set meanwhile scans up to it
        self._end = 0  # end_seq covered by the view
        self._index: list[int] = []  # matching seqs when a filter is on
        self._scanned = 0  # seqs below this were tested against the filter
        self._cache: OrderedDict[int, tuple[Text, str]] = OrderedDict()
        self._lines = 0
        self.follow = True

    # -- model -----------------------------------------------------------------------------

    def attach(self, frames: FrameSeq) -> None:
        self.frames = frames
        self._reset()

    def set_filter(self, text: str) -> None:
        self.filter = FrameFilter.parse(text)
        self._reset()
        self.sync()

    def set_frozen(self, frozen: bool) -> None:
        self.frozen = frozen
        if frozen:  # what is there now, every frame of it (a filter's scan goes on)
            self._frozen_at = self.frames.end_seq if self.frames is not None else self._end
        else:
            self.sync()

    def _reset(self) -> None:
        self._index = []
        self._scanned = self.frames.first_seq if self.frames is not None else 0
        self._end = self._scanned

    @property
    def scanning(self) -> bool:
        """A filter's scan has frames still to test (it goes on at the next refreshes)."""
        return (self.frames is not None and not self.filter.empty
                and self._scanned < self._until())

    def _until(self) -> int:
        """Where the view may reach: the end of the frames, or where it was frozen."""
        assert self.frames is not None
        end = self.frames.end_seq
        return min(end, self._frozen_at) if self.frozen else end

    @property
    def pending(self) -> int:
        """Frames that arrived while frozen (not yet in the view)."""
        if self.frames is None:
            return 0
        return max(0, self.frames.end_seq - (self._frozen_at if self.frozen else self._end))

    @property
    def seqs(self) -> list[int]:
        """The sequence numbers the view holds, in order (for tests and export)."""
        if self.frames is None:
            return []
        if self.filter.empty:
            return list(range(max(self.frames.first_seq, self._end - self._lines), self._end))
        return list(self._index)

    def line_text(self, rec: FrameRecord) -> str:
        return self._format(rec)[1]

    def _format(self, rec: FrameRecord) -> tuple[Text, str]:
        hit = self._cache.get(rec.seq)
        if hit is None:
            t = self.formatter(rec)
            hit = (t, t.plain)
            self._cache[rec.seq] = hit
            if len(self._cache) > 4096:
                self._cache.popitem(last=False)
        return hit

    def sync(self) -> None:
        frames = self.frames
        if frames is None:
            return
        first, end = frames.first_seq, frames.end_seq
        if end < self._end or end < self._scanned:  # a replay went back
            self._index = [s for s in self._index if s < end]
            self._scanned = min(self._scanned, end)
            self._cache.clear()
        if self.frozen:
            end = min(end, self._frozen_at)
        if self.filter.empty:
            lines = end - first
            self._scanned = end
        else:
            if self._index and self._index[0] < first:
                self._index = [s for s in self._index if s >= first]
            scan_from = max(self._scanned, first)
            scan_to = min(end, scan_from + SCAN_PER_REFRESH)
            f, get, text = self.filter, frames.get, self.line_text
            index = self._index
            deadline = time.perf_counter() + SCAN_BUDGET
            seq = scan_from
            while seq < scan_to:
                # a slice at a time, then the clock: formatting a frame is the cost
                for s in range(seq, min(scan_to, seq + 64)):
                    rec = get(s)
                    if rec is not None and f.matches(rec, text):
                        index.append(s)
                seq = min(scan_to, seq + 64)
                if time.perf_counter() >= deadline:
                    break
            scan_to = seq
            self._scanned = scan_to
            end = scan_to
            lines = len(self._index)
        changed = lines != self._lines or end != self._end
        self._end = end
        self._lines = lines
        if changed:
            self.virtual_size = Size(max(self.size.width, 200), lines)
            if self.follow and not self.frozen:
                self.scroll_end(animate=False, immediate=True)
            self.refresh()

    # -- keys ------------------------------------------------------------------------------

    def _moved(self) -> None:
        self.follow = self.scroll_y >= self.max_scroll_y

    def action_line(self, n: int) -> None:
        self.scroll_to(y=self.scroll_y + n, animate=False, immediate=True)
        self._moved()

    def action_page(self, n: int) -> None:
        self.scroll_to(y=self.scroll_y + n * max(1, self.size.height - 1), animate=False, immediate=True)
        self._moved()

    def action_top(self) -> None:
        self.scroll_home(animate=False, immediate=True)
        self.follow = False

    def action_bottom(self) -> None:
        self.follow = True
        self.scroll_end(animate=False, immediate=True)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def on_resize(self) -> None:
        if self.follow and not self.frozen:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    # -- drawing ---------------------------------------------------------------------------

    def _seq_at(self, line: int) -> int | None:
        if self.frames is None or not 0 <= line < self._lines:
            return None
        if self.filter.empty:
            return self._end - self._lines + line
        return self._index[line] if line < len(self._index) else None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        seq = self._seq_at(scroll_y + y)
        rec = None if seq is None or self.frames is None else self.frames.get(seq)
        if rec is None:
            return Strip.blank(width, self.rich_style)
        text = self._format(rec)[0]
        if self.filter.words:  # show where the search terms matched
            text = text.copy()
            text.highlight_words(self.filter.words, style="reverse", case_sensitive=False)
        # Rich gives unstyled text no style at all; Textual's NO_COLOR filter needs one
        segments = [
            Segment(s.text.replace("\n", " "), s.style or _PLAIN)
            for s in text.render(self.app.console)
        ]
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        return strip.extend_cell_length(width, _PLAIN)
