"""A file of a folder that cannot be opened (a dangling link, no permission) is a
damaged file of the set: named at the end (exit 8) while the rest is read. It ended the
whole run, with nothing read (exit 2). A file named on its own must open, up front."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture import CaptureError, read_capture, read_packets
from amqpcli.dissect import Dissector, FrameRecord
from amqpcli.errors import Exit, UserError
from amqpcli.pipeline.inputs import expand
from amqpcli.pipeline.output import read_table
from amqpcli.pipeline.run import write_tables
from tests.paths import CAPTURES_DIR, require

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def _folder(tmp_path: Path) -> Path:
    """A good capture and a dangling link named as a capture."""
    d = tmp_path / "caps"
    d.mkdir()
    (d / "a.pcapng").write_bytes(require(RABBIT).read_bytes())
    (d / "broken.pcapng").symlink_to(tmp_path / "nowhere.pcapng")
    return d


def test_a_named_file_that_cannot_be_opened_is_a_usage_error_and_a_found_one_damaged(
        tmp_path: Path) -> None:
    link = tmp_path / "broken.pcapng"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UserError) as ei:
        list(read_packets(link))
    assert ei.value.code == Exit.USAGE and not isinstance(ei.value, CaptureError)
    with pytest.raises(CaptureError) as ci:
        list(read_packets(link, found=True))
    assert ci.value.code == Exit.DECODE
    assert str(ci.value) == f"{link}: cannot open: a broken symbolic link (to {tmp_path}/nowhere)"


def test_expand_keeps_a_dangling_link_of_a_folder_under_its_own_name(tmp_path: Path) -> None:
    d = _folder(tmp_path)
    assert expand([str(d)]) == [str((d / "a.pcapng").resolve()),
                                str(d.resolve() / "broken.pcapng")]


def test_expand_says_which_files_it_found_in_folders(tmp_path: Path) -> None:
    d = _folder(tmp_path)
    got = expand([str(d / "a.pcapng"), str(d)])
    assert got == [str((d / "a.pcapng").resolve()), str(d.resolve() / "broken.pcapng")]
    assert got.found == {str(d.resolve() / "broken.pcapng")}  # (a.pcapng was named)
    assert expand([str(d / "a.pcapng")]).found == set()


def test_what_one_expansion_found_is_not_kept_for_later_reads(tmp_path: Path) -> None:
    """Which files were found in folders goes with the paths `expand` returns, to the
    reader they are given to: a later read of the same file named on its own, or named
    beside the files of another set, is not told (it was kept in the module for every
    read that followed)."""
    d = _folder(tmp_path)
    found = expand([str(d)])
    link = found[1]
    with pytest.raises(CaptureError):
        list(read_capture(found))
    for named in ([link], [found[0], link]):
        with pytest.raises(UserError) as ei:
            list(read_capture(named))
        assert ei.value.code == Exit.USAGE and not isinstance(ei.value, CaptureError)
    with pytest.raises(UserError) as ei:
        list(Dissector().read(link))
    assert ei.value.code == Exit.USAGE
    # a set read again is still told, by what it is given
    with pytest.raises(CaptureError):
        list(read_capture(list(found), found=found.found))


def test_tui_replay_of_a_folder_goes_on_past_a_file_it_cannot_open(tmp_path: Path) -> None:
    from amqpcli.tui.sources.replay import CaptureLoader

    loaded = CaptureLoader(_folder(tmp_path)).read()
    assert len(loaded.records) > 50
    (note,) = [n for n in loaded.notes if "broken.pcapng" in n]
    assert "cannot open: a broken symbolic link" in note


def test_files_named_must_open_up_front(tmp_path: Path) -> None:
    d = _folder(tmp_path)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "sock.pcapng"))
    try:
        with pytest.raises(UserError, match="sock.pcapng: a socket, not a capture file") as ei:
            expand([str(d), str(d / "sock.pcapng")])
        assert ei.value.code == Exit.USAGE
    finally:
        s.close()
    with pytest.raises(UserError, match="broken.pcapng: no such file"):
        expand([str(d / "a.pcapng"), str(d / "broken.pcapng")])


def test_the_reader_goes_on_past_a_file_it_cannot_open(tmp_path: Path) -> None:
    dis = Dissector()
    recs = list(dis.read(expand([str(_folder(tmp_path))])))
    assert sum(isinstance(r, FrameRecord) for r in recs) > 50  # the good capture, read
    (e,) = dis.capture_errors
    assert isinstance(e, CaptureError) and e.code == Exit.DECODE
    assert "broken.pcapng: cannot open: a broken symbolic link" in str(e)


def test_tables_of_a_folder_with_a_file_that_cannot_be_opened(tmp_path: Path) -> None:
    out = tmp_path / "t"
    p = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(_folder(tmp_path)),
                        "--out", str(out)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert p.returncode == 8, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert "broken.pcapng: cannot open: a broken symbolic link" in last
    assert last.endswith("what could be read was written") and "Traceback" not in p.stderr
    assert read_table(str(out), "deliveries").num_rows == 40
    assert (out / "_SUCCESS").exists()


def test_views_of_a_folder_with_a_dangling_link(tmp_path: Path) -> None:
    """pcap-dump without --out stopped at its own check ('no such file', exit 2) before
    the reader could count the link as a damaged file."""
    p = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(_folder(tmp_path)),
                        "--summary"], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 8, p.stderr
    assert p.stdout.startswith("connections: 2 ")
    assert "broken.pcapng: cannot open: a broken symbolic link" in p.stderr


@pytest.mark.spark
def test_spark_goes_on_past_a_file_it_cannot_open(spark: Any, tmp_path: Path) -> None:
    # (the task's open failed the whole job)
    d = _folder(tmp_path)
    local = write_tables([str(d)], str(tmp_path / "l"))
    remote = write_tables([str(d)], str(tmp_path / "s"), engine="spark", spark=spark)
    assert remote.errors == local.errors
    (e,) = remote.errors
    assert e.endswith("broken.pcapng: cannot open: a broken symbolic link "
                      f"(to {tmp_path}/nowhere.pcapng)")
    assert remote.rows["deliveries"] == local.rows["deliveries"] == 40
