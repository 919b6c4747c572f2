"""`--out` into a folder that holds tables is refused with what to do about it: a run
that failed (a full disk) or was stopped left it without `_SUCCESS`, and the rerun said
only "exists and is not an empty folder"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.paths import CAPTURES_DIR

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def amqp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_folder_left_by_an_unfinished_run_is_refused_with_what_to_do(
        tmp_path: Path) -> None:
    out = tmp_path / "t"
    (out / "connections" / "date=2026-01-01").mkdir(parents=True)
    p = amqp("pcap-dump", str(RABBIT), "--out", str(out))
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"amqp: error: {out}: holds the unfinished tables of a run that failed or was "
        f"stopped (no _SUCCESS): delete it (rm -r {out}) and run again, or choose another "
        "--out")
    (out / "_SUCCESS").touch()
    p = amqp("pcap-dump", str(RABBIT), "--out", str(out))
    assert p.returncode == 2
    assert p.stderr.strip().startswith(f"amqp: error: {out}: holds the tables of an earlier "
                                       "run: delete it")
    # a folder of something else: as before
    other = tmp_path / "o"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    p = amqp("pcap-dump", str(RABBIT), "--out", str(other))
    assert p.returncode == 2 and "exists and is not an empty folder" in p.stderr
