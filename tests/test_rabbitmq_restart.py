"""A RabbitMQ restart in the middle of a run, with `--reconnect`: the sender and the
receiver carry on, nothing sent after the reconnect is lost. Whether the broker's
session `end` (amqp:internal-error "shutdown") arrives before the socket closes depends on
timing, so the rule that makes it a drop rather than a refusal (exit 4) is held by
tests/net/test_forced_close.py; this test holds the whole run against the real broker.
Restarts a node, so it is one test covering a sender and a receiver at once; the node is
a private one of its own (a copy of scripts/rabbitmq.sh elsewhere: the node is named after
the checkout's path), so tests running beside it keep the suite's node."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

SENDS = 60


def _node(script: Path, step: str, port: int | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AMQP_TEST_RABBITMQ_PORT"}
    if port is not None:
        env["AMQP_TEST_RABBITMQ_PORT"] = str(port)
    r = subprocess.run([str(script), step], capture_output=True, text=True, env=env,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip()


@pytest.fixture
def private_node(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A RabbitMQ node of this test's own: its URL and the script that runs it."""
    script = tmp_path / "checkout" / "scripts" / "rabbitmq.sh"
    script.parent.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "scripts" / "rabbitmq.sh", script)
    # a port of its own to start from (the script takes the next free one from it): two
    # private nodes starting at once from 5672 could pick the same one
    port = random.randrange(20_000, 40_000)
    try:
        yield _node(script, "start", port).splitlines()[-1], script
    finally:
        _node(script, "stop")


def _restart(url: str, script: Path) -> None:
    port = urlsplit(url).port
    _node(script, "stop")
    _node(script, "start", port)


def _lines(path: str) -> list[str]:
    with open(path) as f:
        return f.read().splitlines(keepends=True)


def _until(check: object, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end, "timed out"
        time.sleep(0.1)


def test_send_and_recv_outlive_a_broker_restart(private_node: tuple[str, Path],
                                                 tmp_path: Path) -> None:
    rabbitmq_url, script = private_node
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
        _restart(rabbitmq_url, script)
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
    # The node starts empty (scripts/rabbitmq.sh), so what was queued before the
    # restart is gone; from the first message after it, every one is there (a resent
    # one possibly twice): nothing lost across the reconnect.
    left = json_lines(amqp("recv", into, "--drain", "--json", "-q").stdout)
    numbers = {int(m["properties"]["message-id"][1:]) for m in left}
    assert numbers and numbers == set(range(min(numbers), SENDS + 1)), sorted(numbers)
    assert min(numbers) > 1  # (the restart did come while the sender ran)
