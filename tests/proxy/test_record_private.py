"""`amqp proxy --record` (and `tui --proxy --record`, the same Recorder): the recording
holds a SASL PLAIN password in clear, so it is readable by its owner only (0600), whatever
the umask, and an existing file it overwrites is made 0600 too."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from amqpcli.proxy.record import Recorder
from tests.paths import REPO_ROOT


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_recording_is_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "r.pcapng"
    rec = Recorder(path)
    rec.close()
    assert _mode(path) == 0o600
    assert path.stat().st_size > 0  # the header went in, and the file was closed


def test_an_existing_file_is_made_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "r.pcapng"
    path.write_bytes(b"old content" * 100)
    path.chmod(0o644)
    rec = Recorder(path)
    rec.close()
    assert _mode(path) == 0o600
    assert not path.read_bytes().startswith(b"old content")


def test_proxy_record_is_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "p.pcapng"
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                             "amqp://127.0.0.1:1", "--record", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=REPO_ROOT)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert re.search(r"listening on 127\.0\.0\.1:\d+", line), line
        assert _mode(path) == 0o600
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert _mode(path) == 0o600
