"""`amqp serve` for the send/recv/browse tests: the real command in a subprocess.

``ServePeers()`` as a fixture: ``start(*args)`` runs ``amqp serve --listen 127.0.0.1:0
ARGS``, waits for its "listening on" line and returns its ``amqp://`` URL; `close` stops
every one it started.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

from tests.net.clirun import cli_env
from tests.paths import REPO_ROOT


class ServePeers:
    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def __call__(self, *args: str, stdout: Path | None = None) -> str:
        """`stdout`: a file for what serve prints there (its `--trace`)."""
        out = open(stdout, "w") if stdout is not None else subprocess.DEVNULL  # noqa: SIM115
        p = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "serve", "--listen", "127.0.0.1:0", *args],
            stdout=out, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(),
        )
        if stdout is not None:
            out.close()  # the child has its own copy
        self.procs.append(p)
        assert p.stderr is not None
        for line in p.stderr:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m:
                # Keep reading its log, so a full pipe never stalls it.
                threading.Thread(target=p.stderr.read, daemon=True).start()
                return f"amqp://127.0.0.1:{m.group(1)}"
        raise AssertionError(f"amqp serve did not start (exit {p.wait()})")

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
