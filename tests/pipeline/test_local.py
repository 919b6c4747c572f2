"""The in-process executor: what the tables hold, that rows depend on nothing but their
own flow, and the CLI around it."""

from __future__ import annotations

import errno
import io
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from amqpcli.dissect import DeliveryRecord, Dissector, FrameRecord
from amqpcli.pipeline.inputs import expand
from amqpcli.pipeline.local import run_local
from amqpcli.pipeline.output import LocalWriter, read_table
from amqpcli.pipeline.run import summary_of, write_tables
from amqpcli.pipeline.summary import build, facts_local
from amqpcli.render.summary import summary_json
from tests.paths import CAPTURES_DIR
from tests.pipeline.helpers import (
    assert_same_tables,
    rows,
    run_cli,
    without_shared_addresses,
)

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
    # an output folder is read alone: not taken for a folder of captures beside a capture
    for args in ([str(out), str(RABBIT)], [str(RABBIT), str(out)]):
        code, stdout3, err = run_cli("pcap-dump", "--summary", *args)
        assert (code, stdout3) == (2, "")
        assert err == (f"amqp: error: {out}: an output folder of --out, which --summary reads "
                       "alone (one at a time, not with captures)\n")


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


class _FullDisk:
    """A disk with room for `room` bytes per part file: a write past it puts what fits and
    fails with ENOSPC, in pyarrow's words for Parquet (as pyarrow fails on a real full
    disk) and Python's for NDJSON. (Per file, so the small parts can still be finished.)"""

    PYARROW = "Error writing bytes to file. Detail: [errno 28] No space left on device"

    def __init__(self, room: int) -> None:
        self.room = room

    def file(self, path: Any, message: str) -> io.RawIOBase:
        room = self.room

        class Part(io.RawIOBase):
            def __init__(self) -> None:
                self.f = open(path, "wb")  # noqa: SIM115 - closed in close()
                self.left = room

            def writable(self) -> bool:
                return True

            def write(self, b: Any) -> int:
                data = bytes(b)
                fits = data[:max(self.left, 0)]
                self.f.write(fits)
                self.left -= len(fits)
                if len(fits) < len(data):
                    self.f.flush()
                    raise OSError(errno.ENOSPC, message)
                return len(data)

            def close(self) -> None:
                self.f.close()
                super().close()

        return Part()


