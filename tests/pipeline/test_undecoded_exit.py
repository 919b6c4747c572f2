"""The tables run's exit status for AMQP bytes that do not decode: 8, as every other
view of the capture gives (it was 0), with either engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S
from amqpcli.codec import composites as c
from amqpcli.pipeline.output import read_table
from amqpcli.pipeline.run import write_tables
from tests.dissect.helpers import Script, write
from tests.paths import CAPTURES_DIR

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def amqp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def _undecodable(tmp_path: Path) -> Path:
    s = Script().open().sender_link()
    s.transfer(0).dispose(0, c.Accepted())
    s.raw(C2S, b"\x00\x00\x00\x20\x02\x00\x00\x00" + b"\xee" * 24)  # a frame of garbage
    s.transfer(1).dispose(1, c.Accepted()).close()
    return write(tmp_path / "bad.pcapng", s)


def test_tables_of_frames_that_do_not_decode_exit_8(tmp_path: Path) -> None:
    cap = _undecodable(tmp_path)
    shown = amqp("pcap-dump", str(cap))
    assert shown.returncode == 8 and "1 frame could not be decoded" in shown.stderr
    res = write_tables([str(cap)], str(tmp_path / "r"))
    assert (res.frame_errors, res.skipped_bytes) == (1, 0) and not res.errors
    out = tmp_path / "t"
    p = amqp("pcap-dump", str(cap), "--out", str(out))
    assert p.returncode == 8, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "amqp: error: 1 frame could not be decoded (kind 'error' in the frames table); "
        f"the rest was written to {out}")
    kinds = read_table(str(out), "frames").column("kind").to_pylist()
    assert kinds.count("error") == 1 and (out / "_SUCCESS").exists()
    p = amqp("pcap-dump", str(RABBIT), "--out", str(tmp_path / "good"))
    assert p.returncode == 0, p.stderr


@pytest.mark.spark
def test_spark_counts_frames_that_do_not_decode(spark: Any, tmp_path: Path) -> None:
    cap = _undecodable(tmp_path)
    remote = write_tables([str(cap)], str(tmp_path / "s"), engine="spark", spark=spark)
    local = write_tables([str(cap)], str(tmp_path / "l"))
    assert (remote.frame_errors, remote.skipped_bytes) == (local.frame_errors,
                                                            local.skipped_bytes) == (1, 0)
    good = write_tables([str(RABBIT)], str(tmp_path / "g"), engine="spark", spark=spark)
    assert (good.frame_errors, good.skipped_bytes) == (0, 0)
