"""One meaning for each frame number on screen. The bar's `frame N/M` and `g N` count the
capture's frames in order (pcap-dump's default output, line by line); a delivery's timeline
and a connection's violations number a connection's own frames, as pcap-dump's JSON
`frame` and violation lines do. Those are now written `c3 frame 18`, and `g c3:18` goes to
that frame (the timeline said `frame 18`, and `g 18` went to the capture's frame 18, a c1
frame)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from amqpcli.tui import adapter
from tests.paths import REPO_ROOT
from tests.tui.replaying import replayed

CAPTURE = REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"


def _pcap_dump_frames() -> dict[tuple[str, int], dict]:
    out = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(CAPTURE), "--json"],
                         capture_output=True, text=True, check=True).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    return {(r["connection"], r["frame"]): r for r in recs
            if r["record"] == "frame" and r.get("frame")}


def _time(iso: str) -> float:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def test_every_timeline_frame_is_one_g_goes_to() -> None:
    frames = _pcap_dump_frames()
    src = replayed(CAPTURE)
    c = src.controller
    assert c is not None
    seen = 0
    for key, cw in src.connections():
        for d in cw.settled:
            dd = adapter.delivery_detail(cw, d, "")
            for row in dd.timeline:
                m = re.search(r"\b(c\d+) frame (\d+)$", row.detail)
                assert m is not None and m[1] == key, row.detail
                n = int(m[2])
                pos = src.parse_goto(f"{key}:{n}")
                assert src.parse_goto(f"{key} frame {n}") == pos
                rec = c.records[pos - 1]  # the last frame the model has seen there
                theirs = frames[(key, n)]  # pcap-dump's frame of that number
                assert (rec.conn, rec.side) == (key, theirs["from"])
                assert rec.time == pytest.approx(_time(theirs["time"]), abs=1e-6)
                seen += 1
    assert seen > 20


def test_the_timeline_of_the_report() -> None:
    # c3's delivery at frame 97: transfer, released, settled, in c3's own numbers
    src = replayed(CAPTURE)
    cw = dict(src.connections())["c3"]
    d = next(d for d in cw.settled if d.timeline[0].frame_no == 11)
    details = [r.detail for r in adapter.delivery_detail(cw, d, "").timeline]
    assert [x.rsplit("  ", 1)[1] for x in details] == ["c3 frame 11", "c3 frame 15", "c3 frame 18",
                                                          "c3 frame 21"]
    # the capture's frame 18 is another one: c1's
    c = src.controller
    assert c is not None
    assert c.records[src.parse_goto("18") - 1].conn == "c1"
    assert c.records[src.parse_goto("c3:18") - 1].conn == "c3"


@pytest.mark.parametrize(("spec", "message"), [
    ("c9:1", "no connection c9 in this capture (it has c1, c2, c3)"),
    ("c3:999", "c3 has 27 frames: no frame 999"),
])
def test_a_connection_frame_that_is_not_there(spec: str, message: str) -> None:
    src = replayed(CAPTURE)
    with pytest.raises(ValueError, match=re.escape(message)):
        src.parse_goto(spec)


def test_an_amqp010_connection_numbers_its_frames_on_the_wire(testdata: Path) -> None:
    # an assembly is numbered by its last frame on the wire, as pcap-dump's JSON `frame`;
    # a frame inside a multi-frame assembly goes to that assembly
    path = testdata / "captures" / "amqp010-qpid-python-echo.pcapng"
    out = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path), "--json"],
                         capture_output=True, text=True, check=True).stdout
    theirs = [r for r in map(json.loads, out.splitlines())
              if r["record"] == "frame" and r.get("frame")]
    src = replayed(path)
    c = src.controller
    assert c is not None
    previous: dict[str, int] = {}
    longest = 0
    for r in theirs:
        key, first = r["connection"], previous.get(r["connection"], 0) + 1
        for n in range(first, r["frame"] + 1):
            rec = c.records[src.parse_goto(f"{key}:{n}") - 1]
            assert (rec.conn, rec.side) == (key, r["from"])
            assert rec.time == pytest.approx(_time(r["time"]), abs=1e-6)
        longest = max(longest, r["frame"] + 1 - first)
        previous[key] = r["frame"]
    assert longest > 1  # a multi-frame assembly was among them
