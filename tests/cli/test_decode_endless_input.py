"""`amqp decode` on standard input that is closed, and on inputs that never end: a stream
(a device, a pipe, a FIFO) is read no further once a fatal decode error is reported,
while a damaged regular file is still read to its end and counted."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.net.clirun import amqp
from tests.paths import REPO_ROOT

_ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
_TIMEOUT = 60  # (the old code never ended: this is the hang guard)


def _decode_stdin_closed(*args: str) -> subprocess.CompletedProcess[str]:
    """`amqp decode ARGS` started with file descriptor 0 closed (`<&-`)."""
    return subprocess.run(
        [sys.executable, "-m", "amqpcli", "decode", *args],
        stdin=None, capture_output=True, text=True, timeout=_TIMEOUT, cwd=REPO_ROOT,
        env=_ENV, check=False, preexec_fn=lambda: os.close(0),
    )


@pytest.mark.parametrize("args", [(), ("-",), ("-f", "-")])
def test_closed_stdin_is_a_usage_error(args: tuple[str, ...]) -> None:
    r = _decode_stdin_closed(*args)
    assert r.returncode == 2, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith("amqp: error: standard input is closed"), r.stderr
    assert len(r.stderr.splitlines()) == 1


def _check_stopped(r: subprocess.CompletedProcess[str], source: str) -> None:
    assert r.returncode == 8, r.stderr
    assert "decode error at offset" in r.stderr
    assert f"amqp: note: {source} is not a regular file: not read past" in r.stderr
    assert r.stderr.splitlines()[-1].startswith("amqp: error: decode error")
    assert "not read on after the error" in r.stdout.splitlines()[-1]


def test_dev_zero_ends_after_its_error() -> None:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "decode", "-f", "/dev/zero"],
                       capture_output=True, text=True, timeout=_TIMEOUT, cwd=REPO_ROOT,
                       env=_ENV, check=False)
    _check_stopped(r, "/dev/zero")


def _endless_pipe(header: bytes, *args: str) -> subprocess.CompletedProcess[str]:
    """`amqp decode ARGS` reading a pipe that never ends: `header`, then zero bytes."""
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "decode", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO_ROOT, env=_ENV)
    assert proc.stdin is not None

    def feed() -> None:
        zeros = bytes(1 << 16)
        try:
            proc.stdin.write(header)  # type: ignore[union-attr]
            while True:
                proc.stdin.write(zeros)  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        out, err = _wait(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _wait(proc: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The output of `proc` once it ends (its stdin is being written by another thread)."""
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[str, bytes] = {}

    def read(name: str, stream: object) -> None:
        chunks[name] = stream.read()  # type: ignore[attr-defined]

    readers = [threading.Thread(target=read, args=(n, s), daemon=True)
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    proc.wait(timeout=_TIMEOUT)
    for t in readers:
        t.join(_TIMEOUT)
    return (chunks.get("out", b"").decode("utf-8", "replace"),
            chunks.get("err", b"").decode("utf-8", "replace"))


@pytest.mark.parametrize("header, args", [
    (b"", ()),  # values
    (b"AMQP\x00\x01\x00\x00", ("-",)),  # an AMQP 1.0 frame stream
    (b"AMQP\x00\x01\x00\x00", ("-", "--json")),
    (b"AMQP\x01\x01\x00\x0a", ("-",)),  # an AMQP 0-10 frame stream
])
def test_a_pipe_ends_after_its_error(header: bytes, args: tuple[str, ...]) -> None:
    r = _endless_pipe(header, *args)
    if "--json" in args:
        assert r.returncode == 8, r.stderr
        assert "amqp: note: stdin is not a regular file: not read past" in r.stderr
        assert '"item": "error"' in r.stdout
    else:
        _check_stopped(r, "stdin")


def test_a_fifo_ends_after_its_error(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        zeros = bytes(1 << 16)
        try:
            with open(fifo, "wb") as f:
                while not stop.is_set():
                    f.write(zeros)
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        r = amqp("decode", "-f", str(fifo), timeout=_TIMEOUT)
    finally:
        stop.set()
    _check_stopped(r, str(fifo))


def test_a_damaged_regular_file_is_still_read_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "zeros.bin"
    path.write_bytes(b"AMQP\x00\x01\x00\x00" + bytes(3_000_000))
    r = amqp("decode", "-f", str(path), timeout=_TIMEOUT)
    assert r.returncode == 8, r.stderr
    assert "not a regular file" not in r.stderr
    assert r.stdout.splitlines()[-1].endswith(f"; 3000008 bytes from raw input ({path})")
    assert r.stderr.splitlines()[-1].startswith("amqp: error: decode error")


def test_a_sound_stream_is_read_to_its_end() -> None:
    r = amqp("decode", "--example", "client-session", "--brief", timeout=_TIMEOUT)
    assert r.returncode == 0, r.stderr
    examples = REPO_ROOT / "amqpcli" / "examples"
    data = next(f for f in examples.iterdir() if f.name.startswith("client-session.")).read_bytes()
    r2 = amqp("decode", "-", "--brief", input=data, timeout=_TIMEOUT)
    assert r2.returncode == 0, r2.stderr
    assert "not read" not in r2.stdout + r2.stderr
