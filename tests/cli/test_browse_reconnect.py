"""`amqp browse` and `amqp recv --copy` with `--reconnect`: a copy link reads a node without
consuming it, so the link of the next connection starts again at the head of the node.
What was shown before the drop is passed over (and said), so the output is what one
uninterrupted browse prints; only a message not shown before counts as progress.

The drops are a proxy cutting the connection to `amqp serve` part way through a message
(`CutProxy`, bytes from the peer). `--credit 2` makes what the first connection shows
certain: the third message is asked for only once the first two are written, and the
cut falls inside it."""

from __future__ import annotations

import json
import re

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.cutproxy import CutProxy
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration

BODY = "x" * 4000  # each message about 4 kB on the wire
IN_THIRD = 10_500  # bytes from the peer: the handshake, two messages, part of the third
IN_SIXTH = 22_500  # the same again, two more messages, part of the sixth
IN_ELEVENTH = 42_500  # ten messages, part of the eleventh
BROWSES = [["browse"], ["recv", "--copy", "--drain"]]


def _node(serve: ServePeers, *send_args: str, count: int = 10) -> int:
    """A serve holding `count` messages on `q`; its port."""
    url = serve("-q")
    r = amqp("send", f"{url}/q", BODY, "--count", str(count), *send_args)
    assert r.returncode == 0, r.stderr
    return int(url.rsplit(":", 1)[1])


def _skipped(stderr: str) -> list[int]:
    return [int(n) for n in re.findall(r"^amqp: warning: reconnected: skipped (\d+) messages? already shown$",
                                       stderr, re.MULTILINE)]


@pytest.mark.parametrize("command", BROWSES)
def test_a_browse_goes_on_where_the_lost_connection_stopped(serve: ServePeers,
                                                            command: list[str]) -> None:
    port = _node(serve, "--message-id", "{n}")
    with CutProxy("127.0.0.1", port, cuts=[IN_THIRD], direction="down") as proxy:
        r = amqp(*command, f"amqp://127.0.0.1:{proxy.port}/q", "--credit", "2",
                 "--reconnect", "3", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 1
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == [str(n) for n in range(1, 11)], ids  # each once, as one browse shows them
    skipped = _skipped(r.stderr)
    assert len(skipped) == 1 and skipped[0] >= 2, r.stderr
    if command == ["browse"]:
        summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
        assert summary["received"] == 10 and summary["reconnects"] == 1, summary
        lost = (f"connection lost (cannot keep the connection to 127.0.0.1:{proxy.port}: "
                "connection reset by peer); reconnecting (1 of 3)")
        assert summary["warnings"] == [
            lost, f"reconnected: skipped {skipped[0]} messages already shown"]
        assert summary["copy-consumed"] == 0  # the copy check saw the node whole


@pytest.mark.parametrize("command", BROWSES)
def test_identical_messages_are_passed_over_as_many_times_as_shown(serve: ServePeers,
                                                                   command: list[str]) -> None:
    # Ten messages with the same bytes: the new link passes over as many as were shown and
    # shows the others (all ten passed over would show fewer than the node holds).
    port = _node(serve)
    with CutProxy("127.0.0.1", port, cuts=[IN_THIRD], direction="down") as proxy:
        r = amqp(*command, f"amqp://127.0.0.1:{proxy.port}/q", "--credit", "2",
                 "--reconnect", "3", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 1
    assert len(json_lines(r.stdout)) == 10, r.stdout
    assert _skipped(r.stderr)[0] >= 2, r.stderr


def test_count_counts_the_messages_shown_not_those_passed_over(serve: ServePeers) -> None:
    port = _node(serve, "--message-id", "{n}")
    with CutProxy("127.0.0.1", port, cuts=[IN_THIRD], direction="down") as proxy:
        r = amqp("browse", f"amqp://127.0.0.1:{proxy.port}/q", "--count", "5", "--credit", "2",
                 "--reconnect", "3", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 1
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == ["1", "2", "3", "4", "5"], ids
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["received"] == 5 and summary["copy-consumed"] == 0, summary


def test_count_asks_at_once_for_what_the_new_link_passes_over(serve: ServePeers) -> None:
    # --count 11 with --credit 10, dropped in the eleventh: the new link asks for the ten
    # to pass over and the one --count still wants together, not one at a time (ten
    # round trips; a drop late in a long browse would take thousands).
    port = _node(serve, "--message-id", "{n}", count=12)
    with CutProxy("127.0.0.1", port, cuts=[IN_ELEVENTH], direction="down") as proxy:
        r = amqp("browse", f"amqp://127.0.0.1:{proxy.port}/q", "--count", "11", "--credit", "10",
                 "--reconnect", "3", "--json", "--timeout", "10", "--trace")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 1
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == [str(n) for n in range(1, 12)], ids
    assert _skipped(r.stderr) == [10], r.stderr
    # our flows for the browsing link (handle 0) on the second connection: 10, then 1
    credits = re.findall(r" c2 -> \[0\]\s+flow\s+handle=0 .*?link-credit=(\d+)", r.stderr)
    assert credits == ["10", "1"], credits


@pytest.mark.parametrize("command", BROWSES)
def test_a_new_message_shown_is_progress(serve: ServePeers, command: list[str]) -> None:
    # Two drops, each connection showing messages the one before had not: one reconnect
    # at a time is enough (the count of attempts starts over after each).
    port = _node(serve, "--message-id", "{n}")
    with CutProxy("127.0.0.1", port, cuts=[IN_THIRD, IN_SIXTH], direction="down") as proxy:
        r = amqp(*command, f"amqp://127.0.0.1:{proxy.port}/q", "--credit", "2",
                 "--reconnect", "1", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 2
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == [str(n) for n in range(1, 11)], ids
    first, second = _skipped(r.stderr)
    assert 2 <= first < second, r.stderr
