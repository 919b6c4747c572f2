"""Bytes of one direction of a 0-10 connection in, protocol header and assemblies out."""

from __future__ import annotations

from dataclasses import dataclass

from amqpcli.amqp010.errors import DecodeError
from amqpcli.amqp010.frames import (
    Assembler,
    Assembly,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
)


@dataclass(frozen=True, slots=True)
class StreamError:
    """Decoding of this direction stopped here."""

    error: DecodeError

    @property
    def offset(self) -> int:
        return self.error.offset


Item = ProtocolHeader | Assembly | StreamError


class StreamDecoder:
    """Incremental: `feed(data)` returns the items completed by `data`, `close()` the error
    for a truncated tail. After an error nothing more is returned. `frames` collects every
    frame read when `keep_frames` is set (for frame-by-frame views); `frames_read` counts
    the frames read so far, and an assembly's `last_frame` is that count at its last frame."""

    def __init__(self, expect_header: bool = True, keep_frames: bool = False) -> None:
        self._reader = FrameReader(expect_header)
        self._asm = Assembler()
        self._broken = False
        self.keep_frames = keep_frames
        self.frames: list[Frame] = []

    @property
    def frames_read(self) -> int:
        return self._asm.frames

    def feed(self, data: bytes | bytearray | memoryview, time: float | None = None
             ) -> list[Item]:
        """`time`: when `data` came; an assembly's `first_time` is that of its first frame."""
        if self._broken:
            return []
        out: list[Item] = []
        for item in self._reader.feed(data):
            if isinstance(item, FrameError):
                self._broken = True
                out.append(StreamError(item.error))
                break
            if isinstance(item, ProtocolHeader):
                out.append(item)
                continue
            if self.keep_frames:
                self.frames.append(item)
            try:
                asm = self._asm.push(item, time)
            except DecodeError as e:
                self._broken = True
                out.append(StreamError(e))
                break
            if asm is not None:
                out.append(asm)
        return out

    def close(self) -> list[Item]:
        if self._broken:
            return []
        return [StreamError(e.error) for e in self._reader.close()]


def decode_stream(data: bytes | bytearray | memoryview, expect_header: bool = True
                  ) -> list[ProtocolHeader | Assembly]:
    """Everything in one direction's bytes; raises DecodeError at the first fault."""
    dec = StreamDecoder(expect_header)
    items = dec.feed(data) + dec.close()
    out: list[ProtocolHeader | Assembly] = []
    for item in items:
        if isinstance(item, StreamError):
            raise item.error
        out.append(item)
    return out
