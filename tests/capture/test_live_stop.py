"""`amqp pcap-dump --live` stopped by Ctrl-C or SIGTERM: "amqp: interrupted", exit 130, and
nothing else on stderr (no asyncio "Task exception was never retrieved" traceback from
pyshark's read task). Live capture on lo needs root."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(x) for x in path.read_text().split()]
    except OSError:
        return []


def _names(pid: int) -> set[str]:
    """Command names of `pid`'s descendants."""
    names: set[str] = set()
    todo = _children(pid)
    while todo:
        child = todo.pop()
        try:
            names.add(Path(f"/proc/{child}/comm").read_text().strip())
        except OSError:
            continue
        todo += _children(child)
    return names


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stopping_a_live_capture_is_quiet(sig: signal.Signals) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "pcap-dump", "--live", "lo", "--capture-filter",
         f"tcp port {_free_port()}"],
        cwd=REPO_ROOT, env={**env, "NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # the signal reaches amqp only, as `kill PID` would
    )
    try:
        deadline = time.monotonic() + 30
        while not {"tshark", "dumpcap"} & _names(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "tshark did not start"
            time.sleep(0.1)
        time.sleep(1.5)  # tshark running, pyshark waiting for its first packet
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err == "amqp: interrupted\n"
