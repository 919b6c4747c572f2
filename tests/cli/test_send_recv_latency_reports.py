"""`send --timestamp` (the application property ts, a long: nanoseconds since the epoch
when the message went out), recv's latency figures for stamped messages, and
`--report-every` on send and recv: lines on stderr from a timer, on time even when
nothing moves. Counts of reports are loose (at least so many), never exact timings."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.peers import Broker

SEND_REPORT = re.compile(r"^amqp: \d+\.\ds sent \d+ \(\+\d+, \d+/s\) accepted \d+( \w+ \d+)* "
                         r"in flight \d+( waiting for credit \d+s)?$")
RECV_REPORT = re.compile(r"^amqp: \d+\.\ds received \d+ \(\+\d+, \d+/s\)"
                         r"( latency p50 -?[\d.]+ p99 -?[\d.]+ max -?[\d.]+ ms)?$")
LATENCY = re.compile(r", latency min -?[\d.]+ p50 -?[\d.]+ p99 -?[\d.]+ max -?[\d.]+ ms")


def _reports(stderr: str, pattern: re.Pattern[str]) -> list[str]:
    return [line for line in stderr.splitlines() if pattern.match(line)]


def _objects(stderr: str) -> list[dict[str, Any]]:
    """The JSON objects on stderr (the error line of a failed run is text)."""
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def _json_reports(stderr: str) -> list[dict[str, Any]]:
    return [obj["report"] for obj in _objects(stderr) if "report" in obj]


def _recv_summary(stderr: str) -> dict[str, Any]:
    return next(obj["recv"] for obj in _objects(stderr) if "recv" in obj)


def _stamps(stdout: str) -> list[Any]:
    return [m.get("application-properties", {}).get("ts") for m in json_lines(stdout)]


def _check_figures(f: dict[str, Any], count: int) -> None:
    assert set(f) == {"count", "min", "p50", "p99", "max"}
    assert f["count"] == count
    assert f["min"] <= f["p50"] <= f["p99"] <= f["max"]


# --- send --timestamp ------------------------------------------------------------------

def test_timestamp_is_a_long_of_nanoseconds_taken_as_each_message_goes_out(
        serve: ServePeers) -> None:
    q = f"{serve()}/q"
    before = time.time_ns()
    # paced: message 3 may not go before 1 s after message 1, so a stamp taken when the
    # run starts (or when the message is made) would show it
    r = amqp("send", q, "x", "--count", "3", "--rate", "2", "--timestamp", "--sequence", "-q")
    after = time.time_ns()
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--count", "3", "--timeout", "10", "--json")
    assert r.returncode == 0, r.stderr
    msgs = json_lines(r.stdout)
    # a long is a bare JSON integer in the lossless format ({"ulong": …} for others),
    # after the other application properties
    assert [list(m["application-properties"]) for m in msgs] == [["sn", "ts"]] * 3
    stamps = _stamps(r.stdout)
    assert all(type(ts) is int for ts in stamps)
    assert before <= stamps[0] <= stamps[1] <= stamps[2] <= after
    assert stamps[2] - stamps[0] >= 0.8e9
    assert [m["body"] for m in msgs] == [{"data": [{"binary-text": "x"}]}] * 3


def test_timestamp_in_runs_of_messages_with_other_properties(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    before = time.time_ns()
    r = amqp("send", q, "x", "--count", "500", "--timestamp", "-P", "k:int={n}",
             "--subject", "s-{n}", "-q")
    after = time.time_ns()
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--count", "500", "--timeout", "10", "--json")
    assert r.returncode == 0, r.stderr
    msgs = json_lines(r.stdout)
    assert [m["application-properties"]["k"] for m in msgs] == [
        {"int": n} for n in range(1, 501)]
    assert all(before <= ts <= after for ts in _stamps(r.stdout))


# --- recv's latency ---------------------------------------------------------------------

def test_recv_latency_for_stamped_messages_through_serve(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    assert amqp("send", q, "x", "--count", "5", "--timestamp", "-q").returncode == 0
    assert amqp("send", q, "y", "--count", "2", "-q").returncode == 0  # not stamped
    r = amqp("recv", q, "--count", "7", "--timeout", "10", "--json-summary")
    assert r.returncode == 0, r.stderr
    s = _recv_summary(r.stderr)
    _check_figures(s["latency-ms"], 5)
    assert 0 <= s["latency-ms"]["min"] < 60_000  # (one host: one clock)
    # the text summary: the figures, and how many of the messages carried a stamp
    assert amqp("send", q, "x", "--count", "2", "--timestamp", "-q").returncode == 0
    assert amqp("send", q, "y", "-q").returncode == 0
    r = amqp("recv", q, "--count", "3", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    line = r.stderr.splitlines()[-1]
    assert line.startswith("amqp: received 3, accept 3 in "), line
    assert LATENCY.search(line) and line.endswith(" ms (2 stamped)"), line


def test_messages_without_a_stamp_give_no_latency(serve: ServePeers, tmp_path: Any) -> None:
    q = f"{serve()}/q"
    # ts that is no integer is no stamp (a string, an AMQP timestamp)
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps({"application-properties": {"ts": v},
                                       "body": {"data": [{"binary-text": "m"}]}}) + "\n"
                           for v in ("12", {"timestamp": 1700000000000})))
    assert amqp("send", q, "--from", str(src), "-q").returncode == 0
    assert amqp("send", q, "x", "--count", "2", "-q").returncode == 0
    r = amqp("recv", q, "--count", "4", "--timeout", "10", "--json-summary")
    assert r.returncode == 0, r.stderr
    assert "latency-ms" not in _recv_summary(r.stderr)
    assert amqp("send", q, "x", "-q").returncode == 0
    r = amqp("recv", q, "--count", "1", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert "latency" not in r.stderr


def test_latency_kept_below_zero_when_the_stamp_is_in_the_future(
        serve: ServePeers, tmp_path: Any) -> None:
    # a sender whose clock is ahead: negative latencies, kept as they are
    q = f"{serve()}/q"
    ahead = time.time_ns() + 3_600 * 10**9
    src = tmp_path / "m.jsonl"
    src.write_text(json.dumps({"application-properties": {"ts": ahead},
                               "body": {"data": [{"binary-text": "m"}]}}) + "\n")
    assert amqp("send", q, "--from", str(src), "-q").returncode == 0
    r = amqp("recv", q, "--count", "1", "--timeout", "10", "--json-summary")
    assert r.returncode == 0, r.stderr
    f = _recv_summary(r.stderr)["latency-ms"]
    _check_figures(f, 1)
    assert -3_600_000 <= f["max"] < -3_500_000


@pytest.mark.integration
def test_recv_latency_through_rabbitmq(rabbitmq_url: str, rabbitmq_queue: str) -> None:
    q = f"{rabbitmq_url}/{rabbitmq_queue}"
    before = time.time_ns()
    r = amqp("send", q, "x", "--count", "20", "--timestamp", "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--count", "20", "--timeout", "10", "--json", "--json-summary")
    after = time.time_ns()
    assert r.returncode == 0, r.stderr
    assert all(before <= ts <= after for ts in _stamps(r.stdout))
    f = _recv_summary(r.stderr)["latency-ms"]
    _check_figures(f, 20)
    assert 0 <= f["min"] and f["max"] <= (after - before) / 1e6


# --- --report-every ---------------------------------------------------------------------

def test_send_reports_over_a_paced_run(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    r = amqp("send", q, "x", "--count", "10", "--rate", "5", "--report-every", "0.5")
    assert r.returncode == 0, r.stderr
    reports = _reports(r.stderr, SEND_REPORT)
    assert len(reports) >= 2, r.stderr
    # the summary is the last word, on stdout as always
    assert r.stdout.startswith("sent 10, accepted 10, in doubt 0 in ")
    assert all(line in reports or not line.startswith("amqp: ")
               for line in r.stderr.splitlines()), r.stderr


def test_send_reports_as_json(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    r = amqp("send", q, "x", "--count", "10", "--rate", "5", "--report-every", "0.5",
             "--json", "--timestamp")
    assert r.returncode == 0, r.stderr
    reports = _json_reports(r.stderr)
    assert len(reports) >= 2, r.stderr
    for rep in reports:
        assert {"elapsed", "sent", "interval-sent", "interval-rate", "accepted", "in-flight",
                "rejected", "released", "modified", "waiting-for-credit"} <= set(rep)
        assert rep["sent"] <= 10 and rep["accepted"] <= rep["sent"]
    assert [rep["elapsed"] for rep in reports] == sorted(rep["elapsed"] for rep in reports)
    assert sum(rep["interval-sent"] for rep in reports) == reports[-1]["sent"]
    assert json.loads(r.stdout)["accepted"] == 10


def test_send_reports_show_a_stall(peers: Callable[[Any], Any]) -> None:
    # a peer that never grants credit: nothing goes, and the reports say so on time
    broker = peers(Broker(credit_window=0))
    r = amqp("send", f"{broker.url}/q", "x", "--report-every", "0.3", "--timeout", "1.5")
    assert r.returncode == 5, r.stderr
    reports = _reports(r.stderr, SEND_REPORT)
    assert len(reports) >= 2, r.stderr
    assert all("sent 0 (+0, 0/s) accepted 0 in flight 0 waiting for credit " in line
               for line in reports)
    waited = [int(line.rsplit(" ", 1)[1].rstrip("s")) for line in reports]
    assert waited == sorted(waited) and waited[-1] >= 1, reports
    # the summary, then why the run ended, as for any failure once the link is open
    assert r.stdout.startswith("sent 0, accepted 0, in doubt 0, not sent 1 in "), r.stdout
    assert r.stderr.splitlines()[-1] == "amqp: error: no credit from the peer for 1.5s"

    r = amqp("send", f"{broker.url}/q", "x", "--report-every", "0.3", "--timeout", "1.5",
             "--json")
    assert r.returncode == 5, r.stderr
    waited_json = [rep["waiting-for-credit"] for rep in _json_reports(r.stderr)]
    assert len(waited_json) >= 2 and waited_json == sorted(waited_json), r.stderr
    assert waited_json[0] > 0 and json.loads(r.stdout)["not-sent"] == 1


def test_recv_reports_with_the_intervals_latency(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    assert amqp("send", q, "x", "--count", "10", "--timestamp", "-q").returncode == 0
    r = amqp("recv", q, "--count", "10", "--rate", "5", "--timeout", "10",
             "--report-every", "0.5")
    assert r.returncode == 0, r.stderr
    reports = _reports(r.stderr, RECV_REPORT)
    assert len(reports) >= 2, r.stderr
    assert any(" latency p50 " in line for line in reports), r.stderr
    assert r.stderr.splitlines()[-1].startswith("amqp: received 10, accept 10 in ")


def test_recv_reports_as_json_and_a_stall(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    assert amqp("send", q, "x", "--count", "3", "--timestamp", "-q").returncode == 0
    # three messages at once, then nothing until the timeout: the reports go on, +0
    r = amqp("recv", q, "--count", "4", "--timeout", "1.5", "--report-every", "0.3",
             "--json-summary")
    assert r.returncode == 5, r.stderr
    reports = _json_reports(r.stderr)
    assert len(reports) >= 2, r.stderr
    for rep in reports:
        assert {"elapsed", "received", "interval-received", "interval-rate"} <= set(rep)
        if "interval-latency-ms" in rep:
            _check_figures(rep["interval-latency-ms"], rep["interval-received"])
    assert sum(rep["interval-received"] for rep in reports) == 3
    stalled = [rep for rep in reports if rep["interval-received"] == 0]
    assert stalled and all(rep["interval-rate"] == 0 and rep["received"] == 3
                           and "interval-latency-ms" not in rep for rep in stalled)
    _check_figures(_recv_summary(r.stderr)["latency-ms"], 3)


# --- usage errors -----------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("send", "x", "--report-every", "0"),
    ("send", "x", "--report-every", "-1"),
    ("send", "x", "--report-every", "inf"),
    ("recv", "--report-every", "0"),
    ("recv", "--report-every", "nan"),
    ("send", "--from", "-", "--timestamp"),
    ("send", "x", "--timestamp", "-P", "ts=1"),
    ("send", "x", "--timestamp", "--sequence-key", "ts"),
    ("send", "x", "--report-every", "1", "--progress"),
    ("recv", "--subscription", "s", "--unsubscribe", "--report-every", "1"),
])
def test_usage_errors(args: tuple[str, ...]) -> None:
    command, *rest = args
    # (a port nothing listens on: a usage error comes before any connection)
    r = amqp(command, "amqp://127.0.0.1:1/q", *rest, input=b"")
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("amqp: error: "), r.stderr
    assert "Traceback" not in r.stderr
