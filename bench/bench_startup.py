"""Start-up time of the `amqp` command: a few short runs, each a fresh process.

    python bench/bench_startup.py [--repeat 10] [--tree DIR]

Runs `amqp --help`, `amqp decode --example message`, `amqp send --help` and real command
runs: `amqp pcap-dump amqpcli/examples/serve-session.pcapng --frames-only` (a capture of a
few frames: nearly all of its time is start-up), and `amqp send`/`amqp recv` to the
loopback's discard port, refused at once (start-up up to the first connect), as
``python -m amqpcli``, `--repeat` times each, and reports the best wall time and the best
CPU time of the child (user + system; what other processes on a loaded machine do matters
less). Then the import cost as Python's own ``-X importtime`` reports it for
``import amqpcli.cli.app; _register()`` (every subcommand registered): the sum over the
top-level imports, best of the repeats, and the five costliest packages.

`--bytecode` says where the compiled bytecode comes from. ``as-is`` (the default) runs in
the environment as given: with ``PYTHONDONTWRITEBYTECODE`` set (or a tree that Python
cannot write to), every source file without an up-to-date ``__pycache__`` entry is
compiled again in every run, and that compiling is part of each figure. ``cached`` points
``PYTHONPYCACHEPREFIX`` at a fresh temporary folder, lets Python write there and runs
every command once before measuring, as an installed package (whose bytecode is compiled
when it is installed) starts.

`--tree DIR` measures another checkout of the sources (e.g. an older commit unpacked with
``git archive``): DIR goes first on PYTHONPATH. Given several times, the trees' runs are
interleaved (run 1 of each tree, then run 2, …) so that a change in the machine's load
touches them alike; ``--tree .`` is this checkout.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (arguments, the exit status they end with)
COMMANDS: list[tuple[list[str], int]] = [
    (["--help"], 0),
    (["decode", "--example", "message"], 0),
    (["send", "--help"], 0),
    (["pcap-dump", "amqpcli/examples/serve-session.pcapng", "--frames-only"], 0),
    # Refused at once on the loopback's discard port: the start-up of a real send or recv,
    # up to its first connect (exit 3, connection failure).
    (["send", "amqp://127.0.0.1:9/q", "hello"], 3),
    (["recv", "amqp://127.0.0.1:9/q", "--count", "1"], 3),
]

REGISTER = "import amqpcli.cli.app as a; a._register()"

_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _env(tree: Path | None, pycache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["COLUMNS"] = "100"
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return env


def run_once(args: list[str], env: dict[str, str], cwd: Path,
             expect: int = 0) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", *args], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != expect:
        raise SystemExit(f"amqp {' '.join(args)} failed ({proc.returncode}): {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime


def import_profile(env: dict[str, str], cwd: Path) -> tuple[int, dict[str, int]]:
    """(total µs over the top-level imports, cumulative µs per top-level package)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", REGISTER], env=env,
                          cwd=cwd, capture_output=True, text=True, check=True)
    total = 0
    per: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        cumulative, depth, name = int(m.group(2)), len(m.group(3)), m.group(4)
        if depth == 1:  # a top-level import
            total += cumulative
        top = name.split(".")[0] if not name.startswith("amqpcli.") else ".".join(
            name.split(".")[:2])
        per[top] = per.get(top, 0) + int(m.group(1))  # self time, summed per package
    return total, per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--tree", type=Path, action="append", default=None,
                    help="a source tree to measure (repeatable; default: this checkout)")
    ap.add_argument("--bytecode", choices=("as-is", "cached"), default="as-is",
                    help="as-is: the environment as given; cached: bytecode written to a "
                    "temporary PYTHONPYCACHEPREFIX and warmed up before measuring")
    opts = ap.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees: list[Path] = [t.resolve() for t in opts.tree] if opts.tree else [here]
    with tempfile.TemporaryDirectory(prefix="amqp-pycache-") as tmp:
        pycache = Path(tmp) if opts.bytecode == "cached" else None
        envs = {t: _env(t, pycache) for t in trees}
        if pycache is not None:
            for tree in trees:
                for args, expect in COMMANDS:
                    run_once(args, envs[tree], tree, expect)
                import_profile(envs[tree], tree)
        measure(opts.repeat, trees, envs)


def _bytecode_note(env: dict[str, str]) -> str:
    if env.get("PYTHONPYCACHEPREFIX"):
        return "bytecode cached in PYTHONPYCACHEPREFIX"
    if env.get("PYTHONDONTWRITEBYTECODE"):
        return "PYTHONDONTWRITEBYTECODE set: sources without a current .pyc compile in every run"
    return "bytecode written to __pycache__ as usual"


def measure(repeat: int, trees: list[Path], envs: dict[Path, dict[str, str]]) -> None:
    print(f"best of {repeat} runs; load average {os.getloadavg()[0]:.1f}; "
          f"{_bytecode_note(envs[trees[0]])}")
    runs: dict[tuple[Path, int], list[tuple[float, float]]] = {}
    profiles: dict[Path, list[tuple[int, dict[str, int]]]] = {t: [] for t in trees}
    for _ in range(repeat):
        for tree in trees:
            for i, (args, expect) in enumerate(COMMANDS):
                runs.setdefault((tree, i), []).append(run_once(args, envs[tree], tree, expect))
            profiles[tree].append(import_profile(envs[tree], tree))
    width = max(len(" ".join(args)) for args, _ in COMMANDS)
    for tree in trees:
        if len(trees) > 1:
            print(tree)
        for i, (args, _) in enumerate(COMMANDS):
            wall = min(w for w, _ in runs[tree, i])
            cpu = min(c for _, c in runs[tree, i])
            print(f"  amqp {' '.join(args):<{width}} wall {wall * 1000:6.0f} ms   "
                  f"cpu {cpu * 1000:6.0f} ms")
        total, per = min(profiles[tree], key=lambda p: p[0])
        print(f"  -X importtime, register every command: {total / 1000:.0f} ms "
              "over the top-level imports")
        for name, us in sorted(per.items(), key=lambda kv: -kv[1])[:5]:
            print(f"    {name:<24} {us / 1000:6.0f} ms (self time of its modules)")


if __name__ == "__main__":
    main()
