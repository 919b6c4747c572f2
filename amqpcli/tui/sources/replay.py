"""Replay of a capture file: read once into frames, then play, pause, step and jump.

The file is read by the capture package (TCP reassembly, flows) and cut into frames by the
dissect pipeline's readers, one per flow and direction, in a worker thread; the UI shows
"loading" meanwhile. The frames then drive a `ReplayController` whose model is a `Watch`
(one engine observer per connection). Playing follows the capture's own clock scaled by
the speed, with idle stretches longer than `MAX_IDLE` seconds shortened so a capture with a
minute of heartbeats does not look frozen; speed 0 means as fast as possible. A frame-trace
log without times (proton's: no connection of it has any) has no clock to follow: it plays
`UNTIMED_FRAME_RATE` frames a second, times the speed, and its times show as unknown. Frames
with times and without together (a router's log and proton's trace) play in the order
they were read, as pcap-dump prints them, by a clock that never goes back
(`replay_clock`).
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from amqpcli.capture.files import ExpandedPaths, found_paths
from amqpcli.errors import Exit, UserError
from amqpcli.tui.adapter import CaptureRates
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.replay import ReplayController
from amqpcli.tui.sources.base import Source
from amqpcli.tui.sources.framing import CaptureFramer
from amqpcli.tui.store import FrameRecord
from amqpcli.tui.watch import (
    NOT_FRAMES,
    ConnWatch,
    ConnWatch010,
    Watch,
    clone_watch,
    feed_record,
)

if TYPE_CHECKING:
    from amqpcli.tui.app import AmqpTui

_CONN_FRAME = re.compile(r"(c\d+)\s*(?::|\s)\s*(?:frame\s*)?(\d+)", re.ASCII)  # c3:18, c3 frame 18
# a time to go to: t+S, +S or Ss (t+Ss too), S plain ASCII seconds such as 2 or 2.5
_SECONDS = re.compile(r"(?:t\+|\+)?([0-9]+(?:\.[0-9]+)?)s?")
MAX_IDLE = 1.0  # seconds of wall time an idle stretch of the capture may take at most
UNTIMED_FRAME_RATE = 10.0  # records a second a replay without times plays at speed 1
BATCH = 250  # records fed per step of the play loop; the lock is free between steps,
# so the views wait at most one step (tens of milliseconds) for the model


@dataclass
class Loaded:
    records: list[FrameRecord] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    amqp010: set[str] = field(default_factory=set)  # keys of the AMQP 0-10 connections
    untimed: set[str] = field(default_factory=set)  # keys of the connections without times
    # a frame-trace log's connections → the payloads it cut short (`ConnWatch.log_cut`)
    cut: dict[str, dict[int, int]] = field(default_factory=dict)
    other_flows: dict[str, int] = field(default_factory=dict)  # TCP flows not AMQP, by protocol
    encrypted: int = 0  # AMQP connections not shown: encrypted


# a path, an open file (standard input), or several paths (read as pcap-dump reads the
# files it is given: captures merged by time, frame-trace logs one after the other)
Capture = str | os.PathLike[str] | BinaryIO | list[str]


def capture_name(path: Capture) -> str:
    """How a capture is named on the screen and in errors."""
    if isinstance(path, list):
        return ", ".join(path)
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    return "standard input"


def capture_files(path: Capture) -> list[str] | list[BinaryIO]:
    """The capture files `path` names: itself, or a folder's capture files (found as
    `pcap-dump` finds them: `amqpcli.pipeline.inputs.expand`), read as one capture
    merged by time; an open file is read as it is; several paths, each's in their order."""
    if isinstance(path, list):
        parts = [capture_files(p) for p in path]
        return ExpandedPaths((cast("str", f) for part in parts for f in part),
                             (f for part in parts for f in found_paths(part)))
    if not isinstance(path, (str, os.PathLike)):
        return [path]
    if os.path.isdir(path):
        from amqpcli.pipeline.inputs import expand

        return expand([os.fspath(path)])
    if not os.path.exists(path):
        raise UserError(f"{os.fspath(path)}: no such file", Exit.USAGE)
    return [os.fspath(path)]


