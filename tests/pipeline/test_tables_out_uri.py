"""`--out` as a URI with the in-process engine: `file:` is the local folder it names (as
with Spark), and its `--summary` reads that folder; another scheme (`hdfs://`, `s3a://`),
which only Spark writes, is one line, exit 2, before anything is made or read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import CAPTURES_DIR, require
from tests.pipeline.helpers import run_cli, without_shared_addresses

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


@pytest.mark.parametrize("out", ["hdfs://namenode/tables", "s3a://bucket/tables"])
def test_a_uri_for_spark_is_refused_and_nothing_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("pcap-dump", str(require(CAPTURE)), "--out", out)
    assert code == 2
    said = (f"amqp: error: --out {out}: a URI, which --engine spark reads and writes; "
            "the in-process engine takes a local folder")
    assert err.splitlines() == [said]
    assert list(tmp_path.iterdir()) == []


def test_a_file_uri_is_the_folder_it_names(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "tables"
    code, summary, err = run_cli("pcap-dump", str(require(CAPTURE)), "--out", f"file:{out}",
                                 "--summary")
    assert code == 0, err
    assert (out / "_SUCCESS").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"]
    _, direct, _ = run_cli("pcap-dump", str(CAPTURE), "--summary")
    assert without_shared_addresses(summary) == direct


@pytest.mark.parametrize("out", ["hdfs://namenode/tables", "s3a://bucket/tables"])
def test_summary_of_a_uri_for_spark_is_one_line(out: str) -> None:
    code, _, err = run_cli("pcap-dump", "--summary", out)
    assert code == 2
    named = out.replace("hdfs://", "hdfs:/")  # (as a path folds it: valid as it is)
    assert err.splitlines() == [
        (f"amqp: error: --summary {named}: a URI, which --engine spark reads and writes; "
         "the in-process engine takes a local folder")]


@pytest.mark.parametrize("form", ["file://{}", "file://localhost{}"])
def test_a_file_uri_with_a_host_part_is_the_folder_too(tmp_path: Path, form: str) -> None:
    out = tmp_path / "tables"
    code, _, err = run_cli("pcap-dump", str(require(CAPTURE)), "--out", form.format(out),
                           "--summary")
    assert code == 0, err
    assert (out / "_SUCCESS").is_file()
