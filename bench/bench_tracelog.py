"""Frame-trace log reading speed: realistic router and proton logs, the reader alone and
`amqp pcap-dump` as whole commands.

    python bench/bench_tracelog.py [--dir /tmp/bench/tl] [--connections 20] [--runs 3]
        [--code DIR ...] [--only-generate]

The logs are made from a generated capture (`bench/gen_capture.py`: SASL, opens, begins,
attaches, flows granting credit, transfers with real messages, dispositions of every
outcome, several interleaved connections): each frame of it, decoded by the project's own
frame reader, is printed as proton prints it (`PN_TRACE_FRM=1`) — once as a router's
PROTOCOL log (`router.log`, the server's side, with times and other log lines between) and
once as a proton client's trace (`proton.log`, the client's side, no times). Payloads over
1 KiB are cut as proton cuts them (`... (truncated)`).

Each `--code DIR` is a tree holding the `amqpcli` package to time (default: this
checkout); with several, the runs take turns. Each measure is its own process: the reader
alone (CPU seconds of iterating `read_trace_logs` events, imports excluded) and
`pcap-dump --frames-only` and the default view (CPU seconds of the whole process, its
output sent to /dev/null). Prints best and worst of the runs, lines/s and MB/s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amqpcli.capture import read_capture
from amqpcli.capture.tcp import C2S, Closed, Data
from amqpcli.codec.frames import FrameReader, ProtocolHeader
from amqpcli.codec.types import (
    Array,
    Byte,
    Composite,
    Described,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
)

# --- proton's inspect format ------------------------------------------------------------

_PRINTABLE = frozenset(range(0x20, 0x7F)) - {ord('"'), ord("\\")}
_ESCAPED = [chr(b) if b in _PRINTABLE else f"\\x{b:02x}" for b in range(256)]
SHOWN_PAYLOAD = 1024  # proton shows about this much of a frame


def quote(data: bytes) -> str:
    """Bytes as proton quotes them: printable ASCII as is, every other byte (the quote and
    the backslash too) as `\\xNN`."""
    return "".join([_ESCAPED[b] for b in data])


def inspect(v: Any) -> str:
    """A decoded value as proton's `pn_inspect` prints it."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, Composite):
        if v.HAS_VALUE:
            return f"@{v.NAME}({v.CODE}) {inspect(v.value)}"  # type: ignore[attr-defined]
        fields = [f"{f.name}={inspect(getattr(v, f.attr))}" for f in v.FIELDS
                  if getattr(v, f.attr) is not None]
        return f"@{v.NAME}({v.CODE}) [{', '.join(fields)}]"
    if isinstance(v, Described):
        return f"@{inspect(v.descriptor)} {inspect(v.value)}"
    if isinstance(v, Array):
        return f"@<{v.type}>[{', '.join(inspect(x) for x in v)}]"
    if isinstance(v, Symbol):
        plain = v and all(c.isalnum() or c in "-_." for c in v)
        return f":{v}" if plain else f':"{quote(v.encode())}"'
    if isinstance(v, str):
        return f'"{quote(v.encode())}"'
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f'b"{quote(bytes(v))}"'
    if isinstance(v, int):
        signed = isinstance(v, (Byte, Short, Int, Long, Timestamp)) or type(v) is int
        return str(int(v)) if signed else f"0x{int(v):x}"
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, uuid.UUID):
        return f"UUID({v})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{inspect(k)}={inspect(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return f"[{', '.join(inspect(x) for x in v)}]"
    raise TypeError(f"no proton form for {type(v).__name__}")


def frame_text(item: Any) -> str:
    if isinstance(item, ProtocolHeader):
        return "SASL" if item.raw[4] == 3 else "AMQP"
    if item.body is None:
        return "(EMPTY FRAME)"
    text = inspect(item.body)
    payload = bytes(item.payload)
    if payload:
        shown = quote(payload[:SHOWN_PAYLOAD])
        if len(payload) > SHOWN_PAYLOAD:  # (as newer proton: bare, and cut)
            text += f" ({len(payload)}) {shown} ... (truncated)"
        else:  # (as older proton: quoted)
            text += f' ({len(payload)}) "{shown}"'
    return text


# --- logs from a capture ------------------------------------------------------------------


def capture_lines(capture: str) -> Iterator[tuple[int, int, bool, str, int]]:
    """(connection number, time ns, client's side, frame text, channel) of every frame and
    header in the capture, in order; (…, "EOS", …) where a direction ends."""
    readers: dict[tuple[int, int], FrameReader] = {}
    numbers: dict[int, int] = {}
    for e in read_capture(capture):
        if isinstance(e, Data):
            n = numbers.setdefault(id(e.flow), len(numbers) + 1)
            r = readers.setdefault((n, e.direction), FrameReader())
            for item in r.feed(e.data):
                channel = getattr(item, "channel", None)
                yield n, e.time_ns, e.direction == C2S, frame_text(item), channel
        elif isinstance(e, Closed) and id(e.flow) in numbers:
            yield numbers[id(e.flow)], e.time_ns, e.direction == C2S, "EOS", None


