"""The capture processes (dumpcap, tshark) a test's live capture started, read from /proc
(no psutil): to check that stopping a live capture ends and reaps every one of them.

A process is known by its pid and start time together (a pid may be taken over by another
process once it is gone). Only processes of ours are looked at: children and their
descendants of a process we name, or processes whose command line holds a capture filter
made for the test (`unique_filter`), so other users' captures are never matched.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CAPTURE_NAMES = frozenset({"dumpcap", "tshark"})


@dataclass(frozen=True)
class Proc:
    pid: int
    start: int  # clock ticks after boot (/proc/PID/stat field 22)
    ppid: int
    state: str
    comm: str
    cmdline: str  # its arguments joined by spaces

    def __str__(self) -> str:
        return f"{self.pid} (parent {self.ppid}, state {self.state}): {self.cmdline}"


def read(pid: int) -> Proc | None:
    """The process `pid` now, or None when there is none."""
    base = Path(f"/proc/{pid}")
    try:
        stat = (base / "stat").read_text()
        cmdline = (base / "cmdline").read_bytes()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2:].split()  # from field 3 (state) on
    return Proc(pid, int(rest[19]), int(rest[1]), rest[0], comm,
                cmdline.replace(b"\0", b" ").decode(errors="replace").strip())


def processes() -> list[Proc]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            p = read(int(entry.name))
            if p is not None:
                found.append(p)
    return found


def descendants(pid: int) -> list[Proc]:
    """The processes below `pid`: its children (those of all its threads), theirs, …"""
    by_parent: dict[int, list[Proc]] = {}
    for p in processes():
        by_parent.setdefault(p.ppid, []).append(p)
    found, todo = [], [pid]
    while todo:
        for child in by_parent.get(todo.pop(), ()):
            found.append(child)
            todo.append(child.pid)
    return found


def captures_below(pid: int) -> set[Proc]:
    """The dumpcap and tshark processes below `pid`."""
    return {p for p in descendants(pid) if p.comm in CAPTURE_NAMES}


def with_filter(bpf_filter: str) -> set[Proc]:
    """The processes whose command line holds `bpf_filter` (see `unique_filter`)."""
    return {p for p in processes() if bpf_filter in p.cmdline and p.comm in CAPTURE_NAMES}


def left(seen: set[Proc]) -> list[Proc]:
    """Those of `seen` still there: running, or ended but not reaped by us (a zombie
    whose parent is this process). One ended whose parent has gone is init's to reap."""
    out = []
    for p in seen:
        now = read(p.pid)
        if now is None or now.start != p.start:
            continue
        if now.state != "Z" or now.ppid == os.getpid():
            out.append(now)
    return out


def left_after(seen: set[Proc], wait: float = 10.0) -> list[Proc]:
    """`left(seen)` once they are all gone, or after waiting `wait` seconds for it."""
    guard = time.monotonic() + wait
    while (still := left(seen)) and time.monotonic() < guard:
        time.sleep(0.05)
    return still


def kill(procs: list[Proc]) -> None:
    """SIGKILL to those of `procs` still there (a failed test leaves nothing running)."""
    for p in procs:
        now = read(p.pid)
        if now is not None and now.start == p.start and now.state != "Z":
            try:
                os.kill(p.pid, signal.SIGKILL)
            except OSError:
                pass


def unique_filter() -> str:
    """A capture filter nothing matches, and no one else's capture uses. (Not one of
    port 1: tests of a refused connection connect there, and a packet wakes a capture
    that must stay idle.)"""
    # (one port at both ends: only a connection to itself; and below the ephemeral ports)
    port = random.randrange(20000, 32768)
    return f"tcp src port {port} and tcp dst port {port}"


def tshark_capturing(procs: set[Proc]) -> bool:
    """Among `procs`: tshark capturing (not asking for interfaces or its version) and
    the dumpcap it started, running: the capture's processes are all up."""
    tsharks = {p.pid for p in procs if p.comm == "tshark" and " -T " in p.cmdline}
    return any(p.comm == "dumpcap" and p.ppid in tsharks for p in procs)


def dumpcap_capturing(procs: set[Proc], bpf_filter: str) -> bool:
    """Among `procs`: the dumpcap capturing with `bpf_filter` into a pipe."""
    return any(p.comm == "dumpcap" and bpf_filter in p.cmdline and " -w -" in p.cmdline
               for p in procs)


def written(pid: int) -> int:
    """How many bytes process `pid` has written (0 once it is gone)."""
    try:
        io = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return 0
    return next((int(x.split()[1]) for x in io.splitlines() if x.startswith("wchar:")), 0)


def dumpcap_writing(procs: set[Proc], bpf_filter: str) -> bool:
    """`dumpcap_capturing`, and that dumpcap wrote the capture's header into its pipe: it
    captures (before that a reader's end goes unnoticed: dumpcap stops as it writes)."""
    return any(p.comm == "dumpcap" and bpf_filter in p.cmdline and " -w -" in p.cmdline
               and written(p.pid) > 0 for p in procs)


def left_after_kill(proc: subprocess.Popen[Any], bpf_filter: str, fast: bool) -> list[Proc]:
    """Wait until `proc` (an `amqp` capturing live with `bpf_filter`) has its capture
    going — tshark reading (unless `fast`: dumpcap alone) and dumpcap writing its file,
    before which a dumpcap whose reader has gone ends of itself —, SIGKILL it, and return
    the capture processes still there after it (given a few seconds to end). Whatever is
    left is killed on the way out."""
    seen: set[Proc] = set()
    try:
        guard = time.monotonic() + 300  # (against a hang: not a time limit)
        while time.monotonic() < guard:
            assert proc.poll() is None, proc.returncode
            seen.update(captures_below(proc.pid))
            if (fast or tshark_capturing(seen)) and dumpcap_writing(seen, bpf_filter):
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"the capture did not start: {sorted(map(str, seen))}")
        seen.update(captures_below(proc.pid))
        proc.kill()
        proc.wait()
        return left_after(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill(left(seen) + list(with_filter(bpf_filter)))

