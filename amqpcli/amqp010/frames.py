"""0-10 framing: protocol header, frames, segments and assemblies.

A frame is a 12-octet header and a payload:

    octet 0   version (2 bits, 0) | reserved (2) | b e B E
              b/e: first/last segment of the assembly, B/E: first/last frame of the segment
    octet 1   segment type (0 control, 1 command, 2 header, 3 body)
    octet 2-3 frame size, header included
    octet 4   reserved
    octet 5   reserved (4 bits) | track (0 control, 1 command)
    octet 6-7 channel
    octet 8-11 reserved

Frames of one segment follow each other on one channel and track; an assembly is a control
or command segment, then for a command that carries a message an optional header segment
(struct32s) and an optional body segment. `FrameReader` turns bytes into frames;
`Assembler` turns frames into `Assembly` objects, keeping state per (channel, track).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from amqpcli.amqp010.codec import decode_header, decode_method, encode_header, encode_method
from amqpcli.amqp010.errors import DecodeError
from amqpcli.amqp010.model import Command, Control, Struct

PROTOCOL_HEADER = b"AMQP\x01\x01\x00\x0a"
FRAME_HEADER_SIZE = 12
MAX_FRAME_SIZE = 0xFFFF

SEGMENT_CONTROL, SEGMENT_COMMAND, SEGMENT_HEADER, SEGMENT_BODY = 0, 1, 2, 3
SEGMENT_NAMES = {0: "control", 1: "command", 2: "header", 3: "body"}
TRACK_CONTROL, TRACK_COMMAND = 0, 1

FIRST_SEGMENT, LAST_SEGMENT, FIRST_FRAME, LAST_FRAME = 0x08, 0x04, 0x02, 0x01

_HDR = struct.Struct(">BBHBBH4x")
_READ = struct.Struct(">BBHBBHI")  # with octets 8-11, which must be zero


def is_protocol_header(data: bytes) -> bool:
    """True when `data` starts with the 0-10 header `AMQP 1 1 0 10`."""
    return bytes(data[:8]) == PROTOCOL_HEADER


@dataclass(frozen=True, slots=True)
class ProtocolHeader:
    offset: int
    raw: bytes  # b"AMQP\x01\x01\x00\x0a"

    @property
    def version(self) -> tuple[int, int]:
        return self.raw[6], self.raw[7]


@dataclass(frozen=True, slots=True)
class Frame:
    offset: int  # of the frame header in the stream
    flags: int  # the b e B E bits
    type: int  # segment type
    size: int  # header included
    track: int
    channel: int
    payload: bytes

    @property
    def first_segment(self) -> bool:
        return bool(self.flags & FIRST_SEGMENT)

    @property
    def last_segment(self) -> bool:
        return bool(self.flags & LAST_SEGMENT)

    @property
    def first_frame(self) -> bool:
        return bool(self.flags & FIRST_FRAME)

    @property
    def last_frame(self) -> bool:
        return bool(self.flags & LAST_FRAME)


@dataclass(frozen=True, slots=True)
class FrameError:
    """The stream broke here; nothing after it can be framed."""

    error: DecodeError

    @property
    def offset(self) -> int:
        return self.error.offset


class FrameReader:
    """Incremental reader: `feed(data)` returns the protocol header and frames completed by
    `data`; `close()` reports a truncated tail. After an error it returns nothing more.

    `expect_header=False` reads a stream that starts at a frame boundary without the
    protocol header (a capture joined mid-stream)."""

    def __init__(self, expect_header: bool = True) -> None:
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._need_header = expect_header
        self._broken = False

    @property
    def offset(self) -> int:
        return self._base

    def feed(self, data: bytes | bytearray | memoryview) -> list[ProtocolHeader | Frame | FrameError]:
        if self._broken:
            return []
        self._buf += data
        out: list[ProtocolHeader | Frame | FrameError] = []
        buf, pos = self._buf, 0
        try:
            if self._need_header:
                if len(buf) < 8:
                    if bytes(buf) != PROTOCOL_HEADER[:len(buf)]:
                        raise DecodeError(self._base, "protocol header AMQP 1 1 0 10",
                                          bytes(buf).hex())
                    return out
                if bytes(buf[:8]) != PROTOCOL_HEADER:
                    raise DecodeError(self._base, "protocol header AMQP 1 1 0 10",
                                      bytes(buf[:8]).hex())
                out.append(ProtocolHeader(self._base, PROTOCOL_HEADER))
                self._need_header = False
                pos = 8
            while len(buf) - pos >= FRAME_HEADER_SIZE:
                f0, ftype, size, r4, track, channel, r8 = _READ.unpack_from(buf, pos)
                at = self._base + pos
                if f0 & 0xF0:
                    raise DecodeError(at, "frame format 0 and reserved bits 0",
                                      f"first octet 0x{f0:02x}")
                if ftype > 3:
                    raise DecodeError(at + 1, "segment type 0-3", str(ftype))
                if size < FRAME_HEADER_SIZE:
                    raise DecodeError(at + 2, "frame size >= 12", str(size))
                if r4:
                    raise DecodeError(at + 4, "reserved octet 4 zero", f"0x{r4:02x}")
                if track & 0xF0:  # the high 4 bits of octet 5 are reserved
                    raise DecodeError(at + 5, "reserved bits of octet 5 zero",
                                      f"0x{track:02x} (track {track & 0x0F}, reserved bits "
                                      f"0x{track & 0xF0:02x} set)")
                if track > 1:
                    raise DecodeError(at + 5, "track 0 or 1", str(track))
                if r8:
                    raise DecodeError(at + 8, "reserved octets 8-11 zero", f"0x{r8:08x}")
                if len(buf) - pos < size:
                    break
                out.append(Frame(at, f0 & 0x0F, ftype, size, track, channel,
                                 bytes(buf[pos + FRAME_HEADER_SIZE:pos + size])))
                pos += size
        except DecodeError as e:
            self._broken = True
            out.append(FrameError(e))
            return out
        del buf[:pos]
        self._base += pos
        return out

    def close(self) -> list[FrameError]:
        if self._broken or not self._buf:
            return []
        self._broken = True
        return [FrameError(DecodeError(self._base, "a complete frame",
                                       f"{len(self._buf)} octet(s) at end of stream"))]


@dataclass(slots=True)
class Assembly:
    """One control, or one command with its optional header and body segments."""

    offset: int  # stream offset of the first frame
    channel: int
    track: int
    method: Control | Command
    header: tuple[Struct, ...] = ()
    body: bytes | None = None  # None: no body segment
    frames: int = 1
    end_offset: int = 0  # stream offset just after the last frame
    header_size: int = 0  # octets of the header segment (byte credit counts them)
    last_frame: int = 0  # its last frame's number among the frames of its direction, from 1
    first_time: float | None = None  # when its first frame came (a time given to push)

    @property
    def is_command(self) -> bool:
        return isinstance(self.method, Command)

    def struct(self, qname: str) -> Struct | None:
        """The header struct named `qname` ("message.delivery-properties"), if present."""
        for s in self.header:
            if s.qname == qname:
                return s
        return None


@dataclass(slots=True)
class _Partial:
    # type, offset of its first frame, data, where each frame's payload sits in the stream
    segments: list[tuple[int, int, bytes, list[tuple[int, int]]]] = field(default_factory=list)
    seg_type: int = -1
    seg_offset: int = 0
    seg_data: bytearray = field(default_factory=bytearray)
    seg_chunks: list[tuple[int, int]] = field(default_factory=list)  # (data index, stream off)
    in_segment: bool = False
    first_offset: int = 0
    frames: int = 0
    first_time: float | None = None


class Assembler:
    """Frames in, assemblies out; state per (channel, track). Errors raise DecodeError.
    `frames` counts the frames pushed; an assembly's `last_frame` is that count when its
    last frame came (assemblies on other channels may take frames in between), its
    `first_time` the time pushed with its first frame."""

    def __init__(self) -> None:
        self._open: dict[tuple[int, int], _Partial] = {}
        self.frames = 0

    def push(self, frame: Frame, time: float | None = None) -> Assembly | None:
        self.frames += 1
        key = (frame.channel, frame.track)
        p = self._open.get(key)
        if p is None:
            if not (frame.first_segment and frame.first_frame):
                raise DecodeError(frame.offset, "the first frame of an assembly",
                                  f"flags 0x{frame.flags:x} on channel {frame.channel}")
            if frame.type not in (SEGMENT_CONTROL, SEGMENT_COMMAND):
                raise DecodeError(frame.offset + 1, "a control or command segment first",
                                  SEGMENT_NAMES[frame.type])
            p = self._open[key] = _Partial(first_offset=frame.offset, first_time=time)
        if not p.in_segment:
            if not frame.first_frame:
                raise DecodeError(frame.offset, "the first frame of a segment",
                                  f"flags 0x{frame.flags:x}")
            if p.segments and frame.first_segment:
                raise DecodeError(frame.offset, "the next segment of the open assembly",
                                  "a new assembly")
            p.in_segment, p.seg_type, p.seg_offset = True, frame.type, frame.offset
            p.seg_data = bytearray()
            p.seg_chunks = []
        elif frame.first_frame or frame.type != p.seg_type:
            raise DecodeError(frame.offset, f"a continuation of the {SEGMENT_NAMES[p.seg_type]}"
                              " segment", f"flags 0x{frame.flags:x} type {frame.type}")
        p.seg_chunks.append((len(p.seg_data), frame.offset + FRAME_HEADER_SIZE))
        p.seg_data += frame.payload
        p.frames += 1
        if not frame.last_frame:
            return None
        p.segments.append((p.seg_type, p.seg_offset, bytes(p.seg_data), p.seg_chunks))
        p.in_segment = False
        if not frame.last_segment:
            return None
        del self._open[key]
        return _decode_assembly(p, frame, self.frames)


def _in_stream(e: DecodeError, chunks: list[tuple[int, int]]) -> DecodeError:
    """The error with its offset in the segment's data turned into a stream offset."""
    start, at = next((c for c in reversed(chunks) if c[0] <= e.offset), chunks[0])
    return DecodeError(at + e.offset - start, e.expected, e.found)


