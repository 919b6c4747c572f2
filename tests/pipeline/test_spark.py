"""The Spark executor in local mode: the same tables as the in-process one, row by row,
for every kind of input; the summary read back through Spark; the CLI with --engine spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.pipeline.run import summary_of, write_tables
from amqpcli.render.summary import summary_json
from tests.paths import CAPTURES_DIR
from tests.pipeline.helpers import assert_same_tables, rows, run_cli

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def both(capture_set: Path, spark: Any, tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[Path, Path, Any, Any]:
    root = tmp_path_factory.mktemp("engines")
    local = write_tables([str(capture_set)], str(root / "local"))
    remote = write_tables([str(capture_set)], str(root / "spark"), engine="spark", spark=spark)
    return root / "local", root / "spark", local, remote


def test_both_engines_write_identical_tables(both: tuple[Path, Path, Any, Any]) -> None:
    a, b, ra, rb = both
    counts = assert_same_tables(a, b)
    assert counts["frames"] > 1000 and counts["deliveries"] > 250
    assert counts["connections"] >= 6 + 40 + 3 + 2 and counts["sessions"] > 0
    assert {t: n for t, n in rb.rows.items() if n} == {t: n for t, n in counts.items() if n}
    # the damaged file: both read as far as it goes and say so
    assert len(ra.errors) == len(rb.errors) == 1 and "damaged" in rb.errors[0]


def test_spark_parts_are_partitioned_by_date(both: tuple[Path, Path, Any, Any]) -> None:
    _a, b, _ra, _rb = both
    parts = {p.name for p in (b / "deliveries").iterdir() if p.is_dir()}
    assert parts and all(p.startswith("date=") for p in parts)
    assert {r["date"] for r in rows(b, "deliveries")} == {p[5:] for p in parts}


def test_spark_reads_the_summary_back(both: tuple[Path, Path, Any, Any], spark: Any) -> None:
    a, b, _ra, _rb = both
    local = summary_json(summary_of(str(a)))
    remote = summary_json(summary_of(str(b), engine="spark", spark=spark))
    assert remote == local
    assert local["addresses"]  # an address of many links


def test_ndjson_from_spark_matches_local(spark: Any, tmp_path: Path) -> None:
    files = [str(CAPTURES_DIR)]
    write_tables(files, str(tmp_path / "l"), fmt="ndjson")
    write_tables(files, str(tmp_path / "s"), fmt="ndjson", engine="spark", spark=spark)
    assert any(p.suffix == ".json" for p in (tmp_path / "s" / "deliveries").rglob("*"))
    assert_same_tables(tmp_path / "l", tmp_path / "s")


def test_cli_engine_spark(spark: Any, tmp_path: Path) -> None:
    """Through the command line (the session already running is reused)."""
    out = tmp_path / "cli"
    code, stdout, err = run_cli("pcap-dump", str(CAPTURES_DIR / "*.pcapng"), "--out", str(out),
                                "--engine", "spark", "--master", "local[2]", "--conf",
                                "spark.sql.shuffle.partitions=2", "--summary")
    assert code == 0, err
    assert "deliveries: 47" in stdout and "Exception" not in err
    code, stdout2, _err = run_cli("pcap-dump", "--summary", str(out), "--engine", "spark")
    assert code == 0 and stdout2 == stdout
