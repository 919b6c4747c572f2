"""A replay's delivery rates are the capture's: the deliveries that began in the second of
capture time up to the frame shown, the same however the replay got there. They were
sampled at the views' refreshes: 0/s while the deliveries happened, and the last sample
latched after the link went quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.tui.sources.replay import ReplaySource, load_capture
from tests.dissect.helpers import Script, write

LINK = "c1|s0.0|client|sender"


def _capture(tmp_path: Path) -> Path:
    """Ten deliveries a tenth of a second apart, accepted; the connection closes 3 s
    later."""
    s = Script().open().sender_link()
    for i in range(10):
        s.at(1.05 + i * 0.1).transfer(i, f"m{i}").dispose(i, c.Accepted())
    s.at(5.0).close()
    return write(tmp_path / "rates.pcapng", s)


def _rate(src: ReplaySource) -> float:
    snap = src.snapshot(None, None, src.now())
    (link,) = [lk for s in snap.tree[0].sessions for lk in s.links if lk.key == LINK]
    return link.rate


def _transfer_frames(src: ReplaySource) -> list[int]:
    """The replay's frame number (as `g N` takes it) of each transfer."""
    assert src.controller is not None
    return [src.frames_before[i + 1] for i, r in enumerate(src.controller.records)
            if getattr(getattr(r.item, "body", None), "NAME", "") == "transfer"]


def test_rates_in_capture_time(tmp_path: Path) -> None:
    path = _capture(tmp_path)
    stepped = ReplaySource(loaded=load_capture(path))
    assert stepped.controller is not None
    frames = _transfer_frames(stepped)
    assert len(frames) == 10
    # frame by frame, looking at every one: the rate rises with each delivery
    seen = []
    for n in range(1, frames[-1] + 1):
        stepped.controller.seek(stepped.parse_goto(str(n)))
        if n in frames:
            seen.append(_rate(stepped))
    assert seen == pytest.approx([float(i) for i in range(1, 11)])
    # straight there, looking once: the same
    jumped = ReplaySource(loaded=load_capture(path))
    assert jumped.controller is not None
    jumped.controller.seek(jumped.parse_goto(str(frames[-1])))
    assert _rate(jumped) == pytest.approx(10.0)
    # three seconds after the last delivery: none in the last second, whichever way
    for src in (stepped, jumped):
        src.controller.seek(len(src.controller))  # type: ignore[union-attr]
        assert _rate(src) == 0.0
    # and back again
    jumped.controller.seek(jumped.parse_goto(str(frames[4])))
    assert _rate(jumped) == pytest.approx(5.0)