class CaptureLoader:
    """Reads a capture (a file, or a folder's files merged by time) into a `Loaded`: every
    AMQP frame (1.0 frames, 0-10 assemblies) in time order, with its connection and side.
    `read(first=True)` stops at the first frame, so a capture with nothing readable is
    known before anything else is done; `read()` then goes on to the end."""

    def __init__(self, path: Capture, ports: Collection[int] = ()) -> None:
        self.path = path
        self.out = Loaded()
        records = self.out.records

        def add(key: str, side: str, t: float, item: Any) -> None:
            records.append(FrameRecord(len(records), t, key, side, item))

        self.framer = CaptureFramer(add, self.out.notes.append, ports)
        self._events: Iterator[Any] | None = None
        self.done = False

    def read(self, first: bool = False) -> Loaded:
        """Read on, to the end (`first`: to the first frame). A capture damaged before
        its first frame, or no capture at all, raises its `CaptureError`; a damaged one
        with frames before the damage is read up to it (a note says where), as pcap-dump
        reads it."""
        from amqpcli.capture import CaptureError

        out, framer = self.out, self.framer
        records = out.records
        try:
            if self._events is None:
                self._events = self._open(capture_files(self.path))
            if not self.done:
                for ev in self._events:
                    framer.event(ev)
                    if first and records:
                        return out
                self.done = True
        except CaptureError as e:
            self.done = True
            if not records:
                raise
            out.notes.append(f"{e}: what could be read is shown")
        except OSError as e:  # a file that cannot be opened or read
            self.done = True
            name = e.filename if e.filename is not None else capture_name(self.path)
            raise UserError(f"{name}: {e.strerror or e}", Exit.USAGE) from None
        finally:
            out.labels = framer.labels
            out.amqp010 = framer.amqp010
            out.untimed = framer.untimed
            out.cut = framer.cut
            out.other_flows = framer.other_flows
            out.encrypted = framer.encrypted
        return out

    def _open(self, files: list[str] | list[BinaryIO]) -> Iterator[Any]:
        """The events of the files, told capture or frame-trace log as `pcap-dump` tells
        them, by the same helpers (`amqpcli.dissect.pipeline`): a file read once (a
        device) peeked at once; text that is neither, or nothing, is pcap-dump's error
        (`not a capture file or frame-trace log: …`), not the capture reader's."""
        from amqpcli.capture import read_capture
        from amqpcli.capture.files import is_capture_file, opened_once

        # (the files found in a folder, whose failure to open is a note, not an error:
        # the list made below no longer says which they are)
        found = found_paths(files)
        srcs = [opened_once(f) for f in files]
        if not all(is_capture_file(f) for f in srcs):
            # (the log reader only for what may be a log: captures start without it)
            from amqpcli.capture.tracelog import are_trace_logs, not_a_log_error, read_trace_logs

            if are_trace_logs(srcs):  # frame-trace logs
                return read_trace_logs(srcs, warn=self.out.notes.append)
            error = not_a_log_error(srcs[0]) if len(srcs) == 1 else None
            if error is not None:
                raise error
        return read_capture(srcs, ports=self.framer.ports, found=found)


def no_amqp(loaded: Loaded | CaptureFramer) -> str:
    """What a capture without AMQP frames holds, in pcap-dump's words (from what was
    loaded, or from the framer that read it)."""
    others = loaded.other_flows
    flows = sum(others.values())
    what = (f"{flows} TCP flow{'' if flows == 1 else 's'}: "
            + ", ".join(f"{n} {p}" for p, n in sorted(others.items()))) if others else (
        "no TCP flows")
    if loaded.encrypted:
        n = loaded.encrypted
        what = f"{n} encrypted connection{'s' if n > 1 else ''}" + (
            f", {what}" if others else "")
    return f"no AMQP traffic in this capture ({what})"


def load_capture(path: Capture, ports: Collection[int] = ()) -> Loaded:
    """Every AMQP frame of a capture (a file, or a folder's capture files), in time
    order, with its connection and side (see `CaptureLoader`); of frame-trace logs, in
    the order they were read."""
    return CaptureLoader(path, ports).read()


