"""SIGTERM (a service manager, `kill`, `timeout`) stops send, recv and browse as Ctrl-C
does: the run closes, its summary is printed, and a send's unconfirmed messages are
reported in doubt (exit 7, which wins over 130). It used to raise KeyboardInterrupt
wherever the process was: no summary, no in-doubt list, and the close waited out a
timeout."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _terminated(*args: str, after: float = 2.5) -> subprocess.CompletedProcess[str]:
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env())
    time.sleep(after)  # started, connected, waiting
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_a_terminated_send_reports_its_unconfirmed_messages_in_doubt(
        serve: ServePeers) -> None:
    url = serve("--settle-delay", "60000")  # no outcome before the signal
    r = _terminated("send", f"{url}/k", "x", "-c", "5", "--message-id", "id-{n}", "--json")
    assert r.returncode == 7, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["in-doubt"] == 5, summary
    assert "id-5" in r.stdout
    assert "Traceback" not in r.stderr


def test_a_terminated_recv_prints_its_summary(serve: ServePeers) -> None:
    url = serve()
    r = _terminated("recv", f"{url}/empty", "--json")  # waits for messages: none come
    assert r.returncode == 130, r.stderr
    assert re.search(r"^amqp: received 0 in ", r.stderr, re.MULTILINE), r.stderr
    assert "Traceback" not in r.stderr


def test_a_terminated_browse_says_what_it_saw(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/many", "x", "-c", "30000", "-q").returncode == 0
    r = _terminated("browse", f"{url}/many", "--credit", "100")
    assert r.returncode == 130, r.stderr
    assert re.search(r"amqp: \d+ messages seen on 'many' before the interrupt", r.stderr), (
        r.stderr)