@pytest.mark.parametrize("fmt", ["parquet", "ndjson"])
def test_a_full_disk_is_one_line_and_leaves_only_parts_that_read(
        capture_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    import gc
    import json

    import pyarrow.parquet as pq

    from amqpcli.pipeline import output

    whole = tmp_path / "whole"
    write_tables([str(capture_set)], str(whole), fmt=fmt)
    ext = ".parquet" if fmt == "parquet" else ".json"
    disk = _FullDisk(max(f.stat().st_size for f in whole.rglob(f"part-*{ext}")) // 2)

    class ParquetOnFullDisk(pq.ParquetWriter):
        def __init__(self, where: Any, *args: Any, **kw: Any) -> None:
            super().__init__(disk.file(where, _FullDisk.PYARROW), *args, **kw)

    real_open = open

    def open_on_full_disk(path: Any, mode: str = "r", *args: Any, **kw: Any) -> Any:
        if "w" not in mode:
            return real_open(path, mode, *args, **kw)
        raw = disk.file(path, os.strerror(errno.ENOSPC))
        return io.TextIOWrapper(io.BufferedWriter(raw), encoding=kw.get("encoding"))

    monkeypatch.setattr(pq, "ParquetWriter", ParquetOnFullDisk)
    monkeypatch.setattr(output, "open", open_on_full_disk, raising=False)
    ignored: list[Any] = []  # "Exception ignored in: …ParquetWriter.__del__"
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)

    out = tmp_path / "full"
    code, _out, err = run_cli("pcap-dump", str(capture_set), "--out", str(out), "--format", fmt)
    gc.collect()
    assert code == 2
    assert err == f"amqp: error: cannot write tables to {out}: no space left on device\n"
    assert not ignored
    assert not (out / "_SUCCESS").exists()
    left = sorted(out.rglob(f"part-*{ext}"))
    assert left, "the parts that were finished are kept"
    assert len(left) < len(list(whole.rglob(f"part-*{ext}")))
    for part in left:  # each one whole
        if fmt == "parquet":
            pq.ParquetFile(part).read()
        else:
            for line in part.read_text(encoding="utf-8").splitlines():
                json.loads(line)


def test_a_disk_full_before_a_part_has_its_header_leaves_no_empty_part(
        capture_set: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Parquet writer makes the file, then fails writing its header: that part was
    never open, and was left at 0 bytes, so the folder could not be read back (exit 8)."""
    import pyarrow.parquet as pq

    disk = _FullDisk(0)
    real = pq.ParquetWriter

    class ParquetOnFullDisk(real):  # type: ignore[misc,valid-type]
        def __init__(self, where: Any, *args: Any, **kw: Any) -> None:
            if "deliveries" in Path(where).parts:  # the disk is full when they start
                where = disk.file(where, _FullDisk.PYARROW)
            super().__init__(where, *args, **kw)

    monkeypatch.setattr(pq, "ParquetWriter", ParquetOnFullDisk)
    out = tmp_path / "full"
    code, _out, err = run_cli("pcap-dump", str(capture_set), "--out", str(out))
    assert code == 2
    assert err == f"amqp: error: cannot write tables to {out}: no space left on device\n"
    monkeypatch.setattr(pq, "ParquetWriter", real)
    assert not list((out / "deliveries").rglob("part-*"))
    left = sorted(out.rglob("part-*"))
    assert left and all(f.stat().st_size for f in left)
    for part in left:
        pq.ParquetFile(part).read()
    assert read_table(str(out), "deliveries").num_rows == 0  # the folder reads whole
    assert read_table(str(out), "frames").num_rows > 0


def test_a_disk_full_while_an_empty_table_is_written_leaves_no_part_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step of a run writes a zero-row part for each table without rows (here
    violations): a full disk there left that part cut short."""
    import pyarrow.parquet as pq

    def full(table: Any, where: Any, *args: Any, **kw: Any) -> None:
        Path(where).write_bytes(b"PAR1")
        raise OSError(errno.ENOSPC, _FullDisk.PYARROW)

    monkeypatch.setattr(pq, "write_table", full)
    out = tmp_path / "full"
    code, _out, err = run_cli("pcap-dump", str(RABBIT), "--out", str(out))
    assert code == 2
    assert err == f"amqp: error: cannot write tables to {out}: no space left on device\n"
    assert (out / "violations").is_dir() and not list((out / "violations").iterdir())
    assert not (out / "_SUCCESS").exists()


@pytest.mark.parametrize("fmt", ["parquet", "ndjson"])
def test_summary_of_a_damaged_table_names_the_part(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out), fmt=fmt)
    (part,) = (out / "frames").rglob("part-*")
    if fmt == "parquet":
        part.write_bytes(part.read_bytes()[:-40])  # its footer cut off
    else:
        part.write_text(part.read_text(encoding="utf-8")[:-30], encoding="utf-8")
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 8 and stdout == ""
    assert err.count("\n") == 1 and err.startswith(f"amqp: error: {part}: damaged table part"), err


def test_summary_of_tables_reads_as_the_summary_of_their_captures(
        capture_set: Path, tmp_path: Path) -> None:
    """Links in order of their connection's number (c2 before c10), the notices line; the
    one section of its own is the addresses several links share."""
    files = [str(capture_set / "many.pcapng"), str(capture_set / "crafted-midstream.pcap")]
    out = tmp_path / "t"
    code, from_tables, err = run_cli("pcap-dump", *files, "--out", str(out), "--summary")
    assert code == 0, err
    code, from_captures, err = run_cli("pcap-dump", *files, "--summary")
    assert code == 0, err
    assert "addresses shared by several links:" in from_tables
    assert without_shared_addresses(from_tables) == from_captures
    assert "  c10 " in from_captures and "notices: gap 1, midstream 1" in from_captures


def test_summary_of_0_10_tables_counts_frames_on_the_wire(tmp_path: Path) -> None:
    """A 0-10 row of the frames table is an assembly: the summary of the tables said
    `frames: 32` (rows) where the summary of the capture says 45 (frames on the wire,
    docs/amqp010.md), and the connections' frames_client/server (20 + 23) are wire frames."""
    echo = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")
    out = tmp_path / "t"
    code, from_tables, err = run_cli("pcap-dump", echo, "--out", str(out), "--summary")
    assert code == 0, err
    code, from_capture, err = run_cli("pcap-dump", echo, "--summary")
    assert code == 0, err
    assert "frames: 45 " in from_capture
    assert from_tables == from_capture
    frames = rows(out, "frames")
    (conn,) = rows(out, "connections")
    headers = sum(1 for r in frames if r["kind"] == "header")
    assert len(frames) == 32 and headers == 2
    assert sum(r["frames"] for r in frames) == 45
    assert conn["frames_client"] + conn["frames_server"] + headers == 45
    transfer = next(r for r in frames if r["performative"] == "message.transfer")
    assert transfer["frames"] == 3
    assert {r["frames"] for r in rows(out, "frames") if r["kind"] == "header"} == {1}


def test_summary_of_tables_without_the_frames_column_counts_rows(tmp_path: Path) -> None:
    """Tables written before the frames table said how many frames a row took: a row
    counts one, as it did."""
    import pyarrow.parquet as pq

    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out))
    (part,) = (out / "frames").rglob("part-*.parquet")
    t = pq.read_table(part)
    pq.write_table(t.drop_columns(["frames"]), part)
    assert summary_of(str(out)).frames == t.num_rows == 77


