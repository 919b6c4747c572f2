"""What a folder or a glob gives, taken as it comes: a named pipe, a socket or a device
in it is not a capture file and is skipped with a one-line note (a pipe's open waited for
a writer, for ever, and no signal but SIGKILL ended the run); a named pipe named on its
own is read."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from amqpcli.pipeline.inputs import expand
from amqpcli.pipeline.output import read_table
from tests.paths import CAPTURES_DIR, require

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"


def amqp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture
def odd_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder with one good capture, a named pipe and a socket, all named as captures."""
    d = tmp_path / "caps"
    d.mkdir()
    (d / "a.pcapng").write_bytes(require(RABBIT).read_bytes())
    os.mkfifo(d / "pipe.pcapng")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(d / "sock.pcapng"))
    yield d
    s.close()


def test_expand_skips_pipes_and_sockets_with_a_note(odd_folder: Path) -> None:
    notes: list[str] = []
    got = expand([str(odd_folder)], notes.append)
    assert got == [str((odd_folder / "a.pcapng").resolve())]
    assert sorted(notes) == [
        f"{odd_folder}/pipe.pcapng: a named pipe (FIFO), not a capture file: skipped",
        f"{odd_folder}/sock.pcapng: a socket, not a capture file: skipped"]
    # a glob gives them as a folder does
    notes.clear()
    assert expand([f"{odd_folder}/*.pcapng"], notes.append) == got and len(notes) == 2
    # a named pipe named is kept (mkfifo f; tcpdump -w f & amqp pcap-dump f)
    assert expand([str(odd_folder / "pipe.pcapng")]) == [str(odd_folder / "pipe.pcapng")]


def test_pcap_dump_of_a_folder_with_a_pipe_and_a_socket(odd_folder: Path) -> None:
    p = amqp("pcap-dump", str(odd_folder), "--summary")
    assert p.returncode == 0, p.stderr
    assert "deliveries: 40" in p.stdout
    assert p.stderr.count("not a capture file: skipped") == 2, p.stderr


def test_tables_of_a_folder_with_a_pipe_and_a_socket(odd_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    p = amqp("pcap-dump", str(odd_folder), "--out", str(out))
    assert p.returncode == 0, p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines[0].endswith("pipe.pcapng: a named pipe (FIFO), not a capture file: skipped")
    assert lines[1].endswith("sock.pcapng: a socket, not a capture file: skipped")
    assert read_table(str(out), "deliveries").num_rows == 40
