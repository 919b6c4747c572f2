"""The terminal driver of the app: Textual's own (Linux, macOS), safe when the terminal goes.

When its terminal goes away (`tmux kill-session`, a closed window, a dropped ssh), the
kernel hangs it up: writes to it fail (EIO), and the session leader gets SIGHUP and then
SIGCONT. With Textual's driver as it is, that could hang the app for good:

* its output thread dies at the first write that fails, and everything written after
  goes into that thread's bounded queue (30 writes), which nobody empties any more: the
  write that finds it full, or the driver's close that queues its end, waits for ever;
* its SIGCONT handler starts the application mode again as if after a suspend (a new
  output thread, a second input thread, some 16 writes), so the hang-up alone leaves
  room for one screen update before the queue is full.

`TerminalDriver` writes through `TerminalOutput`, which drops what cannot be written
once the terminal is gone (the output thread lives on and empties its queue), and
resumes on SIGCONT only after a suspend (SIGTSTP), which it carries out from the event
loop rather than inside the signal handler (where it could wait for a lock the
interrupted main thread holds). The app then ends on the SIGHUP (`AmqpTui.on_load`).
"""

from __future__ import annotations

from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver


class TerminalOutput:
    """The driver's output file: what the terminal no longer takes (a hung-up terminal's
    EIO, a closed one) is dropped, not raised into the output thread."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file
        self.lost = False  # a write failed: the terminal is gone

    def write(self, text: str) -> None:
        if self.lost:
            return
        try:
            self.file.write(text)
        except (OSError, ValueError):  # (ValueError: the file was closed)
            self.lost = True

    def flush(self) -> None:
        if self.lost:
            return
        try:
            self.file.flush()
        except (OSError, ValueError):
            self.lost = True

    def fileno(self) -> int:
        return self.file.fileno()

    def isatty(self) -> bool:
        return self.file.isatty()


class TerminalDriver(LinuxDriver):
    """Textual's driver for a POSIX terminal, whose output survives the terminal's loss and
    which resumes on SIGCONT only after a suspend (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._suspended = False  # (before the signal handlers are installed)
        super().__init__(*args, **kwargs)
        if self._file is not None:  # (None: started without a standard error)
            self._file = TerminalOutput(self._file)  # type: ignore[assignment]

    def _sigtstp_application(self, *args: Any) -> None:
        # Suspended from the event loop, not in the signal handler: the handler runs on
        # the main thread wherever it was, perhaps inside a write to the output thread's
        # queue, whose lock the suspend's own writes would then wait for, for ever.
        try:
            self._loop.call_soon_threadsafe(self._suspend, *args)
        except RuntimeError:  # (the loop is closed: the app is ending, nothing to suspend)
            pass

    def _suspend(self, *args: Any) -> None:
        self._suspended = True
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        # A SIGCONT with no suspend before it (the one a hang-up sends, timeout(1)'s after
        # its SIGTERM, a `kill -CONT`) has nothing to resume.
        if not self._suspended:
            return
        self._suspended = False
        super()._sigcont_application(*args)