def _router_time(ns: int) -> str:
    t = dt.datetime.fromtimestamp(ns // 1_000_000_000, dt.UTC)
    return f"{t:%Y-%m-%d %H:%M:%S}.{ns % 1_000_000_000 // 1000:06d} +0000"


def write_logs(capture: str, out: Path) -> dict[str, Path]:
    """`router.log` (the server's side, as a router logs it) and `proton.log` (the
    client's, as PN_TRACE_FRM=1 prints it) of the capture's traffic."""
    router, proton = out / "router.log", out / "proton.log"
    seen: set[int] = set()
    with open(router, "w") as rf, open(proton, "w") as pf:
        for n, ns, from_client, text, channel in capture_lines(capture):
            ch = "" if channel is None else str(channel)
            stamp = _router_time(ns)
            if n not in seen:
                seen.add(n)
                rf.write(f"{stamp} SERVER (info) [C{n}] Accepted connection to 0.0.0.0:5672 "
                         f"from 10.1.0.{n}:{40000 + n}\n")
            rf.write(f"{stamp} PROTOCOL (trace) [C{n}]:{ch} {'<-' if from_client else '->'} "
                     f"{text} (/build/src/server.c:1234)\n")
            pf.write(f"[0x55d0c8a4{n:04x}]:{ch} {'->' if from_client else '<-'} {text}\n")
            if text == "EOS" and not from_client:
                rf.write(f"{stamp} SERVER (info) [C{n}] Connection closed\n")
    return {"router": router, "proton": proton}


# --- timing -----------------------------------------------------------------------------

_READER = """
import json, sys, time
from amqpcli.capture.tracelog import read_trace_logs
t0, w0 = time.process_time(), time.perf_counter()
n = sum(1 for _ in read_trace_logs([sys.argv[1]], warn=lambda s: None))
print(json.dumps({"cpu": time.process_time() - t0, "wall": time.perf_counter() - w0,
                  "events": n}))
"""


def run_reader(code: Path, log: Path) -> float:
    r = subprocess.run([sys.executable, "-c", _READER, str(log)], env=_env(code), cwd=code,
                       capture_output=True, text=True, check=True)
    return float(json.loads(r.stdout)["cpu"])


def run_command(code: Path, log: Path, *args: str) -> float:
    """CPU seconds (user + system) of one `pcap-dump` process, output to /dev/null."""
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen([sys.executable, "-m", "amqpcli", "pcap-dump", str(log), *args],
                             env=_env(code), cwd=code, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0,):
        raise SystemExit(f"pcap-dump {log} {' '.join(args)} failed ({status})")
    return float(usage.ru_utime + usage.ru_stime)


def _env(code: Path) -> dict[str, str]:
    """(Run in `code` too: a process's own directory comes first on its path.)"""
    return {**os.environ, "PYTHONPATH": str(code)}


def main() -> None:
    # the module's text: its first paragraph as the description, the others (but the
    # usage line, which argparse writes) after the options
    first, _usage, *rest = (__doc__ or "").split("\n\n")
    ap = argparse.ArgumentParser(description=" ".join(first.split()),
                                 epilog="\n\n".join(rest),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bench/tl"),
                    help="where the capture and the logs are written (and kept between "
                         "runs: the capture is made once) (default: %(default)s)")
    ap.add_argument("--connections", type=int, default=20,
                    help="connections of the generated capture (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=3,
                    help="runs of each measure: best and worst are printed "
                         "(default: %(default)s)")
    ap.add_argument("--code", type=Path, action="append", metavar="DIR",
                    help="a tree holding the amqpcli package to time; repeat to compare "
                         "trees, which take turns (default: this checkout)")
    ap.add_argument("--only-generate", action="store_true",
                    help="write the capture and the logs, measure nothing")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    capture = args.dir / "cap.pcapng"
    if not capture.exists():
        subprocess.run([sys.executable, str(ROOT / "bench/gen_capture.py"), str(capture),
                        "--connections", str(args.connections)], check=True)
    logs = write_logs(str(capture), args.dir)
    for kind, log in logs.items():
        with open(log, "rb") as f:
            lines = sum(1 for _ in f)
        print(f"{kind}: {log} {lines:,} lines, {log.stat().st_size / 1e6:.1f} MB")
    if args.only_generate:
        return
    codes = args.code or [ROOT]
    measures = [("reader", None), ("--frames-only", ("--frames-only",)), ("default", ())]
    results: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(args.runs):
        for kind, log in logs.items():
            for name, cmd in measures:
                for code in codes:  # (alternately: the machine's load drifts)
                    cpu = run_reader(code, log) if cmd is None else run_command(code, log, *cmd)
                    results.setdefault((str(code), kind, name), []).append(cpu)
    print(f"{'code':<24} {'log':<7} {'measure':<14} {'best s':>7} {'worst s':>7} "
          f"{'lines/s':>9} {'MB/s':>6}")
    for (code, kind, name), cpus in results.items():
        log = logs[kind]
        with open(log, "rb") as f:
            lines = sum(1 for _ in f)
        best = min(cpus)
        print(f"{code[-24:]:<24} {kind:<7} {name:<14} {best:7.2f} {max(cpus):7.2f} "
              f"{lines / best:9,.0f} {log.stat().st_size / 1e6 / best:6.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


if __name__ == "__main__":
    main()
