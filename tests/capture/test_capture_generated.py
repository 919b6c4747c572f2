"""End to end on captures from bench/gen_capture.py: ring-buffer files merged by time,
with retransmissions and reordering, reassemble into streams the frame reader reads
without a single error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from amqpcli.capture import Data, Gap, Opened, read_capture
from amqpcli.codec.frames import Frame, FrameError, FrameReader, ProtocolHeader

ROOT = Path(__file__).resolve().parents[2]


def test_generated_ring_buffer_capture(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_capture.py"), str(tmp_path / "ring"),
         "--connections", "4", "--links", "3", "--messages", "15", "--large", "0.3",
         "--max-frame", "2048", "--files", "3", "--retransmit", "0.2", "--reorder", "0.2",
         "--gzip", "--noise", "2"],
        check=True, capture_output=True, text=True).stdout
    files = sorted(tmp_path.glob("ring-*.pcapng.gz"))
    assert len(files) == 3
    m = re.search(r"(\d+) frames, (\d+) messages", out)
    assert m
    frames_expected = int(m.group(1))
    readers: dict[tuple[int, int], FrameReader] = {}
    counts = {"header": 0, "frame": 0, "error": 0, "gap": 0}
    skipped = []

    def count(items: list[object]) -> None:
        for it in items:
            if isinstance(it, ProtocolHeader):
                counts["header"] += 1
            elif isinstance(it, Frame):
                counts["frame"] += 1
            elif isinstance(it, FrameError):
                counts["error"] += 1

    for ev in read_capture(files):
        if isinstance(ev, Data):
            r = readers.setdefault((ev.flow.index, ev.direction), FrameReader())
            count(r.feed(bytes(ev.data)))
        elif isinstance(ev, Gap):
            counts["gap"] += 1
        elif isinstance(ev, Opened) and not ev.flow.selected:
            skipped.append(ev.flow.server_port)
    for r in readers.values():
        count(r.close())
    assert len(readers) == 8
    assert skipped == [8080, 8080]
    assert counts == {"header": 16, "frame": frames_expected, "error": 0, "gap": 0}


def test_generated_captures_with_their_own_ports_and_times_read_together(
        tmp_path: Path) -> None:
    """Two generated captures given their own --client-port and --start are read together
    as the connections of both; with the same ones they would be taken as one."""
    def gen(name: str, *args: str) -> Path:
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_capture.py"),
                        str(tmp_path / name), "--connections", "2", "--links", "1",
                        "--messages", "3", *args], check=True, capture_output=True)
        return tmp_path / f"{name}.pcapng"

    a = gen("a")
    b = gen("b", "--seed", "2", "--client-port", "41000", "--start", "1700000060.5")

    def flows(*paths: Path) -> set[tuple[object, ...]]:
        return {(ev.flow.key, ev.time_ns) for ev in read_capture(list(paths), ports=[5672])
                if isinstance(ev, Opened)}

    first_a, first_b = min(t for _, t in flows(a)), min(t for _, t in flows(b))
    assert first_a // 10**9 == 1_700_000_000  # the default start
    assert first_b - first_a == 60_500_000_000
    assert len(flows(a, b)) == 4
