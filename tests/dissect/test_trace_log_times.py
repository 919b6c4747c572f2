"""A frame-trace log without times (proton's PN_TRACE_FRM=1 text): every view says its
times and latencies are unknown (`-` in text, null in JSON), none reads 1970 or 0 ms;
`--since`/`--until` are a usage error. A router's connection, whose lines have times,
keeps them, in a log of both too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture.test_tracelog import ROUTER_LOG
from tests.dissect.test_trace_log_peers import RECEIVER, SENDER, _traced, serve  # noqa: F401

# (without its line that does not parse, which is warned of)
ROUTER = "".join(x for x in ROUTER_LOG.splitlines(keepends=True) if "brok!" not in x)

# what a time of 0 (the epoch) or a latency of 0 printed as
_EPOCH = ("1970", "00:00:00.000000", "0.000 ms", "0.000 s")


def _dump(log: Path, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log), *args],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    return r.stdout


def _json(log: Path, *args: str) -> list[dict]:
    return [json.loads(x) for x in _dump(log, *args, "--json").splitlines()]


def _no_epoch(text: str) -> None:
    for said in _EPOCH:
        assert said not in text, (said, text)


@pytest.fixture
def proton_trace(serve: str, tmp_path: Path) -> Path:  # noqa: F811
    log = tmp_path / "client.trace"
    assert _traced(SENDER, serve, log=log).split() == [
        "accepted", "rejected", "accepted", "accepted"]
    _traced(RECEIVER, serve, "3", log=log)
    return log


def test_a_proton_trace_has_unknown_times_in_every_view(proton_trace: Path) -> None:
    log = proton_trace
    # the frames: `-` where the time goes
    frames = _dump(log).splitlines()
    assert frames and all(line.startswith("- c") for line in frames), frames[:3]
    _no_epoch("\n".join(frames))
    # the deliveries: no first time, no latency
    lines = _dump(log, "--deliveries").splitlines()
    assert len(lines) == 7
    for line in lines:
        assert line.startswith("- c"), line
        assert line.endswith(" -"), line
    # the links and the summary: latency unknown
    links = _dump(log, "--links")
    _no_epoch(links)
    assert links.count("latency -") == 2, links
    summary = _dump(log, "--summary")
    _no_epoch(summary)
    assert "frames: 45, times unknown" in summary, summary
    assert summary.count("; latency unknown") == 2, summary
    connections = _dump(log, "--connections")
    _no_epoch(connections)
    assert " amqp-1.0 -\n" in connections, connections
    _no_epoch(_dump(log, "--messages"))


def test_a_proton_trace_has_null_times_in_json(proton_trace: Path) -> None:
    log = proton_trace
    frames = _json(log)
    assert frames and all(f["time"] is None for f in frames)
    deliveries = [d for d in _json(log, "--deliveries") if d["record"] == "delivery"]
    assert len(deliveries) == 7
    for d in deliveries:
        assert (d["first-time"], d["settled-time"], d["latency"]) == (None, None, None)
        assert all(e["time"] is None for e in d["timeline"])
    for link in _json(log, "--links"):
        assert (link["attached"], link["detached"], link["latency"]) == (None, None, None)
        assert all(c["time"] is None for c in link["credit-timeline"])
    (summary,) = _json(log, "--summary")
    assert (summary["first-time"], summary["last-time"]) == (None, None)
    assert [ln["latency"] for ln in summary["links"]] == [None, None]
    for c in _json(log, "--connections"):
        assert (c["first-time"], c["last-time"]) == (None, None)
    for m in _json(log, "--messages"):
        assert m["first-time"] is None
        assert all(h["latency"] is None and h["after"] is None for h in m["hops"])


@pytest.mark.parametrize("option", ["--since", "--until"])
def test_times_to_select_by_in_a_log_without_them_are_a_usage_error(
        tmp_path: Path, option: str) -> None:
    log = tmp_path / "client.trace"
    log.write_text("[0x55d0c8a4f2a0]: AMQP:FRAME:  -> AMQP\n"
                   "[0x55d0c8a4f2a0]: AMQP:FRAME:  <- AMQP\n"
                   '[0x55d0c8a4f2a0]: AMQP:FRAME:0 -> @open(16) [container-id="a"]\n')
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log), option, "1"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2, r
    assert r.stderr.strip() == (f"amqp: error: {option}: the log has no times to select by "
                                "(proton's frame trace carries none)")
    assert r.stdout == ""


def test_a_log_of_both_keeps_the_router_connection_s_times(tmp_path: Path) -> None:
    """A router's log with proton's trace after it: the router's connection keeps its
    times and latencies; the proton connection, whose lines have no time, does not take
    the router's last one."""
    log = tmp_path / "both.log"
    log.write_text(ROUTER
                   + "[0x55d0c8a4f2a0]: AMQP:FRAME:  -> AMQP\n"
                   + "[0x55d0c8a4f2a0]: AMQP:FRAME:  <- AMQP\n"
                   + '[0x55d0c8a4f2a0]: AMQP:FRAME:0 -> @open(16) [container-id="a"]\n')
    frames = _dump(log).splitlines()
    assert frames[0].startswith("10:00:00.100100 c1 "), frames
    assert [f.split(" ", 2)[:2] for f in frames[-3:]] == [["-", "c2"]] * 3, frames
    summary = _dump(log, "--summary")
    assert "from 10:00:00.100100 to 10:00:00.300100 (0.200 s) (3 at unknown times)" in (
        summary), summary
    conns = {c["connection"]: c for c in _json(log, "--connections")}
    assert conns["c1"]["first-time"] == "2023-05-01T10:00:00.100100Z"
    assert conns["c2"]["first-time"] is None
    # the router's connection keeps its deliveries' times and latencies
    deliveries = _dump(log, "--deliveries").splitlines()
    assert deliveries[0].startswith("10:00:00.200000 c1 "), deliveries
    assert deliveries[0].endswith("12.500 ms"), deliveries
    assert "latency p50 " in summary and "latency unknown" not in summary, summary
    (d, *_) = [d for d in _json(log, "--deliveries") if d["record"] == "delivery"]
    assert d["first-time"] == "2023-05-01T10:00:00.200000Z"
    assert d["latency"] == pytest.approx(0.0125, abs=1e-6)
