"""`send --rate R`: each message at least 1/R after the one before, however long the run
waited before it (for input, credit, a reconnect). It used to keep to a schedule from
the start, and after a wait sent what the schedule had fallen behind by at once: a pause
of 1.5 s in the input at `--rate 10` gave a burst of 15 messages.

Only a lower bound on the run's time is asserted: a slow machine makes it longer, never
shorter."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

RATE = 10
PAUSE = 1.5
AFTER = 20  # messages after the pause


def _until_sent(p: subprocess.Popen[str], n: int) -> None:
    """Read the run's progress reports (`--report-every`, JSON on stderr) until one says
    `n` were sent."""
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith('{"report"') and json.loads(line)["report"]["sent"] >= n:
            return
    raise AssertionError("the run ended before it sent the first")


def test_a_pause_in_the_input_earns_no_burst(serve: ServePeers) -> None:
    url = serve("-q") + "/paced"
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, "--lines", "--rate", str(RATE),
         "--json", "--report-every", "0.1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env())
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write("first\n")
    p.stdin.flush()
    _until_sent(p, 1)  # (the pause comes after the first went: the run is under way)
    time.sleep(PAUSE)
    written = time.monotonic()
    p.stdin.write("".join(f"{i}\n" for i in range(AFTER)))
    p.stdin.close()
    out = p.stdout.read()
    assert p.wait(60) == 0
    ended = time.monotonic()
    summary = json.loads(out)
    assert summary["sent"] == summary["accepted"] == AFTER + 1
    # the 20 written after the pause go a tenth of a second apart: the last 1.9 s after
    # they were written at least (with the burst, at once: the schedule from the start
    # had fallen 15 behind)
    assert ended - written >= (AFTER - 1) / RATE


def test_a_message_read_and_not_sent_is_not_taken(serve: ServePeers, tmp_path: Path) -> None:
    """Interrupted while a message read from the input waits for its turn: the resume
    line is that message's, not the one after it."""
    url = serve("-q") + "/held"
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{i}\n" for i in range(1, 101)))
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, "--lines", "--file", str(path),
         "--rate", "2", "--json", "--report-every", "0.1"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env())
    _until_sent(p, 1)  # (the next one now waits half a second for its turn)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    summary = json.loads(out)
    assert p.returncode == 130, err
    sent = summary["sent"]
    assert sent >= 1 and summary["messages"] == sent + summary.get("not-sent", 0)
    assert summary["input"] == {"name": str(path), "read-to-end": False,
                                "messages-taken": sent, "last-line-read": sent,
                                "lines-not-read": 100 - sent}
