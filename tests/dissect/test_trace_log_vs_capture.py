"""The same traffic recorded both ways, dumpcap on the loopback and the proton peers'
frame trace (PN_TRACE_FRM=1): pcap-dump's deliveries and links agree between the capture
and the log (all but endpoints and times, which a trace does not carry as a capture does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.cli.test_pcap_dump_recorded import recording
from tests.dissect.test_trace_log_peers import RECEIVER, SENDER, _traced, serve  # noqa: F401

pytestmark = pytest.mark.integration

# what tells the time or the address of a record (here and in its timelines), which the
# two recordings give apart
_WHEN_AND_WHERE = frozenset({"time", "first-time", "settled-time", "last-time", "latency",
                             "attached", "detached", "packet", "stalls"})


def _records(path: Path, view: str, *args: str) -> list[dict[str, Any]]:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path), view,
                        "--json", *args], capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    return [json.loads(x) for x in r.stdout.splitlines()]


def _without_when_and_where(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_when_and_where(x) for k, x in v.items()
                if k not in _WHEN_AND_WHERE}
    if isinstance(v, list):
        return [_without_when_and_where(x) for x in v]
    return v


def _compared(record: dict[str, Any]) -> str:
    return json.dumps(_without_when_and_where(record), sort_keys=True)


def test_deliveries_and_links_of_a_capture_and_of_the_trace_agree(serve: str,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    port = urlsplit(serve).port
    assert port
    log = tmp_path / "peers.trace"
    with recording(port, tmp_path / "peers.pcapng") as cap:
        outcomes = _traced(SENDER, serve, log=log).split()
        _traced(RECEIVER, serve, "3", log=log)
    assert outcomes == ["accepted", "rejected", "accepted", "accepted"]
    on_port = ("--amqp-port", str(port))
    for view, kind in (("--deliveries", "delivery"), ("--links", "link")):
        from_capture = [r for r in _records(cap, view, *on_port) if r["record"] == kind]
        from_log = [r for r in _records(log, view) if r["record"] == kind]
        assert len(from_capture) == {"delivery": 7, "link": 2}[kind], from_capture
        # (deliveries print as each ends: compared as sets of records)
        assert sorted(map(_compared, from_log)) == sorted(map(_compared, from_capture)), kind
    # (and what they agree on is what the peers did)
    deliveries = _records(log, "--deliveries")
    assert sorted(d["outcome"] for d in deliveries) == ["accepted"] * 6 + ["rejected"]
    assert {(d["settled-by"], d["presettled"]) for d in deliveries} == {("receiver", False)}
    links = _records(log, "--links")
    assert [(ln["sender"], ln["deliveries"], ln["name"].endswith("-orders"))
            for ln in links] == [("client", 4, True), ("server", 3, True)]
