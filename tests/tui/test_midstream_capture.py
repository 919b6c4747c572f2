"""A capture that starts mid-connection on the AMQP port opens in the TUI as pcap-dump reads
it: the connection, its link and deliveries, no violations for what was set up before the
capture. The TUI gave the capture reader only the ports of `--amqp-port` (not 5672), so the
flow was 'unknown: not shown'; and its model, never told, would have called every frame on
a channel or handle set up before the capture a violation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.tui.adapter import frame_line
from amqpcli.tui.watch import CaptureNotice
from tests.dissect.helpers import Script, write
from tests.tui.replaying import replayed


def _conversation() -> Script:
    s = Script().open().sender_link()
    for i in range(5):
        s.transfer(i, f"m{i}")
    for i in range(5):
        s.dispose(i, c.Accepted())
    return s.close()


def _summary(path: Path) -> str:
    return subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path), "--summary"],
                          capture_output=True, text=True, check=True).stdout


def test_a_capture_from_the_third_transfer_on(tmp_path: Path) -> None:
    # the capture begins at the third transfer: no header, no open, begin or attach
    path = write(tmp_path / "mid.pcapng", _conversation(), skip_first=11, handshake=False)
    summary = _summary(path)
    assert "violations: 0" in summary and "deliveries: 3" in summary
    src = replayed(path)
    assert src.loaded is not None and not [n for n in src.loaded.notes if "not shown" in n]
    snap = src.snapshot(None, None, src.now(), conn="c1")
    (conn,) = snap.tree
    assert conn.violations == []
    (link,) = [lk for s in conn.sessions for lk in s.links]
    assert link.deliveries == 3 and link.unsettled == 0
    assert snap.conn is not None and snap.conn.violations_total == 0
    frames = int(next(x for x in summary.splitlines() if x.startswith("frames:")).split()[1])
    assert src.frames_before[-1] == frames
    assert src.controller is not None
    (note,) = [r for r in src.controller.records if isinstance(r.item, CaptureNotice)]
    assert "c1 !! no protocol header: the capture starts mid-connection" in frame_line(note).plain


def test_a_capture_without_the_handshake_and_headers(tmp_path: Path) -> None:
    path = write(tmp_path / "late.pcapng", _conversation(), skip_first=4, handshake=False)
    assert "violations: 0" in _summary(path)
    src = replayed(path)
    snap = src.snapshot(None, None, src.now())
    (conn,) = snap.tree
    assert conn.violations == []
    assert [lk.deliveries for s in conn.sessions for lk in s.links] == [5]
