"""`amqp pcap-dump` of a delivery aborted by a transfer that says settled, as proton
sends it: no latency in its line, its JSON or its link's percentiles; `by sender` still
says who gave it up."""

from __future__ import annotations

import json
from pathlib import Path

from tests.dissect.helpers import write
from tests.dissect.test_aborted_latency import _aborted_settled
from tests.net.clirun import amqp


def test_an_aborted_delivery_settled_by_its_abort_has_no_latency(tmp_path: Path) -> None:
    cap = str(write(tmp_path / "abort.pcapng", _aborted_settled()))
    r = amqp("pcap-dump", cap, "--deliveries", "--links")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    [d1] = [x for x in lines if " #1 " in x]
    assert "aborted   by sender" in d1 and d1.endswith(" - [2 frames]")
    # the link's percentiles are those of the two accepted deliveries (1 ms each)
    assert "latency p50=1.000 ms p90=1.000 ms p99=1.000 ms max=1.000 ms" in r.stdout

    r = amqp("pcap-dump", cap, "--json", "--deliveries")
    [d] = [o for o in map(json.loads, r.stdout.splitlines()) if o.get("delivery-id") == 1]
    assert (d["outcome"], d["settled-by"], d["latency"], d["settled-time"]) == (
        "aborted", "sender", None, None)
