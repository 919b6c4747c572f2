"""A record's time is the same in every output of a nanosecond capture: frame lines,
JSON and the tables (JSON rounded where the lines and the tables did not:
`.004621Z` beside `.004620`), and that time given to --since or --until keeps the
record in (a time printed rounded up dropped it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.capture.writer import CaptureWriter, TcpConversation
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import basic
from tests.pipeline.helpers import rows


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two connections whose frames fall between microseconds, a millisecond apart: c1's
    from .004620544 on (which JSON wrote .004621 and the lines .004620), c2's 600 ns
    past a microsecond (some printed as the next microsecond, after their own time)."""
    path = tmp_path_factory.mktemp("ns") / "ns.pcapng"
    with CaptureWriter(path) as w:
        for i, first in enumerate((1_763_768_110_004_620_544, 1_763_768_111_000_000_600)):
            conv = TcpConversation(w, client=("10.0.0.1", 40000 + i),
                                   start_ns=first - 1_000_000)
            conv.handshake()
            for d, data, t in basic(6, sasl=False).steps:
                conv.send(d, data, time_ns=first + round(t * 1000) * 1_000_000)
            conv.close()
    return str(path)


def _frames(*args: str) -> list[dict]:  # type: ignore[type-arg]
    code, out, err = run("pcap-dump", *args, "--json")
    assert code == 0, err
    return [r for r in map(json.loads, out.splitlines()) if r["record"] == "frame"]


def test_json_lines_and_tables_give_a_frame_the_same_time(capture: str,
                                                          tmp_path: Path) -> None:
    frames = _frames(capture)
    times = [r["time"] for r in frames]
    assert times[0] == "2025-11-21T23:35:10.004620Z"
    code, out, _ = run("pcap-dump", capture)
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()] == [t[11:-1] for t in times]
    code, _, err = run("pcap-dump", capture, "--out", str(tmp_path / "t"))
    assert code == 0, err
    table = rows(tmp_path / "t", "frames")
    assert sorted(r["time"].strftime("%Y-%m-%dT%H:%M:%S.%fZ") for r in table) == sorted(times)


def test_a_records_own_time_keeps_it_in_the_range(capture: str) -> None:
    frames = _frames(capture)
    for r in frames[::3]:
        key = (r["time"], r["connection"], r["packet"])
        since = _frames(capture, "--since", r["time"])
        assert (since[0]["time"], since[0]["connection"], since[0]["packet"]) == key
        until = _frames(capture, "--until", r["time"])
        assert (until[-1]["time"], until[-1]["connection"], until[-1]["packet"]) == key
        assert len(since) + len(until) == len(frames) + 1
