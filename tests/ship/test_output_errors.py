"""Errors every command shares, handled once in `amqpcli/cli/app.py`'s `main()`: standard
output that cannot be written (a full disk, closed at start) is a one-line usage error, not
an internal error; `--debug` is accepted anywhere on the command line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "amqpcli" / "examples"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    return {**env, "NO_COLOR": "1"}


def _amqp(*args: str, stdout: int | IO[Any] = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT, env=_env(),
                          stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [
    ("decode", "--example", "message"),
    ("decode", "--example", "client-session", "--json"),
    ("pcap-dump", str(EXAMPLES / "serve-session.pcapng")),
    ("pcap-dump", str(EXAMPLES / "serve-session.pcapng"), "--summary"),
    ("--version",),
], ids=" ".join)
def test_full_disk_on_stdout_is_a_usage_error(args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        r = _amqp(*args, stdout=full)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "amqp: error: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("args", [
    ("decode", "--example", "message"),
    ("pcap-dump", str(EXAMPLES / "serve-session.pcapng")),
], ids=" ".join)
def test_closed_stdout_is_a_usage_error(args: tuple[str, ...]) -> None:
    command = " ".join([sys.executable, "-m", "amqpcli", *args])
    r = subprocess.run(["sh", "-c", f"exec {command} >&-"], cwd=REPO_ROOT, env=_env(),
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "amqp: error: cannot write standard output: it is closed\n"


def test_reader_going_away_stays_quiet() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "decode", "--example",
                             "client-session"], cwd=REPO_ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert err == b""


def test_debug_after_the_command() -> None:
    url = f"amqp://127.0.0.1:{_free_port()}/q"
    plain = _amqp("send", url, "x")
    assert plain.returncode == 3 and "Traceback" not in plain.stderr, plain.stderr
    for args in (("send", url, "x", "--debug"), ("send", "--debug", url, "x"),
                 ("--debug", "send", url, "x")):
        r = _amqp(*args)
        assert "Traceback" in r.stderr and "No such option" not in r.stderr, r.stderr
        # --debug adds the traceback; the exit code scripts act on stays the error's
        assert r.returncode == 3, r.stderr
        assert r.stderr.rstrip().splitlines()[-1] == plain.stderr.rstrip().splitlines()[-1]


def test_debug_after_decode_input() -> None:
    r = _amqp("decode", "zz", "--debug")
    assert "No such option" not in r.stderr
    assert "Traceback" in r.stderr, r.stderr
    assert "amqp: error:" in _amqp("decode", "zz").stderr


@pytest.mark.parametrize("io_encoding", ["utf-8:strict", "utf-8:surrogateescape", ""])
def test_text_that_is_not_utf8_is_written_escaped(io_encoding: str, tmp_path: Path) -> None:
    # A file name that is no UTF-8 (byte 0x80) is held as a lone surrogate: it is written
    # as \udc80, whatever the locale's error mode (strict failed, surrogateescape wrote a
    # raw 0x80 that is no UTF-8). Decoded values hold none: a symbol with that byte is a
    # decode error.
    name = os.fsencode(tmp_path) + b"/A\x80B"
    with open(name, "wb") as f:
        f.write(b"\x40")
    env = {**_env(), "PYTHONIOENCODING": io_encoding}
    p = subprocess.run([sys.executable, "-m", "amqpcli", "decode", name], cwd=REPO_ROOT,
                       env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                       check=False)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode("utf-8")  # valid UTF-8
    assert "A\\udc80B" in out