def replay_clock(records: list[FrameRecord], untimed: Collection[str]
                 ) -> tuple[list[float] | None, list[float] | None]:
    """The clock a replay plays by, and the time its ages are measured against, by
    position: (None, None) for a capture, whose records' own times are both (in time
    order). A replay with frames of connections without times (a proton frame trace,
    alone or beside a router's log) keeps its records in the order they were read, as
    pcap-dump prints them (its files one after the other, each in its lines' order), and:

    * plays by a clock that starts at 0 and never goes back: a record without a time
      comes 1/`UNTIMED_FRAME_RATE` s (at speed 1) after the record before it; a timed one
      after the record before it by as much as its time is after the last timed record's
      (0 if it is not after it; a step after untimed records if it is the first timed
      one), so the timed frames keep their spacing and the untimed ones play at a steady
      rate in between (a log of no times at all: frame i at i/`UNTIMED_FRAME_RATE`);
    * measures ages and rates against the time of the last timed record played (before
      the first, that record's time): the untimed frames do not age the timed ones."""
    if not records:
        return None, None
    times = [r.time for r in records]
    if not untimed and all(a <= b for a, b in itertools.pairwise(times)):
        return None, None
    step = 1 / UNTIMED_FRAME_RATE
    clock: list[float] = []
    timed_now: list[float] = []
    last: float | None = None  # the time of the last timed record
    first = next((r.time for r in records if r.conn not in untimed), 0.0)
    at = 0.0
    for i, rec in enumerate(records):
        if rec.conn not in untimed and last is not None:
            at += max(0.0, rec.time - last)
        elif i:
            at += step
        if rec.conn not in untimed:
            last = rec.time
        clock.append(at)
        timed_now.append(first if last is None else last)
    if last is None:  # (no times at all: nothing is aged)
        return clock, None
    # (position p: the first p records played; before any, the first timed time)
    return clock, [first, *timed_now]


class ReplayFrames:
    """The frame log's view of a replay: the records up to the current position."""

    def __init__(self, source: ReplaySource) -> None:
        self.source = source

    @property
    def first_seq(self) -> int:
        return 0

    @property
    def end_seq(self) -> int:
        c = self.source.controller
        return 0 if c is None else c.position

    def get(self, seq: int) -> FrameRecord | None:
        c = self.source.controller
        if c is None or not 0 <= seq < c.position:
            return None
        return c.records[seq]


