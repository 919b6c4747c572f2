"""A delivery whose payload a frame-trace log cut short (proton shows about 1 KiB of a
frame, `... (truncated)`) is shown in the TUI as `amqp pcap-dump --deliveries` says it:
its transfers with the size the lines give and what the log shows, and its message as
one the log did not show whole. It was shown as a message that does not decode (`expected
a amqp-value section of 5005 bytes, found end of input`), its steps with the log's bytes
only, as if the application had sent a broken message."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from tests.dissect.test_trace_log_views import _accept, _dump, _log, _message, _transfer
from tests.tui.replaying import replayed

LINK = "c1|s0.0|client|s"


def _text(renderable: object) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return console.export_text()


def test_a_delivery_the_log_cut_short_is_not_a_broken_message(tmp_path: Path) -> None:
    big, small = _message(0, b"A" * 5000), _message(1)
    log = _log(tmp_path, [_transfer(False, 0, 0, big, cut_to=1000), _accept(True, True, 0),
                          _transfer(False, 0, 1, small), _accept(True, True, 1)])
    src = replayed(log)
    cut = src.snapshot(LINK, f"{LINK}|{b'0'.hex()}", src.now()).delivery
    assert cut is not None
    step = cut.timeline[0]
    assert step.what == "transfer"
    assert f"{len(big)} bytes (log shows 1000)" in step.detail, step.detail
    shown = _text(cut.message)
    assert "does not decode" not in shown, shown
    assert f"the log cut this message short: it shows 1000 of its {len(big)} bytes" in shown
    assert cut.size == 1000 and cut.raw == big[:1000]  # (x shows the bytes it has)
    # as pcap-dump says it
    (rec, *_) = [r for r in map(json.loads, _dump(log, "--deliveries", "--json").splitlines())
                 if r.get("delivery-id") == 0]
    assert rec["full-size"] == len(big) and rec["size"] == 1000 and rec["incomplete"]
    # a delivery the log shows whole is its message, as before
    whole = src.snapshot(LINK, f"{LINK}|{b'1'.hex()}", src.now()).delivery
    assert whole is not None
    assert "log" not in whole.timeline[0].detail
    assert "cut" not in _text(whole.message) and "message-id" in _text(whole.message)
