"""`send --rate R`: each message at least 1/R after the one before, however long the run
waited before it (for input, credit, a reconnect). It used to keep to a schedule from
the start, and after a wait sent what the schedule had fallen behind by at once: a pause
of 1.5 s in the input at `--rate 10` gave a burst of 15 messages.

Only a lower bound on the run's time is asserted: a slow machine makes it longer, never
shorter."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

RATE = 10
PAUSE = 1.5
AFTER = 20  # messages after the pause


def test_a_pause_in_the_input_earns_no_burst(serve: ServePeers) -> None:
    url = serve("-q") + "/paced"
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, "--lines", "--rate", str(RATE),
         "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=REPO_ROOT, env=cli_env())
    assert p.stdin is not None

    written: list[float] = []

    def write() -> None:
        assert p.stdin is not None
        p.stdin.write("first\n")
        p.stdin.flush()
        time.sleep(PAUSE)
        written.append(time.monotonic())
        p.stdin.write("".join(f"{i}\n" for i in range(AFTER)))
        p.stdin.close()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert p.stdout is not None and p.stderr is not None
    out, err = p.stdout.read(), p.stderr.read()  # (the writer closes standard input)
    writer.join(10)
    assert p.wait(60) == 0, err
    ended = time.monotonic()
    summary = json.loads(out)
    assert summary["sent"] == summary["accepted"] == AFTER + 1
    # the 20 written after the pause go a tenth of a second apart: the last 1.9 s after
    # they were written at least (with the burst, about 0.5 s: the last at 2 s from the
    # start)
    assert ended - written[0] >= (AFTER - 1) / RATE


def test_a_message_read_and_not_sent_is_not_taken(serve: ServePeers, tmp_path: Path) -> None:
    """Interrupted while a message read from the input waits for its turn: the resume
    line is that message's, not the one after it."""
    url = serve("-q") + "/held"
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{i}\n" for i in range(1, 101)))
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, "--lines", "--file", str(path),
         "--rate", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=REPO_ROOT, env=cli_env())
    time.sleep(2.2)  # (1 to 5 sent by then, the next waiting for its turn)
    p.send_signal(2)
    out, err = p.communicate(timeout=60)
    summary = json.loads(out)
    assert p.returncode == 130, err
    sent = summary["sent"]
    assert sent >= 1 and summary["not-sent"] == 1 and summary["messages"] == sent + 1
    assert summary["input"] == {"name": str(path), "read-to-end": False,
                                "messages-taken": sent, "last-line-read": sent,
                                "lines-not-read": 100 - sent}
