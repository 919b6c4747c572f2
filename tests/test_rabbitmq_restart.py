"""A RabbitMQ restart in the middle of a run, with `--reconnect`: the sender and the
receiver carry on, nothing sent after the reconnect is lost. Whether the broker's
session `end` (amqp:internal-error "shutdown") arrives before the socket closes depends on
timing, so the rule that makes it a drop rather than a refusal (exit 4) is held by
tests/net/test_forced_close.py; this test holds the whole run against the real broker.
Restarts the test node, so it is one test covering a sender and a receiver at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

SENDS = 60


def _restart(url: str) -> None:
    env = {**os.environ, "AMQP_TEST_RABBITMQ_PORT": str(urlsplit(url).port)}
    script = str(REPO_ROOT / "scripts" / "rabbitmq.sh")
    for step in ("stop", "start"):
        r = subprocess.run([script, step], capture_output=True, text=True, env=env,
                           timeout=300, check=False)
        assert r.returncode == 0, r.stdout + r.stderr


def _lines(path: str) -> list[str]:
    with open(path) as f:
        return f.read().splitlines(keepends=True)


def _until(check: object, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end, "timed out"
        time.sleep(0.1)


def test_send_and_recv_outlive_a_broker_restart(rabbitmq_url: str, tmp_path: object) -> None:
    into, outof = f"{rabbitmq_url}//queue/{queue_name('rs')}", f"{rabbitmq_url}//queue/{queue_name('rr')}"
    assert amqp("send", outof, "before", "-c", "3", "-q").returncode == 0
    got = os.path.join(str(tmp_path), "got.jsonl")
    py = [sys.executable, "-m", "amqpcli"]
    with open(got, "w") as out:
        recv = subprocess.Popen([*py, "recv", outof, "--json", "-c", "6", "--reconnect", "10",
                                 "--timeout", "120"], stdout=out, stderr=subprocess.PIPE,
                                text=True, env=cli_env())
        send = subprocess.Popen([*py, "send", into, "x", "--message-id", "m{n}", "-c",
                                 str(SENDS), "--rate", "5", "--reconnect", "10", "--timeout",
                                 "60", "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=cli_env())
        _until(lambda: len(_lines(got)) == 3)
        time.sleep(1)  # a few sends go out before the restart
        _restart(rabbitmq_url)
        assert amqp("send", outof, "after", "-c", "3", "-q").returncode == 0
        _, r_err = recv.communicate(timeout=180)
        s_out, s_err = send.communicate(timeout=180)
    assert recv.returncode == 0, r_err
    bodies = [m["body"]["data"][0]["binary-text"] for m in json_lines("".join(_lines(got)))]
    assert bodies == ["before"] * 3 + ["after"] * 3
    assert "reconnect" in r_err, r_err
    summary = json_lines(s_out)[-1]
    assert send.returncode == 0, (s_out, s_err)
    assert summary["reconnects"] >= 1 and summary["in-doubt"] == 0, summary
    # The test node starts empty (scripts/rabbitmq.sh), so what was queued before the
    # restart is gone; from the first message after it, every one is there (a resent
    # one possibly twice): nothing lost across the reconnect.
    left = json_lines(amqp("recv", into, "--drain", "--json", "-q").stdout)
    numbers = {int(m["properties"]["message-id"][1:]) for m in left}
    assert numbers and numbers == set(range(min(numbers), SENDS + 1)), sorted(numbers)
    assert min(numbers) > 1  # (the restart did come while the sender ran)
