"""A live TUI source left running: many short connections streamed through it.

    python bench/bench_tui_live.py [--connections 4000] [--capture FILE] [--keep-ended 100]

Without `--capture`, generates a capture of `--connections` short AMQP 1.0 connections,
a few open at a time (`bench/gen_capture.py --open 4`, one link and 20 messages each).
Then streams it, packet by packet, through the reading loop of a source shown as it
comes (`amqp tui --live` and `--pcap FIFO` share it: capture events → frames → the
model), without a screen, twice, each in a process of its own: keeping the last
`--keep-ended` ended connections, and keeping every connection (as before
`--keep-ended`). For each: the seconds taken, the connections the tree holds at the end,
the time one view refresh takes to walk them (`Source.snapshot`, ten times a second on
a terminal), and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def one(capture: str, keep_ended: int) -> dict[str, Any]:
    from amqpcli.capture import read_capture
    from amqpcli.tui.sources.live import StreamingSource

    class FileStream(StreamingSource):
        def _events(self) -> Iterator[Any]:
            return read_capture(capture, ports=sorted(self.framer.ports))

    try:
        src = FileStream(keep_ended=keep_ended)
    except TypeError:  # a tree from before `--keep-ended`: it keeps every connection
        src = FileStream()
    start = time.perf_counter()
    src._run()  # the reading thread's loop, here in the main thread
    streamed = time.perf_counter() - start
    assert src.error is None, src.error
    start = time.perf_counter()
    snap = src.snapshot(None, None, time.time())
    walk = time.perf_counter() - start
    return {"seconds": streamed, "kept": len(src.connections()), "rows": sum(1 + sum(1 + len(s.links) for s in c.sessions) for c in snap.tree),
            "walk_ms": walk * 1000, "dropped": getattr(src.watch, "dropped", 0),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=4000)
    ap.add_argument("--capture", help="stream this capture instead of a generated one")
    ap.add_argument("--keep-ended", type=int, default=100)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # (a child's run)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.capture, args.one)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        capture = args.capture
        if capture is None:
            out = Path(tmp) / "churn"
            subprocess.run([sys.executable, str(HERE / "gen_capture.py"), str(out),
                            "--connections", str(args.connections), "--links", "1",
                            "--messages", "20", "--open", "4"], check=True)
            capture = f"{out}.pcapng"
        print(f"{capture}: {Path(capture).stat().st_size / 1e6:.1f} MB")
        print("| keeps | seconds | connections kept | rows a refresh walks | one refresh "
              "| peak RSS MiB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for keep, what in ((args.keep_ended, f"the last {args.keep_ended} ended"),
                           (sys.maxsize, "every connection")):
            res = subprocess.run([sys.executable, __file__, "--capture", capture,
                                  "--one", str(keep)], check=True, capture_output=True,
                                 text=True)
            r = json.loads(res.stdout)
            print(f"| {what} | {r['seconds']:.2f} | {r['kept']:,} | {r['rows']:,} "
                  f"| {r['walk_ms']:.1f} ms | {r['peak_mib']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
