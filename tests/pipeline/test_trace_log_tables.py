"""Frame-trace logs into tables (`pcap-dump LOGS --out DIR`): a proton trace (no times)
and router logs (times), with either executor, give the same tables, and the summary of
the tables is the summary of the logs. A log's rows name the log and the line
(`capture`, `packet`); a connection without times has null times and a null `date`
(`date=__HIVE_DEFAULT_PARTITION__`). A folder picks up logs by their usual names and
their first lines; logs and captures in one set are refused as the views refuse them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.pipeline.output import read_table
from amqpcli.pipeline.run import summary_of, write_tables
from amqpcli.render.summary import summary_json
from tests.capture.test_tracelog import ROUTER_LOG
from tests.dissect.test_trace_log_views import _SETUP, _accept, _log, _message, _transfer
from tests.paths import CAPTURES_DIR
from tests.pipeline.helpers import assert_same_tables, rows, run_cli, without_shared_addresses

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def _proton_trace(folder: Path) -> Path:
    """A proton trace (no times) of two connections on one id: the second begins with
    the protocol header again, after the first's 3 deliveries; it sends 2."""
    lines = []
    for n in range(3):
        lines += [_transfer(False, 0, n, _message(n)), _accept(True, True, n)]
    lines += _SETUP
    for n in range(2):
        lines += [_transfer(False, 0, n, _message(10 + n)), _accept(True, True, n)]
    return _log(folder, lines)  # (client.trace)


def _router_logs(folder: Path) -> list[Path]:
    """Two router logs (times): router-a's of 2 May, router-b's of 1 May (its name first,
    its times last)."""
    a = folder / "router-a.log"
    a.write_text(ROUTER_LOG.replace("2023-05-01", "2023-05-02"))
    b = folder / "router-b.log"
    b.write_text(ROUTER_LOG)
    return [a, b]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of the three logs (and a .txt that is no log)."""
    root = tmp_path_factory.mktemp("logs")
    _proton_trace(root)
    _router_logs(root)
    (root / "notes.txt").write_text("not a log\n")
    return root


@pytest.fixture(scope="module")
def local(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("log-tables") / "t"
    write_tables([str(logs)], str(out))
    return out


def test_a_proton_trace_has_null_times_and_the_default_partition(local: Path,
                                                                   logs: Path) -> None:
    trace = str((logs / "client.trace").resolve())
    conns = [c for c in rows(local, "connections") if c["capture"] == trace]
    # two connections of one id and no time: told apart by the line each begins on
    assert sorted(c["line"] for c in conns) == [1, 1 + len(_SETUP) + 6]
    assert len({c["connection_id"] for c in conns}) == 2
    assert all(c["first_time"] is None and c["date"] is None for c in conns)
    ids = {c["connection_id"] for c in conns}
    for table in ("sessions", "links", "frames", "deliveries"):
        mine = [r for r in rows(local, table) if r["connection_id"] in ids]
        assert mine and all(r["date"] is None for r in mine), table
        assert (local / table / "date=__HIVE_DEFAULT_PARTITION__").is_dir()
    d = [r for r in rows(local, "deliveries") if r["connection_id"] in ids]
    assert len(d) == 5
    assert all(r["first_time"] is r["latency"] is r["settled_time"] is None for r in d)
    links = [r for r in rows(local, "links") if r["connection_id"] in ids]
    assert all(r["latency_count"] is None and r["stalls"] == [] for r in links)
    assert all(r["time"] is None for r in rows(local, "frames") if r["connection_id"] in ids)


def test_a_logs_frames_are_numbered_by_their_lines_as_the_views_number_them(
        local: Path, logs: Path) -> None:
    """`packet` is the frame's line, as pcap-dump --json says a log's frame's packet."""
    for name in ("client.trace", "router-b.log"):
        log = str((logs / name).resolve())
        code, out, err = run_cli("pcap-dump", log, "--json")
        assert code == 0, err
        said = sorted((r["packet"], r["from"]) for r in map(json.loads, out.splitlines())
                      if r["record"] == "frame")
        tables = sorted((r["packet"], r["side"]) for r in rows(local, "frames")
                        if r["capture"] == log)
        assert tables == said and len(said) > 10


def test_a_router_logs_rows_have_its_times(local: Path, logs: Path) -> None:
    by_log = {Path(c["capture"]).name: c for c in rows(local, "connections")}
    assert by_log["router-b.log"]["date"] == "2023-05-01"
    assert by_log["router-a.log"]["date"] == "2023-05-02"
    assert by_log["router-b.log"]["first_time"].isoformat() == "2023-05-01T10:00:00.100100+00:00"
    d = [r for r in rows(local, "deliveries")
         if r["connection_id"] == by_log["router-b.log"]["connection_id"]]
    assert sorted(r["latency"] for r in d) == pytest.approx([0.0125, 0.05], abs=1e-6)


