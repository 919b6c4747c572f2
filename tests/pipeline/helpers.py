"""Comparing two output folders table by table, row by row."""

from __future__ import annotations

from typing import Any

from amqpcli.pipeline.output import read_table
from amqpcli.pipeline.schema import KEYS, TABLES


def rows(out: Any, table: str) -> list[dict[str, Any]]:
    """Every row of one table, sorted by its key columns (then by every column)."""
    data = read_table(str(out), table).to_pylist()
    keys = KEYS[table]
    return sorted(data, key=lambda r: (tuple(_k(r[k]) for k in keys), repr(sorted(r.items()))))


def _k(v: Any) -> tuple[int, Any]:
    return (0, "") if v is None else (1, v)


def assert_same_tables(a: Any, b: Any) -> dict[str, int]:
    """Identical tables in both folders; returns the row counts."""
    counts = {}
    for table in TABLES:
        ra, rb = rows(a, table), rows(b, table)
        assert len(ra) == len(rb), f"{table}: {len(ra)} rows vs {len(rb)}"
        for i, (x, y) in enumerate(zip(ra, rb, strict=True)):
            diff = {k: (x[k], y[k]) for k in x if x[k] != y[k]}
            assert not diff, f"{table} row {i} differs: {diff}"
        counts[table] = len(ra)
    return counts


def run_cli(*args: str) -> tuple[int, str, str]:
    """`amqp ARGS` in-process; (exit code, stdout, stderr)."""
    from tests.net.clirun import amqp_in_process

    return amqp_in_process(*args)
