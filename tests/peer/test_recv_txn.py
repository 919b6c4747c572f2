"""`amqp recv --txn-size N [--rollback]` against `amqp serve`: the outcomes of every N
messages (and of the last, partial batch) go in one transaction, committed or rolled
back as the peer's log shows; after a rollback the messages are all still there."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]


def _fill(url: str, n: int) -> None:
    r = amqp("send", url, "m", "--count", str(n), "--message-id", "{n}")
    assert r.returncode == 0, r.stderr


def _ids(out: str) -> list[str]:
    return [m["properties"]["message-id"] for m in json_lines(out)]


def _ended(log: str) -> list[str]:
    """What each transaction the peer ended held: 'committed 3', 'rolled back 1'…"""
    return [f"{m[1]} {m[2]}" for m in re.finditer(
        r"transaction \S+ (committed|rolled back) \(0 sends, (\d+) outcomes", log)]


def test_seven_messages_in_transactions_of_three_commit_three_times(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _fill(url, 7)
    r = amqp("recv", url, "--txn-size", "3", "-c", "7", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == [str(n) for n in range(1, 8)]
    assert "accept 7" in r.stderr
    assert "transactions committed 3, rolled back 0 (0 messages)" in r.stderr
    s.wait_log(r"committed \(0 sends, 1 outcomes")
    assert _ended(s.log) == ["committed 3", "committed 3", "committed 1"]
    r = amqp("recv", url, "--drain", "-t", "10")
    assert r.returncode == 0 and "received 0" in r.stderr, r.stderr  # consumed for good


def test_a_rolled_back_receive_leaves_every_message_on_the_node(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _fill(url, 4)
    # a reject inside the transaction is rolled back with the rest
    r = amqp("recv", url, "--txn-size", "3", "--rollback", "--outcome", "accept,reject",
             "-c", "4", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == ["1", "2", "3", "4"]  # each written once
    assert "transactions committed 0, rolled back 2 (4 messages)" in r.stderr
    assert "accept" not in r.stderr and "reject" not in r.stderr  # no outcome took effect
    s.wait_log(r"rolled back \(0 sends, 1 outcomes")
    assert _ended(s.log)[:2] == ["rolled back 3", "rolled back 1"]
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == ["1", "2", "3", "4"]
    # a rollback is no failed delivery attempt (Part 3 §3.2.1: only those count), as a
    # release is not: the count stays 0
    assert all(m.get("header", {}).get("delivery-count", 0) == 0
               for m in json_lines(r.stdout))


def test_outcomes_that_give_back_are_committed_and_not_written_again(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _fill(url, 4)
    # the released ones come back at once on our credit: known again, not written again
    r = amqp("recv", url, "--txn-size", "2", "--outcome", "accept,release", "-t", "1")
    assert r.returncode == 0, r.stderr
    assert "received 4, accept 2, release 2" in r.stderr
    assert "transactions committed 2" in r.stderr
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert _ids(r.stdout) == ["2", "4"]



def test_reconnects_that_never_reach_a_commit_end_the_run(serve: Serve) -> None:
    """A peer that drops every connection before the commit: what a transaction received
    comes again, which is no progress — the run ends after its reconnects instead of
    writing the same message again for ever (it was once per reconnect, with no end)."""
    s = serve("--close-after", "3")
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "m", "-c", "5", "--message-id", "{n}", "--reconnect", "5")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--txn-size", "2", "-t", "2", "--json", "--reconnect", "3",
             timeout=120)
    assert r.returncode != 0 and "reconnect(s)" in r.stderr
    ids = _ids(r.stdout)
    assert ids[:2] == ["1", "2"] and len(ids) <= 2 + 1 + 3 + 1  # the first commit, then
    assert set(ids[2:]) == {"3"}  # the third again on each try (at least once)


def test_more_transactions_than_the_coordinators_first_credit(serve: Serve) -> None:
    """The coordinator's credit is topped up as declares and discharges use it: 300
    transactions of one message (600 requests) on one connection. It was granted 500
    once: the 251st transaction waited for credit that never came."""
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _fill(url, 300)
    r = amqp("recv", url, "--txn-size", "1", "-c", "300", "-t", "10", "--json-summary",
             "--out", "/dev/null")
    assert r.returncode == 0, r.stderr
    summary = json_lines(r.stderr)[0]["recv"]
    assert summary["received"] == 300 and summary["transactions"]["committed"] == 300
