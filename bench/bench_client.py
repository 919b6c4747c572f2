"""Client benchmark: amqpcli and python-qpid-proton side by side against one RabbitMQ.

Each run is a separate process (one client, one direction, one settle mode) sending or
receiving N messages of S bytes through a fresh queue; the parent reads that process's
own resource usage (`os.wait4`), so the figures are the client's CPU and memory only.

    python bench/bench_client.py                       # 100,000 x 100 B, both clients
    python bench/bench_client.py --count 10000 --clients amqpcli
    python bench/bench_client.py --url amqp://guest:guest@127.0.0.1:5672

Reported per run: messages per second (wall), client CPU seconds (user+system) per
100,000 messages, peak RSS. `--memory` adds runs at N/10 to compare peak memory at
10k and 100k. The broker URL defaults to $AMQP_TEST_RABBITMQ_URL, else the project's
private node (scripts/rabbitmq.sh url).

`amqpcli` runs measure the client layer (`amqpcli.net`: the engine, the transport and
the send/receive loops, with received messages decoded but not printed); `amqpcli-cli`
runs measure the whole command (`amqp recv --json` into /dev/null).

Every child runs with its Python bytecode cached, as an installed package has it (pip
compiles what it installs, python-qpid-proton included): the children get a temporary
`PYTHONPYCACHEPREFIX` (and no `PYTHONDONTWRITEBYTECODE`), warmed up by one short run of
each client first. `--as-is` runs them in the environment as given instead (where
`PYTHONDONTWRITEBYTECODE` makes sources without a current .pyc compile in every run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


# --- the clients, run as child processes --------------------------------------------

def _config(url: str) -> object:
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.url import resolve_endpoint

    return ConnectionConfig(endpoint=resolve_endpoint(url))


def _amqpcli_send(url: str, n: int, size: int, settled: bool) -> None:
    from amqpcli.net.outgoing import MessageTemplate
    from amqpcli.net.sending import SendPlan, run_send

    cfg: Any = _config(url)
    tpl = MessageTemplate()
    body = b"x" * size
    msgs = (tpl.encode(i, body) for i in range(1, n + 1))
    s = run_send(cfg, SendPlan(address=cfg.endpoint.address or "", settled=settled,
                               window=1000, timeout=120), msgs)
    ok = s.settled if settled else s.accepted
    if ok != n or s.failure is not None:
        raise SystemExit(f"amqpcli send: {s.to_json()}")


class _NullSink:
    """Decodes each message (as recv does before writing) and drops it."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, incoming: object) -> None:
        msg = incoming.delivery.message()  # type: ignore[attr-defined]
        _ = msg.body
        self.count += 1

    def close(self) -> None:
        pass


def _amqpcli_recv(url: str, n: int, settled: bool) -> None:
    from amqpcli.net.receiving import RecvPlan, run_recv

    cfg: Any = _config(url)
    sink = _NullSink()
    # settled: the receiver asks for pre-settled deliveries (`amqp recv --presettled`)
    s = run_recv(cfg, RecvPlan(address=cfg.endpoint.address, count=n, timeout=30,
                               credit=1000, presettled=settled), sink)
    if sink.count != n or s.failure is not None:
        raise SystemExit(f"amqpcli recv: {s.to_json()}")


def _proton_send(url: str, n: int, size: int, settled: bool) -> None:
    from proton import Message
    from proton.handlers import MessagingHandler
    from proton.reactor import AtMostOnce, Container

    class Send(MessagingHandler):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.sent = 0
            self.confirmed = 0
            self.body = b"x" * size

        def on_start(self, event: object) -> None:
            opts = AtMostOnce() if settled else None
            event.container.create_sender(url, options=opts)  # type: ignore[attr-defined]

        def on_sendable(self, event: object) -> None:
            sender = event.sender  # type: ignore[attr-defined]
            while sender.credit and self.sent < n:
                sender.send(Message(body=self.body, inferred=True))
                self.sent += 1
            if settled and self.sent >= n:
                event.connection.close()  # type: ignore[attr-defined]

        def on_accepted(self, event: object) -> None:
            self.confirmed += 1
            if self.confirmed >= n:
                event.connection.close()  # type: ignore[attr-defined]

    handler = Send()
    Container(handler).run()
    done = handler.sent if settled else handler.confirmed
    if done != n:
        raise SystemExit(f"proton send: {done} of {n} confirmed")


def _proton_recv(url: str, n: int, settled: bool) -> None:
    from proton.handlers import MessagingHandler
    from proton.reactor import Container

    class Recv(MessagingHandler):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(prefetch=1000)
            self.got = 0

        def on_start(self, event: object) -> None:
            from proton.reactor import AtMostOnce

            opts = AtMostOnce() if settled else None
            event.container.create_receiver(url, options=opts)  # type: ignore[attr-defined]

        def on_message(self, event: object) -> None:
            _ = event.message.body  # type: ignore[attr-defined]
            self.got += 1
            if self.got >= n:
                event.connection.close()  # type: ignore[attr-defined]

    handler = Recv()
    Container(handler).run()
    if handler.got != n:
        raise SystemExit(f"proton recv: {handler.got} of {n} received")


