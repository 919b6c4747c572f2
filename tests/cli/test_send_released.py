"""`amqp send` against a peer that releases some messages (`amqp serve --release
every:3`, counted per sender link): the summary names the released ones (it gave only
their count: `recv --verify-sequence` later found them missing), `--reconnect` leaves
them alone (released is an outcome, not a failure), and `--on-release retry[:N]` sends
them again, up to N times each (Part 3 §3.4.4: not delivered, may be delivered again)."""

from __future__ import annotations

import json

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def test_released_messages_are_named(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--sequence", "--timeout", "20")
    assert r.returncode == 6, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("sent 10, accepted 7, released 3, in doubt 0 in ")
    assert lines[1].startswith("released 3 (messages 3, 6, 9): not delivered")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--message-id", "id-{n}", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 6 and s["exit"] == 6 and s["released"] == 3
    assert s["released-messages"] == [{"number": n, "message-id": f"id-{n}"}
                                      for n in (3, 6, 9)]


def test_reconnect_does_not_send_released_messages_again(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--reconnect", "3", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 6, r.stderr
    assert (s["sent"], s["accepted"], s["released"], s["resent"]) == (10, 7, 3, 0)
    assert [m["number"] for m in s["released-messages"]] == [3, 6, 9]




@pytest.mark.parametrize("pace", [[], ["--window", "1"], ["--rate", "1000"]])
def test_retry_sends_released_messages_again(serve: ServePeers, pace: list[str]) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--sequence", "--on-release", "retry",
             "--json", "--timeout", "20", *pace)
    s = json.loads(r.stdout)
    assert r.returncode == 0 and "exit" not in s, (r.stdout, r.stderr)
    # every third delivery on the link is released, retries included: released ones
    # are sent again until one is accepted
    assert s["accepted"] == 10 and s["released"] == 0 and "released-messages" not in s
    assert s["sent"] == 10 + s["retries"] and s["resent"] == 0
    assert s["retried"] == len(s["retried-messages"]) > 0
    # every message got there once, the retried ones (mostly) after later ones
    received = amqp("recv", f"{url}/q", "--verify-sequence", "--drain", "--timeout", "10",
                    "--bodies-only", "--json-summary")
    assert received.returncode == 0, received.stderr
    seq = json.loads(received.stderr.splitlines()[-1])["recv"]["sequence"]
    assert (seq["first"], seq["last"], seq["missing"], seq["duplicates"]) == (1, 10, 0, 0)
    # (a retried message arrives out of order unless no later one went before it: the
    # last message, or one whose retry went out before the next was taken)
    assert seq["out-of-order"] <= s["retried"]


def test_retry_text_summary(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--on-release", "retry", "--timeout", "20")
    assert r.returncode == 0, (r.stdout, r.stderr)
    # deliveries 3, 6, 9 are messages 3, 6, 9; their retries deliveries 11 (3), 12 (6,
    # released again), 13 (9), and 14 (6)
    assert r.stdout.splitlines()[0].startswith("sent 14, accepted 10, in doubt 0, retried 3 in ")
    assert r.stdout.splitlines()[1] == ("retried 3 (messages 3, 6, 9): released, then sent "
                                        "again (4 retries in all)")


def test_released_after_its_last_try(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--on-release", "retry:1", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    # message 6 is released on its first try and on its one retry
    assert r.returncode == 6 and s["exit"] == 6, r.stderr
    assert (s["sent"], s["accepted"], s["released"], s["retried"], s["retries"]) == \
        (13, 9, 1, 3, 3)
    assert s["released-messages"] == [{"number": 6, "message-id": None}]
    assert "1 message(s) not accepted (0 rejected, 1 released, 0 modified)" in r.stderr


def test_retry_of_a_peer_that_releases_everything_ends(serve: ServePeers) -> None:
    url = serve("-q", "--release", "all")
    r = amqp("send", f"{url}/q", "x", "-c", "5", "--on-release", "retry:2", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 6, r.stderr
    assert (s["sent"], s["accepted"], s["released"], s["retries"]) == (15, 0, 5, 10)
    assert [m["retries"] for m in s["retried-messages"]] == [2] * 5


@pytest.mark.parametrize(("args", "error"), [
    (["--on-release", "retry", "--txn-size", "2"],
     ("--on-release retry does not go with --txn-size: a message released in a transaction "
     "would be sent again in another one")),
    (["--on-release", "retry:2", "--presettled"],
     "--on-release retry needs unsettled sends: a pre-settled message has no outcome"),
    (["--on-release", "again"],
     "--on-release: expected fail, retry or retry:N (N from 1 to 100), got 'again'"),
    (["--on-release", "retry:0"],
     "--on-release: expected fail, retry or retry:N (N from 1 to 100), got 'retry:0'"),
])
def test_on_release_usage_errors(args: list[str], error: str) -> None:
    # refused before connecting: nothing listens there
    r = amqp("send", "amqp://127.0.0.1:1/q", "x", *args)
    assert r.returncode == 2 and r.stderr == f"amqp: error: {error}\n" and not r.stdout


def test_on_release_fail_is_the_default(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    a = json.loads(amqp("send", f"{url}/q", "x", "-c", "10", "--json").stdout)
    b = json.loads(amqp("send", f"{url}/q", "x", "-c", "10", "--json",
                        "--on-release", "fail").stdout)
    for s in (a, b):
        assert (s["accepted"], s["released"], s["exit"]) == (7, 3, 6)
        assert "retried" not in s
