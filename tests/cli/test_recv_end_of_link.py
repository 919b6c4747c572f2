"""Messages that arrive in the same read as the peer's close or detach: pre-settled ones
are written before the end is reported (they exist nowhere else once the peer sent them);
unsettled ones are left to the peer, which delivers them again.

`amqp serve --close-after N` / `--detach-after N` send the N-th transfer and the close
(or detach) in one write, which is the case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def _bodies(stdout: str) -> list[str]:
    return [m["body"]["data"][0]["binary-text"] for m in json_lines(stdout)]


def _fill(url: str, n: int) -> None:
    for i in range(n):  # one connection per message: --close-after counts per connection
        r = amqp("send", url, f"m{i}")
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("fault", "code", "said"), [
    ("--close-after", 4, "amqp:connection:forced"),
    ("--detach-after", 4, "amqp:link:detach-forced"),
])
def test_presettled_messages_before_the_end_are_written(serve: ServePeers, fault: str,
                                                        code: int, said: str) -> None:
    url = serve(fault, "5") + "/end"
    _fill(url, 8)
    r = amqp("recv", url, "--presettled", "--json", "-t", "5")
    assert r.returncode == code and said in r.stderr, r.stderr
    assert _bodies(r.stdout) == [f"m{i}" for i in range(5)]  # all five, in order
    # the peer settled them when it sent them: what is left is the other three
    r = amqp("recv", url, "--json", "-c", "3", "-t", "5")
    assert r.returncode == 0 and _bodies(r.stdout) == ["m5", "m6", "m7"], r.stderr


def test_unsettled_messages_that_came_with_the_end_are_left_to_come_again(
        serve: ServePeers) -> None:
    # They cannot be settled any more: written, they would only be duplicates.
    url = serve("--close-after", "5") + "/end2"
    _fill(url, 6)
    r = amqp("recv", url, "--json", "--credit", "1", "-t", "5")
    assert r.returncode == 4 and "amqp:connection:forced" in r.stderr, r.stderr
    assert _bodies(r.stdout) == [f"m{i}" for i in range(4)]  # settled one by one
    assert "received 4, accept 4" in r.stderr
    assert ("1 unsettled message(s) came with the end: left to the peer, which delivers "
            "them again\n") in r.stderr  # no reconnect: the credit is not the point
    r = amqp("recv", url, "--json", "-c", "2", "-t", "5")
    assert r.returncode == 0 and _bodies(r.stdout) == ["m4", "m5"], r.stderr


@pytest.mark.parametrize(("fault", "said"), [
    ("--close-after", "the peer closed the connection: amqp:connection:forced"),
    ("--detach-after", "the peer detached the link to 'end3': amqp:link:detach-forced"),
])
def test_count_met_by_messages_that_came_with_the_end_is_a_finished_run(
        serve: ServePeers, fault: str, said: str) -> None:
    # Pre-settled, the five are the count and all written: the peer's end right after
    # them is said, but the run did what it was asked (a close waited for a detach, then
    # exit 0 without a word; a detach was passed over in silence).
    url = serve(fault, "5") + "/end3"
    _fill(url, 5)
    r = amqp("recv", url, "--presettled", "--json", "-c", "5", "-t", "30")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == [f"m{i}" for i in range(5)]
    assert f"after the last message: {said}" in r.stderr
    assert "received 5, pre-settled 5" in r.stderr


def test_reconnect_shrinks_the_credit_when_the_end_keeps_coming_with_the_window(
        serve: ServePeers) -> None:
    # With the default credit the peer sends all five and its close in one write, every
    # time: left to the peer, the same five came back on each connection and no run of
    # reconnects got anywhere. The credit now shrinks below what came with the end.
    url = serve("--close-after", "5") + "/end4"
    _fill(url, 12)
    r = amqp("recv", url, "--reconnect", "6", "-c", "12", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == [f"m{i}" for i in range(12)]  # each once, in order
    assert ("5 unsettled message(s) came with the end: left to the peer, which delivers "
            "them again; credit 4 from now on") in r.stderr
    r = amqp("recv", url, "--json", "-c", "1", "-t", "1")
    assert r.returncode == 5 and r.stdout == "", r.stdout  # nothing left, nothing lost


def test_shrunk_credit_grows_back_while_the_link_goes_on(serve: ServePeers,
                                                         tmp_path: Path) -> None:
    # After the first end the credit is 4; on the next connection, once those 4 are
    # settled, the window doubles back towards --credit (8) instead of staying small for
    # the rest of the run.
    trace = tmp_path / "trace"
    url = serve("--close-after", "5", "--trace", stdout=trace) + "/grow"
    _fill(url, 12)
    r = amqp("recv", url, "--reconnect", "6", "-c", "12", "-t", "10", "--json",
             "--credit", "16")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == [f"m{i}" for i in range(12)]
    assert "credit 4 from now on" in r.stderr
    credits = [int(m.group(1)) for line in trace.read_text().splitlines()
               if " -> " in line and " flow " in line and "handle=" in line
               for m in [re.search(r"link-credit=(\d+)", line)] if m]
    assert credits[:3] == [12, 4, 8], credits
