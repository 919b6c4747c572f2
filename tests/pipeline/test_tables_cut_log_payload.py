"""A proton trace that cut a transfer's payload short (`... (truncated)`, about 1 KiB
shown): its message was not seen whole, in the tables as in the views."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.pipeline.output import read_table
from tests.dissect.test_trace_log_views import _accept, _log, _message, _transfer
from tests.pipeline.helpers import run_cli, without_shared_addresses


def test_a_payload_the_log_cut_short_is_an_incomplete_delivery(tmp_path: Path) -> None:
    log = _log(tmp_path, [_transfer(False, 0, 0, _message(0, b"A" * 5000), cut_to=1000),
                          _accept(True, True, 0)])
    code, views, _ = run_cli("pcap-dump", str(log), "--deliveries", "--json", "--frames-only")
    assert code == 0
    (seen,) = [json.loads(x) for x in views.splitlines() if '"record":"delivery"' in x]
    assert seen["incomplete"] and seen["size"] == 1000
    out = tmp_path / "out"
    code, _, err = run_cli("pcap-dump", str(log), "--out", str(out))
    assert code == 0, err
    (row,) = read_table(str(out), "deliveries").to_pylist()
    assert row["incomplete"] is True and row["size"] == 1000
    code, direct, _ = run_cli("pcap-dump", str(log), "--summary")
    assert "incomplete (message not seen whole): 1" in direct
    code, tables, _ = run_cli("pcap-dump", "--summary", str(out))
    assert without_shared_addresses(tables) == direct
