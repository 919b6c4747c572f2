"""Captures → the TUI's frame records, through the dissect pipeline: keys by flow, stream
ends on FIN, a gap found again, flows that are not AMQP 1.0 left out with a note."""

from __future__ import annotations

from pathlib import Path

from amqpcli.tui.sources.replay import load_capture, no_amqp
from amqpcli.tui.watch import EndOfStream
from tests.dissect.helpers import C2S, Script, basic, gap_capture, write


def _names(loaded: object) -> list[str]:
    out = []
    for r in loaded.records:  # type: ignore[attr-defined]
        body = getattr(r.item, "body", None)
        out.append(body.NAME if body is not None else type(r.item).__name__)
    return out


def test_conversation_keys_labels_and_stream_ends(tmp_path: Path) -> None:
    loaded = load_capture(write(tmp_path / "a.pcapng", basic(3)))
    assert {r.conn for r in loaded.records} == {"c1"}
    assert loaded.labels == {"c1": "10.0.0.1:40000 -> 10.0.0.2:5672"}
    names = _names(loaded)
    assert names.count("transfer") == 3 and names.count("disposition") == 3
    # both sides sent FIN: each side's stream end follows its last frame
    ends = [(r.side, r.item.how) for r in loaded.records if isinstance(r.item, EndOfStream)]
    assert sorted(ends) == [("client", "fin"), ("server", "fin")]
    assert not loaded.notes


def test_frames_after_a_gap_are_found_again(tmp_path: Path) -> None:
    loaded = load_capture(gap_capture(tmp_path / "gap.pcapng"))
    names = _names(loaded)
    # frames from the client after the gap are shown, as in pcap-dump
    assert 7 <= names.count("transfer") < 10 and names.count("close") == 2
    assert any(n.startswith("c1 client: 100 bytes from the client missing") for n in loaded.notes)


def test_a_flow_on_another_port_without_a_header_is_not_shown(tmp_path: Path) -> None:
    s = Script().raw(C2S, b"GET / HTTP/1.1\r\n\r\n")
    loaded = load_capture(write(tmp_path / "http.pcapng", s, port=8080))
    assert loaded.records == []
    # counted, not noted one by one: pcap-dump says nothing of such a flow either (the
    # TUI said 'flow 10.0.0.1:40000 -> 10.0.0.2:8080 speaks unknown: not shown')
    assert loaded.notes == [] and loaded.other_flows == {"unknown": 1}
    assert no_amqp(loaded) == "no AMQP traffic in this capture (1 TCP flow: 1 unknown)"
