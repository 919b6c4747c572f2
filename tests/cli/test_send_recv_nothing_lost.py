"""The peer dies mid-send and mid-receive: nothing is lost, nothing silently duplicated.

A proxy between `amqp` and RabbitMQ cuts the TCP connection after a number of bytes, the
way a crashed peer does. Every message carries its number as message-id, so the test can
account for each one afterwards by draining the queue directly.
"""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.cutproxy import CutProxy

pytestmark = pytest.mark.integration

N = 3000


def _drain_ids(rabbitmq_url: str, q: str) -> Counter[str]:
    r = amqp("recv", f"{rabbitmq_url}//queue/{q}", "-t", "3", "--json", "--credit", "500")
    assert r.returncode == 0, r.stderr
    return Counter(m["properties"]["message-id"] for m in json_lines(r.stdout))


def _via(proxy: CutProxy, rabbitmq_url: str, q: str) -> str:
    p = urlsplit(rabbitmq_url)
    return f"amqp://{p.username}:{p.password}@127.0.0.1:{proxy.port}//queue/{q}"


def test_cut_mid_send_reports_every_unconfirmed_message(rabbitmq_url: str) -> None:
    p = urlsplit(rabbitmq_url)
    q = queue_name("cut-send")
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[60_000]) as proxy:
        r = amqp("send", _via(proxy, rabbitmq_url, q), "x" * 100, "--count", str(N),
                 "--message-id", "{n}", "--window", "200", "--json")
        assert proxy.cut_count == 1
    assert r.returncode == 7, r.stderr  # IN_DOUBT
    s = json.loads(r.stdout)
    doubt = {str(d["number"]) for d in s["in-doubt-messages"]}
    assert s["in-doubt"] == len(doubt) > 0
    assert s["accepted"] + len(doubt) == s["sent"] < N  # every sent one is accounted for
    got = _drain_ids(rabbitmq_url, q)
    assert max(got.values()) == 1  # nothing duplicated
    confirmed = {str(i) for i in range(1, s["sent"] + 1)} - doubt
    assert confirmed <= set(got)  # every accepted message is on the queue
    assert set(got) <= confirmed | doubt  # and nothing else arrived


def test_cut_mid_send_with_reconnect_resends_in_doubt(rabbitmq_url: str) -> None:
    p = urlsplit(rabbitmq_url)
    q = queue_name("cut-resend")
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[60_000, 150_000]) as proxy:
        r = amqp("send", _via(proxy, rabbitmq_url, q), "x" * 100, "--count", str(N),
                 "--message-id", "{n}", "--window", "200", "--reconnect", "5", "--json")
        assert proxy.cut_count == 2
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["accepted"] == N and s["sent"] == N + s["resent"] and s["in-doubt"] == 0, json.dumps(s)
    assert s["reconnects"] == 2 and s["resent"] > 0
    got = _drain_ids(rabbitmq_url, q)
    assert set(got) == {str(i) for i in range(1, N + 1)}  # at least once
    # at most the resent ones twice
    assert sum(got.values()) - N <= s["resent"]


def test_cut_mid_receive_with_reconnect_loses_nothing(rabbitmq_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = urlsplit(rabbitmq_url)
    q = queue_name("cut-recv")
    r = amqp("send", f"{rabbitmq_url}//queue/{q}", "y" * 100, "--count", str(N),
             "--message-id", "{n}")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "got.jsonl"
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[100_000],
                  direction="down") as proxy:
        r = amqp("recv", _via(proxy, rabbitmq_url, q), "--count", str(N), "--timeout", "20",
                 "--json", "--out", str(out), "--reconnect", "3", "--credit", "300")
        assert proxy.cut_count == 1
    assert r.returncode == 0, r.stderr
    ids = Counter(m["properties"]["message-id"] for m in json_lines(out.read_text()))
    # Written before settled: everything arrived; a redelivered one may appear twice, but
    # only those that were in flight (at most the credit) when the connection died.
    assert set(ids) >= {str(i) for i in range(1, N + 1)} - set(_drain_ids(rabbitmq_url, q))
    assert sum(ids.values()) - len(ids) <= 300


def test_cut_mid_receive_without_reconnect_keeps_unsettled_on_the_queue(rabbitmq_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = urlsplit(rabbitmq_url)
    q = queue_name("cut-recv1")
    amqp("send", f"{rabbitmq_url}//queue/{q}", "z" * 100, "--count", str(N), "--message-id", "{n}")
    out = tmp_path / "got.jsonl"
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[100_000],
                  direction="down") as proxy:
        r = amqp("recv", _via(proxy, rabbitmq_url, q), "--count", str(N), "--timeout", "20",
                 "--json", "--out", str(out))
    assert r.returncode == 3, r.stderr  # CONNECTION
    assert len([ln for ln in r.stderr.splitlines() if ln.startswith("amqp: error:")]) == 1
    written = Counter(m["properties"]["message-id"] for m in json_lines(out.read_text()))
    left = _drain_ids(rabbitmq_url, q)
    assert max(written.values()) == 1
    # Every message is either written out or still on the queue (or both, if it was
    # written but its settlement never reached the broker).
    assert set(written) | set(left) == {str(i) for i in range(1, N + 1)}


def test_a_silent_peer_is_noticed_through_our_idle_timeout(rabbitmq_url: str) -> None:
    # The peer's bytes stop at its first heartbeat (the socket stays up): without our
    # idle-timeout the receive would wait its full 60 s; with it, the connection is lost.
    p = urlsplit(rabbitmq_url)
    q = queue_name("silent")
    heartbeat = b"\x00\x00\x00\x08\x02\x00\x00\x00"
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[], direction="down",
                  stall=True, stall_on=heartbeat) as proxy:
        r = amqp("recv", _via(proxy, rabbitmq_url, q), "-t", "60", "--idle-timeout", "1",
                 "--connect-timeout", "30")
        assert proxy.cut_count == 1
    assert r.returncode == 3, r.stderr
    assert "the peer went silent" in r.stderr


def test_presettled_sends_on_a_lost_connection_are_said_unconfirmed(rabbitmq_url: str) -> None:
    """Pre-settled is at most once: nothing confirms them, and what was sent on a connection
    that then died may not have arrived. The summary says how many (it said "in doubt 0"
    and nothing else)."""
    p = urlsplit(rabbitmq_url)
    q = queue_name("cut-presettled")
    with CutProxy(p.hostname or "127.0.0.1", p.port or 5672, cuts=[60_000]) as proxy:
        r = amqp("send", _via(proxy, rabbitmq_url, q), "x" * 100, "--count", str(N),
                 "--message-id", "{n}", "--presettled", "--json")
        assert proxy.cut_count == 1
    assert r.returncode != 0, r.stderr
    s = json.loads(r.stdout)
    assert 0 < s["settled"] == s["settled-unconfirmed"] < N, json.dumps(s)
    assert any("pre-settled message(s) sent on a connection that ended without" in w
               for w in s["warnings"])
    assert len(_drain_ids(rabbitmq_url, q)) <= s["settled"]
