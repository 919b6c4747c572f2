"""Password files: the first line up to ``\\n`` (or ``\\r\\n``), UTF-8, not empty, at
most 64 KiB; every refusal is a one-line usage error naming the file and saying nothing
about the password (not its length, not the position of a bad byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import read_password_file
from tests.net.clirun import amqp

SECRET = "SEKRETpf"


def _file(tmp_path: Path, data: bytes) -> str:
    p = tmp_path / "pw"
    p.write_bytes(data)
    return str(p)


@pytest.mark.parametrize("sep", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                 "\u2028", "\u2029", "\r"])
def test_only_a_newline_ends_the_password(tmp_path: Path, sep: str) -> None:
    password = f"ab{sep}cd"
    path = _file(tmp_path, (password + "\nsecond line\n").encode())
    assert read_password_file(path) == password


@pytest.mark.parametrize("data", [b"s3cret\r\nrest\n", b"s3cret\n", b"s3cret",
                                  b"s3cret\nbad \xff later\n"])
def test_first_line(tmp_path: Path, data: bytes) -> None:
    assert read_password_file(_file(tmp_path, data)) == "s3cret"


@pytest.mark.parametrize("data", [b"", b"\n", b"\r\n", b"\nsecond\n"])
def test_empty_first_line_is_refused(tmp_path: Path, data: bytes) -> None:
    path = _file(tmp_path, data)
    with pytest.raises(UserError) as e:
        read_password_file(path)
    assert e.value.code == Exit.USAGE
    assert "the first line is empty" in str(e.value) and path in str(e.value)


def test_large_file_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path, b"x" * (64 * 1024 + 1))
    with pytest.raises(UserError) as e:
        read_password_file(path)
    assert "64 KiB" in str(e.value) and path in str(e.value)
    assert read_password_file(_file(tmp_path, b"x" * (64 * 1024))) == "x" * 64 * 1024


def _no_secret_told(text: str) -> None:
    assert SECRET not in text and "position" not in text and "Traceback" not in text
    assert "internal error" not in text


def test_not_utf8_option(tmp_path: Path) -> None:
    path = _file(tmp_path, SECRET.encode() + b"\xff\xfe\n")
    r = amqp("send", "amqp://qa@127.0.0.1:1/x", "hi", "--password-file", path)
    assert r.returncode == Exit.USAGE, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert path in r.stderr and "not UTF-8" in r.stderr
    _no_secret_told(r.stderr + r.stdout)


def test_not_utf8_profile(tmp_path: Path) -> None:
    path = _file(tmp_path, SECRET.encode() + b"\xff\xfe\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[profiles.p]\nurl = "amqp://qa@127.0.0.1:1"\npassword_file = "{path}"\n')
    r = amqp("send", "@p/x", "hi", env={"AMQP_CONFIG": str(cfg)})
    assert r.returncode == Exit.USAGE, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert path in r.stderr and "not UTF-8" in r.stderr
    _no_secret_told(r.stderr + r.stdout)


def test_empty_first_line_cli(tmp_path: Path) -> None:
    path = _file(tmp_path, b"\n" + SECRET.encode() + b"\n")
    r = amqp("send", "amqp://qa@127.0.0.1:1/x", "hi", "--password-file", path)
    assert r.returncode == Exit.USAGE, r.stderr
    assert "the first line is empty" in r.stderr and path in r.stderr
    _no_secret_told(r.stderr + r.stdout)