def test_summary_of_an_unfinished_run_warns_that_its_tables_may_be_partial(
        tmp_path: Path) -> None:
    # no _SUCCESS: the summary read like any other, without a word
    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out))
    code, finished, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 0 and err == ""
    (out / "_SUCCESS").unlink()
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 0 and stdout == finished
    assert err == (f"amqp: warning: {out}: the run that wrote it did not finish (no "
                   "_SUCCESS): its tables may be partial\n")


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_summary_of_an_interrupted_run_missing_a_table_says_it_did_not_finish(
        tmp_path: Path, engine: str) -> None:
    """A run interrupted before its connections were over leaves frames and deliveries
    only: it said "no connections table in it" (Spark: a Java error), not why."""
    import shutil

    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out))
    (out / "_SUCCESS").unlink()
    for table in ("connections", "sessions", "links", "violations"):
        shutil.rmtree(out / table)
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out), "--engine", engine)
    assert code == 2 and stdout == ""
    assert err == (f"amqp: error: {out}: no connections table in it: the run that wrote it "
                   "did not finish (no _SUCCESS)\n")


def _stalled(path: Path) -> Path:
    """One link that waits 3 s for credit while its sender has more (a stall of 3 s)."""
    from amqpcli.codec import composites as c
    from tests.dissect.helpers import Script, write

    s = Script().open().sender_link(credit=1)
    s.transfer(0).dispose(0, c.Accepted())
    s.c(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=1,
               outgoing_window=1000, handle=0, delivery_count=1, link_credit=0, available=5))
    s.at(s.t + 3.0).s(c.Flow(next_incoming_id=1, incoming_window=1000, next_outgoing_id=0,
                             outgoing_window=1000, handle=0, delivery_count=1, link_credit=1))
    s.transfer(1).dispose(1, c.Accepted()).close()
    return write(path, s)


def test_summary_of_tables_says_the_stall_threshold_they_were_written_with(
        tmp_path: Path) -> None:
    cap = _stalled(tmp_path / "stall.pcapng")
    out = tmp_path / "t"
    code, _stdout, err = run_cli("pcap-dump", str(cap), "--out", str(out), "--stall", "2")
    assert code == 0, err
    assert {r["stall_threshold"] for r in rows(out, "links")} == {2.0}

    def stalls(*args: str) -> list[str]:
        code, stdout, err = run_cli("pcap-dump", "--summary", str(out), *args)
        assert code == 0, err
        return [ln for ln in stdout.splitlines() if "stall" in ln or ln.startswith("  c1 'sender' at")]

    said = stalls()  # no --stall: the threshold of the tables
    assert said[0] == "credit stalls (no credit for 2 s or more while the sender waited): 1"
    assert len(said) == 2 and " for 3.0" in said[1]
    assert stalls("--stall", "2.5")[0].startswith("credit stalls (no credit for 2.5 s or more")
    assert stalls("--stall", "4") == [
        "credit stalls (no credit for 4 s or more while the sender waited): 0"]
    # shorter stalls than the tables hold cannot be listed
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out), "--stall", "1.5")
    assert code == 2 and stdout == "" and err.count("\n") == 1
    assert "--stall 1.5: these tables hold the credit stalls of 2 s or more" in err


