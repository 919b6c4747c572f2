"""The in-process executor: one pass over the capture set, merged in canonical order
(`run_local`); a set of frame-trace logs, one log after the other in path order
(`run_logs`: a log's connections are that log's, so nothing is merged).

Every flow key has its own `FlowJob`, fed as the merged stream reaches its segments, so
the rows are the ones the Spark executor computes per key. A key's dissector is dropped
as soon as its connections are over; memory follows the open connections (plus a small
reassembly state per key seen).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from amqpcli.capture import CaptureError
from amqpcli.capture.reader import in_path_order
from amqpcli.pipeline.inputs import key_of, merged_segments
from amqpcli.pipeline.rows import FlowJob, LogJob, Tables

FLUSH_ROWS = 65536


@dataclass
class Result:
    """What a run wrote: rows per table, and the damaged files it read past."""

    rows: dict[str, int] = field(default_factory=dict)
    packets: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # AMQP bytes that did not decode, as pcap-dump counts them for its exit status: frames
    # that did not decode (rows of kind "error" in the frames table), and bytes skipped
    # over in connections that lost nothing to the capture (no gap, not begun mid-stream)
    frame_errors: int = 0
    skipped_bytes: int = 0

    def undecoded(self, connections: list[dict[str, Any]]) -> None:
        """Count what did not decode in these connection rows."""
        for r in connections:
            self.frame_errors += r.get("frame_errors") or 0
            if not r.get("midstream") and not r.get("gaps"):
                self.skipped_bytes += r.get("skipped_bytes") or 0


class Progress:
    """One line on stderr, redrawn at most 4 times a second, only on a terminal."""

    def __init__(self, enabled: bool | None = None, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.enabled = self.out.isatty() if enabled is None else enabled
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def show(self, text: str, force: bool = False) -> None:
        if not self.enabled:
            return
        t = time.monotonic()
        if not force and t - self.last < 0.25:
            return
        self.last = t
        self.out.write(f"\r{text} ({t - self.start:.0f} s)\x1b[K")
        self.out.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.drawn = False


def run_local(paths: list[str], write: Callable[[dict[str, list[dict[str, Any]]]], None], *,
              ports: tuple[int, ...] = (), stall: float = 1.0,
              progress: Progress | None = None) -> Result:
    """Read `paths` (local capture files; what `expand` returns says which were found in
    folders or by globs) and hand row batches to `write`."""
    t0 = time.monotonic()
    res = Result()
    put = write

    def counted(batch: dict[str, list[dict[str, Any]]]) -> None:
        res.undecoded(batch.get("connections", []))
        put(batch)

    write = counted
    tables = Tables()
    jobs: dict[tuple[Any, ...], FlowJob] = {}
    errors: list[CaptureError] = []
    packets = 0
    for ts, fi, pkt, seg in merged_segments(paths, errors):
        packets += 1
        key = key_of(seg)
        job = jobs.get(key)
        if job is None:
            job = jobs[key] = FlowJob(tables, paths, ports=ports, stall=stall)
        job.feed(ts, seg, fi, pkt)
        if tables.count >= FLUSH_ROWS:
            write(tables.take())
            if progress is not None:
                progress.show(f"file {fi + 1}/{len(paths)}: {packets} packets, "
                              f"{len(jobs)} TCP flows")
    for job in jobs.values():
        job.finish()
        if tables.count >= FLUSH_ROWS:
            write(tables.take())
    write(tables.take())
    if progress is not None:
        progress.close()
    # in path order (the order of the files), not the merge's (which meets empty files
    # first), as the views name them and the Spark executor lists them
    res.packets = packets
    res.errors = [str(e) for e in in_path_order(errors)]
    res.seconds = time.monotonic() - t0
    return res


def run_logs(paths: list[str], write: Callable[[dict[str, list[dict[str, Any]]]], None], *,
             ports: tuple[int, ...] = (), stall: float = 1.0,
             progress: Progress | None = None, warn: Callable[[str], None] | None = None
             ) -> Result:
    """Read `paths` (local frame-trace logs), each whole through a `LogJob`, in the
    order given, and hand row batches to `write`. What the log reader warns of goes to
    `warn` (default: a warning line on stderr, as the views say it)."""
    t0 = time.monotonic()
    res = Result()
    tables = Tables()

    for i, path in enumerate(paths):
        job = LogJob(tables, path, ports=ports, stall=stall, warn=warn)
        for _ in job.steps():
            batch = tables.take()
            res.undecoded(batch.get("connections", []))
            write(batch)
            if progress is not None:
                progress.show(f"log {i + 1}/{len(paths)}")
        res.packets += job.lines
    if progress is not None:
        progress.close()
    res.seconds = time.monotonic() - t0
    return res
