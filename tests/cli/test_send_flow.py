"""Rate, duration, counts from input, heartbeats, and usage errors of `amqp send`."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp
from tests.peers import Broker, DirectReceiver

pytestmark = pytest.mark.integration


def test_rate_and_duration_bound_the_count(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/q", "x", "--duration", "1", "--rate", "20", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    # at most one per 1/20 s over one second (plus the first); at least one
    assert 1 <= s["sent"] <= 21 and s["accepted"] == s["sent"]


def test_heartbeats_keep_a_strict_peer_happy(peers: Callable[..., Any]) -> None:
    # The peer drops connections silent for 0.6 s; we send heartbeats at half that.
    broker = peers(Broker(idle_timeout=0.6))
    r = amqp("recv", f"{broker.url}/empty", "-t", "2.5")
    assert r.returncode == 0, r.stderr
    assert "received 0" in r.stderr


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--body-type", "blob"], "--body-type must be one of"),
        (["--txn-size", "2", "--presettled"], "--txn-size needs"),
        (["--txn-size", "2", "--settled"], "--txn-size needs"),  # the old spelling still works
        (["--rollback"], "--rollback needs --txn-size"),
        (["-P", "k:int=x"], "bad int value"),
        (["--priority", "300"], "--priority must be 0-255"),
        (["--from", "/nonexistent.jsonl"], "cannot read"),
    ],
)
def test_usage_errors(args: list[str], msg: str) -> None:
    body = [] if "--from" in args else ["x"]
    r = amqp("send", "amqp://127.0.0.1:1/q", *body, *args)
    assert r.returncode == 2 and msg in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_reconnect_also_waits_for_a_peer_that_is_not_up_yet(peers: Callable[..., Any]) -> None:
    import threading

    from tests.peers.net import free_port

    port = free_port()
    broker = Broker(port=port)
    starter = threading.Timer(1.0, lambda: peers(broker))
    starter.start()
    try:
        # backoff 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s: the broker is up long before the last try
        r = amqp("send", f"amqp://127.0.0.1:{port}/q", "late", "--reconnect", "5", "--json")
    finally:
        starter.join()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 1
    assert broker.queue_bodies("q") == [b"late"]


def test_no_reconnect_means_one_try() -> None:
    from tests.peers.net import free_port

    r = amqp("send", f"amqp://127.0.0.1:{free_port()}/q", "x")
    assert r.returncode == 3 and "connection refused" in r.stderr


def test_rate_after_a_credit_wait_spaces_the_next_message(
        direct_receiver: Callable[..., DirectReceiver]) -> None:
    """The message that waited for credit goes when the credit comes; the one after it
    still waits its 1/R, rather than going at once to catch up the time spent waiting.
    (Lower bounds on the sender's own stamps: a sleep is never shorter than asked.)"""
    import threading

    rcv = direct_receiver(credit=2, replenish=False)
    done: list[Any] = []
    run = threading.Thread(target=lambda: done.append(amqp(
        "send", f"{rcv.url}/q", "x", "-P", "n:long={n}", "--count", "5", "--rate", "5", "--timestamp",
        "--timeout", "30", "--json")))
    run.start()
    rcv.wait_for_messages(2)
    time.sleep(1.0)  # the third message waits for credit past its turn
    rcv.grant(3)
    run.join(60)
    assert done and done[0].returncode == 0, done and done[0].stderr
    got = rcv.wait_for_messages(5)
    stamps = [m.message.properties["ts"] / 1e9 for m in got]
    assert [m.message.properties["n"] for m in got] == [1, 2, 3, 4, 5]
    assert stamps[2] - stamps[1] >= 0.9  # it waited for the credit
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(stamps[2:]))
