"""Several captures read at once: a record's packet is its number in its own file, as
tshark and the tables number packets (they counted on across the files: a violation at
`packet 441` was packet 26 of its file), and the record says which file that is. One
file's output is as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.capture.writer import CaptureWriter, TcpConversation
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import Script, basic
from tests.pipeline.helpers import rows

START = 1_700_000_000_000_000_000


def _write(path: Path, script: Script, first_ns: int, port: int) -> str:
    with CaptureWriter(path) as w:
        conv = TcpConversation(w, client=("10.0.0.1", port), start_ns=first_ns)
        conv.handshake()
        for d, data, t in script.steps:
            conv.send(d, data, time_ns=first_ns + 500_000 + round(t * 1000) * 1_000_000)
        conv.close()
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two captures whose packets interleave (b's half a millisecond after a's); b has
    a transfer on a handle never attached (a violation)."""
    tmp = tmp_path_factory.mktemp("two")
    bad = Script().open().sender_link()
    bad.transfer(0, handle=7)
    bad.close()
    return (_write(tmp / "a.pcapng", basic(3, sasl=False), START, 40000),
            _write(tmp / "b.pcapng", bad, START + 500_000, 40001))


def _records(*args: str, stdin: bytes | None = None) -> list[dict]:  # type: ignore[type-arg]
    code, out, err = run("pcap-dump", *args, "--json", stdin=stdin)
    assert code == 0, err
    return [json.loads(ln) for ln in out.splitlines()]


def _packets(records: list[dict]) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
    return [(r["record"], r["time"], r["packet"]) for r in records if "packet" in r]


def test_packets_are_numbered_in_their_own_file(files: tuple[str, str]) -> None:
    a, b = files
    merged = _records(a, b)
    assert {r.get("file") for r in merged if "packet" in r} == {a, b}
    for name in (a, b):
        alone = _records(name)
        assert all("file" not in r for r in alone)  # one file: as it was
        assert _packets([r for r in merged if r.get("file") == name]) == _packets(alone)
    order = [r["file"] for r in merged if "packet" in r]
    assert order.index(b) < max(i for i, f in enumerate(order) if f == a)  # interleaved
    assert any(r["record"] == "violation" and r["file"] == b for r in merged)


def test_a_violation_line_says_which_file_its_packet_is_in(files: tuple[str, str]) -> None:
    a, b = files
    code, alone, _ = run("pcap-dump", b)
    assert code == 0
    (line,) = [ln for ln in alone.splitlines() if " !! violation " in ln]
    packet = int(line.split(", packet ")[1].split(")")[0])
    assert line.endswith(f"(frame 8, packet {packet}): transfer on handle 7")
    for view in ([], ["--summary"]):
        code, out, _ = run("pcap-dump", a, b, *view)
        assert code == 0
        (merged,) = [ln for ln in out.splitlines() if " !! violation " in ln]
        assert merged.endswith(f"(frame 8, packet {packet} of {b}): transfer on handle 7")


def test_standard_input_is_named_as_it_was_given(files: tuple[str, str]) -> None:
    a, b = files
    merged = _records(a, "-", stdin=Path(b).read_bytes())
    assert {r.get("file") for r in merged if "packet" in r} == {a, "-"}
    assert _packets([r for r in merged if r.get("file") == "-"]) == _packets(_records(b))


def test_the_tables_number_packets_alike(files: tuple[str, str], tmp_path: Path) -> None:
    a, b = files
    code, _, err = run("pcap-dump", a, b, "--out", str(tmp_path / "t"))
    assert code == 0, err
    frames = [r for r in _records(a, b) if r["record"] == "frame"]
    assert sorted((Path(r["file"]).name, r["packet"]) for r in frames) == sorted(
        (Path(r["capture"]).name, r["packet"]) for r in rows(tmp_path / "t", "frames"))
