"""Ctrl-C during `amqp recv` always closes cleanly and prints the summary, even on an empty
node, even when SIGINT comes twice (as `timeout -s INT` sends it: to the process, then
to its group)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _interrupt_recv(url: str, *, twice: bool, out: Path,
                    ready: Callable[[], bool]) -> subprocess.CompletedProcess[str]:
    """Run recv writing to `out`, interrupt it once `ready()` says it is where the test
    wants it, and return how it ended (its output read back from `out`)."""
    with open(out, "w") as f:
        p = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "recv", url, "--json", "--credit", "500"],
            stdout=f, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(),
        )
    try:
        guard = time.monotonic() + 60  # (against a hang: not a time limit)
        while not ready():
            assert p.poll() is None, p.communicate()[1]
            assert time.monotonic() < guard, "recv never got there"
            time.sleep(0.01)
        p.send_signal(signal.SIGINT)
        if twice:  # as `timeout -s INT` does: the process, then its group
            time.sleep(0.002)
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out.read_text(), err)


def _credit_granted(trace: Path, connection: int) -> Callable[[], bool]:
    """Whether serve's trace shows recv's flow on its `connection`-th connection: recv
    waits on the empty node then."""
    flow = re.compile(rf"^\S+ c{connection} -> \[\d+\]\s+flow ", re.MULTILINE)
    return lambda: bool(flow.search(trace.read_text()))


@pytest.mark.parametrize("twice", [False, True])
def test_interrupted_recv_prints_its_summary(serve: ServePeers, twice: bool,
                                             tmp_path: Path) -> None:
    trace = tmp_path / "serve.trace"
    url = serve("--trace", stdout=trace)
    for i in range(1, 4):
        r = _interrupt_recv(f"{url}/empty-{int(twice)}", twice=twice, out=tmp_path / "out",
                            ready=_credit_granted(trace, i))
        assert r.returncode == 130, r.stderr
        assert re.search(r"^amqp: received 0 in ", r.stderr, re.MULTILINE), r.stderr
        assert "amqp: error: interrupted" in r.stderr and "Traceback" not in r.stderr


def test_interrupted_busy_recv_loses_nothing(serve: ServePeers, tmp_path: Path) -> None:
    url = serve()
    n = 20_000
    r = amqp("send", f"{url}/busy", "x", "--count", str(n), "--message-id", "{n}", "-q")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    # interrupted as soon as messages flow: in the middle of the stream
    r = _interrupt_recv(f"{url}/busy", twice=True, out=out,
                        ready=lambda: out.stat().st_size > 0)
    assert r.returncode == 130, r.stderr
    m = re.search(r"^amqp: received (\d+), accept (\d+) in ", r.stderr, re.MULTILINE)
    assert m, r.stderr
    got = json_lines(r.stdout)  # whole lines only
    assert len(got) == int(m.group(1)) == int(m.group(2))
    assert 0 < len(got) < n, len(got)  # (it was interrupted while busy)
    rest = amqp("recv", f"{url}/busy", "--drain", "--json", "--credit", "1000")
    ids = [x["properties"]["message-id"] for x in got + json_lines(rest.stdout)]
    assert sorted(ids, key=int) == [str(i) for i in range(1, n + 1)]
