"""Live capture as a TUI source: `amqp tui --live IFACE` (the capture package's live paths).

tshark (through pyshark) or, with `fast`, dumpcap piping pcapng into the capture reader,
runs in a thread of its own; frames are cut and fed to the observers as packets arrive,
under the source's lock. Live capture needs capture rights (root or the wireshark group);
a failure to start is shown as the source's one-line error. Stopping takes effect at the
next captured packet (the capture's iterator cannot be interrupted from outside); the
thread is a daemon, so it never holds up the program's exit.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from amqpcli.errors import UserError
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.sources.base import Source
from amqpcli.tui.sources.framing import CaptureFramer
from amqpcli.tui.watch import ConnWatch, ConnWatch010, Watch

if TYPE_CHECKING:
    from amqpcli.tui.app import AmqpTui


class LiveSource(Source):
    kind = "live"

    def __init__(self, interface: str, *, ports: Collection[int] = (), bpf_filter: str = "tcp",
                 fast: bool = False, history: int = 1000, frames: int = 200_000) -> None:
        super().__init__(history=frames)
        self.interface = interface
        self.ports = ports
        self.bpf_filter = bpf_filter
        self.fast = fast  # dumpcap into the file reader instead of tshark's dissection
        self.watch = Watch(history)
        self.error: str | None = None
        self.title = f"live {interface}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.framer = CaptureFramer(self._add, self._note, ports)

    def start(self, app: AmqpTui | None) -> None:  # type: ignore[override]
        self.app = app
        self._thread = threading.Thread(target=self._run, name="live-capture", daemon=True)
        self._thread.start()

    def _note(self, text: str) -> None:
        self._post(SourceNotice(text, "warning"))

    def _add(self, key: str, side: str, t: float, item: Any) -> None:
        # Called with the lock held (from `_run`).
        self.watch.labels.update(self.framer.labels)
        self.watch.amqp010.update(self.framer.amqp010)
        self.store.append(t, key, side, item)
        self.watch.conn(key).feed(side, item, t)

    def _run(self) -> None:
        from amqpcli.capture.live import dumpcap_capture, live_capture

        capture = dumpcap_capture if self.fast else live_capture
        try:
            events = capture(self.interface, self.bpf_filter, ports=sorted(self.framer.ports))
            for ev in events:
                with self.lock:
                    self.framer.event(ev)
                if self._stop.is_set():
                    close = getattr(events, "close", None)  # a generator: stops the capture
                    if close is not None:
                        close()
                    break
        except UserError as e:
            self.error = str(e)
            self._post(SourceFailed(self.error))
        except Exception as e:  # noqa: BLE001 - tshark's failures arrive as many types
            self.error = f"live capture on {self.interface} failed: {e}".splitlines()[0]
            self._post(SourceFailed(self.error))

    def stop(self) -> None:
        self._stop.set()

    def connections(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        return self.watch.items()

    def status(self) -> str:
        if self.error:
            return self.error
        return f"live capture on {self.interface}: {len(self.watch.conns)} connection(s)"
