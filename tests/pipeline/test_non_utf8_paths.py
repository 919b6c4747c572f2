"""A capture whose file name is not UTF-8 (a byte the file system keeps as is) goes into
the tables with that byte as U+FFFD; an --out folder whose path is not UTF-8 is a usage
error (the table writers take no other path). Both were internal errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from amqpcli.pipeline.run import write_tables
from tests.paths import CAPTURES_DIR
from tests.pipeline.helpers import rows, run_cli

SOURCE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def _odd_name(tmp_path: Path) -> str:
    path = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xffname.pcapng")
    shutil.copyfile(SOURCE, path)
    return path


def test_a_capture_named_in_other_bytes(tmp_path: Path) -> None:
    out = tmp_path / "t"
    write_tables([_odd_name(tmp_path)], str(out))
    names = {r["capture"] for r in rows(str(out), "frames")}
    assert names == {str(tmp_path) + "/bad\ufffdname.pcapng"}


def test_an_out_folder_named_in_other_bytes(tmp_path: Path) -> None:
    out = os.fsdecode(os.fsencode(str(tmp_path)) + b"/out\xff")
    code, stdout, err = run_cli("pcap-dump", str(SOURCE), "--out", out)
    assert (code, stdout) == (2, "")
    assert err == "amqp: error: --out: the folder's path is not UTF-8 text\n"
    assert not os.path.exists(out)
