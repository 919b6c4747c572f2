"""The in-process executor: what the tables hold, that rows depend on nothing but their
own flow, and the CLI around it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from amqpcli.dissect import DeliveryRecord, Dissector, FrameRecord
from amqpcli.pipeline.inputs import expand
from amqpcli.pipeline.local import run_local
from amqpcli.pipeline.output import LocalWriter, read_table
from amqpcli.pipeline.run import summary_of, write_tables
from amqpcli.pipeline.summary import build, facts_local
from amqpcli.render.summary import summary_json
from tests.paths import CAPTURES_DIR
from tests.pipeline.helpers import assert_same_tables, rows, run_cli

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


@pytest.fixture(scope="module")
def local_out(capture_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "tables"
    res = write_tables([str(capture_set)], str(out))
    assert len(res.errors) == 1 and "damaged.pcapng" in res.errors[0]
    return out


def test_every_table_has_rows_and_the_protocol(local_out: Path) -> None:
    for table in ("connections", "sessions", "links", "frames", "deliveries", "violations"):
        assert (local_out / table).is_dir()
    conns = rows(local_out, "connections")
    assert Counter(c["protocol"] for c in conns)["amqp-0-10"] == 1
    d = rows(local_out, "deliveries")
    assert {"amqp-1.0", "amqp-0-10"} <= {r["protocol"] for r in d}
    assert all(r["date"] for r in d)
    assert len({c["connection_id"] for c in conns}) == len(conns)
    # the damaged file's readable part is there too
    assert any(c["capture"].endswith("damaged.pcapng") for c in conns)


def test_ring_buffer_connections_are_whole(local_out: Path) -> None:
    """6 connections × 2 links × 15 messages, each connection cut across 3 files: one
    connection row each, every delivery once."""
    conns = [c for c in rows(local_out, "connections") if "/ring/" in c["capture"]]
    assert len(conns) == 6
    ids = {c["connection_id"] for c in conns}
    d = [r for r in rows(local_out, "deliveries") if r["connection_id"] in ids]
    assert len(d) == 6 * 2 * 15
    assert all(r["message_id"] is not None for r in d)
    assert {r["outcome"] for r in d} >= {"accepted", "rejected", "released", "modified"}


def test_rows_agree_with_the_dissector_on_the_merged_set(capture_set: Path,
                                                         local_out: Path) -> None:
    """Per flow key (the executors) or one merged pass (pcap-dump): the same deliveries."""
    ring = sorted(str(p) for p in (capture_set / "ring").iterdir())
    dis = Dissector()
    want = Counter((r.outcome, r.size, r.delivery_id, r.tag, r.frames)
                   for r in dis.read(ring) if isinstance(r, DeliveryRecord))
    conns = {c["connection_id"] for c in rows(local_out, "connections")
             if "/ring/" in c["capture"]}
    got = Counter((r["outcome"], r["size"], r["delivery_id"], r["tag"], r["frames"])
                  for r in rows(local_out, "deliveries") if r["connection_id"] in conns)
    assert got == want


def test_packet_numbers_are_per_file(local_out: Path) -> None:
    """The packet column is the file's own packet number (what tshark calls the frame)."""
    want = Counter((round(r.time * 1e6), r.side, r.frame_no, r.packet)
                   for r in Dissector().read(str(RABBIT)) if isinstance(r, FrameRecord))
    got = Counter((int(r["time"].timestamp() * 1e6 + 0.5), r["side"], r["frame_no"],
                   r["packet"]) for r in rows(local_out, "frames")
                  if r["capture"] == str(RABBIT.resolve()) or r["capture"].endswith(
                      "/rabbitmq-sasl-plain-send-recv.pcapng"))
    assert sum(want.values()) > 30
    assert got == want


