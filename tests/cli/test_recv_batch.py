"""`amqp recv` writes a run of ready messages and flushes once, before settling any; when
the write fails part way, the messages written whole are known (and settled), the others
are not."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import threading
import time
from collections import deque
from typing import Any

import pytest

from amqpcli.cli.recv import Sink
from amqpcli.net.client import ReceiverLink
from amqpcli.net.receiving import OutputError, WriteStopped
from tests.net.clirun import pipe_held


class _Stream(io.StringIO):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def flush(self) -> None:
        self.log.append("flush")

    def isatty(self) -> bool:
        return False


def _sink_on(fd: int) -> Sink:
    """A --json sink writing to `fd`, each message's line being the message itself."""
    sink = Sink(json_lines=True, out=None)
    sink.stream = open(fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sink.fd = fd
    sink._line = lambda incoming: incoming  # type: ignore[method-assign,assignment,return-value]
    return sink


def test_write_many_through_a_stream_writes_all_then_flushes_once() -> None:
    log: list[str] = []
    sink = Sink(json_lines=True, out=None)
    sink.stream = _Stream(log)
    sink.fd = None  # a stream without a descriptor of its own (or a terminal)

    def fake_write(incoming: Any) -> None:
        log.append(f"write {incoming}")

    sink._write = fake_write  # type: ignore[method-assign]
    sink.write_many([1, 2, 3])  # type: ignore[list-item]
    assert log == ["write 1", "write 2", "write 3", "flush"]
    log.clear()
    sink.write(4)  # type: ignore[arg-type]
    assert log == ["write 4", "flush"]


def test_a_run_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    r, w = os.pipe()
    try:
        sink = _sink_on(w)
        calls: list[bytes] = []
        real = os.write

        def counted(fd: int, data: Any) -> int:
            calls.append(bytes(data))
            return real(fd, data)

        monkeypatch.setattr(os, "write", counted)
        sink.write_many(["a\n", "bé\n", "c\n"])  # type: ignore[list-item]
        monkeypatch.undo()
        assert calls == ["a\nbé\nc\n".encode()]
        assert os.read(r, 100) == "a\nbé\nc\n".encode()
    finally:
        os.close(r)
        os.close(w)


def test_a_write_failing_part_way_says_how_many_got_out(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["one\n", "two\n", "three\n", "four\n"]
    budget = len("one\ntwo\nth")  # the reader went away in the middle of the third
    out = bytearray()

    def short_writes(fd: int, data: Any) -> int:
        room = budget - len(out)
        if room <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        part = bytes(data[:min(3, room)])  # a few bytes at a time, as a pipe may take
        out.extend(part)
        return len(part)

    sink = _sink_on(1)
    monkeypatch.setattr(os, "write", short_writes)
    with pytest.raises(OutputError) as info:
        sink.write_many(lines)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert bytes(out) == b"one\ntwo\nth"
    assert info.value.written == 2
    assert str(info.value) == "cannot write standard output: Broken pipe"


def test_a_line_ending_exactly_where_the_write_failed_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    written = [0]

    def fails_after_two_lines(fd: int, data: Any) -> int:
        if written[0]:
            raise OSError(28, "No space left on device")
        written[0] = 8
        return 8  # "one\n" and "two\n" wholly

    sink = _sink_on(1)
    monkeypatch.setattr(os, "write", fails_after_two_lines)
    with pytest.raises(OutputError) as info:
        sink.write_many(["one\n", "two\n", "three\n"])  # type: ignore[arg-type]
    assert info.value.written == 2


def test_on_a_file_what_cannot_be_synced_does_not_count(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Any) -> None:
    sink = Sink(json_lines=True, out=str(tmp_path / "out.jsonl"))
    assert sink.fsync and sink.fd is not None
    sink._line = lambda incoming: incoming  # type: ignore[method-assign,assignment,return-value]
    real = os.write

    def full_after_the_first(fd: int, data: Any) -> int:
        if fd != sink.fd:
            return real(fd, data)
        if len(data) > 6:
            return real(fd, bytes(data[:6]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_after_the_first)
    with pytest.raises(OutputError) as info:
        sink.write_many(["first\n", "second\n"])  # type: ignore[arg-type]
    assert info.value.written == 1  # written and fsync'd

    def sync_fails(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", sync_fails)
    with pytest.raises(OutputError) as info:
        sink.write_many(["first\n", "second\n"])  # type: ignore[arg-type]
    assert info.value.written == 0
    sink.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_reader_going_away_mid_run_on_a_real_pipe() -> None:
    import fcntl

    r, w = os.pipe()
    try:
        cap = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)
        line = "x" * 999 + "\n"
        n = cap // len(line) + 5  # more than the pipe holds: the write blocks part way
        sink = _sink_on(w)
        failure: list[BaseException] = []

        def write() -> None:
            try:
                sink.write_many([line] * n)  # type: ignore[list-item]
            except BaseException as e:  # noqa: BLE001 - handed to the test
                failure.append(e)

        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 30
        while True:  # until the writer is blocked on a full pipe
            held = pipe_held(r)
            if held >= cap or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert held == cap
        os.close(r)  # like `| head -1` exiting
        r = -1
        writer.join(30)
        assert not writer.is_alive()
        assert len(failure) == 1 and isinstance(failure[0], OutputError), failure
        assert failure[0].written == cap // len(line)  # the lines wholly in the pipe
    finally:
        if r >= 0:
            os.close(r)
        os.close(w)


async def _until_full(r: int, writing: asyncio.Task[None]) -> None:
    """Until the pipe holds all it takes (the loop runs meanwhile: the writer waits)."""
    import fcntl

    full = fcntl.fcntl(r, fcntl.F_GETPIPE_SZ) - os.sysconf("SC_PAGE_SIZE")
    while pipe_held(r) < full:
        assert not writing.done()
        await asyncio.sleep(0.01)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
@pytest.mark.parametrize("reader_reads", [False, True])
def test_a_stop_while_a_pipe_takes_nothing(reader_reads: bool) -> None:
    """The run waits for a full pipe with the event loop running; stopped, it says how many
    messages were written whole. The line under way is finished if the reader reads
    (within LINE_END_WAIT), else left cut short."""
    import fcntl

    r, w = os.pipe()
    try:
        line = "x" * 999 + "\n"
        n = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) // len(line) + 5  # more than the pipe holds
        sink = _sink_on(w)
        sink.may_stall = True
        sink.LINE_END_WAIT = 30.0 if reader_reads else 0.01  # (a bound, not a timing)
        waited: list[str] = []

        async def run() -> WriteStopped:
            writing = asyncio.ensure_future(sink.write_many_async(
                [line] * n, lambda: waited.append("flush")))  # type: ignore[list-item]
            await _until_full(r, writing)
            writing.cancel()
            got = b""
            if reader_reads:
                got = os.read(r, 1 << 20)  # what the pipe holds: room for the rest of the line
            with pytest.raises(WriteStopped) as info:
                await writing
            rest = os.read(r, 1 << 20) if pipe_held(r) else b""
            out = got + rest
            assert info.value.written == out.count(b"\n")
            assert info.value.cut == (not out.endswith(b"\n"))
            return info.value

        stopped = asyncio.run(run())
        assert waited == ["flush"]  # (once, before the first wait)
        assert stopped.cut is not reader_reads  # 1000-byte lines: none ends at a page's end
        assert 0 < stopped.written < n
        assert os.get_blocking(w)  # non-blocking for its own writes only
    finally:
        os.close(r)
        os.close(w)


def test_take_returns_what_is_queued_up_to_the_limit() -> None:
    link = ReceiverLink.__new__(ReceiverLink)
    link.queue = deque([1, 2, 3, 4, 5])  # type: ignore[list-item]
    assert link.take(2) == [1, 2]
    assert link.take(None) == [3, 4, 5]
    assert link.take(None) == []
    link.queue.extend([6, 7])  # type: ignore[list-item]
    assert link.take(5) == [6, 7]
    assert not link.queue
