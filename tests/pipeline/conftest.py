"""Capture sets for the pipeline tests, and one local SparkSession for the whole run.

The sets: the two real captures (AMQP 1.0 with RabbitMQ, AMQP 0-10), a ring-buffer set
of three files whose connections straddle the files (with retransmissions, reordering and
HTTP noise), one file with many short connections, a crafted capture that starts
mid-connection, loses a segment and never closes, and a damaged (truncated) file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.paths import CAPTURES_DIR, REPO_ROOT, require

GEN = REPO_ROOT / "bench" / "gen_capture_set.py"


def _gen(out: Path, site: int, *args: str) -> None:
    """gen_capture.py's conversations on addresses and times of their own (`site`)."""
    subprocess.run([sys.executable, str(GEN), "one", str(out), "--site", str(site), "--", *args],
                   check=True, capture_output=True, cwd=REPO_ROOT)


@pytest.fixture(scope="session")
def capture_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding every kind of input the executors must agree on."""
    from tests.dissect.helpers import basic, write

    root = tmp_path_factory.mktemp("captures")
    for name in ("rabbitmq-sasl-plain-send-recv.pcapng", "amqp010-qpid-python-echo.pcapng"):
        shutil.copy(require(CAPTURES_DIR / name), root / name)
    ring = root / "ring"
    ring.mkdir()
    _gen(ring / "ring", 1, "--connections", "6", "--links", "2", "--messages", "15", "--files", "3",
         "--retransmit", "0.02", "--reorder", "0.02", "--noise", "2", "--seed", "3")
    _gen(root / "many.pcapng", 2, "--connections", "40", "--links", "1", "--messages", "3",
         "--seed", "5")
    write(root / "crafted-midstream.pcap", basic(6), skip_first=9, fin=False, drop=[(14, 0)])
    _gen(tmp := root / "whole.tmp.pcapng", 4, "--connections", "3", "--links", "1",
         "--messages", "10", "--seed", "7")
    whole = tmp.read_bytes()
    tmp.unlink()
    (root / "damaged.pcapng").write_bytes(whole[: len(whole) // 2 + 7])
    return root


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession for every Spark test: two cores, few shuffle partitions."""
    from amqpcli.pipeline.spark import get_session

    session = get_session("local[2]", {"spark.sql.shuffle.partitions": "3",
                                       "spark.default.parallelism": "2"})
    yield session
    session.stop()
