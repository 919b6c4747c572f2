"""Both directions of one 0-10 connection: timestamped byte chunks in, decoded items and
session-model events out. This is the entry point for captures and proxies; it only joins
`StreamDecoder` (one per side) to one `SessionObserver`."""

from __future__ import annotations

from dataclasses import dataclass, field

from amqpcli.amqp010.frames import Assembly, ProtocolHeader
from amqpcli.amqp010.session import CLIENT, SERVER, Event, SessionObserver
from amqpcli.amqp010.stream import StreamDecoder, StreamError


@dataclass(slots=True)
class Observed:
    """One item decoded from `side`'s bytes at `time`, with what the model made of it.
    `frame` (an assembly's): the number of its last frame on the connection, counting
    every frame on the wire from both sides in the order they came (0 for other items)."""

    time: float
    side: str
    item: ProtocolHeader | Assembly | StreamError
    events: list[Event] = field(default_factory=list)
    frame: int = 0


class ConnectionObserver:
    """`feed(side, data, time)` with side "client" (the initiator) or "server"."""

    def __init__(self, expect_header: bool = True) -> None:
        self.model = SessionObserver()
        self._decoders = {CLIENT: StreamDecoder(expect_header), SERVER: StreamDecoder(expect_header)}
        self.errors: dict[str, StreamError] = {}
        # per side, of the assemblies decoded: how many, and the frames that carried them
        self.assemblies = {CLIENT: 0, SERVER: 0}
        self.frames = {CLIENT: 0, SERVER: 0}
        # frames read from both sides, in the order they came (incomplete assemblies' too)
        self.wire_frames = 0

    def feed(self, side: str, data: bytes | bytearray | memoryview, time: float) -> list[Observed]:
        if side not in self._decoders:
            raise ValueError(f"side must be {CLIENT!r} or {SERVER!r}, not {side!r}")
        dec = self._decoders[side]
        before = dec.frames_read
        out: list[Observed] = []
        for item in dec.feed(data, time):
            obs = self._observe(side, item, time)
            if isinstance(item, Assembly):
                # the frames of this chunk come after every frame already read, either side
                obs.frame = self.wire_frames + item.last_frame - before
            out.append(obs)
        self.wire_frames += dec.frames_read - before
        return out

    def close(self, time: float) -> list[Observed]:
        """End of both streams: reports a truncated tail as a StreamError."""
        return [self._observe(side, item, time)
                for side, dec in self._decoders.items() for item in dec.close()]

    def _observe(self, side: str, item: ProtocolHeader | Assembly | StreamError,
                 time: float) -> Observed:
        obs = Observed(time, side, item)
        if isinstance(item, Assembly):
            self.assemblies[side] += 1
            self.frames[side] += item.frames
            obs.events = self.model.feed(item, time, side)
        elif isinstance(item, StreamError):
            self.errors[side] = item
        return obs
