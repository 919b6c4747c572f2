"""The TUI's terminal going away (`tmux kill-session`, a closed window): the app ends
(exit 130, as after SIGHUP) instead of hanging for good in a write to the dead terminal.

A hang-up makes writes to the terminal fail (EIO) and sends the session leader SIGHUP and
SIGCONT. Textual's output thread died at the first failed write and every later write
filled its 30-slot queue, which nobody emptied: the write that found it full (or the
driver's close) waited for ever. Its SIGCONT handler started the application mode again
(16 more writes), which left room for just one screen update."""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from textual.drivers._writer_thread import WriterThread

from amqpcli.tui.terminal import TerminalOutput
from tests.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"
HANG_GUARD = 20.0  # seconds: far longer than a clean exit takes on a loaded machine
ALT_SCREEN = b"\x1b[?1049h"  # what the app writes as its application mode starts


class Tui:
    """`amqp tui --pcap EXAMPLE` in a terminal of its own (a pty), as its session leader."""

    def __init__(self, pid: int, master: int) -> None:
        self.pid = pid
        self.master = master
        self.output = b""
        self.ended = False

        self.hung_up = False  # the test closed the terminal

    def read(self, wait: float) -> None:
        """What the app wrote (read as it comes: a terminal nobody reads blocks its writer)."""
        ready, _, _ = select.select([self.master], [], [], wait)
        if ready:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:  # (EIO: the app has closed its side)
                time.sleep(wait)

    def read_until(self, text: bytes) -> None:
        deadline = time.monotonic() + HANG_GUARD * 3
        while text not in self.output:
            assert time.monotonic() < deadline, self.output[-500:]
            self.read(0.5)

    def hang_up(self) -> None:
        os.close(self.master)
        self.hung_up = True

    def exit_code(self) -> int:
        """Its exit status; fails if it does not end within the hang guard."""
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.ended = True
                return os.waitstatus_to_exitcode(status)
            if self.hung_up:
                time.sleep(0.05)
            else:
                self.read(0.05)
        raise AssertionError(f"the TUI still runs {HANG_GUARD:.0f} s after its terminal went")


@contextmanager
def tui_in_a_terminal() -> Iterator[Tui]:
    pid, master = pty.fork()
    if pid == 0:  # the child: the TUI, whose terminal is the pty
        try:
            os.chdir(REPO_ROOT)
            env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
            env.update(TERM="xterm-256color", NO_COLOR="1", PYTHONPATH=str(REPO_ROOT))
            os.execve(sys.executable, [sys.executable, "-m", "amqpcli", "tui", "--pcap",
                                       str(EXAMPLE)], env)
        finally:
            os._exit(127)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    tui = Tui(pid, master)
    try:
        yield tui
    finally:
        if not tui.hung_up:
            os.close(master)
        if not tui.ended:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def test_the_tui_ends_when_its_terminal_goes() -> None:
    with tui_in_a_terminal() as tui:
        tui.read_until(b"frame 0/")  # the replay bar: the app runs
        tui.hang_up()  # SIGHUP and SIGCONT for the app, and its writes fail
        assert tui.exit_code() == 130


def test_a_sigcont_without_a_suspend_resumes_nothing() -> None:
    """A SIGCONT with no suspend before it (the hang-up's, timeout(1)'s, `kill -CONT`)
    started the application mode again: new output and input threads, and the terminal
    set up a second time."""
    with tui_in_a_terminal() as tui:
        tui.read_until(b"frame 0/")
        os.kill(tui.pid, signal.SIGCONT)
        # (the key is read after the signal is handled: the help screen shows it was)
        os.write(tui.master, b"?")
        tui.read_until(b"q quits")
        os.write(tui.master, b"q")
        assert tui.exit_code() == 0
        assert tui.output.count(ALT_SCREEN) == 1


def test_output_to_a_terminal_gone_is_dropped_not_queued_for_ever() -> None:
    """Past the first write that fails, the output thread lives on and takes every
    write: none waits for room in its queue, nor does its stop."""

    class HungUp:
        def write(self, text: str) -> int:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        def flush(self) -> None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    writer = WriterThread(TerminalOutput(HungUp()))  # type: ignore[arg-type]
    writer.start()
    done = threading.Event()

    def write_then_stop() -> None:
        for i in range(100):  # more than the queue holds
            writer.write(f"frame {i}")
        writer.stop()
        done.set()

    threading.Thread(target=write_then_stop, daemon=True).start()
    assert done.wait(HANG_GUARD), "a write to the hung-up terminal waits for ever"


def test_a_suspend_is_carried_out_from_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTSTP's handler runs on the main thread wherever it was, perhaps inside a write
    to the output thread's queue: suspending there (the suspend writes to that queue too)
    waited for ever on the queue's lock. The handler only schedules the suspend."""
    from amqpcli.tui.terminal import TerminalDriver

    scheduled: list[object] = []
    done: list[str] = []

    class Loop:
        def call_soon_threadsafe(self, callback: object, *args: object) -> None:
            scheduled.append(callback)

    driver = object.__new__(TerminalDriver)
    driver._loop = Loop()  # type: ignore[assignment]
    driver._suspended = False
    driver._auto_restart = True
    monkeypatch.setattr(driver, "suspend_application_mode", lambda: done.append("suspend"))
    monkeypatch.setattr(os, "kill", lambda pid, sig: done.append(f"kill {sig}"))
    driver._sigtstp_application(signal.SIGTSTP, None)
    assert done == [] and len(scheduled) == 1  # nothing written from the handler
    scheduled[0]()  # type: ignore[operator]
    assert done == ["suspend", f"kill {signal.SIGSTOP}"]
    assert driver._suspended
