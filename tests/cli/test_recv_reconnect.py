"""`amqp recv --reconnect`: a peer closing the connection with `amqp:connection:forced` or
detaching the link with `amqp:link:detach-forced` (a broker shutting down or moving the
queue, an operator dropping connections) is a drop to reconnect after, as for `amqp send`;
what was not settled comes again, nothing is lost. `--reconnect N` counts attempts in a
row: a connection that got somewhere starts the count over."""

from __future__ import annotations

import json
import re

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.cutproxy import CutProxy
from tests.net.servepeer import ServePeers


@pytest.mark.integration
@pytest.mark.parametrize("fault", ["--close-after", "--detach-after"])
def test_recv_reconnects_after_connection_forced(serve: ServePeers, fault: str) -> None:
    # Each connection is closed (amqp:connection:forced), or each link detached
    # (amqp:link:detach-forced), after 5 deliveries either way.
    url = serve("-q", fault, "5")
    r = amqp("send", f"{url}/rf", "x", "--count", "10", "--reconnect", "10",
             "--message-id", "{n}", "--json", "--timeout", "20")
    assert r.returncode == 0, r.stderr
    # Credit 1: each message is settled before the next comes, so every connection gets
    # some accepted before the peer drops it with the next one unsettled.
    r = amqp("recv", f"{url}/rf", "--count", "10", "--credit", "1", "--reconnect", "10",
             "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    # At least once: every message written out; one the drop caught unsettled may come
    # twice.
    assert set(ids) == {str(n) for n in range(1, 11)}, ids
    assert "received 10" in r.stderr
    left = amqp("recv", f"{url}/rf", "--count", "1", "--timeout", "1", "--json")
    assert left.stdout == "", left.stdout  # nothing was accepted without being written


@pytest.mark.integration
def test_recv_without_reconnect_reports_the_forced_close(serve: ServePeers) -> None:
    url = serve("-q", "--close-after", "3")
    r = amqp("send", f"{url}/rg", "x", "--count", "3", "--reconnect", "5")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{url}/rg", "--credit", "1", "--timeout", "10", "--json")
    assert r.returncode == 4, r.stderr  # refused: the peer's close, said as it is
    assert "amqp:connection:forced" in r.stderr
    assert len(json_lines(r.stdout)) >= 2


@pytest.mark.integration
def test_settle_mode_second_starts_afresh_after_a_reconnect(serve: ServePeers) -> None:
    """With `--settle-mode second`, connections dropped with deliveries whose settlement
    the peer still owed: the receive goes on over the next ones and gets every message
    (the owed ones end as abandoned; they come again)."""
    url = serve("-q", "--close-after", "5")
    r = amqp("send", f"{url}/rs", "x", "--count", "8", "--reconnect", "10",
             "--message-id", "{n}", "--json", "--timeout", "20")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{url}/rs", "--count", "8", "--credit", "1", "--reconnect", "10",
             "--settle-mode", "second", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert set(ids) == {str(n) for n in range(1, 9)}, ids


@pytest.mark.integration
def test_reconnect_counts_attempts_in_a_row_not_drops_in_the_run(serve: ServePeers) -> None:
    # Every connection is dropped after 3 deliveries, but each gets some messages through:
    # one reconnect at a time is enough for any number of drops.
    url = serve("-q", "--close-after", "3")
    r = amqp("send", f"{url}/ra", "x", "--count", "8", "--reconnect", "1",
             "--message-id", "{n}", "--json", "--timeout", "20")
    assert r.returncode == 0, r.stderr
    sent = json.loads(r.stdout.splitlines()[-1])
    assert sent["accepted"] == 8 and sent["reconnects"] >= 2, sent
    r = amqp("recv", f"{url}/ra", "--count", "8", "--credit", "1", "--reconnect", "1",
             "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    ids = {m["properties"]["message-id"] for m in json_lines(r.stdout)}
    assert ids == {str(n) for n in range(1, 9)}
    assert re.search(r"received \d+, accept \d+, ([2-9]|\d\d+) reconnect\(s\) in ", r.stderr)


@pytest.mark.integration
def test_reconnect_gives_up_when_no_connection_gets_anywhere(serve: ServePeers) -> None:
    # Credit 1 against a peer that drops each connection with its first delivery: that
    # delivery comes with the end every time, is never settled, and the attempts run out.
    url = serve("-q", "--close-after", "1")
    r = amqp("send", f"{url}/rn", "x", "--count", "2", "--reconnect", "5")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{url}/rn", "--count", "2", "--credit", "1", "--reconnect", "2",
             "--json", "--timeout", "10")
    assert r.returncode == 4, r.stderr  # Exit.REFUSED: the peer closed with an error
    assert r.stdout == ""
    assert "amqp:connection:forced" in r.stderr
    assert r.stderr.count("1 unsettled message(s) came with the end") == 3, r.stderr


@pytest.mark.integration
@pytest.mark.parametrize("command", [["browse"], ["recv", "--copy", "--drain"]])
def test_a_browse_that_starts_over_on_each_reconnect_still_ends(serve: ServePeers,
                                                                 command: list[str]) -> None:
    # Each copy link starts again at the head of the node and the peer drops it after 5:
    # the browse never gets past the fifth message, so the attempts run out (before,
    # every connection's messages counted as progress and the run never ended).
    url = serve("-q", "--close-after", "5")
    r = amqp("send", f"{url}/rb", "x", "--count", "8", "--reconnect", "5")
    assert r.returncode == 0, r.stderr
    r = amqp(*command, f"{url}/rb", "--reconnect", "2", "--json", "--timeout", "10")
    assert r.returncode == 4, r.stderr  # the peer's forced close, once the attempts ran out
    assert "amqp:connection:forced" in r.stderr


@pytest.mark.integration
@pytest.mark.parametrize("outcome", ["release", "modify"])
def test_count_asks_at_once_for_what_came_back(serve: ServePeers, outcome: str) -> None:
    # --count 11 with --credit 10, messages given back, the connection cut (a proxy) in
    # the eleventh: the ten given back come again first on the new link, and it asks for
    # them and the one --count still wants together, not one at a time (ten round trips;
    # a drop late in a long run would take thousands).
    url = serve("-q")
    r = amqp("send", f"{url}/rc", "x" * 4000, "--count", "12", "--message-id", "{n}")
    assert r.returncode == 0, r.stderr
    port = int(url.rsplit(":", 1)[1])
    # bytes from the peer: the handshake, ten messages of about 4 kB, part of the eleventh
    with CutProxy("127.0.0.1", port, cuts=[42_500], direction="down") as proxy:
        r = amqp("recv", f"amqp://127.0.0.1:{proxy.port}/rc", "--count", "11", "--credit", "10",
                 "--outcome", outcome, "--reconnect", "3", "--json", "--timeout", "10", "--trace")
    assert r.returncode == 0, r.stderr
    assert proxy.cut_count == 1
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == [str(n) for n in range(1, 12)], ids
    assert f"received 11, {outcome} 11, seen again 10 (released, not written), 1 reconnect(s)" \
        in r.stderr, r.stderr
    # our flows for the receiving link (handle 0) on the second connection: 10, then 1
    credits = re.findall(r" c2 -> \[0\]\s+flow\s+handle=0 .*?link-credit=(\d+)", r.stderr)
    assert credits == ["10", "1"], credits