def _child(args: argparse.Namespace) -> None:
    client, direction, mode = args.child
    settled = mode == "settled"
    if client == "amqpcli":
        if direction == "send":
            _amqpcli_send(args.url, args.count, args.size, settled)
        else:
            _amqpcli_recv(args.url, args.count, settled)
    elif client == "proton":
        if direction == "send":
            _proton_send(args.url, args.count, args.size, settled)
        else:
            _proton_recv(args.url, args.count, settled)
    else:
        raise SystemExit(f"unknown client {client}")


# --- the parent: runs, measures, reports ----------------------------------------------

@dataclass
class Run:
    client: str
    direction: str
    mode: str
    count: int
    wall: float
    cpu: float
    maxrss_kb: int
    broker_cpu: float | None = None

    @property
    def limit(self) -> str:
        """Which side had less idle time: the one whose CPU comes closest to the wall."""
        if self.broker_cpu is None:
            return "?"
        return "client" if self.cpu >= self.broker_cpu else "broker"

    @property
    def rate(self) -> float:
        return self.count / self.wall if self.wall else 0.0

    @property
    def cpu_per_100k(self) -> float:
        return self.cpu * 100_000 / self.count


def _broker_pid() -> int | None:
    pidfile = REPO / ".run" / "rabbitmq" / "rabbitmq.pid"
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _proc_cpu(pid: int | None) -> float | None:
    """User+system CPU seconds of a process so far (/proc), or None."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_ENV: dict[str, str] | None = None  # the children's environment (None: this one)


def _cached_bytecode_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="bench-pycache-")
    return env


def _measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=REPO, env=env if env is not None else _ENV)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed ({proc.returncode}): {' '.join(argv)}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def _one(client: str, direction: str, mode: str, url: str, queue: str, n: int,
         size: int) -> Run:
    target = f"{url}//queue/{queue}"  # RabbitMQ wants the leading slash; proton reads it alike
    if client == "amqpcli-cli":
        body = "x" * size
        if direction == "send":
            argv = [sys.executable, "-m", "amqpcli", "send", target, body, "-c", str(n), "-q",
                    "--window", "1000"] + (["--settled"] if mode == "settled" else [])
        else:
            argv = [sys.executable, "-m", "amqpcli", "recv", target, "-c", str(n), "-q",
                    "--credit", "1000", "--json", "--out", "/dev/null", "-t", "30"]
    else:
        argv = [sys.executable, __file__, "--child", client, direction, mode, "--url", target,
                "--count", str(n), "--size", str(size)]
    bpid = _broker_pid()
    b0 = _proc_cpu(bpid)
    wall, cpu, rss = _measure(argv)
    b1 = _proc_cpu(bpid)
    broker = b1 - b0 if b0 is not None and b1 is not None else None
    return Run(client, direction, mode, n, wall, cpu, rss, broker)


def _broker_url(given: str | None) -> str:
    if given:
        return given
    env = os.environ.get("AMQP_TEST_RABBITMQ_URL")
    if env:
        return env
    out = subprocess.run([str(REPO / "scripts" / "rabbitmq.sh"), "url"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=None)
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--clients", default="amqpcli,proton")
    ap.add_argument("--modes", default="unsettled,settled")
    ap.add_argument("--memory", action="store_true", help="also run at count/10 for memory")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--as-is", action="store_true",
                    help="run the children in this environment (no bytecode cache set up)")
    ap.add_argument("--child", nargs=3, metavar=("CLIENT", "DIRECTION", "MODE"))
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    url = _broker_url(args.url).rstrip("/")
    global _ENV
    if not args.as_is:
        _ENV = _cached_bytecode_env()
        for client in args.clients.split(","):  # warm-up: compile each client's modules
            q = f"bench-warmup-{uuid.uuid4().hex[:8]}"
            _one(client, "send", "unsettled", url, q, 10, args.size)
            _one(client, "recv", "unsettled", url, q, 10, args.size)
    runs: list[Run] = []
    counts = [args.count] + ([args.count // 10] if args.memory else [])
    for n in counts:
        for mode in args.modes.split(","):
            for client in args.clients.split(","):
                q = f"bench-{client}-{mode}-{uuid.uuid4().hex[:8]}"
                # a receive run drains what the send run of the same client put there
                runs.append(_one(client, "send", mode, url, q, n, args.size))
                runs.append(_one(client, "recv", mode, url, q, n, args.size))
    if args.json:
        print(json.dumps([r.__dict__ | {"rate": r.rate, "cpu_per_100k": r.cpu_per_100k,
                                        "limit": r.limit} for r in runs], indent=1))
        return
    print(f"{'client':12} {'dir':5} {'mode':10} {'count':>7} {'msg/s':>8} "
          f"{'CPU s/100k':>10} {'peak RSS MB':>11} {'wall s':>7} {'broker CPU s':>12} limit")
    for r in runs:
        bcpu = f"{r.broker_cpu:12.2f}" if r.broker_cpu is not None else f"{'?':>12}"
        print(f"{r.client:12} {r.direction:5} {r.mode:10} {r.count:7d} {r.rate:8.0f} "
              f"{r.cpu_per_100k:10.2f} {r.maxrss_kb / 1024:11.1f} {r.wall:7.2f} {bcpu} {r.limit}")


if __name__ == "__main__":
    main()
