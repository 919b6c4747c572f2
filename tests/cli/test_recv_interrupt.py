"""Ctrl-C during `amqp recv` always closes cleanly and prints the summary, even on an empty
node, even when SIGINT comes twice (as `timeout -s INT` sends it: to the process, then
to its group)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _interrupt_recv(url: str, *, twice: bool) -> subprocess.CompletedProcess[str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "recv", url, "--json", "--credit", "500"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(),
    )
    time.sleep(2.5)  # started, connected, receiving (or waiting on an empty node)
    p.send_signal(signal.SIGINT)
    if twice:  # as `timeout -s INT` does: the process, then its group
        time.sleep(0.002)
        p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.mark.parametrize("twice", [False, True])
def test_interrupted_recv_prints_its_summary(serve: ServePeers, twice: bool) -> None:
    url = serve()
    for _ in range(3):
        r = _interrupt_recv(f"{url}/empty-{int(twice)}", twice=twice)
        assert r.returncode == 130, r.stderr
        assert re.search(r"^amqp: received 0 in ", r.stderr, re.MULTILINE), r.stderr
        assert "amqp: error: interrupted" in r.stderr and "Traceback" not in r.stderr


def test_interrupted_busy_recv_loses_nothing(serve: ServePeers) -> None:
    url = serve()
    n = 60_000
    r = amqp("send", f"{url}/busy", "x", "--count", str(n), "--message-id", "{n}", "-q")
    assert r.returncode == 0, r.stderr
    r = _interrupt_recv(f"{url}/busy", twice=True)
    assert r.returncode == 130, r.stderr
    m = re.search(r"^amqp: received (\d+), accept (\d+) in ", r.stderr, re.MULTILINE)
    assert m, r.stderr
    got = json_lines(r.stdout)  # whole lines only
    assert len(got) == int(m.group(1)) == int(m.group(2))
    rest = amqp("recv", f"{url}/busy", "-t", "2", "--json", "--credit", "1000")
    ids = [x["properties"]["message-id"] for x in got + json_lines(rest.stdout)]
    assert sorted(ids, key=int) == [str(i) for i in range(1, n + 1)]