def _decode_assembly(p: _Partial, last: Frame, last_no: int) -> Assembly:
    (mtype, moff, mdata, mchunks), *rest = p.segments
    try:
        method, _ = decode_method(mdata, 0, len(mdata), mtype == SEGMENT_COMMAND)
    except DecodeError as e:
        raise _in_stream(e, mchunks) from None
    if (mtype == SEGMENT_CONTROL) != (last.track == TRACK_CONTROL):
        raise DecodeError(moff + 5, f"track {'control' if mtype == 0 else 'command'}",
                          f"track {last.track}")
    asm = Assembly(p.first_offset, last.channel, last.track, method, frames=p.frames,
                   end_offset=last.offset + last.size, last_frame=last_no,
                   first_time=p.first_time)
    expect = [SEGMENT_HEADER, SEGMENT_BODY] if mtype == SEGMENT_COMMAND else []
    for stype, soff, data, chunks in rest:
        if stype not in expect:
            raise DecodeError(soff + 1, "header or body segment in order" if expect
                              else "end of control assembly", SEGMENT_NAMES[stype])
        expect = expect[expect.index(stype) + 1:]
        if stype == SEGMENT_HEADER:
            asm.header_size = len(data)
            try:
                asm.header, _ = decode_header(data, 0, len(data))
            except DecodeError as e:
                raise _in_stream(e, chunks) from None
        else:
            asm.body = data
    return asm


