"""A replay numbers connections and counts frames as `amqp pcap-dump` does: c1, c2, …,
and a stream's end (FIN) is no frame."""

from __future__ import annotations

from pathlib import Path

from amqpcli.tui.sources.replay import ReplaySource, load_capture
from amqpcli.tui.synth import write_conversation
from amqpcli.tui.watch import EndOfStream
from tests.paths import REPO_ROOT


def test_connections_and_frames_as_pcap_dump_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "closed.pcapng"
    frames = write_conversation(path, 10, close=True) + 2  # and both protocol headers
    loaded = load_capture(path)
    ends = sum(isinstance(r.item, EndOfStream) for r in loaded.records)
    assert ends == 2  # both sides' FIN: records of the replay, not frames
    assert {r.conn for r in loaded.records} == {"c1"}
    src = ReplaySource(loaded=loaded)
    c = src.controller
    assert c is not None
    assert f": {frames} frames, " in src.status()
    c.seek(len(c))
    position, total = src.bar_state()[:2]
    assert (position, total) == (frames, frames)
    # g N goes to just after frame N; the last frame number is the end.
    assert src.parse_goto(str(frames)) == len(c)
    assert src.parse_goto("3") == 3
    assert src.parse_goto("0") == 0
    c.seek(src.parse_goto(str(frames - 1)))
    assert src.bar_state()[0] == frames - 1


def test_example_capture_as_pcap_dump_summary_says() -> None:
    # `amqp pcap-dump --summary` on it: "connections: 3", "frames: 106", links of c1 … c3.
    src = ReplaySource(loaded=load_capture(REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"))
    c = src.controller
    assert c is not None
    c.seek(len(c))
    assert src.status().endswith(": 106 frames, 3 connection(s)")
    assert [k for k, _ in src.connections()] == ["c1", "c2", "c3"]
    assert src.bar_state()[:2] == (106, 106)
