"""Capture reading throughput: records, TCP flows, and flows through the frame reader,
against tshark reading the same files.

    python bench/gen_capture.py /tmp/bench/cap          # 20 connections, ~40k messages
    python bench/bench_capture.py /tmp/bench/cap.pcapng [--repeat 3] [--no-tshark]

Stages timed (best of the repeats, one process, files merged by time when several):
  records  — `read_packets`: file blocks → (time, link type, frame) records
  batches  — `read_batches`: the same records as offsets into each block (what
             `read_capture` reads a single file with; one file only)
  flows    — `read_capture`: records → link/IP/TCP decoding → reassembly → events
  frames   — `read_capture` with every Data event fed to a `FrameReader` per direction
  tshark   — `tshark -r F -T fields -e tcp.stream -e tcp.len` (TCP dissection only) and
             `tshark -r F -T fields -e amqp.performative` (what pcap-dump replaces)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from amqpcli.capture import Data, merge_packets, read_batches, read_capture, read_packets
from amqpcli.codec.frames import FrameReader


def stage_records(files: list[Path]) -> int:
    n = 0
    for _ in merge_packets(read_packets(f) for f in files):
        n += 1
    return n


def stage_batches(files: list[Path]) -> int:
    n = 0
    for f in files:
        for _block, records in read_batches(f):
            n += len(records)
    return n


def stage_flows(files: list[Path]) -> int:
    n = 0
    for ev in read_capture(files):
        if type(ev) is Data:
            n += len(ev.data)
    return n


def stage_frames(files: list[Path]) -> int:
    readers: dict[tuple[int, int], FrameReader] = {}
    n = 0
    for ev in read_capture(files):
        if type(ev) is Data:
            key = (ev.flow.index, ev.direction)
            r = readers.get(key)
            if r is None:
                r = readers[key] = FrameReader()
            n += len(r.feed(ev.data))
    for r in readers.values():
        n += len(r.close())
    return n


def best_of(fn: Callable[[list[Path]], int], files: list[Path], repeat: int
            ) -> tuple[float, int]:
    best = float("inf")
    result = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(files)
        best = min(best, time.perf_counter() - start)
    return best, result


def tshark_seconds(files: list[Path], fields: list[str]) -> float:
    total = 0.0
    for f in files:
        cmd = ["tshark", "-r", str(f), "-T", "fields"]
        for x in fields:
            cmd += ["-e", x]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total += time.perf_counter() - start
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-tshark", action="store_true")
    args = ap.parse_args()
    files: list[Path] = args.files
    size = sum(os.path.getsize(f) for f in files)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_rec, packets = best_of(stage_records, files, args.repeat)
    t_bat, _ = best_of(stage_batches, files, args.repeat)
    t_flow, payload = best_of(stage_flows, files, args.repeat)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t_frames, frames = best_of(stage_frames, files, args.repeat)
    print(f"{len(files)} file(s), {size / 1e6:.1f} MB, {packets} packets, "
          f"{payload / 1e6:.1f} MB of TCP payload in selected flows, {frames} frames")
    for label, t in (("records", t_rec), ("batches", t_bat), ("flows", t_flow),
                     ("frames", t_frames)):
        print(f"  {label:8} {t:7.3f} s  {packets / t:>10,.0f} packets/s  "
              f"{size / t / 1e6:6.1f} MB/s")
    print(f"  peak memory while reading records and flows: +{(rss1 - rss0) / 1024:.0f} MiB "
          f"over the {rss0 / 1024:.0f} MiB the process started with")
    if not args.no_tshark:
        for label, fields in (("tshark tcp", ["tcp.stream", "tcp.len"]),
                              ("tshark amqp", ["amqp.performative"])):
            t = tshark_seconds(files, fields)
            print(f"  {label:8} {t:7.3f} s  {packets / t:>10,.0f} packets/s  "
                  f"{size / t / 1e6:6.1f} MB/s   (flows: {t / t_flow:.1f}x faster, "
                  f"frames: {t / t_frames:.1f}x faster)")


if __name__ == "__main__":
    main()
