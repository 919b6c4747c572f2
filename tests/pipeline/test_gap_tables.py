"""The deliveries table says which deliveries a gap in the capture took transfers from,
the same with either executor, and the summary of the tables counts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.pipeline.run import summary_of, write_tables
from amqpcli.render.summary import summary_json
from tests.dissect.test_gap_deliveries import gap_capture
from tests.pipeline.helpers import assert_same_tables, rows


def _incomplete(out: Path) -> list[tuple[int, bool]]:
    return sorted((r["delivery_id"], r["incomplete"]) for r in rows(out, "deliveries"))


def test_the_deliveries_table_marks_the_incomplete_delivery(tmp_path: Path) -> None:
    cap = gap_capture(tmp_path / "gap.pcapng")
    write_tables([str(cap)], str(tmp_path / "t"))
    assert _incomplete(tmp_path / "t") == [(0, False), (1, True), (2, False)]
    assert summary_json(summary_of(str(tmp_path / "t")))["incomplete"] == 1


@pytest.mark.spark
def test_both_engines_agree_on_it(tmp_path: Path, spark: Any) -> None:
    cap = gap_capture(tmp_path / "gap.pcapng")
    write_tables([str(cap)], str(tmp_path / "l"))
    write_tables([str(cap)], str(tmp_path / "s"), engine="spark", spark=spark)
    assert_same_tables(tmp_path / "l", tmp_path / "s")
    assert _incomplete(tmp_path / "s") == [(0, False), (1, True), (2, False)]
    remote = summary_json(summary_of(str(tmp_path / "s"), engine="spark", spark=spark))
    assert remote["incomplete"] == 1