def test_a_file_gives_the_same_rows_alone_or_in_a_set(capture_set: Path, local_out: Path,
                                                      tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    write_tables([str(capture_set / "many.pcapng")], str(alone))
    many = str((capture_set / "many.pcapng").resolve())
    ids = {c["connection_id"] for c in rows(local_out, "connections") if c["capture"] == many}
    assert len(ids) == 40
    for table in ("connections", "links", "frames", "deliveries"):
        a = rows(alone, table)
        b = [r for r in rows(local_out, table) if r["connection_id"] in ids]
        assert a == b, table


def test_midstream_gap_and_open_at_end(local_out: Path) -> None:
    conn = next(c for c in rows(local_out, "connections")
                if c["capture"].endswith("crafted-midstream.pcap"))
    assert conn["midstream"] and conn["closed_client"] == "end"
    d = [r for r in rows(local_out, "deliveries") if r["connection_id"] == conn["connection_id"]]
    assert d
    frames = [r for r in rows(local_out, "frames") if r["connection_id"] == conn["connection_id"]]
    assert any(r["packet"] is not None for r in frames)


def test_runs_are_deterministic_and_ndjson_reads_back_the_same(
        capture_set: Path, local_out: Path, tmp_path: Path) -> None:
    nd = tmp_path / "nd"
    write_tables([str(capture_set)], str(nd), fmt="ndjson")
    assert any(p.suffix == ".json" for p in (nd / "frames").rglob("*"))
    assert_same_tables(local_out, nd)


def test_summary_of_tables_matches_summary_of_captures(capture_set: Path, tmp_path: Path) -> None:
    files = [str(capture_set / "ring"), str(RABBIT)]
    out = tmp_path / "t"
    write_tables(files, str(out))
    s_tables = summary_json(summary_of(str(out)))
    code, stdout, _err = run_cli("pcap-dump", *expand(files), "--summary", "--json")
    assert code == 0
    import json

    s_caps = json.loads(stdout.strip().splitlines()[-1])
    for k in ("connections", "protocols", "frames", "by-performative", "deliveries",
              "by-outcome", "unsettled-at-end", "by-violation", "first-time", "last-time"):
        assert s_tables[k] == s_caps[k], k
    links = s_tables["links"]  # links only: the shared addresses are a section of their own
    assert len(links) == len(s_caps["links"])
    key = lambda ln: (ln["name"], ln["deliveries"], sorted(ln["outcomes"].items()))
    assert sorted(map(key, links)) == sorted(map(key, s_caps["links"]))
    assert sum(ln["deliveries"] for ln in links) == s_tables["deliveries"]
    assert s_tables["addresses"] and all(a["links"] > 1 for a in s_tables["addresses"])
    assert build(facts_local(str(out))).deliveries == 6 * 2 * 15 + 40


def test_local_memory_is_per_flow(capture_set: Path, tmp_path: Path) -> None:
    """Flows that ended leave no dissector behind (connections are written out early)."""
    from amqpcli.pipeline import local

    seen: list[int] = []
    w = LocalWriter(str(tmp_path / "o"))

    def write(batch: dict) -> None:
        seen.append(len(batch["connections"]))
        w.write(batch)

    old = local.FLUSH_ROWS
    local.FLUSH_ROWS = 50
    try:
        run_local([str(capture_set / "many.pcapng")], write)
    finally:
        local.FLUSH_ROWS = old
        w.close()
    # connections came out while the file was still being read, not all at the end
    assert sum(seen[:-1]) > 0


def test_cli_writes_tables_and_reports(capture_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    code, stdout, err = run_cli("pcap-dump", str(RABBIT), "--out", str(out), "--summary")
    assert code == 0, err
    assert "wrote" in err and "deliveries" in err
    assert "deliveries: 40" in stdout
    assert read_table(str(out), "deliveries").num_rows == 40
    code, stdout2, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 0 and stdout2 == stdout


@pytest.mark.parametrize("args, text", [
    (["--format", "xml"], "--format xml"),
    (["--engine", "flink"], "--engine flink"),
    (["--master", "spark://x:7077"], "--master and --conf go with --engine spark"),
    (["--conf", "spark.a=b"], "--master and --conf go with --engine spark"),
])
def test_cli_bad_options(tmp_path: Path, args: list[str], text: str) -> None:
    code, _out, err = run_cli("pcap-dump", str(RABBIT), "--out", str(tmp_path / "x"), *args)
    assert code == 2 and text in err and "Traceback" not in err


def test_cli_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    code, _out, err = run_cli("pcap-dump", str(RABBIT), "--out", str(tmp_path))
    assert code == 2 and "not an empty folder" in err
    (tmp_path / "file").write_text("x")
    code, _out, err = run_cli("pcap-dump", str(RABBIT), "--out", str(tmp_path / "file"))
    assert code == 2 and "exists and is not a folder" in err


def test_cli_damaged_file_exits_8_after_writing(capture_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    code, _out, err = run_cli("pcap-dump", str(capture_set / "damaged.pcapng"), "--out", str(out))
    assert code == 8 and "damaged.pcapng" in err
    assert read_table(str(out), "connections").num_rows > 0


def test_cli_set_without_amqp_exits_8_after_writing(tmp_path: Path) -> None:
    # as the capture shown instead of written: no AMQP at all is worth saying
    noise = tmp_path / "noise.pcapng"
    from amqpcli.capture.writer import CaptureWriter, TcpConversation

    with CaptureWriter(noise) as w:
        conv = TcpConversation(w, server=("10.0.0.2", 80), start_ns=1_700_000_000_000_000_000)
        conv.handshake()
        conv.send(0, b"GET / HTTP/1.1\r\n\r\n")
        conv.close()
    out = tmp_path / "n"
    code, _out, err = run_cli("pcap-dump", str(noise), "--out", str(out))
    assert code == 8 and "no AMQP traffic" in err, err
    assert read_table(str(out), "connections").num_rows == 0


def test_spark_engine_without_java_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = os.path.dirname(sys.executable)  # python and amqp, no java
    p = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(RABBIT), "--out",
                        str(tmp_path / "s"), "--engine", "spark"], check=False, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Java" in lines[0], p.stderr


def test_cli_out_that_cannot_be_written_fails_before_reading(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "tables"  # a folder inside a regular file
    code, _out, err = run_cli("pcap-dump", str(RABBIT), "--out", str(out))
    assert code == 2 and err.strip() == f"amqp: error: cannot write tables to {out}: not a directory"


def test_a_failed_write_is_one_line_and_leaves_no_success_mark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from amqpcli.errors import UserError

    def full(self: LocalWriter, table: str, day: str, t: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(LocalWriter, "_append", full)
    out = tmp_path / "full"
    with pytest.raises(UserError, match="cannot write tables to .*: no space left on device"):
        write_tables([str(RABBIT)], str(out))
    assert out.is_dir() and not (out / "_SUCCESS").exists()


def test_an_interrupted_run_keeps_its_parts_but_no_success_mark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import amqpcli.pipeline.run as run_mod

    def interrupted(paths: object, write: object, **kw: object) -> None:
        write(next(iter(batches)))  # type: ignore[operator]
        raise KeyboardInterrupt

    batches: list[dict[str, list[dict[str, object]]]] = []
    run_local([str(RABBIT)], batches.append)
    monkeypatch.setattr(run_mod, "run_local", interrupted)
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        write_tables([str(RABBIT)], str(out))
    assert not (out / "_SUCCESS").exists()
    assert read_table(str(out), "frames").num_rows > 0  # the part written is whole


def test_report_names_the_tables_in_their_order_whatever_the_engine_counted(
        capsys: pytest.CaptureFixture[str]) -> None:
    from amqpcli.pipeline.local import Result
    from amqpcli.pipeline.run import report

    # Spark's counts come in no set order; the line is the same for both engines.
    report(Result(rows={"links": 3, "frames": 40, "violations": 0, "connections": 1,
                        "sessions": 1, "deliveries": 9}, seconds=1.0), "out")
    assert capsys.readouterr().err == (
        "wrote out: 1 connections, 1 sessions, 3 links, 40 frames, 9 deliveries (1.0 s)\n")


def test_an_empty_table_keeps_its_columns_for_any_reader(tmp_path: Path) -> None:
    # no violations in this capture: the folder holds a zero-row file with the columns,
    # so pyarrow (or DuckDB, Spark) reading the folder alone sees the table's schema
    import pyarrow.dataset as ds

    out = tmp_path / "e"
    write_tables([str(RABBIT)], str(out))
    t = ds.dataset(str(out / "violations"), partitioning="hive").to_table()
    assert t.num_rows == 0
    assert {"connection_id", "kind", "detail"} <= set(t.column_names)
    assert read_table(str(out), "violations").num_rows == 0
