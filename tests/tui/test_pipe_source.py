"""`amqp tui --pcap FIFO` and `--pcap -`: a capture shown as it is written into a pipe.

The capture is written in parts by a thread that waits between them until the test lets
it go on, so "shown before the writer closed" is an order of events, not a race."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.app import TERMINATED, AmqpTui, exit_as
from tests.dissect.helpers import Script, basic, write
from tests.tui.waiting import until

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")

N = 3  # transfers in the capture


def capture_parts(tmp_path: Path, script: Script, cut: int) -> tuple[bytes, bytes]:
    """`script` as capture bytes, cut after its first `cut` steps: (what the capture
    holds up to there, the rest to its end)."""
    head = write(tmp_path / "head.pcapng", Script(steps=script.steps[:cut]), fin=False)
    whole = write(tmp_path / "whole.pcapng", script)
    first, full = head.read_bytes(), whole.read_bytes()
    assert full.startswith(first) and len(full) > len(first)
    return first, full[len(first):]


def up_to_the_link(script: Script) -> int:
    """The steps of `basic()` up to its link attached with credit (SASL, open, begin,
    attach both ways, the server's flow)."""
    cut = len(Script().sasl_plain().open().sender_link().steps)
    assert script.steps[:cut] == Script().sasl_plain().open().sender_link().steps
    return cut


class Writer:
    """Writes `parts` into a pipe (opened by `open_pipe`, in this thread), waiting for
    `go` before each part after the first; `closed` is set once it closed the pipe."""

    def __init__(self, open_pipe: Callable[[], Any], parts: list[bytes]) -> None:
        self.go = threading.Event()
        self.opened = threading.Event()
        self.closed = threading.Event()
        self.error: BaseException | None = None
        self._open = open_pipe
        self._parts = parts
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with self._open() as f:
                self.opened.set()
                for i, part in enumerate(self._parts):
                    if i:
                        assert self.go.wait(120), "the test never let the writer go on"
                    f.write(part)
                    f.flush()
        except BaseException as e:  # noqa: BLE001 - for the test to see
            self.error = e
        finally:
            self.closed.set()

    def start(self) -> Writer:
        self.thread.start()
        return self

    def finish(self, fifo: Path | None = None) -> None:
        self.go.set()
        if fifo is not None and not self.closed.is_set():
            # a writer still waiting for a reader to open the pipe: be that reader
            with contextlib.suppress(OSError):
                fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
                self.thread.join(5)
                os.close(fd)
        self.thread.join(30)


def _links(app: AmqpTui) -> list[Any]:
    return [lk for c in app.conn_tree.conn_rows for s in c.sessions for lk in s.links]


def _status(app: AmqpTui) -> str:
    return str(app.sub_title)


async def _watch_it_stream(src: Any, writer: Writer, name: str) -> None:
    """The connection and its link show while the writer holds the pipe open; once it
    closed it, every delivery shows and the status says the capture ended."""
    app = AmqpTui(src)
    async with app.run_test(size=(140, 44)) as pilot:
        await until(app, pilot, lambda: bool(_links(app)))
        assert not writer.closed.is_set()  # (it waits for `go`)
        assert [c.key for c in app.conn_tree.conn_rows] == ["c1"]
        assert _status(app).startswith(f"streaming from {name}: ")
        assert "capture ended" not in _status(app)
        assert app.replay_bar is None and not app.check_action("play", ())
        writer.go.set()
        await until(app, pilot, lambda: "capture ended" in _status(app))
        assert writer.closed.is_set() and writer.error is None
        app.pull()
        assert [lk.deliveries for lk in _links(app)] == [N]
        assert _status(app).startswith(f"{name}: capture ended: ")
        assert "1 connection(s)" in _status(app)
        assert app.failed is None
        await pilot.press("q")


def test_a_named_pipe_is_shown_as_it_is_written(built: list[Any], tmp_path: Path) -> None:
    script = basic(N)
    first, rest = capture_parts(tmp_path, script, up_to_the_link(script))
    fifo = tmp_path / "capture.fifo"
    os.mkfifo(fifo)
    writer = Writer(lambda: open(fifo, "wb", buffering=0), [first, rest]).start()  # noqa: SIM115
    try:
        main(["tui", "--pcap", str(fifo)])
        (src,) = built
        asyncio.run(_watch_it_stream(src, writer, str(fifo)))
    finally:
        writer.finish(fifo)
    assert src._thread is not None
    src._thread.join(10)
    assert not src._thread.is_alive()


@pytest.fixture
def stdin_pipe(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """A pipe standing for standard input: its read end is what `amqp tui --pcap -` takes
    from standard input (the terminal left in its place is the command's business)."""
    r, w = os.pipe()
    ends = {fd: os.fstat(fd).st_ino for fd in (r, w)}
    # (raising=False: without it, the old command said "-: no such file")
    monkeypatch.setattr("amqpcli.cli.tui.stdin_capture", lambda: r, raising=False)
    yield r, w
    for fd, ino in ends.items():  # the ends the test and the source did not close
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_ino == ino:  # (not a descriptor that took its number)
                os.close(fd)


def test_standard_input_is_shown_as_it_is_written(built: list[Any], tmp_path: Path,
                                                  stdin_pipe: tuple[int, int]) -> None:
    script = basic(N)
    first, rest = capture_parts(tmp_path, script, up_to_the_link(script))
    _r, w = stdin_pipe
    writer = Writer(lambda: open(w, "wb", buffering=0), [first, rest]).start()  # noqa: SIM115
    try:
        main(["tui", "--pcap", "-"])
        (src,) = built
        asyncio.run(_watch_it_stream(src, writer, "standard input"))
    finally:
        writer.finish()


def _headless(seen: list[str], done: Callable[[AmqpTui], bool]) -> Callable[..., None]:
    """`run` for the command: the app headless until `done`, its status kept, then q; the
    command then ends as the app did (`exit_as`)."""
    def run(source: Any, **kw: Any) -> None:
        app = AmqpTui(source)

        async def go() -> None:
            async with app.run_test(size=(140, 44)) as pilot:
                await until(app, pilot, lambda: done(app))
                seen.append(_status(app))
                await pilot.press("q")
        asyncio.run(go())
        exit_as(app)
    return run


def test_garbage_on_the_pipe_is_a_message_then_exit_8(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        stdin_pipe: tuple[int, int]) -> None:
    _r, w = stdin_pipe
    os.write(w, b"hello, this is not a capture\n")
    os.close(w)
    seen: list[str] = []
    monkeypatch.setattr("amqpcli.tui.app.run", _headless(seen, lambda app: app.failed is not None))
    with pytest.raises(SystemExit) as e:
        main(["tui", "--pcap", "-"])
    # (as pcap-dump says it of text: neither a capture nor a frame-trace log)
    assert seen == [("standard input: not a capture file or frame-trace log: text with no "
                     "frame line in its first 200 lines")]
    err = capsys.readouterr().err
    assert e.value.code == 8
    assert err == f"amqp: error: {seen[0]}\n"  # one line, no traceback


def test_a_capture_cut_short_keeps_what_was_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stdin_pipe: tuple[int, int]) -> None:
    script = basic(N)
    first, rest = capture_parts(tmp_path, script, up_to_the_link(script))
    _r, w = stdin_pipe
    os.write(w, first + rest[:40])  # the writer died inside a block
    os.close(w)
    seen: list[str] = []
    notices: list[str] = []
    monkeypatch.setattr("amqpcli.tui.app.AmqpTui.say",
                        lambda self, text, severity="information", timeout=None:
                        notices.append(text))
    monkeypatch.setattr("amqpcli.tui.app.run",
                        _headless(seen, lambda app: "capture ended" in _status(app)
                                  and bool(_links(app))))
    main(["tui", "--pcap", "-"])  # exits 0: frames were read, as for a damaged file
    (status,) = seen
    assert status.startswith("standard input: capture ended, damaged: ")
    assert any("truncated pcapng file" in n and "what could be read is shown" in n
               for n in notices), notices


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
@pytest.mark.parametrize("writer_opens", [False, True], ids=["no writer", "silent writer"])
def test_quitting_while_nothing_comes(tmp_path: Path, key: str, writer_opens: bool) -> None:
    """No writer yet (the pipe's open would block), or one that writes nothing: the keys
    quit at once and the reading thread ends with the app."""
    from amqpcli.tui.sources.pipe import PipeSource

    fifo = tmp_path / "capture.fifo"
    os.mkfifo(fifo)
    src = PipeSource(str(fifo))
    writer = (Writer(lambda: open(fifo, "wb", buffering=0), [b"", b""])  # noqa: SIM115
              if writer_opens else None)

    async def run() -> int | None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await until(app, pilot, lambda: src._thread is not None)
            if writer is not None:
                writer.start()
                await until(app, pilot, writer.opened.is_set)
            assert "waiting for the capture" in _status(app)
            await pilot.press(key)
        return app.return_code

    try:
        code = asyncio.run(run())
    finally:
        if writer is not None:
            writer.finish(fifo)
    assert code == (TERMINATED if key == "ctrl+c" else 0)
    assert src._thread is not None
    src._thread.join(10)
    assert not src._thread.is_alive()
    assert src.error is None


@pytest.mark.parametrize("option", [["--play"], ["--speed", "2"]])
def test_replay_options_are_refused_for_a_pipe(built: list[Any], option: list[str],
                                               capsys: pytest.CaptureFixture[str],
                                               stdin_pipe: tuple[int, int]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["tui", "--pcap", "-", *option])
    assert e.value.code == 2 and built == []
    assert capsys.readouterr().err == (f"amqp: error: {option[0]} replays a capture file; "
                                       "standard input is shown as it is written\n")


def test_standard_input_without_a_terminal_for_the_keys() -> None:
    """The capture on standard input, the keys from the terminal: without one (no
    controlling terminal), a one-line error before the screen."""
    p = subprocess.run([sys.executable, "-m", "amqpcli", "tui", "--pcap", "-"],
                       input=b"", capture_output=True, timeout=60, check=False,
                       start_new_session=True)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert err.startswith("amqp: error: --pcap -: the keys are read from the terminal while "
                          "standard input carries the capture, and there is none")
    assert err.count("\n") == 1 and p.stdout == b""


def test_a_device_that_is_also_standard_input_is_read_as_named() -> None:
    """`--pcap /dev/null` with standard input from /dev/null: the device named, not `-`
    (which it was taken for, and refused as standard input without a terminal)."""
    p = subprocess.run([sys.executable, "-m", "amqpcli", "tui", "--pcap", "/dev/null"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
                       start_new_session=True)
    assert p.stderr.decode() == ("amqp: error: /dev/null: not a capture file or frame-trace "
                                 "log: empty\n")  # (as pcap-dump says it)
    assert p.returncode == 8 and p.stdout == b""


@pytest.fixture
def stdin_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[bytes], None]:
    """A regular file standing for standard input (`amqp tui --pcap - < FILE`)."""
    def use(data: bytes) -> None:
        path = tmp_path / "redirected.pcapng"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        monkeypatch.setattr("amqpcli.cli.tui.stdin_capture", lambda: fd)
    return use


def test_a_file_redirected_into_standard_input_is_replayed(
        built: list[Any], tmp_path: Path, stdin_file: Callable[[bytes], None]) -> None:
    """The file is whole: replayed as the file named would be (its frames all there, the
    replay options taken), not followed as a pipe still being written."""
    from amqpcli.tui.sources.replay import ReplaySource

    stdin_file(write(tmp_path / "whole.pcapng", basic(N)).read_bytes())
    main(["tui", "--pcap", "-", "--play", "--speed", "2"])
    (src,) = built
    assert isinstance(src, ReplaySource)
    assert src.title == "replay standard input" and src.autoplay and src.speed == 2
    src.load()
    named = ReplaySource(write(tmp_path / "named.pcapng", basic(N)))
    named.load()
    assert src.loaded is not None and named.loaded is not None
    assert len(src.loaded.records) == len(named.loaded.records) > N


def test_a_damaged_file_on_standard_input_is_named_as_pcap_dump_names_it(
        built: list[Any], tmp_path: Path, stdin_file: Callable[[bytes], None],
        capsys: pytest.CaptureFixture[str]) -> None:
    stdin_file(b"\x57\x08\xb8\x9a" + bytes(40))
    with pytest.raises(SystemExit) as e:
        main(["tui", "--pcap", "-"])
    assert e.value.code == 8 and built == []
    err = capsys.readouterr().err
    assert err.startswith("amqp: error: <stdin>: not a capture file") and err.count("\n") == 1
