"""`amqp serve` as the tests run it: the real command in a subprocess on a free port.

``serve(*args)`` starts ``amqp serve --listen 127.0.0.1:0 ARGS``, waits for its
"listening on" line and returns a `Served` (``url``, ``log`` lines so far, ``wait_log``);
every process it starts is stopped at teardown.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.paths import REPO_ROOT

_LISTENING = re.compile(r"listening on 127\.0\.0\.1:(\d+)")
_START_WAIT = 60.0  # a hang guard for a slow machine, not a measurement


class Served:
    def __init__(self, args: tuple[str, ...]) -> None:
        env = {**os.environ, "NO_COLOR": "1"}
        env.pop("AMQP_PASSWORD", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "serve", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT, env=env, text=True,
        )
        self.lines: list[str] = []
        self.stdout: list[str] = []
        self._changed = threading.Condition()
        self.port: int | None = None
        threading.Thread(target=self._read, args=(self.proc.stderr, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout), daemon=True).start()
        self.wait_log(r"listening on", _START_WAIT)
        for line in self.lines:
            m = _LISTENING.search(line)
            if m:
                self.port = int(m.group(1))
        assert self.port is not None, self.lines

    def _read(self, stream: object, into: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                into.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def url(self) -> str:
        return f"amqp://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_log(self, pattern: str, timeout: float = 30.0) -> str:
        """The first log line (stderr) matching `pattern`; `timeout` is a hang guard."""
        return self._wait(self.lines, pattern, timeout)

    def wait_out(self, pattern: str, timeout: float = 30.0) -> str:
        """The first stdout line (--trace) matching `pattern`."""
        return self._wait(self.stdout, pattern, timeout)

    def _wait(self, lines: list[str], pattern: str, timeout: float) -> str:
        rx = re.compile(pattern)
        with self._changed:
            self._changed.wait_for(
                lambda: any(rx.search(x) for x in lines) or self.proc.poll() is not None,
                timeout,
            )
            for x in lines:
                if rx.search(x):
                    return x
            text = "\n".join(lines)
        raise AssertionError(f"no line matching {pattern!r}:\n{text}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(*args: str) -> Served:
        s = Served(args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
