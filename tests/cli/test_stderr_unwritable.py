"""A standard error that cannot be written (full, its reader gone, closed) loses the error,
warning and summary lines, never the run's own exit code: a receive that succeeded stays
0, a connection error stays 3, a usage error 2, and none becomes 1 ("internal error")."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from proton import Message

from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peers import Broker

STDERRS = ["full", "reader-gone", "closed"]


@contextmanager
def _stderr(kind: str) -> Iterator[Any]:
    """What the child gets as fd 2: `subprocess` arguments."""
    if kind == "full":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        with open("/dev/full", "w") as f:
            yield {"stderr": f}
    elif kind == "reader-gone":
        r, w = os.pipe()
        os.close(r)  # every write gets EPIPE
        try:
            yield {"stderr": w}
        finally:
            os.close(w)
    else:
        # started with fd 2 closed (`2>&-`)
        yield {"stderr": None, "preexec_fn": lambda: os.close(2)}


def _run(kind: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    with _stderr(kind) as how:
        return subprocess.run(
            [sys.executable, "-m", "amqpcli", *args], stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL, cwd=REPO_ROOT, env=cli_env(), timeout=120,
            check=False, **how)


@pytest.mark.parametrize("kind", STDERRS)
def test_connection_error_keeps_its_exit_code(kind: str, free_port: int) -> None:
    r = _run(kind, "send", f"amqp://127.0.0.1:{free_port}/q", "x")
    assert r.returncode == 3
    assert r.stdout == b""  # the error line is lost, not written to stdout


@pytest.mark.parametrize("kind", STDERRS)
def test_usage_error_keeps_its_exit_code(kind: str) -> None:
    r = _run(kind, "send", "amqp://127.0.0.1:5672/q", "x", "--count", "0")
    assert r.returncode == 2
    assert r.stdout == b""


@pytest.mark.integration
@pytest.mark.parametrize("kind", STDERRS)
def test_recv_and_browse_summaries_lost_the_run_succeeds(kind: str, broker: Broker) -> None:
    broker.put("q", Message(body="a"), Message(body="b"))
    r = _run(kind, "browse", f"{broker.url}/q", "--json")
    assert r.returncode == 0
    assert r.stdout.count(b"\n") == 2
    r = _run(kind, "recv", f"{broker.url}/q", "--count", "1", "--json", "--trace")
    assert r.returncode == 0
    assert r.stdout.count(b"\n") == 1
    assert broker.queue_bodies("q") == ["b"]
