"""Capture events (per-flow byte chunks) → frames, for the replay and live sources.

One frame reader per flow and direction. Flows that do not speak AMQP 1.0 (by their
protocol header, or by a port the user named) are skipped with a note. After bytes the
capture lost (a gap) frames cannot be located any more, so that direction stops, with a
note saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from amqpcli.codec.frames import FrameReader
from amqpcli.tui.watch import EndOfStream

SIDE = {0: "client", 1: "server"}  # capture Direction C2S / S2C

AddItem = Callable[[str, str, float, Any], None]  # (connection key, side, time, item)


class CaptureFramer:
    def __init__(self, add: AddItem, note: Callable[[str], None]) -> None:
        from amqpcli.capture import AMQP_1_0, AMQP_SASL, AMQP_TLS

        self.add = add
        self.note = note
        self.labels: dict[str, str] = {}
        self._wanted = {AMQP_1_0, AMQP_SASL, AMQP_TLS}
        self._readers: dict[tuple[int, int], FrameReader | None] = {}
        self._skipped: set[int] = set()

    def event(self, ev: Any) -> None:
        from amqpcli.capture import Closed, Data, Gap, Opened

        flow = ev.flow
        if isinstance(ev, Opened):
            if flow.protocol not in self._wanted and not flow.by_port:
                self._skipped.add(flow.index)
                self.note(f"flow {flow.describe()} speaks {flow.protocol}: not shown")
                return
            self.labels[f"c{flow.index}"] = flow.describe()
            return
        if flow.index in self._skipped:
            return
        key = f"c{flow.index}"
        d = int(ev.direction)
        rk = (flow.index, d)
        if isinstance(ev, Data):
            if rk not in self._readers:
                self._readers[rk] = FrameReader()
            reader = self._readers[rk]
            if reader is None:
                return
            t = ev.time_ns / 1e9
            for item in reader.feed(ev.data):
                self.add(key, SIDE[d], t, item)
        elif isinstance(ev, Gap):
            if self._readers.get(rk) is not None:
                self.note(f"{key} {SIDE[d]}: {ev.size} bytes missing from the capture; "
                          "later frames in that direction are not shown")
            self._readers[rk] = None
        elif isinstance(ev, Closed):
            reader = self._readers.get(rk)
            t = ev.time_ns / 1e9
            if reader is not None:
                for item in reader.close():
                    self.add(key, SIDE[d], t, item)
            self._readers[rk] = None
            if ev.how != "end":
                # FIN or RST: the connection really ended. The end of the capture is not
                # the end of the connection: what was pending then stays pending.
                self.add(key, SIDE[d], t, EndOfStream(ev.how))
