"""Running the `amqp` command as a user would: a subprocess, its exit code and output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.paths import REPO_ROOT


def cli_env() -> dict[str, str]:
    """The command's environment in tests: no colour, wide, no URL or password from
    outside."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("AMQP_URL", None)
    env.pop("AMQP_PASSWORD", None)
    return env


def amqp(*args: str, input: bytes | None = None, timeout: float = 120,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m amqpcli ARGS``; stdout/stderr as text."""
    full_env = cli_env()
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "amqpcli", *args],
        input=input,
        capture_output=True,
        timeout=timeout,
        cwd=REPO_ROOT,
        env=full_env,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def amqp_stopped(args: list[str], ready: Callable[[], bool], sig: signal.Signals,
                 poll: float = 0.02) -> tuple[int, str]:
    """Run ``python -m amqpcli ARGS`` until `ready()` holds (polled), then send it `sig`:
    its exit code and stderr. It must still be running when `ready` first holds; the
    minute's bound is a hang guard, not a timing test."""
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env())
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert p.poll() is None and time.monotonic() < deadline, "the run stopped early"
            time.sleep(poll)
        assert p.poll() is None, "the run ended before it was signalled"
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, err


def pipe_held(fd: int) -> int:
    """How many bytes a pipe holds unread (Linux's FIONREAD)."""
    import fcntl
    import termios

    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def queue_name(prefix: str = "t") -> str:
    """A fresh queue name, so tests never see each other's messages."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def amqp_in_process(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """`amqp ARGS` in this process (faster than a subprocess, for commands that need no
    signals or real stdio): (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from amqpcli.cli.app import main

    runner = CliRunner()
    code = 0
    with runner.isolation(input=stdin) as (out, err, _):
        try:
            main(list(args))
        except SystemExit as e:
            code = int(e.code or 0)
        sys.stdout.flush()
        sys.stderr.flush()
        result = code, out.getvalue().decode(), err.getvalue().decode()
    return result
