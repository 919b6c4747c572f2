"""The Spark executor in local mode: the same tables as the in-process one, row by row,
for every kind of input; the summary read back through Spark; the CLI with --engine spark."""

from __future__ import annotations

import re
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


def test_spark_counts_the_coordinators_requests_as_transactions(spark: Any,
                                                                tmp_path: Path) -> None:
    """Declares and discharges are no messages: both executors' tables, read back by
    either, give the summary of the capture (transactions apart from outcomes)."""
    from tests.dissect.test_transactions import capture

    cap = str(capture(tmp_path / "txn.pcapng"))
    write_tables([cap], str(tmp_path / "l"))
    write_tables([cap], str(tmp_path / "s"), engine="spark", spark=spark)
    assert_same_tables(tmp_path / "l", tmp_path / "s")
    local = summary_json(summary_of(str(tmp_path / "l")))
    assert summary_json(summary_of(str(tmp_path / "s"), engine="spark", spark=spark)) == local
    assert local["deliveries"] == 6 and "declared" not in local["by-outcome"]
    assert local["transactions"] == {"declared": 4, "committed": 1, "rolled-back": 1,
                                     "failed": 1}


def test_spark_writes_the_addresses_a_refused_link_asked_for(spark: Any,
                                                             tmp_path: Path) -> None:
    """Both executors' links tables carry a refused link's asked-for addresses (they
    were null), and either's summary of them is the summary of the capture's."""
    from tests.pipeline.test_refused_link_tables import refused_capture

    cap = refused_capture(tmp_path / "refused.pcapng")
    write_tables([cap], str(tmp_path / "l"))
    write_tables([cap], str(tmp_path / "s"), engine="spark", spark=spark)
    assert_same_tables(tmp_path / "l", tmp_path / "s")
    assert {r["name"]: (r["address"], r["source_address"], r["target_address"])
            for r in rows(tmp_path / "s", "links")} == {
        "to-bad1": ("bad1", "me", "bad1"), "from-bad2": ("bad2", "bad2", None),
        "to-gone": ("gone", "me", "gone"), "to-good": ("good", "client", "good")}
    local = summary_json(summary_of(str(tmp_path / "l")))
    assert summary_json(summary_of(str(tmp_path / "s"), engine="spark", spark=spark)) == local
    assert [(ln["name"], ln["address"]) for ln in local["links"]] == [
        ("to-bad1", "bad1"), ("from-bad2", "bad2"), ("to-gone", "gone"), ("to-good", "good")]


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


