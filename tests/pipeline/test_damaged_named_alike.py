"""A set with several damaged captures: the views and the tables (`--out`, either engine)
name the same first damaged file, the first in path order, in the same words. The views
named the one the merge by time met first (a file with no readable packet is met before
any packet is read), and `--out` said how many more in other words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.paths import CAPTURES_DIR, require
from tests.pipeline.helpers import run_cli

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
PRINTED = "; what could be read was printed"
WRITTEN = "; what could be read was written"


def _damaged_set(tmp_path: Path) -> Path:
    """A capture cut short (its packets first, then the damage: read last) and, after
    it by path, one that is no capture at all (met before any packet is read)."""
    caps = tmp_path / "caps"
    caps.mkdir()
    whole = require(RABBIT).read_bytes()
    (caps / "a-cut.pcapng").write_bytes(whole[: len(whole) // 2 + 7])
    (caps / "b-junk.pcapng").write_bytes(b"not a capture at all")
    return caps


def _said(args: list[str], done: str) -> str:
    """The last line on stderr of `amqp pcap-dump ARGS` (exit 8), without what follows
    the naming of the damaged files (`done`)."""
    code, _out, err = run_cli("pcap-dump", *args)
    line = err.splitlines()[-1]
    assert code == 8 and line.endswith(done), err
    return line.removesuffix(done)


def test_views_and_tables_name_the_first_damaged_file_in_path_order_alike(
        tmp_path: Path) -> None:
    caps = _damaged_set(tmp_path)
    first = f"amqp: error: {caps.resolve() / 'a-cut.pcapng'}: truncated pcapng file"
    tables = _said([str(caps), "--out", str(tmp_path / "t")], WRITTEN)
    assert tables.startswith(first) and tables.endswith("; and 1 more damaged file")
    for view in ([], ["--summary"], ["--connections", "--json"]):
        assert _said([str(caps), *view], PRINTED) == tables, view
    # the files named one by one, in any order: the same line
    named = [str(caps.resolve() / "b-junk.pcapng"), str(caps.resolve() / "a-cut.pcapng")]
    assert _said([*named, "--summary"], PRINTED) == tables


@pytest.mark.spark
def test_the_spark_engine_names_them_as_the_views_do(spark: Any, tmp_path: Path) -> None:
    caps = _damaged_set(tmp_path)
    view = _said([str(caps), "--summary"], PRINTED)
    assert _said([str(caps), "--out", str(tmp_path / "s"), "--engine", "spark", "--master",
                  "local[2]", "--conf", "spark.sql.shuffle.partitions=2"], WRITTEN) == view
