"""Live capture as a TUI source: `amqp tui --live IFACE` (the capture package's live paths).

tshark (through pyshark) or, with `fast`, dumpcap piping pcapng into the capture reader,
runs in a thread of its own; frames are cut and fed to the observers as packets arrive,
under the source's lock. Live capture needs capture rights (root or the wireshark group);
a failure to start is shown as the source's one-line error.

The capture processes run in sessions of their own (`amqpcli.capture.live`): neither the
terminal's signals nor our exit end them. So `LiveSource.stop()` (the app calls it as it
quits, whatever ends it: q, Ctrl-C, SIGTERM, an error) ends them at once through the
capture's own `EndCapture` (as `amqp pcap-dump --live` ends its capture on Ctrl-C), with
no packet needed: ended, they close their output, the reading comes to its end, and the
capture's generator reaps them. `stop()` waits for the reading thread (`join_timeout`);
a stop while the capture is still starting ends each process as it starts.

`StreamingSource` is that reading loop, for any capture whose events come as they
happen: the live interface here, a pipe someone writes a capture into
(`amqpcli.tui.sources.pipe`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from amqpcli.errors import Exit, UserError
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.sources.base import Source
from amqpcli.tui.sources.framing import CaptureFramer
from amqpcli.tui.watch import KEEP_ENDED, ConnWatch, ConnWatch010, Watch

if TYPE_CHECKING:
    from amqpcli.capture.live import EndCapture
    from amqpcli.tui.app import AmqpTui


class StreamingSource(Source):
    """Capture events read in a thread of its own (`_events()`), cut into frames and fed
    to the model as they come, under the lock. The events' end calls `_ended()`; an
    exception ending them, `_failed()`. `stop()` ends the reading at the next event (or
    sooner, where `_events()` watches `_stop` itself)."""

    kind = "live"

    def __init__(self, *, ports: Collection[int] = (), history: int = 1000,
                 frames: int = 200_000, keep_ended: int = KEEP_ENDED) -> None:
        super().__init__(history=frames)
        self.ports = ports
        self.watch = Watch(history, keep_ended)
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.framer = CaptureFramer(self._add, self._note, ports, ended=self.watch.end)

    thread_name = "capture"

    def start(self, app: AmqpTui | None) -> None:  # type: ignore[override]
        self.app = app
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def _note(self, text: str) -> None:
        self._post(SourceNotice(text, "warning"))

    def _add(self, key: str, side: str, t: float, item: Any) -> None:
        # Called with the lock held (from `_run`).
        self.watch.labels.update(self.framer.labels)
        self.watch.amqp010.update(self.framer.amqp010)
        self.watch.untimed.update(self.framer.untimed)  # (a frame-trace log's, in a pipe)
        self.watch.cut.update(self.framer.cut)
        self.store.append(t, key, side, item)
        self.watch.conn(key).feed(side, item, t)

    def _events(self) -> Iterator[Any]:
        """The capture's events (`amqpcli.capture`), read in the source's thread."""
        raise NotImplementedError

    def _run(self) -> None:
        try:
            events = self._events()
            for ev in events:
                with self.lock:
                    self.framer.event(ev)
                if self._stop.is_set():
                    close = getattr(events, "close", None)  # a generator: stops the capture
                    if close is not None:
                        close()
                    return
        except Exception as e:  # noqa: BLE001 - worded by _failed, never a traceback
            self._failed(e)
            return
        self._ended()

    def _failed(self, e: Exception) -> None:
        """The reading ended with `e`: the source's one-line error (a bug of ours unless
        it is a `UserError`)."""
        error = e if isinstance(e, UserError) else UserError(
            str(e).splitlines()[0] if str(e) else type(e).__name__, Exit.FAILURE)
        self.error = str(error)
        self._post(SourceFailed(error))

    def _ended(self) -> None:
        """The capture's events ended (nothing to do for a live interface)."""

    def stop(self) -> None:
        self._stop.set()

    def connections(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        return self.watch.items()

    @property
    def untimed(self) -> Collection[str]:
        return self.watch.untimed


class LiveSource(StreamingSource):
    thread_name = "live-capture"
    # how long `stop()` waits for the reading thread: ended at once, the capture ends in
    # a moment, but a stop while tshark starts waits for its start (about a second per
    # step: it lists the interfaces twice, then starts dumpcap and tshark)
    join_timeout = 15.0

    def __init__(self, interface: str, *, ports: Collection[int] = (), bpf_filter: str = "tcp",
                 fast: bool = False, history: int = 1000, frames: int = 200_000,
                 keep_ended: int = KEEP_ENDED) -> None:
        super().__init__(ports=ports, history=history, frames=frames, keep_ended=keep_ended)
        self.interface = interface
        self.bpf_filter = bpf_filter
        self.fast = fast  # dumpcap into the file reader instead of tshark's dissection
        self.title = f"live {interface}"
        self._end_lock = threading.Lock()
        self._end_capture: EndCapture | None = None

    def _events(self) -> Iterator[Any]:
        from amqpcli.capture.live import dumpcap_capture, live_capture

        capture = dumpcap_capture if self.fast else live_capture
        return capture(self.interface, self.bpf_filter, ports=sorted(self.framer.ports),
                       on_capturing=self._capturing)

    def _capturing(self, end: EndCapture) -> None:
        """The capture's end (called in the reading thread, before its processes start);
        a `stop()` that came first ends it here."""
        with self._end_lock:
            self._end_capture = end
            stopped = self._stop.is_set()
        if stopped:
            end(now=True)

    def stop(self) -> None:
        """End the capture processes at once and wait until the reading thread has
        reaped them (see the module's docstring)."""
        with self._end_lock:
            self._stop.set()
            end = self._end_capture
        if end is not None:
            end(now=True)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.join_timeout)

    def _failed(self, e: Exception) -> None:
        if self._stop.is_set():
            return  # (ending: how the capture processes took their end does not matter)
        if not isinstance(e, UserError):  # tshark's failures arrive as many types (as
            # pcap-dump --live words them, and with its exit status)
            e = UserError(f"live capture on {self.interface} failed: {e}".splitlines()[0],
                          Exit.USAGE)
        self.error = str(e)
        self._post(SourceFailed(e))

    def status(self) -> str:
        if self.error:
            return self.error
        return f"live capture on {self.interface}: {self.watch.counts()}"