def test_damaged_files_are_named_alike_by_both_engines(spark: Any, tmp_path: Path) -> None:
    """In the order of their paths (`x.pcapng` before `x.pcapng.gz`, which the order of
    their messages turns round)."""
    caps = tmp_path / "caps"
    caps.mkdir()
    whole = (CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng").read_bytes()
    (caps / "a-cut.pcapng").write_bytes(whole[: len(whole) // 2 + 7])
    (caps / "b-empty.pcapng").write_bytes(b"")
    (caps / "b-empty.pcapng.gz").write_bytes(b"junk")
    local = write_tables([str(caps)], str(tmp_path / "l"))
    remote = write_tables([str(caps)], str(tmp_path / "s"), engine="spark", spark=spark)
    assert [e.split(": ")[0] for e in remote.errors] == [
        str(caps / n) for n in ("a-cut.pcapng", "b-empty.pcapng", "b-empty.pcapng.gz")]
    assert remote.errors == local.errors


def test_spark_summary_of_a_damaged_table_names_the_part(
        both: tuple[Path, Path, Any, Any], spark: Any, tmp_path: Path) -> None:
    import shutil

    from amqpcli.errors import Exit, UserError

    _a, b, _ra, _rb = both
    out = tmp_path / "t"
    shutil.copytree(b, out)
    part = min((out / "frames").rglob("part-*.parquet"))
    part.write_bytes(b"not parquet at all")
    with pytest.raises(UserError) as e:
        summary_of(str(out), engine="spark", spark=spark)
    assert e.value.code == Exit.DECODE and str(e.value).startswith(f"{part}: damaged table part")


def _descendants(pid: int) -> set[int]:
    """The processes `pid` started, and theirs (from /proc)."""
    import os

    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_ctrl_c_during_a_spark_job_is_one_line_and_leaves_nothing_running(
        tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.pipeline.conftest import _gen

    caps = tmp_path / "caps"
    caps.mkdir()
    # big enough that the job is still dissecting when Ctrl-C comes
    _gen(caps / "big.pcapng", 9, "--connections", "20", "--links", "2", "--messages", "300",
         "--seed", "4")
    out = tmp_path / "o"
    (tmp_path / "tmp").mkdir()
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "pcap-dump", str(caps), "--out", str(out),
         "--engine", "spark", "--master", "local[2]"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")))
    started: set[int] = set()
    try:
        # the job runs once its Python workers do (its first stage's tasks)
        for _ in range(3000):
            started = _descendants(p.pid)
            if any("pyspark.daemon" in _cmdline(pid) for pid in started) or p.poll() is not None:
                break
            time.sleep(0.1)
        assert p.poll() is None, p.communicate()
        os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C: the foreground group
        _stdout, err = p.communicate(timeout=300)
        assert p.returncode == 130
        assert err.splitlines() == ["amqp: interrupted"]
        assert not (out / "_SUCCESS").exists()
        for _ in range(600):  # the JVM and its Python workers end after it
            if not any(_running(pid) for pid in started):
                break
            time.sleep(0.1)
        assert not [(pid, _cmdline(pid)) for pid in started if _running(pid)]
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        for pid in started:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_spark_log_settings_come_from_a_private_folder_only(tmp_path: Path) -> None:
    """Files planted by another user where the settings and the JVM's log once were have
    no effect: the log4j settings are written anew in a folder only this user can use,
    and the log is opened there, never through a link."""
    import os
    import stat
    import subprocess
    import sys

    from tests.paths import REPO_ROOT

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    planted = tmp_path / "written-by-the-planted-settings"
    for level in ("error", "warn"):
        (tmp / f"amqpcli-log4j2-{level}.properties").write_text(
            "rootLogger.level = info\nrootLogger.appenderRef.f.ref = f\n"
            "appender.f.type = File\nappender.f.name = f\n"
            f"appender.f.fileName = {planted}\n"
            "appender.f.layout.type = PatternLayout\nappender.f.layout.pattern = %m%n\n")
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp / f"amqpcli-spark-{os.geteuid()}.log").symlink_to(victim)
    script = ("from amqpcli.pipeline.spark import get_session\n"
              "s = get_session('local[1]')\n"
              "print(s.sparkContext.getConf().get('spark.driver.extraJavaOptions'))\n"
              "s.stop()\n")
    p = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True,
                       text=True, timeout=300, cwd=REPO_ROOT,
                       env=dict(os.environ, TMPDIR=str(tmp)))
    assert p.returncode == 0, p.stderr
    assert not planted.exists() and victim.read_text() == "keep\n"
    option = p.stdout.strip().splitlines()[-1]
    config = Path(option.split("-Dlog4j2.configurationFile=file:", 1)[1].split()[0])
    folder = config.parent
    st = folder.lstat()
    assert folder.parent == tmp and stat.S_ISDIR(st.st_mode)
    assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
    assert "appender.console.target = SYSTEM_ERR" in config.read_text()
    assert "File" not in config.read_text()


def test_spark_lists_the_first_violations_in_the_captures_order(spark: Any,
                                                                 tmp_path: Path) -> None:
    """The summary of tables read by Spark lists the first 50 violations as the summary
    of captures would (by time, connection, frame), ties at the 50th included."""
    from amqpcli.dissect.stats import micros
    from tests.pipeline.helpers import many_violations

    want = many_violations(tmp_path / "t")
    s = summary_of(str(tmp_path / "t"), engine="spark", spark=spark)
    assert [(v.conn.label, micros(v.time), v.frame_no) for v in s.violations] == want
    assert summary_json(s) == summary_json(summary_of(str(tmp_path / "t")))


def test_colliding_captures_give_one_summary_whatever_the_engine(spark: Any,
                                                                 tmp_path: Path) -> None:
    """Two capture files of colliding connections (packets of equal times in both): the
    two executors write the same tables, and their summaries, read by either engine,
    are the summary of the captures (but for the tables' own section)."""
    import json

    from tests.pipeline.helpers import colliding_set

    folder = str(colliding_set(tmp_path / "set"))
    write_tables([folder], str(tmp_path / "l"))
    write_tables([folder], str(tmp_path / "s"), engine="spark", spark=spark)
    assert assert_same_tables(tmp_path / "l", tmp_path / "s")["violations"] == 9
    code, stdout, err = run_cli("pcap-dump", folder, "--summary", "--json")
    assert code == 0, err
    from_captures = json.loads(stdout.strip().splitlines()[-1])
    for out in ("l", "s"):
        for engine in ("local", "spark"):
            got = summary_json(summary_of(str(tmp_path / out), engine=engine, spark=spark))
            assert got.pop("addresses")
            assert got == from_captures, (out, engine)


@pytest.mark.parametrize(("table", "damage"), [
    ("deliveries", lambda text: text[:1500]),  # cut inside a line
    ("links", lambda text: "garbage\n"),  # no JSON at all
    ("frames", lambda text: text.replace('"frames":1', '"frames":"one"', 1)),  # a type
    # Values of another kind of number, or past what the column holds:
    ("frames", lambda text: text.replace('"frames":1,', '"frames":1.5,', 1)),
    ("frames", lambda text: text.replace('"frames":1,', '"frames":true,', 1)),
    ("frames", lambda text: text.replace('"frames":1,', '"frames":1' + "0" * 30 + ",", 1)),
    ("deliveries", lambda text: re.sub(r'"latency":[0-9.e-]+', '"latency":true', text, count=1)),
    ("deliveries", lambda text: re.sub(r'"latency":[0-9.e-]+', '"latency":"0.5"', text,
                                       count=1)),
])
def test_spark_summary_of_a_damaged_ndjson_part_names_it(
        spark: Any, tmp_path: Path, table: str, damage: Any) -> None:
    """As the local reader does: not a row of nulls, fewer rows, or an internal error."""
    from amqpcli.errors import Exit, UserError

    out = tmp_path / "nd"
    write_tables([str(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng")], str(out),
                 fmt="ndjson")
    part = min((out / table).rglob("part-*.json"))
    text = part.read_text(encoding="utf-8")
    damaged = damage(text)
    assert damaged != text
    part.write_text(damaged, encoding="utf-8")
    for engine in ("local", "spark"):
        with pytest.raises(UserError) as e:
            summary_of(str(out), engine=engine, spark=spark)
        assert e.value.code == Exit.DECODE
        assert str(e.value).startswith(f"{part}: damaged table part (")
