"""`amqp tui --pcap FILE` where FILE is neither a capture nor a frame-trace log says what
`amqp pcap-dump FILE` says of it (`not a capture file or frame-trace log: …`), one line,
exit 8, before the screen opens. The TUI spoke of magic numbers only: 'not a capture
file: starts with 68656c6c (expected a pcap or pcapng magic number)'."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from tests.tui.test_cli_tui import _fails, started  # noqa: F401 (started: a fixture)

NEITHER = "not a capture file or frame-trace log"
# (what pcap-dump adds to every input it could read nothing of)
NOTHING_READ = "; no packet could be read"


@pytest.mark.parametrize(("name", "content", "error"), [
    ("some.txt", b"hello\nworld\n", f"{NEITHER}: text with no frame line in its first 200 lines"),
    ("empty.txt", b"", f"{NEITHER}: empty"),
    ("nuls.log", b"\x00" * 100, f"{NEITHER}: empty"),
    ("text.gz", gzip.compress(b"just text\n"),
     f"{NEITHER}: text with no frame line in its first 200 lines"),
    # binary data is no text: the capture reader says what it starts with, in both
    ("garbage.bin", bytes(range(1, 256)) * 2,
     ("not a capture file: starts with 01020304 (expected a pcap or pcapng magic number) "
      "(at byte offset 0)")),
], ids=["text", "empty", "nul-bytes", "gzipped-text", "binary"])
def test_what_is_neither_is_said_as_pcap_dump_says_it(
        started: list[Any], capsys: pytest.CaptureFixture[str], tmp_path: Path,  # noqa: F811
        name: str, content: bytes, error: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, err = _fails(["tui", "--pcap", str(path)], capsys)
    assert (code, err) == (8, f"amqp: error: {path}: {error}")  # one line, no traceback
    assert started == []  # before the screen opens
    code, dumped = _fails(["pcap-dump", str(path)], capsys)
    assert (code, dumped) == (8, err + NOTHING_READ)


def test_a_folder_without_captures_is_refused_as_pcap_dump_refuses_it(
        started: list[Any], capsys: pytest.CaptureFixture[str],  # noqa: F811
        tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "router.log").write_text("not a capture\n")
    code, err = _fails(["tui", "--pcap", str(folder)], capsys)
    refused = f"amqp: error: {folder}: no capture files (*.pcap, *.pcapng, gzipped) in it"
    assert (code, err) == (2, refused)
    assert _fails(["pcap-dump", str(folder)], capsys) == (code, err)
    assert started == []
