"""An operator closing RabbitMQ's connections (`rabbitmqctl close_all_connections REASON`)
is a lost connection that `--reconnect` cures, for a sender and a receiver: each
reconnects and completes, nothing lost. RabbitMQ 3.10 ends the session with
amqp:internal-error "{shutdown,{connection_closing,{server_initiated_close,320,<<...>>}}}"
(tests/net/test_forced_close.py holds which descriptions are a drop); only "shutdown" was
taken for one, so the run ended with exit 7 (send) or 4 (recv), no reconnect tried.

The connections closed are the test's own: they are made to a vhost of the test's own
(--open-hostname vhost:NAME), and only that vhost's are closed, so the tests running
beside it on the node keep theirs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import cli_env
from tests.rabbitmqctl import own_vhost, rabbitmqctl

pytestmark = pytest.mark.integration

N = 200
RATE = "25"  # messages a second, each way: a run of 8 s, the close comes in it


@pytest.fixture
def vhost(rabbitmq_url: str) -> Iterator[str]:
    """A vhost of this test's own on the test node."""
    yield from own_vhost("qa-close")


def _until(check: Callable[[], bool], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.2)


def _queued(vhost: str, queue: str) -> int:
    for line in rabbitmqctl("list_queues", "-p", vhost, "--no-table-headers",
                     "name", "messages").splitlines():
        name, _, count = line.partition("\t")
        if name == queue:
            return int(count)
    return 0


def _numbers(messages: list[dict[str, object]]) -> set[int]:
    return {int(m["application-properties"]["sn"]["ulong"]) for m in messages}  # type: ignore[index]


def test_send_and_recv_reconnect_after_an_operator_closes_their_connections(
        rabbitmq_url: str, vhost: str, tmp_path: Path) -> None:
    here = ("--open-hostname", f"vhost:{vhost}")
    names = {q: queue_name(q) for q in ("in", "out", "idle")}
    into, outof, idle = (f"{rabbitmq_url}//queue/{name}" for name in names.values())
    assert amqp("send", outof, "x", "-c", str(N), "--sequence", "-q", *here).returncode == 0
    got = tmp_path / "got.jsonl"

    def start(*args: str, stdout: IO[str] | int = subprocess.PIPE) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "amqpcli", *args, *here], stdout=stdout,
                                stderr=subprocess.PIPE, text=True, env=cli_env())

    with open(got, "w") as out:
        runs = [
            # until the queue is empty (--count would count twice a message that comes
            # again, its settlement cut off by the close)
            start("recv", outof, "--timeout", "5", "--rate", RATE, "--verify-sequence",
                  "--sequence-start", "1", "--reconnect", "5", "--json", "--json-summary",
                  stdout=out),
            start("send", into, "x", "-c", str(N), "--rate", RATE, "--sequence",
                  "--message-id", "id{n}", "--reconnect", "5", "--timeout", "60", "--json"),
            start("recv", idle, "--timeout", "60"),  # no --reconnect: the close is its end
        ]
        try:
            # the sender and the receiver well into their runs, neither done
            _until(lambda: len(got.read_text().splitlines()) >= 20)
            _until(lambda: _queued(vhost, names["in"]) >= 20)
            said = rabbitmqctl("close_all_connections", "-p", vhost, "qa maintenance")
            (_, r_err), (s_out, s_err), (_, i_err) = (p.communicate(timeout=120) for p in runs)
        finally:
            for p in runs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    recv, send, lone = runs
    assert "Closed 3 connections" in said, said  # the test's, no others

    # recv: reconnected, every number from 1 to N written (a duplicate is counted, a gap
    # would have failed the run)
    assert recv.returncode == 0, r_err
    (summary,) = [json.loads(x)["recv"] for x in r_err.splitlines() if x.startswith("{")]
    assert summary.get("reconnects", 0) >= 1, summary
    assert _numbers(json_lines(got.read_text())) == set(range(1, N + 1))

    # send: reconnected, none in doubt, every number in the queue (a resent one maybe twice)
    assert send.returncode == 0, (s_out, s_err)
    s_summary = json_lines(s_out)[-1]
    assert s_summary.get("reconnects", 0) >= 1 and s_summary["in-doubt"] == 0, s_summary
    left = json_lines(amqp("recv", into, "--drain", "--json", "-q", *here).stdout)
    assert _numbers(left) == set(range(1, N + 1))

    # without --reconnect: one line, the operator's reason as its text
    assert lone.returncode == 4, i_err
    assert i_err.splitlines() == [(
        "amqp: error: the peer ended the session: amqp:internal-error: {shutdown,"
        '{connection_closing,{server_initiated_close,320,<<"qa maintenance">>}}}')], i_err