@pytest.mark.parametrize("which", ["proton", "routers", "all"])
def test_summary_of_the_tables_is_the_summary_of_the_logs(logs: Path, tmp_path: Path,
                                                          which: str) -> None:
    """`pcap-dump --summary DIR` of the tables says what `pcap-dump --summary LOGS` says
    (but for the addresses several links share, a section of the tables' own); the logs
    given in path order, as the tables number their connections."""
    given = {"proton": [logs / "client.trace"],
             "routers": [logs / "router-a.log", logs / "router-b.log"],
             "all": [logs / "client.trace", logs / "router-a.log", logs / "router-b.log"]}
    files = [str(f) for f in given[which]]
    out = str(tmp_path / "t")
    code, written, err = run_cli("pcap-dump", *files, "--out", out, "--summary")
    assert code == 0, err
    code, from_tables, err = run_cli("pcap-dump", "--summary", out)
    assert code == 0, err
    code, from_logs, err = run_cli("pcap-dump", *files, "--summary")
    assert code == 0, err
    assert written == from_tables
    assert without_shared_addresses(from_tables) == from_logs
    if which != "routers":
        assert "times unknown" in from_logs or "at unknown times" in from_logs
        assert "latency unknown" in from_logs
    code, j_tables, _ = run_cli("pcap-dump", "--summary", out, "--json")
    code, j_logs, _ = run_cli("pcap-dump", *files, "--summary", "--json")
    j_tables_d = json.loads(j_tables)
    j_tables_d.pop("addresses", None)
    assert j_tables_d == json.loads(j_logs.splitlines()[-1])


def test_ndjson_tables_of_logs_read_back_the_same(local: Path, logs: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "nd"
    write_tables([str(logs)], str(out), fmt="ndjson")
    assert (out / "frames" / "date=__HIVE_DEFAULT_PARTITION__").is_dir()
    assert_same_tables(local, out)


def test_a_folder_takes_its_logs_and_notes_a_txt_that_is_none(logs: Path,
                                                              tmp_path: Path) -> None:
    code, _out, err = run_cli("pcap-dump", str(logs), "--out", str(tmp_path / "t"))
    assert code == 0, err
    assert f"{logs / 'notes.txt'}: not a frame-trace log" in err
    names = {Path(c).name for c in read_table(str(tmp_path / "t"), "connections")
             .column("capture").to_pylist()}
    assert names == {"client.trace", "router-a.log", "router-b.log"}


@pytest.mark.parametrize("how", ["named", "folder"])
def test_a_log_and_a_capture_together_are_refused(tmp_path: Path, how: str) -> None:
    """As the views refuse them (one line, exit 2), and nothing is written."""
    both = tmp_path / "both"
    both.mkdir()
    log = both / "router.log"
    log.write_text(ROUTER_LOG)
    cap = both / "capture.pcapng"
    cap.write_bytes(CAPTURE.read_bytes())
    given = [str(log), str(cap)] if how == "named" else [str(both)]
    out = tmp_path / "t"
    code, stdout, err = run_cli("pcap-dump", *given, "--out", str(out))
    assert (code, stdout) == (2, "")
    shown = (str(log), str(cap)) if how == "named" else (str(log.resolve()), str(cap.resolve()))
    assert err == (f"amqp: error: {shown[0]} is a frame-trace log, {shown[1]} is not: trace "
                   "logs and captures are read apart, not together\n")
    assert not out.exists()
    # the views say the same of the same set
    code, _, view_err = run_cli("pcap-dump", *given, "--summary")
    assert code == 2 and view_err == err


@pytest.mark.spark
def test_both_executors_write_the_same_tables_of_logs(logs: Path, local: Path, spark: Any,
                                                      tmp_path: Path) -> None:
    """One Spark run over the folder: a task per log; the same rows, the same summary
    read back by either, and the same warnings (router logs' line that does not parse)."""
    import contextlib
    import io

    out = tmp_path / "spark"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        res = write_tables([str(logs)], str(out), engine="spark", spark=spark)
    counts = assert_same_tables(local, out)
    assert counts["connections"] == 4 and counts["deliveries"] == 5 + 2 + 2
    assert {t: n for t, n in res.rows.items() if n} == {t: n for t, n in counts.items() if n}
    assert (out / "frames" / "date=__HIVE_DEFAULT_PARTITION__").is_dir()
    warned = [w for w in err.getvalue().splitlines() if "does not parse" in w]
    assert len(warned) == 2 and all(w.startswith("amqp: warning: ") for w in warned)
    assert [w.split(": ")[2] for w in warned] == [
        f"{(logs / name).resolve()}:17" for name in ("router-a.log", "router-b.log")]
    s_local = summary_json(summary_of(str(local)))
    assert summary_json(summary_of(str(out), engine="spark", spark=spark)) == s_local
    assert summary_json(summary_of(str(out))) == s_local
