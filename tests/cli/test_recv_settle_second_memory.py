"""`amqp recv --settle-mode second` keeps only the deliveries the peer has not settled yet
(our outcome holds once it has), not every message of the run with its payload: its
memory does not grow with the length of the run, and stays that of `--settle-mode first`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

MESSAGES = 20_000
BODY = "x" * 4000  # 80 MB in all: what the run would keep if it kept every message


def _recv_peak_kb(url: str, settle_mode: str) -> int:
    """Receive the queue's MESSAGES; the peak resident size of that recv, in KB."""
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "recv", url, "--settle-mode", settle_mode,
         "--count", str(MESSAGES), "--timeout", "30", "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO_ROOT, env=cli_env(),
    )
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, f"recv --settle-mode {settle_mode} exited {p.returncode}"
    return usage.ru_maxrss  # KB on Linux


def test_settle_mode_second_does_not_keep_the_run(serve: ServePeers) -> None:
    url = f"{serve()}/second"
    peaks = {}
    for mode in ("first", "second"):
        r = amqp("send", url, BODY, "--count", str(MESSAGES), "-q")
        assert r.returncode == 0, r.stderr
        peaks[mode] = _recv_peak_kb(url, mode)
    # Keeping every message would add some 80 MB to the run; allow a quarter of that.
    assert peaks["second"] < peaks["first"] + 20_000, peaks