class ReplaySource(Source):
    kind = "replay"

    def __init__(
        self,
        path: Capture | None = None,
        *,
        loaded: Loaded | None = None,
        ports: Collection[int] = (),
        history: int = 1000,
        speed: float = 1.0,
        interval: int = 5000,
        autoplay: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        super().__init__()
        self.rates = CaptureRates()  # rates in capture time, not in refreshes
        # The player's wall clock and its wait between steps (a pause ends a wait early);
        # tests give a fake clock whose sleep moves it on.
        self.clock = clock
        self._sleep = sleep
        self.path = path
        self.ports = ports
        self.history = history
        self.speed = speed
        self.interval = interval
        self.autoplay = autoplay
        self.controller: ReplayController[Watch] | None = None
        self.frames_before: list[int] = [0]  # see _use
        self._conn_frames: dict[str, tuple[list[int], list[int]]] = {}  # see conn_frames
        self.loaded: Loaded | None = None
        self.playing = False
        self.finished = threading.Event()  # set when a play reaches the end
        self._play_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._frames = ReplayFrames(self)
        self.title = f"replay {capture_name(path)}" if path is not None else "replay"
        self.load_error: str | None = None
        self._loader: CaptureLoader | None = None
        self._timed_now: list[float] | None = None  # see replay_clock
        if loaded is not None:
            self._use(loaded)

    # -- loading ------------------------------------------------------------------------------

    def open(self) -> None:
        """Read the capture up to its first frame: one with nothing readable (no capture,
        damaged before any frame) raises its error here, before the screen opens, as
        `pcap-dump` exits on it. The rest is read by `load`."""
        if self.controller is None and self.path is not None and self._loader is None:
            self._loader = CaptureLoader(self.path, self.ports)
            self._loader.read(first=True)

    def load(self) -> None:
        """Read the capture now (the app does this in a worker)."""
        if self.controller is None and self.path is not None:
            if self._loader is None:
                self._loader = CaptureLoader(self.path, self.ports)
            self._use(self._loader.read())

    def _use(self, loaded: Loaded) -> None:
        self.loaded = loaded
        labels, amqp010, untimed = loaded.labels, loaded.amqp010, loaded.untimed
        history = self.history

        def new_model() -> Watch:
            w = Watch(history)
            w.labels = labels
            w.amqp010 = amqp010
            w.untimed = untimed
            w.cut = loaded.cut
            return w

        pace, self._timed_now = replay_clock(loaded.records, untimed)
        c = ReplayController(loaded.records, new_model, feed_record, interval=self.interval,
                             clone=clone_watch, times=pace)
        c.lock = self.lock
        # Frames counted as pcap-dump counts them: a stream's end (FIN, RST) and bytes the
        # capture lost are records of the replay but no frames. frames_before[i]: frames
        # among the first i records.
        before = [0] * (len(loaded.records) + 1)
        n = 0
        for i, rec in enumerate(loaded.records):
            if not isinstance(rec.item, NOT_FRAMES):
                n += 1
            before[i + 1] = n
        self.frames_before = before
        self.controller = c

    @property
    def frames(self) -> ReplayFrames:  # type: ignore[override]
        return self._frames

    @property
    def untimed(self) -> Collection[str]:
        loaded = self.loaded
        return () if loaded is None else loaded.untimed

    @property
    def timed(self) -> bool:
        """Whether the replay has a clock: some connection of it has times (a capture's
        all have; a proton frame trace's none)."""
        loaded = self.loaded
        return loaded is None or not loaded.untimed or len(loaded.untimed) < len(loaded.labels)

    def start(self, app: AmqpTui) -> None:
        super().start(app)
        if self.controller is None:
            app.run_worker(self._load_worker, thread=True, name="load-capture", group="load")
        else:
            self._loaded_ok()

    def _load_worker(self) -> None:
        try:
            self.load()
        except UserError as e:
            self.load_error = str(e)
            if self.app is not None:
                self.app.post_message(SourceFailed(e))
            return
        self._loaded_ok()

    def _loaded_ok(self) -> None:
        if self.app is not None and self.loaded is not None:
            for n in self.loaded.notes:
                self.app.post_message(SourceNotice(n, "warning"))
            if not self.loaded.records:
                self.app.post_message(SourceNotice(no_amqp(self.loaded), "warning"))
        if self.autoplay:
            self.play()

    def stop(self) -> None:
        self.pause()

    # -- reading ------------------------------------------------------------------------------

    def connections(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        c = self.controller
        return [] if c is None else c.model.items()

    def now(self) -> float:
        """What ages and rates are measured against: the time of the frame shown, or, in
        a replay whose frames are not all timed, of the last timed frame played (see
        `replay_clock`): a frame without a time does not move it."""
        c = self.controller
        if c is None:
            return time.time()
        timed_now = self._timed_now
        return c.current_time if timed_now is None else timed_now[c.position]

    def status(self) -> str:
        c = self.controller
        if c is None:
            return self.load_error or f"{self.title}: loading…"
        text = f"{self.title}: {self.frames_before[-1]} frames, {len(c.model.conns)} connection(s)"
        untimed = self.loaded.untimed if self.loaded is not None else ()
        if untimed:
            text += ", times unknown" if not self.timed else f", {len(untimed)} without times"
        return text

    def bar_state(self) -> tuple[int, int, float | None, float | None, float, bool]:
        """Where the replay is: frame, frames, seconds played and in all (None: a replay
        without times), speed, playing."""
        c = self.controller
        if c is None:
            return (0, 0, 0.0, 0.0, self.speed, False)
        if not self.timed:
            return (self.frames_before[c.position], self.frames_before[-1], None, None,
                    self.speed, self.playing)
        return (self.frames_before[c.position], self.frames_before[-1],
                c.current_time - c.start_time, c.end_time - c.start_time, self.speed, self.playing)

    def conn_frames(self, key: str) -> tuple[list[int], list[int]]:
        """Connection `key`'s frames as `pcap-dump` numbers them (its JSON `frame`, its
        violation lines): (numbers, records), ascending, where the frame numbered
        `numbers[i]` is record `records[i]`. AMQP 1.0: every frame and undecodable frame
        of the connection, both directions, from 1 (a protocol header is none). AMQP 0-10:
        an assembly is numbered by its last frame on the wire."""
        cached = self._conn_frames.get(key)
        if cached is not None:
            return cached
        c = self.controller
        numbers: list[int] = []
        positions: list[int] = []
        if c is not None:
            from amqpcli.amqp010 import Assembly
            from amqpcli.codec.frames import Frame, FrameError

            n = 0
            for i, rec in enumerate(c.records):
                if rec.conn != key:
                    continue
                item = rec.item
                if isinstance(item, (Frame, FrameError)):
                    n += 1
                elif isinstance(item, Assembly):
                    n += item.frames
                else:
                    continue
                numbers.append(n)
                positions.append(i)
        self._conn_frames[key] = (numbers, positions)
        return numbers, positions

    def parse_goto(self, spec: str) -> int:
        """`N` → frame N of the capture (1-based, as the bar shows); `cK:N` (`cK N`,
        `cK frame N`) → frame N of connection cK, as its timelines and violations number
        it; `t+S` / `+S` → S seconds after the start; `S s` → the same."""
        c = self.controller
        if c is None:
            raise ValueError("the capture is still loading")
        s = spec.strip().lower()
        m = _CONN_FRAME.fullmatch(s)
        if m is not None:
            return self._conn_goto(m[1], int(m[2]))
        is_time = s.startswith(("t+", "+")) or s.endswith("s")
        if is_time and not self.timed:  # `t+2.5`, `+2.5` and `2.5s` alike
            raise ValueError(f"{spec}: the log has no times to go by (proton's frame trace "
                             "carries none): give a frame number")
        bad = ValueError(f"not a frame number or t+seconds: {spec!r}")
        if is_time:
            # ASCII digits only: no sign, `1_000`, spaces, nan, inf or other scripts' digits
            m = _SECONDS.fullmatch(s)
            if m is None:
                raise bad
            secs = float(m[1])
            if not math.isfinite(secs):  # more digits than a float holds
                raise bad
            return c.index_at_time(c.start_time + secs)
        if not (s.isascii() and s.isdigit()):  # a sign, `1_000`, spaces, `١٢`
            raise bad
        n = int(s)
        total = self.frames_before[-1]
        if n > total:
            raise ValueError(f"the capture has {total} frames: no frame {n}")
        if n == total:
            return len(c)  # the end, with the streams' ends after the last frame
        # Just after frame n (an end of stream right after it stays to be stepped over).
        return bisect.bisect_left(self.frames_before, max(0, n))

    def _conn_goto(self, key: str, n: int) -> int:
        """Just after frame `n` of connection `key` (numbered from 1, as its timelines
        number it: 0 or past its last frame is refused)."""
        c = self.controller
        assert c is not None
        if key not in (self.loaded.labels if self.loaded is not None else {}):
            known = ", ".join(self.loaded.labels) if self.loaded is not None else ""
            raise ValueError(f"no connection {key} in this capture"
                             + (f" (it has {known})" if known else ""))
        numbers, positions = self.conn_frames(key)
        if not numbers:
            raise ValueError(f"{key} has no frames")
        if n > numbers[-1]:
            raise ValueError(f"{key} has {numbers[-1]} frames: no frame {n}")
        if n <= 0:
            raise ValueError(f"{key}'s frames are numbered from 1: no frame {n}")
        return positions[bisect.bisect_left(numbers, n)] + 1

    # -- moving -------------------------------------------------------------------------------

    def step(self, n: int) -> int:
        """`n` frames forward (back when negative): just after the frame `n` on from the
        one shown, as `g` goes there. Records that are no frames (a stream's end, bytes
        the capture lost) are played on the way, never stopped at, so each step changes
        the frame; the last frame takes the streams' ends after it along."""
        self.pause()
        c = self.controller
        if c is None:
            return 0
        before = self.frames_before
        frame = min(max(before[c.position] + n, 0), before[-1])
        if frame >= before[-1] and n > 0:
            return c.seek(len(c))
        return c.seek(bisect.bisect_left(before, frame))

    def seek(self, target: int) -> int:
        self.pause()
        c = self.controller
        return 0 if c is None else c.seek(target)

    def scale_speed(self, factor: float) -> None:
        if self.speed <= 0:
            self.speed = 1.0
        self.speed = min(1024.0, max(1 / 64, self.speed * factor))
        self._restart_clock = True

    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def play(self) -> None:
        c = self.controller
        if c is None or self.playing:
            return
        if c.at_end:
            c.seek(0)
        self.playing = True
        self.finished.clear()
        self._stop.clear()
        self._play_thread = threading.Thread(target=self._play_loop, name="replay-play", daemon=True)
        self._play_thread.start()

    def pause(self) -> None:
        self._stop.set()
        t = self._play_thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=5)
        self._play_thread = None
        self.playing = False

    _restart_clock = False

    def _play_loop(self) -> None:
        c = self.controller
        assert c is not None
        stop = self._stop
        clock = self.clock
        sleep = self._sleep or stop.wait
        try:
            wall0, cap0 = clock(), c.current_time
            while not stop.is_set() and not c.at_end:
                if self.speed <= 0:
                    c.step(BATCH)
                    continue
                if self._restart_clock:
                    self._restart_clock = False
                    wall0, cap0 = clock(), c.current_time
                target = cap0 + (clock() - wall0) * self.speed
                if c.play_until(target, limit=BATCH):
                    continue
                nxt = c.next_time
                idle = (nxt - target) / self.speed
                if idle > MAX_IDLE:  # shorten long idle stretches
                    cap0 += nxt - target - MAX_IDLE * self.speed
                sleep(min(0.05, max(0.0, idle)))
        finally:
            self.playing = False
            if c.at_end:
                self.finished.set()
