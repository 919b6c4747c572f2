"""Replay a capture of many deliveries through the TUI, headless, as fast as it goes.

    python bench/bench_tui.py [--deliveries 100000] [--capture FILE] [--refresh 10]

Without `--capture`, writes a capture of one connection sending `--deliveries` messages
(100-byte bodies, unsettled, accepted and settled by the broker in batches of 100) with
the capture package's writer and the codec (`amqpcli.tui.synth`). Then, in one process:

* load: the capture reader, TCP reassembly and the frame reader turn the file into frames;
* replay: the app runs headless (Textual's test driver) with its usual refresh timer while
  the replay plays at speed "max" (speed 0) in its worker thread; the views pull from the
  model ten times a second as they would on a terminal.

Prints frames and deliveries per second for the replay, the load time, and the process's
peak resident memory (which includes the loaded frames). A second replay with the
refresh timer off measures what the views cost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource, load_capture
from amqpcli.tui.synth import write_conversation


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def replay_in_app(src: ReplaySource, refresh: float, link: str | None) -> tuple[float, int]:
    app = AmqpTui(src, refresh_hz=refresh)
    async with app.run_test(size=(140, 44)) as pilot:
        if link is not None:
            app.select_link(link)
        await pilot.pause()
        start = time.perf_counter()
        src.speed = 0
        src.play()
        while not src.finished.is_set():
            await pilot.pause(0.05)
        elapsed = time.perf_counter() - start
        app.pull()
        return elapsed, app.refreshes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deliveries", type=int, default=100_000)
    ap.add_argument("--capture", type=Path, help="replay this capture instead of a made-up one")
    ap.add_argument("--refresh", type=float, default=10.0, help="view updates per second")
    ap.add_argument("--history", type=int, default=1000)
    args = ap.parse_args()

    tmp = None
    if args.capture is None:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "bench-tui.pcapng"
        t0 = time.perf_counter()
        frames = write_conversation(path, args.deliveries, unsettled_tail=0, received=0)
        print(f"wrote {path.name}: {frames} frames, {args.deliveries} deliveries, "
              f"{os.path.getsize(path) / 1e6:.1f} MB in {time.perf_counter() - t0:.1f}s")
        link = "c1|s0.0|client|orders-sender"
    else:
        path = args.capture
        link = None

    t0 = time.perf_counter()
    loaded = load_capture(path)
    load_s = time.perf_counter() - t0
    n = len(loaded.records)
    print(f"load: {n} frames in {load_s:.2f}s ({n / load_s:,.0f} frames/s)")

    results = []
    for refresh in (args.refresh, 0.5):
        src = ReplaySource(loaded=loaded, history=args.history)
        elapsed, refreshes = asyncio.run(replay_in_app(src, refresh, link))
        assert src.controller is not None and src.controller.at_end
        delivered = sum(lk.deliveries for _, cw in src.connections()
                        for s in cw.connection.sessions for lk in s.links.values())
        if args.capture is None:
            assert delivered == args.deliveries, delivered
        results.append((refresh, elapsed, refreshes, delivered))
        print(f"replay with views at {refresh:g} Hz: {n} frames, {delivered} deliveries in "
              f"{elapsed:.2f}s: {n / elapsed:,.0f} frames/s, {delivered / elapsed:,.0f} deliveries/s "
              f"({refreshes} view refreshes; checkpoints at {src.controller.checkpoints[:3]}… "
              f"every {src.controller.interval})")
    print(f"peak RSS: {peak_mib():.0f} MiB")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
