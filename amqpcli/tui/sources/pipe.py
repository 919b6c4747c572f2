"""A capture read as it is written into a pipe: `amqp tui --pcap FIFO`, `--pcap -`.

`ssh host tcpdump -U -w - port 5672 | amqp tui --pcap -`, or `mkfifo f; amqp tui --pcap f`
with `dumpcap -w f` writing into it: the capture is read as the live source reads
dumpcap's pipe (`amqpcli.capture.live.read_stream`, the same reading loop:
`StreamingSource`), each packet's frames shown as soon as it arrives. There is nothing
to replay: no speed, no steps, no jumps. The writer closing the pipe ends the capture;
everything read stays on screen.

The pipe is read through a `PipeStream`: a named pipe is opened without waiting for its
writer, and every wait for input ends when the source stops, so `q` and Ctrl-C quit at
once whether or not anyone writes.

What the pipe carries is told as `amqp pcap-dump` tells it, by the same helpers: its
first bytes are peeked at once (`amqpcli.capture.files.ReadOnce`), then read from the
start. A frame-trace log (`PN_TRACE_FRM=1 ./client 2>&1 >/dev/null | amqp tui --pcap -`:
proton writes its trace to stderr; a router's log, `amqp tui --pcap <(…)`) is shown line
by line as it is written, as a capture is; its connections without times show `-` for
their times. Text that is neither is the error pcap-dump gives (`not a capture file or
frame-trace log: …`).

Times are the capture's: ages and rates are measured against the time of the last frame
read, moved on by the wall clock while the capture goes on (a capture written into the
pipe from a file, older than now, still has ages of milliseconds), and held at the last
frame once the capture ended, as a replay at its end holds them.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from typing import Any

from amqpcli.capture.files import PEEK_BYTES, CaptureError, PipeStream, ReadOnce, Stopped
from amqpcli.errors import Exit, UserError
from amqpcli.tui.adapter import CaptureRates
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.sources.live import StreamingSource
from amqpcli.tui.watch import KEEP_ENDED, NOT_FRAMES

STDIN_NAME = "standard input"


class PipeSource(StreamingSource):
    thread_name = "pipe-capture"

    def __init__(self, source: str | int, *, name: str | None = None,
                 ports: Collection[int] = (), history: int = 1000,
                 frames: int = 200_000, keep_ended: int = KEEP_ENDED) -> None:
        """`source`: the named pipe's path, or an open descriptor to read (and close)."""
        super().__init__(ports=ports, history=history, frames=frames, keep_ended=keep_ended)
        self.source = source
        self.name = name or (source if isinstance(source, str) else STDIN_NAME)
        self.title = f"streaming from {self.name}"
        self.rates = CaptureRates()  # the capture's rates, by the frames' own times
        self.frames_read = 0  # as pcap-dump counts frames (no stream ends, no gaps)
        self.ended = False  # the writer closed the pipe (or it was damaged)
        self.damage: str | None = None  # what ended a damaged capture after frames
        self._stream: PipeStream | None = None
        self._clock: tuple[float, float] | None = None  # (last frame's time, monotonic then)
        self.what = "capture"  # what the pipe carries: "capture", or "log" (frame-trace log)

    def _events(self) -> Iterator[Any]:
        from amqpcli.capture.live import read_stream
        from amqpcli.capture.tracelog import is_trace_log, not_a_log_error, read_trace_logs

        stream = PipeStream(self.source, self._stop, name=self.name)
        self._stream = stream
        # (peeked at once, as pcap-dump peeks at a named pipe, then read from the start;
        # the reader closes it)
        f = ReadOnce(stream, PEEK_BYTES)
        try:
            if is_trace_log(f):
                self.what = "log"
                yield from read_trace_logs([f], warn=self._note)
                return
            error = not_a_log_error(f)  # (text: neither capture nor log, in its words)
            if error is not None:
                raise error
            yield from read_stream(f, ports=sorted(self.framer.ports))
        finally:
            f.close()

    def _add(self, key: str, side: str, t: float, item: Any) -> None:
        super()._add(key, side, t, item)
        if not isinstance(item, NOT_FRAMES):
            self.frames_read += 1
        last = self._clock[0] if self._clock is not None else t
        self._clock = (max(t, last), time.monotonic())

    def _ended(self) -> None:
        with self.lock:
            self.ended = True
        self._post(SourceNotice(f"{self.name}: the {self.what} ended (its writer closed the "
                                "pipe); everything read stays shown"))
        if not self.watch.conns and not self.watch.dropped:
            from amqpcli.tui.sources.replay import no_amqp

            self._post(SourceNotice(no_amqp(self.framer), "warning"))

    def _failed(self, e: Exception) -> None:
        if isinstance(e, Stopped):
            return  # we are quitting
        if isinstance(e, CaptureError):
            with self.lock:
                self.ended = True
                if self.frames_read:
                    self.damage = str(e)
            if self.damage is not None:
                self._post(SourceNotice(f"{e}: what could be read is shown", "warning"))
                return
            # (nothing readable came: exit 8 once the screen closes, as for a file)
        if not isinstance(e, UserError):  # (a named pipe that cannot be opened is one)
            e = UserError(f"reading {self.name} failed: {type(e).__name__}: {e}".splitlines()[0],
                          Exit.USAGE if isinstance(e, OSError) else Exit.FAILURE)
        self.error = str(e)
        self._post(SourceFailed(e))

    def now(self) -> float:
        clock = self._clock
        if clock is None:
            return time.time()
        t, seen = clock
        return t if self.ended else t + max(0.0, time.monotonic() - seen)

    def status(self) -> str:
        if self.error:
            return self.error
        counts = f"{self.frames_read} frames, {self.watch.counts()}"
        untimed = self.watch.untimed
        if untimed:  # (a frame-trace log's connections without times, as a replay says)
            seen = len(self.watch.conns) + self.watch.dropped
            counts += (", times unknown" if len(untimed) == seen
                       else f", {len(untimed)} without times")
        if self.damage is not None:
            return f"{self.name}: {self.what} ended, damaged: {counts}"
        if self.ended:
            return f"{self.name}: {self.what} ended: {counts}"
        stream = self._stream
        if stream is None or not stream.got:
            return f"{self.title}: waiting for the capture to be written…"
        return f"{self.title}: {counts}"
