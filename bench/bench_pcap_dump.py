"""`amqp pcap-dump` side by side with tshark on one capture, at two depths.

    python bench/bench_pcap_dump.py CAPTURE [--runs 3] [--port 5672] [--json]

If CAPTURE does not exist it is generated first with bench/gen_capture.py (default
settings: about 116,000 packets). Each command runs as its own process, output to
/dev/null; wall time, CPU time (user + system) and peak RSS are those of that process
alone (`os.wait4`). Best of `--runs` for the times; the largest RSS.

Depths compared:

* full decode — `tshark -r F -V` (every field of every frame and message) against
  `amqp pcap-dump F` (one line per frame, message bodies decoded and summarised, the
  engine following every delivery) and `amqp pcap-dump F --json` (every frame and
  message, lossless);
* performatives only — `tshark -r F -T fields -e amqp.performative` against
  `amqp pcap-dump F --frames-only` (frame lines without bodies, no engine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Run:
    label: str
    wall: float
    cpu: float
    rss_mb: float


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of one process."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def best(label: str, cmd: list[str], runs: int) -> Run:
    results = [measure(cmd) for _ in range(runs)]
    return Run(label, min(r[0] for r in results), min(r[1] for r in results),
               max(r[2] for r in results))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--port", type=int, default=5672, help="AMQP port (tshark -d when not 5672)")
    args = ap.parse_args()
    cap = args.capture
    if not cap.exists():
        stem = cap.with_suffix("") if cap.suffix == ".pcapng" else cap
        subprocess.run([sys.executable, str(HERE / "gen_capture.py"), str(stem)], check=True)
        cap = stem.with_suffix(".pcapng")
    amqp = [sys.executable, "-m", "amqpcli", "pcap-dump", str(cap)]
    tshark = ["tshark", "-r", str(cap)]
    if args.port != 5672:
        tshark += ["-d", f"tcp.port=={args.port},amqp"]
        amqp += ["--port", str(args.port)]
    rows = [
        ("full decode", best("tshark -V", [*tshark, "-V"], args.runs),
         [best("amqp pcap-dump", amqp, args.runs),
          best("amqp pcap-dump --json", [*amqp, "--json"], args.runs)]),
        ("performatives", best("tshark -T fields -e amqp.performative",
                               [*tshark, "-T", "fields", "-e", "amqp.performative"], args.runs),
         [best("amqp pcap-dump --frames-only", [*amqp, "--frames-only"], args.runs)]),
    ]
    size = cap.stat().st_size / 1e6
    print(f"{cap} ({size:.1f} MB), best of {args.runs}; load average "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    print("| depth | command | wall s | CPU s | peak RSS MiB | speed vs tshark (CPU) | (wall) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for depth, ref, ours in rows:
        print(f"| {depth} | `{ref.label}` | {ref.wall:.2f} | {ref.cpu:.2f} | {ref.rss_mb:.0f} | 1.00 | 1.00 |")
        for r in ours:
            print(f"| {depth} | `{r.label}` | {r.wall:.2f} | {r.cpu:.2f} | {r.rss_mb:.0f} | "
                  f"{ref.cpu / r.cpu:.2f} | {ref.wall / r.wall:.2f} |")


if __name__ == "__main__":
    main()
