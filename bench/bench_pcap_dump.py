"""`amqp pcap-dump` side by side with tshark on one capture, at three depths.

    python bench/bench_pcap_dump.py CAPTURE [--runs 3] [--port 5672] [--json]

If CAPTURE does not exist it is generated first with bench/gen_capture.py (default
settings: about 116,000 packets). Each command runs as its own process, output to
/dev/null; wall time, CPU time (user + system) and peak RSS are those of that process
alone (`os.wait4`). Best of `--runs` for the times; the largest RSS.

Our commands run with their bytecode cached (a temporary `PYTHONPYCACHEPREFIX`, without
`PYTHONDONTWRITEBYTECODE`, warmed up by one run on the example capture), as an installed
package runs; `--as-is` runs them in the environment as given instead. The commands take
turns (one run of each, `--runs` times), so that a slower minute of a shared machine
falls on all of them.

Depths compared:

* full decode — `tshark -r F -V` (every field of every frame and message) against
  `amqp pcap-dump F` (one line per frame, message bodies decoded and summarised, the
  engine following every delivery) and `amqp pcap-dump F --json` (every frame and
  message, lossless);
* performatives only — `tshark -r F -T fields -e amqp.performative` against
  `amqp pcap-dump F --frames-only` (frame lines without bodies, no engine);
* JSON — `tshark -r F -T json` (every field of every frame, as JSON) against
  `amqp pcap-dump F --json`: the same output form, where `-V` is text.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
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


def measure(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of one process."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL, env=env)
        _pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def best(label: str, results: list[tuple[float, float, float]]) -> Run:
    return Run(label, min(r[0] for r in results), min(r[1] for r in results),
               max(r[2] for r in results))


def cached_bytecode_env() -> dict[str, str]:
    """The environment with bytecode written to (and read from) a fresh folder."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="bench-pycache-")
    return env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--port", type=int, default=5672, help="AMQP port (tshark -d when not 5672)")
    ap.add_argument("--as-is", action="store_true",
                    help="run our commands in the environment as given (no bytecode cache)")
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
    env = None if args.as_is else cached_bytecode_env()
    if env is not None:  # compile once, outside the measurement
        example = Path(__file__).resolve().parent.parent / "amqpcli/examples/serve-session.pcapng"
        measure([sys.executable, "-m", "amqpcli", "pcap-dump", str(example), "--json"], env)
    commands = {
        "tshark -V": ([*tshark, "-V"], None),
        "amqp pcap-dump": (amqp, env),
        "amqp pcap-dump --json": ([*amqp, "--json"], env),
        "tshark -T fields -e amqp.performative":
            ([*tshark, "-T", "fields", "-e", "amqp.performative"], None),
        "amqp pcap-dump --frames-only": ([*amqp, "--frames-only"], env),
        "tshark -T json": ([*tshark, "-T", "json"], None),
    }
    results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in commands}
    for _ in range(args.runs):
        for label, (cmd, cmd_env) in commands.items():
            results[label].append(measure(cmd, cmd_env))
    runs = {label: best(label, r) for label, r in results.items()}
    rows = [
        ("full decode", runs["tshark -V"],
         [runs["amqp pcap-dump"], runs["amqp pcap-dump --json"]]),
        ("performatives", runs["tshark -T fields -e amqp.performative"],
         [runs["amqp pcap-dump --frames-only"]]),
        ("JSON", runs["tshark -T json"], [runs["amqp pcap-dump --json"]]),
    ]
    size = cap.stat().st_size / 1e6
    how = "as given" if env is None else "bytecode cached"
    print(f"{cap} ({size:.1f} MB), best of {args.runs}, ours with {how}; load average "
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