def encode_frames(seg_type: int, payload: bytes, channel: int, track: int,
                  first_segment: bool, last_segment: bool,
                  max_frame_size: int = MAX_FRAME_SIZE) -> bytes:
    """One segment as frames of at most `max_frame_size` octets."""
    room = max_frame_size - FRAME_HEADER_SIZE
    if room < 1:
        raise ValueError("max_frame_size must exceed the 12-octet frame header")
    chunks = [payload[i:i + room] for i in range(0, len(payload), room)] or [b""]
    out = bytearray()
    for i, chunk in enumerate(chunks):
        flags = ((FIRST_SEGMENT if first_segment else 0) | (LAST_SEGMENT if last_segment else 0)
                 | (FIRST_FRAME if i == 0 else 0) | (LAST_FRAME if i == len(chunks) - 1 else 0))
        out += _HDR.pack(flags, seg_type, FRAME_HEADER_SIZE + len(chunk), 0, track, channel)
        out += chunk
    return bytes(out)


def encode_assembly(method: Control | Command, channel: int = 0,
                    header: tuple[Struct, ...] | list[Struct] = (), body: bytes | None = None,
                    max_frame_size: int = MAX_FRAME_SIZE) -> bytes:
    """A control, or a command with optional header structs and body, as frames."""
    is_cmd = isinstance(method, Command)
    if not is_cmd and (header or body is not None):
        raise ValueError("controls carry no header or body")
    track = TRACK_COMMAND if is_cmd else TRACK_CONTROL
    segs: list[tuple[int, bytes]] = [(SEGMENT_COMMAND if is_cmd else SEGMENT_CONTROL,
                                      encode_method(method))]
    if header:
        segs.append((SEGMENT_HEADER, encode_header(tuple(header))))
    if body is not None:
        segs.append((SEGMENT_BODY, bytes(body)))
    return b"".join(
        encode_frames(t, data, channel, track, i == 0, i == len(segs) - 1, max_frame_size)
        for i, (t, data) in enumerate(segs)
    )
