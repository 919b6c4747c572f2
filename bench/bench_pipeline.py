"""Capture set → tables with both engines: wall time, throughput, peak memory per process.

    python bench/bench_pipeline.py [--set /tmp/amqp-pipeline-bench/set] [--engines local,spark]
        [--master local[*]] [--no-large-alone] [--json results.json]

The set (at least 2 GB: many files plus one large capture) is generated under /tmp the
first time (`gen_capture.py` for two base captures, `gen_capture_set.py copies` for the
set) and reused afterwards. Each run is `amqp pcap-dump SET --out DIR --engine E` in a
child process; its process tree is sampled from /proc twice a second, and each process's
peak resident size (VmHWM) is kept: the driver, the JVM, the Python workers. Then the
large file alone, to show that one capture with many connections is spread too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path("/tmp/amqp-pipeline-bench")


def ensure_set(folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.pcapng")) if folder.is_dir() else []
    if sum(f.stat().st_size for f in files) >= 2e9:
        return files
    BENCH.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    bases = [(BENCH / "base1.pcapng", ["--connections", "20", "--links", "4", "--messages", "300",
                                       "--retransmit", "0.01", "--reorder", "0.01", "--noise",
                                       "2", "--seed", "11"]),
             (BENCH / "base2.pcapng", ["--connections", "40", "--links", "2", "--messages", "120",
                                       "--body", "1200", "--seed", "12"])]
    for path, args in bases:
        if not path.exists():
            subprocess.run([py, str(ROOT / "bench" / "gen_capture.py"), str(path), *args],
                           check=True)
    subprocess.run([py, str(ROOT / "bench" / "gen_capture_set.py"), "copies", str(folder),
                    *(str(p) for p, _a in bases), "--files", "30", "--large", "1",
                    "--size-gb", "2.0", "--large-share", "0.3"], check=True)
    return sorted(folder.glob("*.pcapng"))


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


_TCK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(st[11]) + int(st[12])) / _TCK


def _status(pid: int) -> tuple[int, str]:
    """(peak RSS in kB, kind of process)."""
    hwm = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return 0, ""
    if "java" in cmd.split(" ", 1)[0]:
        kind = "JVM"
    elif "pyspark" in cmd or "daemon" in cmd or "worker" in cmd:
        kind = "Python worker"
    else:
        kind = "other"
    return hwm, kind


class Sampler(threading.Thread):
    """Peak resident size and CPU time of every process in a tree, by kind (a busy
    shared machine stretches wall time; CPU seconds say what the work cost)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peaks: dict[int, tuple[int, str]] = {}
        self.cpu: dict[int, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            todo = [self.root]
            while todo:
                pid = todo.pop()
                hwm, kind = _status(pid)
                if pid == self.root:
                    kind = "driver"
                if hwm:
                    old = self.peaks.get(pid, (0, kind))[0]
                    self.peaks[pid] = (max(old, hwm), kind)
                    self.cpu[pid] = max(self.cpu.get(pid, 0.0), _cpu(pid))
                todo += _children(pid)
            self.stop.wait(0.5)

    def by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for pid, (hwm, kind) in self.peaks.items():
            k = out.setdefault(kind, {"processes": 0, "peak_mb": 0, "cpu_s": 0})
            k["processes"] += 1
            k["peak_mb"] = max(k["peak_mb"], hwm // 1024)
            k["cpu_s"] += round(self.cpu.get(pid, 0.0))
        return out


def run(engine: str, inputs: list[str], out: Path, master: str) -> dict[str, object]:
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "amqpcli", "pcap-dump", *inputs, "--out", str(out),
           "--engine", engine]
    if engine == "spark":
        cmd += ["--master", master]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    s = Sampler(p.pid)
    s.start()
    _out, err = p.communicate()
    wall = time.monotonic() - t0
    s.stop.set()
    s.join()
    if p.returncode != 0:
        raise SystemExit(f"{engine} failed ({p.returncode}): {err.strip()}")
    size = 0
    for i in inputs:
        q = Path(i)
        size += sum(f.stat().st_size for f in q.glob("*.pcapng")) if q.is_dir() else q.stat().st_size
    return {"engine": engine, "wall_s": round(wall, 1), "input_mb": round(size / 1e6),
            "mb_per_s": round(size / 1e6 / wall, 2), "processes": s.by_kind(),
            "report": err.strip().splitlines()[-1] if err.strip() else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, default=BENCH / "set")
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--no-large-alone", action="store_true")
    ap.add_argument("--json", type=Path, default=BENCH / "results.json")
    a = ap.parse_args()
    files = ensure_set(a.set)
    large = max(files, key=lambda f: f.stat().st_size)
    print(f"set: {len(files)} files, {sum(f.stat().st_size for f in files) / 1e9:.2f} GB; "
          f"largest {large.name} {large.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} cores",
          flush=True)
    runs: list[tuple[str, list[str]]] = [("set", [str(a.set)])]
    if not a.no_large_alone:
        runs.append(("large file", [str(large)]))
    results = []
    for label, inputs in runs:
        for engine in a.engines.split(","):
            out = BENCH / f"out-{label.replace(' ', '-')}-{engine}"
            r = run(engine, inputs, out, a.master)
            r["input"] = label
            results.append(r)
            print(json.dumps(r), flush=True)
            a.json.write_text(json.dumps(results, indent=1))
    print()
    print("| input | engine | wall | throughput | CPU | peak RSS per process |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        cpu = sum(v["cpu_s"] for v in r["processes"].values())  # type: ignore[attr-defined]
        procs = "; ".join(f"{k} {v['peak_mb']} MB" + (f" (×{v['processes']})"
                                                       if v["processes"] > 1 else "")
                          for k, v in r["processes"].items())  # type: ignore[attr-defined]
        print(f"| {r['input']} ({r['input_mb']} MB) | {r['engine']} | {r['wall_s']} s | "
              f"{r['mb_per_s']} MB/s | {cpu} s | {procs} |")


if __name__ == "__main__":
    main()
