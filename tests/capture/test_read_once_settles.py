"""A file read once (a named pipe, standard input) is told a capture or a frame-trace log
by its first bytes as its writer writes them, not by its writer's first write: a client
writes other text before its first frame, a router's log starts with its start-up lines,
and a log is written a line at a time. The reading goes on until they tell: a capture's
4 magic bytes, a frame line, 200 lines, the end, or PEEK_BYTES held.

The peek used to be one read of the pipe: a first line of other text made the log 'not a
capture file or frame-trace log: text with no frame line in its first 200 lines'.

The writers here wait until the reader has taken what they wrote (the pipe drained:
FIONREAD) or until the test lets them go on, so "decided before more came" is an order of
events, not a race."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.files import opened_once, read_packets
from amqpcli.capture.tracelog import is_trace_log, not_a_log_error
from tests.tui.test_trace_log_times import PROTON_TRACE

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")

CAPTURE = Path(__file__).parent.parent.parent / "amqpcli/examples/serve-session.pcapng"
HANG = 60  # seconds before a test that would hang fails (a guard, not a timed assertion)


def _pcap_dump(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", *args],
                          check=False, capture_output=True, text=True, timeout=120, **kw)


def _drained(fd: int) -> bool:
    """Whether the reader took everything written into the pipe (nothing in it)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0] == 0


class Writer(threading.Thread):
    """Writes `parts` into the named pipe; before each part after the first it waits for
    `before(i, fd)` to hold (polled: the reader's progress), then for nothing else."""

    def __init__(self, fifo: Path, parts: list[bytes],
                 before: Callable[[int, int], bool]) -> None:
        super().__init__(daemon=True)
        self.fifo = fifo
        self.parts = parts
        self.before = before
        self.error: BaseException | None = None
        self.wrote: list[int] = []  # the parts written
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            with open(self.fifo, "wb", buffering=0) as f:
                for i, part in enumerate(self.parts):
                    if i:
                        while not self.before(i, f.fileno()):
                            if self.stop.wait(0.01):
                                return
                    f.write(part)
                    self.wrote.append(i)
        except BrokenPipeError:
            pass  # (the reader gave up: what the test then sees)
        except BaseException as e:  # noqa: BLE001 - for the test to see
            self.error = e

    def finish(self) -> None:
        self.stop.set()
        if self.is_alive():  # a writer still waiting for a reader to open the pipe
            try:
                fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                fd = -1
            self.join(5)
            if fd >= 0:
                os.close(fd)
        self.join(HANG)


def _fifo(tmp_path: Path, name: str = "input") -> Path:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("first", [
    b"client starting up\n",
    b"2024-05-01 10:00:00.000000 +0000 SERVER (info) Container Name: Router.A\n" * 3,
    b"client",  # (not even a whole line)
], ids=["a line", "start-up lines", "a part of a line"])
def test_a_log_after_other_text_written_first_is_read(tmp_path: Path, first: bytes) -> None:
    """`(echo starting; sleep 2; PN_TRACE_FRM=1 client) > f & amqp pcap-dump f`: the
    text, then once pcap-dump took it, the trace."""
    plain = tmp_path / "plain.log"
    plain.write_bytes(first + (b"\n" if not first.endswith(b"\n") else b"") +
                      PROTON_TRACE.encode())
    want = _pcap_dump(str(plain))
    assert want.returncode == 0 and want.stdout.count(" c1 ") == 12, want.stderr
    fifo = _fifo(tmp_path)
    rest = plain.read_bytes()[len(first):]
    writer = Writer(fifo, [first, rest], lambda _i, fd: _drained(fd))
    writer.start()
    try:
        got = _pcap_dump(str(fifo))
    finally:
        writer.finish()
    assert writer.error is None
    assert writer.wrote == [0, 1]
    assert (got.returncode, got.stderr) == (0, ""), got.stderr
    assert got.stdout == want.stdout


