"""The observer role: one model fed by both directions of a conversation.

Used by `pcap-dump`, the proxy and the TUI. It never produces frames. Feed it decoded
items (`feed`) or raw bytes per direction (`feed_bytes`, which runs one frame reader per
side; `read` also hands back each item with its events); each call returns the events the
input caused. A stream that ends inside a frame whose start is sound cut it short
(`CutShort`, the codec's judgement): no frame error.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.frames import Frame, FrameError, FrameReader, ProtocolHeader
from amqpcli.codec.framestart import CutShort

from .connection import Connection
from .events import Event

# Violations that frames a capture lost (a TCP gap) can explain: the frames that would
# have made them right (an attach, a flow, a transfer) may be the ones lost.
GAP_KINDS = frozenset(("unknown-delivery", "unknown-handle", "unknown-channel",
                       "transfer-mismatch", "delivery-id-in-use", "transfer-beyond-window",
                       "transfer-beyond-credit", "already-settled", "out-of-order"))


def explained_by_gap(kind: str, gaps: int) -> bool:
    """Whether a violation of `kind` on a connection whose capture has lost bytes `gaps`
    times so far (either direction) is one the lost frames can explain: then it is an
    `after-gap` notice, not a violation. The one rule for every view of a capture
    (`pcap-dump`, the TUI)."""
    return gaps > 0 and kind in GAP_KINDS


class Observer:
    """Watches one connection from the outside: `feed(side, item, time) -> events`."""

    def __init__(self, sides: tuple[str, str] = ("client", "server"), *,
                 keep_payload: bool = True, midstream: bool = False,
                 updates: bool = True, settled: bool = True) -> None:
        self.connection = Connection(sides, keep_payload=keep_payload, midstream=midstream)
        # updates=False: no DeliveryUpdated events (each step of a delivery), for callers
        # that look at deliveries only when they settle (DeliverySettled, the timeline);
        # settled=False: no DeliverySettled events either, for callers that only count
        # deliveries (DeliveryStarted) and read the model
        self.connection.updates = updates
        self.connection.settled_events = settled
        self._readers: dict[str, FrameReader] = {s: FrameReader() for s in sides}

    @property
    def sides(self) -> tuple[str, str]:
        return self.connection.sides

    def feed(self, side: str, item: Any, time: float) -> list[Event]:
        """One item from the frame reader: a `Frame`, `ProtocolHeader` or `FrameError`,
        or at the end of the stream the `CutShort` of a frame it cut."""
        conn = self.connection
        if isinstance(item, Frame):
            return conn.on_frame(side, item, time)
        if isinstance(item, ProtocolHeader):
            return conn.on_header(side, item, time)
        if isinstance(item, FrameError):
            return conn.on_frame_error(side, str(item), time)
        if isinstance(item, CutShort):
            return self._cut_short(side, item, time)
        raise TypeError(f"cannot feed {type(item).__name__} to the observer")

    def _cut_short(self, side: str, cut: CutShort, time: float) -> list[Event]:
        """The end of the stream from `side` cut a frame short: no error (its sender went
        away, or the capture stopped), but a frame larger than its receiver's
        max-frame-size is a violation, cut or not: the size is wrong."""
        conn = self.connection
        receiver = conn.other[side]
        if cut.header or cut.size is None or receiver not in conn.open:
            return []
        limit = conn.max_frame_size(receiver)
        if cut.size <= limit:
            return []
        return conn.on_frame_error(side, f"{cut.size}-byte frame > max-frame-size {limit}",
                                   time, kind="frame-too-large")

    def feed_bytes(self, side: str, data: bytes | bytearray | memoryview,
                   time: float) -> list[Event]:
        """Raw bytes from one direction (any split); returns the events they caused."""
        out: list[Event] = []
        for item in self._readers[side].feed(data):
            out.extend(self.feed(side, item, time))
        return out

    def read(self, side: str, data: bytes | bytearray | memoryview,
             time: float) -> list[tuple[Any, list[Event]]]:
        """As `feed_bytes`, keeping each item of the frame reader with the events it
        caused: for callers that show frames as well as the model (the proxy)."""
        feed = self.feed
        return [(item, feed(side, item, time)) for item in self._readers[side].feed(data)]

    def read_tail(self, side: str, time: float) -> list[tuple[Any, list[Event]]]:
        """The stream from `side` ended: what its frame reader still held, each item with
        its events: the `CutShort` of a frame whose start is sound, or the frame error of
        bytes that cannot start one. `transport_closed` then reports the end."""
        errors, cut = self._readers[side].close_stream()
        items: list[Any] = [cut] if cut is not None else errors
        return [(item, self.feed(side, item, time)) for item in items]

    def transport_closed(self, side: str, time: float, how: str = "") -> list[Event]:
        """The stream from `side` ended (`how`: "fin", "rst", "reset-by-peer", "end" of
        a capture, or ""): what its frame reader still held (`read_tail`), then
        `TransportClosed` (deliveries still unsettled if no close was exchanged are
        abandoned; `Connection.lost` says whether the connection ended without its closes)."""
        out = [e for _item, events in self.read_tail(side, time) for e in events]
        out.extend(self.connection.on_transport_closed(side, time, how))
        return out

    def close(self, time: float) -> list[Event]:
        """End of both streams (end of a capture)."""
        out: list[Event] = []
        for side in self.sides:
            out.extend(self.transport_closed(side, time, "end"))
        return out
