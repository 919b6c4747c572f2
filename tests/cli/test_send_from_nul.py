"""A `send --from` line is UTF-8 and read as such: a NUL in it is JSON's error at its
column (it was `not UTF-8 text: byte 0x65 at column 9` for valid UTF-8, json.loads having
taken the NULs of bytes for UTF-16 or UTF-32 text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.cli.options import json_within_depth
from tests.net.clirun import amqp

URL = "amqp://127.0.0.1:16509/q"  # nothing listens: the input is checked before connecting
NOT_JSON = "not a message in the JSON format"


STDIN = "line 1 of standard input"
NUL = "a NUL byte at column {} (JSON lines are UTF-8 text)"


@pytest.mark.parametrize(("data", "said"), [
    (b"\x00\x01garbage", f"{STDIN}: {NOT_JSON}: {NUL.format(1)}"),
    (b'{"body": {"value": "\xc3\xa9"},\x00}', f"{STDIN}: {NOT_JSON}: {NUL.format(26)}"),
    # (UTF-16 without a byte-order mark: no longer half read as UTF-16)
    ('{"body": {"value": "a"}}\n'.encode("utf-16-le"), f"{STDIN}: {NOT_JSON}: {NUL.format(2)}"),
    (b"\x01garbage", f"{STDIN}: {NOT_JSON}: Expecting value: line 1 column 1 (char 0)"),
    (b'{"body": {"value": "\xff"}}', f"{STDIN}: not UTF-8 text: byte 0xff at column 21"),
], ids=["nul-first", "nul-after-e-acute", "utf-16le", "control", "latin-1"])
def test_a_line_with_a_nul_says_where(data: bytes, said: str) -> None:
    r = amqp("send", URL, "--from", "-", input=data, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {said}\n")


def test_a_file_the_same(tmp_path: Path) -> None:
    """(A file is checked whole before connecting: line 2 is found.)"""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"body": {"value": "a"}}\n\x00\x01garbage\n')
    r = amqp("send", URL, "--from", str(path), timeout=60)
    said = f"amqp: error: {path}:2: {NOT_JSON}: {NUL.format(1)}\n"
    assert (r.returncode, r.stderr) == (2, said)


def test_bytes_are_read_as_utf8() -> None:
    assert json_within_depth(b'"\xc3\xa9"') == "é"
    assert json_within_depth(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # (as json.loads took it)
    with pytest.raises(UnicodeDecodeError) as info:
        json_within_depth(b'\x00\x01garbage\xff')
    assert info.value.start == 9