def test_a_log_written_a_line_at_a_time_on_standard_input(tmp_path: Path) -> None:
    """`client 2>&1 | amqp pcap-dump -`: each line once the one before was taken."""
    lines = [b"connecting to localhost:5672\n", b"connected\n",
             *PROTON_TRACE.encode().splitlines(keepends=True)]
    plain = tmp_path / "plain.log"
    plain.write_bytes(b"".join(lines))
    want = _pcap_dump(str(plain))
    assert want.returncode == 0, want.stderr
    r, w = os.pipe()
    done = threading.Event()

    def write() -> None:
        try:
            for i, line in enumerate(lines):
                while i and not _drained(w):
                    if done.wait(0.01):
                        return
                os.write(w, line)
        except BrokenPipeError:
            pass
        finally:
            os.close(w)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    try:
        got = _pcap_dump("-", stdin=r)
    finally:
        done.set()
        os.close(r)
        t.join(HANG)
    assert (got.returncode, got.stderr) == (0, ""), got.stderr
    assert got.stdout == want.stdout


def test_a_capture_is_told_by_its_magic_number_without_waiting_for_more(
        tmp_path: Path) -> None:
    """A pcapng's first 2 bytes (`0a 0d`, line ends) in one write, the rest of its header
    in the next, then nothing until the test saw the file taken for a capture: its first
    4 bytes tell it, nothing more is waited for (a capture writer may hold its next
    packet for as long as there is no traffic)."""
    data = CAPTURE.read_bytes()
    head = data[:2]
    header = data[2:28]  # (the rest of the section header's first 28 bytes)
    checked = threading.Event()  # (set once the test saw the reader decide)
    fifo = _fifo(tmp_path)
    writer = Writer(fifo, [head, header, data[28:]],
                    lambda i, fd: _drained(fd) if i == 1 else checked.is_set())
    writer.start()
    result: list[Any] = []

    def decide() -> None:
        try:
            f = opened_once(str(fifo))
            result.append(f)
            result.append((is_trace_log(f), not_a_log_error(f)))
        except BaseException as e:  # noqa: BLE001 - for the test to see
            result.append(e)

    t = threading.Thread(target=decide, daemon=True)
    t.start()
    try:
        t.join(HANG)
        assert not t.is_alive(), "the reader waited for more than the capture's header"
        assert 2 not in writer.wrote  # (the rest is held back until now)
        f, told = result
        assert told == (False, None)  # a capture: not a log, nor text that is neither
        checked.set()
        packets = [(ts, bytes(d)) for ts, _lt, d in read_packets(f)]
    finally:
        checked.set()
        writer.finish()
    assert writer.error is None and writer.wrote == [0, 1, 2]
    assert packets == [(ts, bytes(d)) for ts, _lt, d in read_packets(str(CAPTURE))]


@pytest.mark.parametrize(("text", "what"), [
    (b"hello, this is not a capture\n" * 250,
     "text with no frame line in its first 200 lines"),
    (b"x" * (1 << 17), "text with no frame line in its first 200 lines"),
    (b"", "empty"),
], ids=["250 lines", "128 KiB of one line", "empty"])
def test_text_that_is_neither_written_slowly_is_still_said_to_be_neither(
        tmp_path: Path, text: bytes, what: str) -> None:
    """Written a piece at a time, each once the one before was taken: after 200 lines,
    PEEK_BYTES or the end, the same one-line error as ever, exit 8."""
    fifo = _fifo(tmp_path)
    parts = [text[i : i + 4000] for i in range(0, len(text), 4000)] or [b""]
    writer = Writer(fifo, parts, lambda _i, fd: _drained(fd))
    writer.start()
    try:
        got = _pcap_dump(str(fifo))
    finally:
        writer.finish()
    assert got.returncode == 8
    assert got.stderr.startswith(f"amqp: error: {fifo}: not a capture file or frame-trace "
                                 f"log: {what}") and got.stderr.count("\n") == 1, got.stderr


def test_gzip_input_is_inflated_only_as_far_as_it_is_sniffed() -> None:
    # a small input that inflates hugely: decided on the sniffed length of its text, not
    # inflated whole at every read of a pipe
    import gzip
    import zlib

    from amqpcli.capture.tracelog import SNIFF_BYTES, settles

    bomb = gzip.compress(b"x" * (64 << 20))
    inflated: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, wbits: int) -> None:
            self.d = real(wbits)

        def decompress(self, data: bytes, max_length: int = 0) -> bytes:
            out = self.d.decompress(data, max_length)
            inflated.append(len(out))
            return out

        @property
        def eof(self) -> bool:
            return bool(self.d.eof)

    zlib.decompressobj = Counting  # type: ignore[assignment]
    try:
        assert settles(bomb)
    finally:
        zlib.decompressobj = real
    assert max(inflated) <= SNIFF_BYTES
