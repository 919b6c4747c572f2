"""A capture cut short opens in the TUI with what could be read, as pcap-dump shows it (it
opened empty, with only the error in the title); the damage is said in a notice. A
capture with nothing readable before its damage is still an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture import CaptureError
from amqpcli.tui.sources.replay import load_capture
from tests.net.clirun import amqp_in_process


def test_a_truncated_capture_shows_what_could_be_read(testdata: Path, tmp_path: Path) -> None:
    whole = (testdata / "captures" / "rabbitmq-sasl-plain-send-recv.pcapng").read_bytes()
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(whole[:3000])
    loaded = load_capture(cut)
    assert len(loaded.records) > 5
    assert any("what could be read is shown" in n for n in loaded.notes), loaded.notes
    # the same frames as pcap-dump reads from it
    code, out, _ = amqp_in_process("pcap-dump", str(cut), "--frames-only")
    frame_lines = [x for x in out.splitlines() if " !! " not in x]
    assert code == 8 and len(frame_lines) == len(loaded.records)


def test_nothing_readable_is_still_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcapng"
    bad.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\xff" * 40)
    with pytest.raises(CaptureError):
        load_capture(bad)