def test_damaged_files_are_named_in_path_order(tmp_path: Path) -> None:
    """The first damaged file by path, whichever the merge met first (an empty file is
    met before any packet is read)."""
    caps = tmp_path / "caps"
    caps.mkdir()
    whole = RABBIT.read_bytes()
    (caps / "a-cut.pcapng").write_bytes(whole[: len(whole) // 2 + 7])
    (caps / "b-empty.pcapng").write_bytes(b"")
    (caps / "c-junk.pcapng").write_bytes(b"not a capture at all")
    res = write_tables([str(caps)], str(tmp_path / "t"))
    assert [e.split(":")[0] for e in res.errors] == [
        str(caps / n) for n in ("a-cut.pcapng", "b-empty.pcapng", "c-junk.pcapng")]
    code, _out, err = run_cli("pcap-dump", str(caps), "--out", str(tmp_path / "t2"))
    said = err.splitlines()[-1]
    assert code == 8 and said.startswith(f"amqp: error: {caps / 'a-cut.pcapng'}: ")
    assert said.endswith("; and 2 more damaged files; what could be read was written")


def test_spark_engine_with_a_java_home_without_java_says_so(tmp_path: Path) -> None:
    env = dict(os.environ, JAVA_HOME=str(tmp_path / "nonexistent"))
    p = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(RABBIT), "--out",
                        str(tmp_path / "s"), "--engine", "spark"], check=False, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    said = (f"amqp: error: --engine spark needs Java 17 or later: JAVA_HOME is "
            f"{tmp_path / 'nonexistent'}, which has no bin/java (point it at a Java 17 or "
            "later, or unset it)")
    assert p.stderr.strip().splitlines() == [said]


def test_spark_settings_folder_must_be_this_users_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JVM runs what a log4j file says: a folder at the settings' path that another
    user could have made, or can write to, is refused rather than used."""
    import tempfile

    from amqpcli.errors import UserError
    from amqpcli.pipeline.spark import private_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / f"amqpcli-{os.geteuid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    with pytest.raises(UserError, match="is not a private folder of this user .mode 0777"):
        private_dir()
    folder.rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UserError, match="is not a private folder of this user .not a folder"):
        private_dir()
    folder.unlink()
    assert private_dir() == str(folder)
    assert folder.stat().st_mode & 0o777 == 0o700


def test_summary_of_tables_counts_the_coordinators_requests_as_transactions(
        tmp_path: Path) -> None:
    """A coordinator's declares and discharges are no messages: the summary of the tables
    leaves them out of the deliveries and their outcomes and counts them as
    transactions, as the summary of the capture does (it counted `declared 4` among the
    outcomes, and the coordinator link's line said `7 deliveries; no deliveries`)."""
    from tests.dissect.test_transactions import capture

    cap = str(capture(tmp_path / "txn.pcapng"))
    out = tmp_path / "t"
    code, from_tables, err = run_cli("pcap-dump", cap, "--out", str(out), "--summary")
    assert code == 0, err
    code, from_capture, err = run_cli("pcap-dump", cap, "--summary")
    assert code == 0, err
    assert from_tables == from_capture
    assert "deliveries: 6\n  by outcome: rolled-back 3, accepted 2, undecided 1\n" in from_tables
    assert ("transactions (coordinator requests): declared 4, committed 1, rolled back 1, "
            "failed 1") in from_tables
    s = summary_json(summary_of(str(out)))
    assert s["transactions"] == {"declared": 4, "committed": 1, "rolled-back": 1, "failed": 1}
    coord = next(ln for ln in s["links"] if ln["name"] == "txn")
    assert coord["outcomes"] == {} and coord["transactions"] == s["transactions"]
    (link,) = [r for r in rows(out, "links") if r["coordinator"]]
    assert link["outcomes"] == []
    assert sorted((t["kind"], t["count"]) for t in link["transactions"]) == [
        ("committed", 1), ("declared", 4), ("failed", 1), ("rolled-back", 1)]
    reqs = [r["coordinator"] for r in rows(out, "deliveries") if r["coordinator"]]
    assert sorted(reqs) == ["declare"] * 4 + ["discharge"] * 3


def test_summary_of_tables_names_the_file_of_a_violations_packet(tmp_path: Path) -> None:
    """Of several capture files, a violation's packet is a number in its own file: the
    summary of the tables names the file, as the summary of the captures does (it said
    `packet 14` alone). Here two runs of the generator collide (the same addresses and
    times), so packets of two files share times: both readers take them in one order
    (file, then packet), and the two summaries are the same, text and JSON, but for the
    section only the tables' has (the captures' counted 8 violations, the tables' 9:
    a file read alone went on past a packet of the next file at the same time)."""
    import json

    from tests.pipeline.helpers import colliding_set

    folder = colliding_set(tmp_path / "set")
    out = tmp_path / "t"
    write_tables([str(folder)], str(out))
    summaries = {}
    for what, source in (("captures", folder), ("tables", out)):
        code, text, err = run_cli("pcap-dump", str(source), "--summary")
        assert code == 0, err
        code, lines, err = run_cli("pcap-dump", str(source), "--summary", "--json")
        assert code == 0, err
        summary = json.loads(lines.strip().splitlines()[-1])
        summary.pop("addresses", None)  # (the section only the summary of tables has)
        summaries[what] = (without_shared_addresses(text), summary)
    assert summaries["tables"] == summaries["captures"]
    text, summary = summaries["captures"]
    assert sum(summary["by-violation"].values()) == 9 and "violations: 9 " in text
    listed = summary["violations"]
    assert len(listed) == 9 and {v["file"] for v in listed} <= {
        str(p) for p in folder.iterdir()}
    assert listed == sorted(listed, key=lambda v: (v["time"], v["connection"], v["frame"]))


def test_without_pyarrow_the_tables_path_says_so(tmp_path: Path) -> None:
    """pyarrow is a dependency; installed without it, `--out` is a one-line usage error
    naming it (it was an internal error: ModuleNotFoundError)."""
    from tests.paths import REPO_ROOT

    code = ("import sys; sys.modules['pyarrow'] = None\n"
            "from amqpcli.cli.app import main\nmain()")
    r = subprocess.run([sys.executable, "-c", code, "pcap-dump", str(RABBIT), "--out",
                        str(tmp_path / "t")], capture_output=True, text=True, cwd=REPO_ROOT,
                       timeout=120, check=False)
    assert (r.returncode, r.stderr) == (2, (
        "amqp: error: the tables of --out, and --summary of folders, are read and written "
        "with pyarrow, which is not installed: pip install pyarrow\n"))


def _same_time_violations(path: Path, connections: int) -> str:
    """A capture of `connections` connections, 20 ms apart, each with a frame at the same
    time (1 s in) that is a violation: a disposition for a delivery never sent (even
    ones), or a transfer too large for max-frame-size and with no credit (odd ones: two
    violations of one frame)."""
    from amqpcli.capture.writer import CaptureWriter, TcpConversation
    from amqpcli.codec import composites as c
    from tests.dissect.helpers import Script

    start = 1_700_000_000_000_000_000
    with CaptureWriter(path) as w:
        convs = []
        for i in range(connections):
            t0 = start + i * 20_000_000
            conv = TcpConversation(w, client=("10.0.0.1", 40000 + i),
                                   server=("10.0.0.2", 5672), start_ns=t0, mss=4000)
            conv.handshake()
            for d, data, t in Script().open(max_frame=512).sender_link(
                    credit=0 if i % 2 else 100).steps:
                conv.send(d, data, time_ns=t0 + int(t * 1e9))
            convs.append(conv)
        for i, conv in enumerate(convs):
            late = Script().transfer(0, "x" * 2000) if i % 2 else Script().dispose(5, c.Accepted())
            for d, data, _t in late.steps:
                conv.send(d, data, time_ns=start + 1_000_000_000)
        for i, conv in enumerate(convs):
            conv.now = start + 2_000_000_000 + i * 1000
            conv.close()
    return str(path)


def test_same_time_violations_are_listed_in_one_order(tmp_path: Path) -> None:
    """Violations at the same time in several connections, two of them of one frame:
    listed by connection (c1 first), then frame, then kind, by the summary of the captures
    and by the summary of their tables alike (the tables' listed them in the order of
    their connection ids, hashes)."""
    import json

    cap = _same_time_violations(tmp_path / "same-time.pcapng", 4)
    out = tmp_path / "t"
    write_tables([cap], str(out))
    ids = {r["first_time"]: r["connection_id"] for r in rows(out, "connections")}
    by_label = [ids[t] for t in sorted(ids)]
    assert by_label != sorted(by_label)  # (else the ids' order would pass unnoticed)
    summaries = []
    for source in (cap, str(out)):
        code, text, err = run_cli("pcap-dump", source, "--summary")
        assert code == 0, err
        code, lines, err = run_cli("pcap-dump", source, "--summary", "--json")
        assert code == 0, err
        summary = json.loads(lines.strip().splitlines()[-1])
        summaries.append((without_shared_addresses(text), summary["violations"]))
    assert summaries[0] == summaries[1]
    listed = [(v["connection"], v["kind"]) for v in summaries[0][1]]
    assert listed == [("c1", "unknown-delivery"), ("c2", "frame-too-large"),
                      ("c2", "transfer-beyond-credit"), ("c3", "unknown-delivery"),
                      ("c4", "frame-too-large"), ("c4", "transfer-beyond-credit")]
    assert len({v["time"] for v in summaries[0][1]}) == 1


@pytest.mark.parametrize("fmt", ["parquet", "ndjson"])
def test_summary_of_tables_lists_the_first_violations_in_the_captures_order(
        tmp_path: Path, fmt: str) -> None:
    """More than 50 violations, the 50th by time one of many at that time: the summary
    of tables lists the first 50 by time, connection (c1 before c2, not by connection
    id), frame, as the summary of captures does (`violation_order`)."""
    from amqpcli.dissect.stats import micros
    from tests.pipeline.helpers import many_violations

    want = many_violations(tmp_path / "t", fmt)
    s = summary_of(str(tmp_path / "t"))
    assert sum(s.by_violation.values()) == 70
    assert [(v.conn.label, micros(v.time), v.frame_no) for v in s.violations] == want
    assert any(t == want[-1][1] for _c, t, _f in want[:-1])  # (ties at the 50th)


@pytest.mark.parametrize("value", ["1.5", "true", "1" + "0" * 30])
def test_a_value_not_of_its_integer_column_names_the_part(tmp_path: Path, value: str) -> None:
    """A float, a boolean or an integer past int64 in an integer column of an NDJSON part
    is a damaged part, named (the float went in silently, the big one failed inside)."""
    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out), fmt="ndjson")
    (part,) = (out / "frames").rglob("part-*")
    text = part.read_text(encoding="utf-8")
    assert '"frames":1,' in text
    part.write_text(text.replace('"frames":1,', f'"frames":{value},', 1), encoding="utf-8")
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out))
    assert (code, stdout) == (8, "")
    assert err.startswith(f"amqp: error: {part}: damaged table part (")


@pytest.mark.parametrize("value", ["true", '"0.5"'])
def test_a_value_not_of_its_float_column_names_the_part(tmp_path: Path, value: str) -> None:
    out = tmp_path / "t"
    write_tables([str(RABBIT)], str(out), fmt="ndjson")
    part = min((out / "deliveries").rglob("part-*"))
    text = part.read_text(encoding="utf-8")
    assert '"latency":' in text
    part.write_text(re.sub(r'"latency":[0-9.e-]+', f'"latency":{value}', text, count=1),
                    encoding="utf-8")
    code, stdout, err = run_cli("pcap-dump", "--summary", str(out))
    assert (code, stdout) == (8, "")
    assert err.startswith(f"amqp: error: {part}: damaged table part (")
