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


def without_shared_addresses(summary: str) -> str:
    """A summary's text without the one section only the summary of tables has
    (`addresses shared by several links:` and its lines)."""
    lines = summary.splitlines(keepends=True)
    try:
        start = lines.index("addresses shared by several links:\n")
    except ValueError:
        return summary
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return "".join(lines[:start] + lines[end:])


T0_US = 1_700_000_000_000_000  # (µs)


def many_violations(out: Any, fmt: str = "parquet") -> list[tuple[str, int, int]]:
    """Tables of 4 connections (c1…c4 by first time; their ids in the other order) and
    70 violations: 40 of them at times of their own, then 30 at one time, across the
    connections, in an order neither by connection nor by frame; the 50th by time is
    one of those 30. Returns (label, time in µs, frame) of the 50 that the summary lists:
    the violations by time, then connection, then frame (`violation_order`)."""
    from amqpcli.pipeline.output import LocalWriter

    ids = ["d4", "c3", "b2", "a1"]  # c1's id last
    conns = [{"connection_id": cid, "capture": "x.pcapng", "protocol": "amqp-1.0",
              "first_time": T0_US + n * 1000, "notices": [], "date": "2023-11-14"}
             for n, cid in enumerate(ids)]
    listed = [(n % 4, T0_US + 10_000 + n * 10, n + 1) for n in range(40)]
    listed += [((n * 3) % 4, T0_US + 900_000, 100 - n) for n in range(30)]
    rows = [{"connection_id": ids[c], "protocol": "amqp-1.0", "time": t,
             "kind": "unknown-delivery", "side": "server", "frame_no": frame,
             "capture": "x.pcapng", "packet": frame * 3, "detail": f"delivery {frame}",
             "date": "2023-11-14"} for c, t, frame in reversed(listed)]
    w = LocalWriter(str(out), fmt)
    w.write({"connections": conns, "violations": rows})
    w.close()
    first = sorted(listed, key=lambda v: (v[1], v[0], v[2]))[:50]
    return [(f"c{c + 1}", t, frame) for c, t, frame in first]


def colliding_set(folder: Any) -> Any:
    """Two runs of bench/gen_capture.py (2 files each) in `folder`, with the same
    addresses and times: their connections collide (violations), and packets of two
    files share times."""
    import subprocess
    import sys

    from tests.paths import REPO_ROOT

    gen = REPO_ROOT / "bench" / "gen_capture.py"
    folder.mkdir()
    small = ["--files", "2", "--connections", "2", "--links", "1", "--messages", "20"]
    for name, more in (("a", ["--seed", "7"]), ("b", ["--seed", "11", "--max-frame", "1024"])):
        subprocess.run([sys.executable, str(gen), str(folder / name), *small, *more],
                       check=True, capture_output=True)
    return folder
