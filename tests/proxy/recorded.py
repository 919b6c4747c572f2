"""A proxy between a scripted client and `amqp serve`, recording what passes: what the
proxy printed, and what `amqp pcap-dump` prints of its recording, to compare."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROXY = [sys.executable, "-m", "amqpcli", "proxy"]


def listening(stream: Any) -> int:
    """The port of the first line of `stream`: `… listening on 127.0.0.1:PORT …`."""
    line = stream.readline()
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    assert m, line
    return int(m.group(1))


def proxied_and_dumped(tmp_path: Path, client: Callable[[int], None], as_json: bool,
                       *serve_args: str) -> tuple[str, str]:
    """`client(port)` run through `amqp proxy --record` to `amqp serve SERVE_ARGS`, the
    proxy stopped (SIGINT) after it: (what the proxy printed, what `amqp pcap-dump`
    prints of the recording), both with `--json` or neither."""
    json_arg = ["--json"] if as_json else []
    serve = subprocess.Popen([sys.executable, "-m", "amqpcli", "serve", "-l", "127.0.0.1:0",
                              "--no-sasl", *serve_args, "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    proxy = None
    try:
        upstream = listening(serve.stdout)
        record = tmp_path / "p.pcapng"
        proxy = subprocess.Popen(PROXY + ["127.0.0.1:0", f"amqp://127.0.0.1:{upstream}",
                                          "--record", str(record), *json_arg],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client(listening(proxy.stderr))
        proxy.send_signal(signal.SIGINT)
        out, _ = proxy.communicate(timeout=60)
    finally:
        for p in (proxy, serve):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record),
                           *json_arg], check=True, capture_output=True, text=True,
                          timeout=60).stdout
    return out, dump
