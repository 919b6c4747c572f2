"""Connections of several captures that begin at the same time: `--summary DIR` numbers
them as `pcap-dump --summary` numbers them reading the captures (in path order), not by
their derived ids."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.paths import REPO_ROOT
from tests.pipeline.helpers import run_cli, without_shared_addresses


def _same_time_set(folder: Path) -> Path:
    """Four captures, one connection each, all beginning at the same time (on ports of
    their own), each link sending another number of messages."""
    folder.mkdir()
    gen = REPO_ROOT / "bench" / "gen_capture.py"
    for messages, port in enumerate((40000, 30000, 20000, 10000), 2):
        subprocess.run([sys.executable, str(gen), str(folder / f"p{port}.pcapng"),
                        "--connections", "1", "--links", "1", "--messages", str(messages),
                        "--seed", "1", "--client-port", str(port)],
                       check=True, capture_output=True)
    return folder


def test_connections_of_one_time_are_numbered_in_the_captures_order(tmp_path: Path) -> None:
    caps = _same_time_set(tmp_path / "caps")
    code, direct, _ = run_cli("pcap-dump", str(caps), "--summary")
    assert code == 0
    links = [ln for ln in direct.splitlines() if ln.startswith("  c")]
    assert [ln.split(":")[1].split(";")[0] for ln in links] == [
        " 5 deliveries", " 4 deliveries", " 3 deliveries", " 2 deliveries"]
    out = tmp_path / "out"
    code, _, err = run_cli("pcap-dump", str(caps), "--out", str(out))
    assert code == 0, err
    code, tables, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 0, err
    assert without_shared_addresses(tables) == direct
