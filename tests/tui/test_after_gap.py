"""After bytes a capture lost (a TCP gap), what the lost frames could explain is an
`after-gap` notice in pcap-dump, not a violation; the TUI says the same of the same capture
(it counted them as violations: `✖2` on the connection, `⚠ … violation(s)` on the link).
The rule is one function (`amqpcli.engine.observer.explained_by_gap`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.dissect.helpers import gap_capture
from tests.tui.replaying import replayed


def _pcap_dump(path: Path) -> tuple[list[dict], list[dict]]:
    out = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path), "--json"],
                         capture_output=True, text=True, check=True).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    return ([r for r in recs if r["record"] == "violation"],
            [r for r in recs if r["record"] == "notice" and r["kind"] == "after-gap"])


def test_findings_after_a_gap_are_notices_as_in_pcap_dump(tmp_path: Path) -> None:
    path = gap_capture(tmp_path / "gap.pcapng")
    violations, after_gap = _pcap_dump(path)
    assert violations == [] and len(after_gap) >= 2
    src = replayed(path)
    snap = src.snapshot(None, None, src.now(), conn="c1")
    (conn,) = snap.tree
    # no violation on the connection (no ✖), none on a link
    assert conn.violations == []
    assert not [w for s in conn.sessions for lk in s.links for w in lk.warnings
                if "violation" in w]
    assert "the capture lost 100 bytes (1 gap)" in conn.warnings
    detail = snap.conn
    assert detail is not None
    assert detail.violations_total == 0 and detail.violations == []
    # the same findings as pcap-dump's notices, one for one: "side: kind: what (frame N)"
    # there "frame N: what" by side
    assert detail.after_gap_total == len(after_gap)
    ours = [re.fullmatch(r"(\w+): [\w-]+: (.*) \((?:c1 )?frame (\d+)\)", x) for x in detail.after_gap]
    assert all(ours), detail.after_gap
    suffix = " (after bytes the capture lost, so not called a violation)"
    assert [(m[1], f"frame {m[3]}: {m[2]}") for m in ours if m] == [
        (r["side"], r["text"].removesuffix(suffix)) for r in after_gap]
    assert ("lost in capture", "100 bytes", "") in detail.fields


def test_the_gap_is_a_line_of_the_frame_log_and_no_frame(tmp_path: Path) -> None:
    from amqpcli.tui.adapter import frame_line
    from amqpcli.tui.watch import CaptureNotice

    path = gap_capture(tmp_path / "gap.pcapng")
    src = replayed(path)
    assert src.controller is not None
    gaps = [r for r in src.controller.records if isinstance(r.item, CaptureNotice)]
    assert len(gaps) == 1
    line = frame_line(gaps[0]).plain
    assert " c1 !! client: 100 bytes from the client missing from the capture" in line
    # frames counted as pcap-dump counts them: the gap is none
    out = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path), "--summary"],
                         capture_output=True, text=True, check=True).stdout
    frames = int(next(x for x in out.splitlines() if x.startswith("frames:")).split()[1])
    assert src.frames_before[-1] == frames


def test_one_rule_for_pcap_dump_and_the_tui() -> None:
    """pcap-dump's dissector decides with the engine observer's rule, not a copy."""
    from amqpcli.dissect import pipeline
    from amqpcli.engine.observer import explained_by_gap

    assert not hasattr(pipeline, "_GAP_KINDS")
    pipeline._load_engine()
    assert pipeline.explained_by_gap is explained_by_gap
    assert explained_by_gap("unknown-delivery", 1) and not explained_by_gap("unknown-delivery", 0)
    assert not explained_by_gap("frame-after-close", 3)
