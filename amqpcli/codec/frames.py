"""Incremental AMQP 1.0 frame reader (Part 2 §2.3) and protocol header recognition.

Theory of operation: `FrameReader.feed(data)` takes bytes in any split and returns the
items completed so far: `ProtocolHeader`, `Frame` and `FrameError`. A protocol header may
appear at any frame boundary (a SASL layer is followed by a fresh AMQP header). A frame
whose header is sane but whose body does not decode is reported as a `FrameError` and the
reader carries on with the next frame, because the frame size says where that is. A frame
header that cannot be trusted (size below 8, above max-frame-size) stops the reader: from
there on nothing in the stream can be located, so the rest is ignored.

The limit can change as the connection goes on: an endpoint reads with MIN-MAX-FRAME-SIZE
(512) until the open frames are exchanged and with its own max-frame-size after
(`set_max_frame_size`, `limit_after_open`: the switch at the open frame itself, so that
frames after an open in the same read are held to the new limit).

After a header for a protocol this reader does not decode (TLS, AMQP 0-10, 0-9-1, 0-8, an
unknown version) the rest of the stream is opaque: it is counted, not parsed.

A declared size larger than what has arrived never allocates: the reader keeps only the
bytes it was given and waits for more.
"""

from __future__ import annotations

from operator import itemgetter
from struct import Struct
from struct import error as struct_error
from typing import Any

from amqpcli.codec.composites import (
    Accepted,
    Disposition,
    Modified,
    Open,
    Rejected,
    Released,
    Transfer,
)
from amqpcli.codec.framestart import CutShort, cut_short
from amqpcli.codec.types import Composite, DecodeError, Described, UByte, UInt, key_value

__all__ = [
    "AMQP_HEADER",
    "FRAME_TYPE_AMQP",
    "FRAME_TYPE_SASL",
    "SASL_HEADER",
    "TLS_HEADER",
    "Frame",
    "FrameError",
    "FrameReader",
    "ProtocolHeader",
    "encode_frame",
    "encode_protocol_header",
    "parse_protocol_header",
]

FRAME_TYPE_AMQP = 0
FRAME_TYPE_SASL = 1

AMQP_HEADER = b"AMQP\x00\x01\x00\x00"
SASL_HEADER = b"AMQP\x03\x01\x00\x00"
TLS_HEADER = b"AMQP\x02\x01\x00\x00"

_HEADER = Struct(">IBBH")
_unpack_header = _HEADER.unpack_from
_pack_header = _HEADER.pack_into
_AMQP_MAGIC = 0x414D5150  # b"AMQP" read as a frame size: a header, never a real frame
_MAX_SIZE = 0xFFFFFFFF

# Performative descriptor codes allowed in each frame type.
_AMQP_CODES = frozenset(range(0x10, 0x19))
_SASL_CODES = frozenset(range(0x40, 0x45))

# (id, major, minor, revision) → (kind, readable name). `kind` is what callers switch on.
_KNOWN_HEADERS: dict[tuple[int, int, int, int], tuple[str, str]] = {
    (0, 1, 0, 0): ("amqp", "AMQP 1.0"),
    (3, 1, 0, 0): ("sasl", "AMQP 1.0 SASL"),
    (2, 1, 0, 0): ("tls", "AMQP 1.0 TLS"),
    (1, 1, 0, 10): ("amqp0-10", "AMQP 0-10"),
    (0, 0, 9, 1): ("amqp0-9-1", "AMQP 0-9-1"),
    (1, 1, 9, 1): ("amqp0-9-1", "AMQP 0-9-1 (pre-standard header)"),
    (1, 1, 0, 9): ("amqp0-9", "AMQP 0-9"),
    (1, 1, 8, 0): ("amqp0-8", "AMQP 0-8"),
}

# Header kinds after which the stream is still AMQP 1.0 frames.
_FRAMED_KINDS = frozenset(("amqp", "sasl"))


class ProtocolHeader:
    """The 8-byte protocol header `AMQP` id major minor revision, at `offset` in the stream."""

    __slots__ = ("kind", "name", "offset", "raw")

    def __init__(self, offset: int, raw: bytes) -> None:
        self.offset = offset
        self.raw = bytes(raw)
        self.kind, self.name = _KNOWN_HEADERS.get(
            self.version, ("unknown", "AMQP unknown version {}.{}.{}.{}".format(*self.version))
        )

    @property
    def version(self) -> tuple[int, int, int, int]:
        """(protocol id, major, minor, revision): the four bytes after `AMQP`."""
        r = self.raw
        return (r[4], r[5], r[6], r[7])

    @property
    def is_amqp10(self) -> bool:
        """True for the three AMQP 1.0 headers (AMQP, SASL, TLS)."""
        return self.kind in ("amqp", "sasl", "tls")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ProtocolHeader)
            and other.offset == self.offset
            and other.raw == self.raw
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ProtocolHeader(offset={self.offset}, {self.name})"


class Frame:
    """One AMQP 1.0 frame.

    `body` is the decoded performative (a composite), or None for an empty frame (a
    heartbeat). `payload` holds the bytes after the performative: a transfer's message
    bytes, kept undecoded.
    """

    __slots__ = ("body", "channel", "doff", "ext", "offset", "payload", "size", "type")

    def __init__(
        self,
        offset: int,
        size: int,
        doff: int,
        type: int,
        channel: int,
        ext: bytes,
        body: Composite | None,
        payload: bytes,
    ) -> None:
        self.offset = offset
        self.size = size
        self.doff = doff
        self.type = type
        self.channel = channel
        self.ext = ext
        self.body = body
        self.payload = payload

    @property
    def is_heartbeat(self) -> bool:
        return self.body is None

    @property
    def name(self) -> str:
        """The performative's spec name ("transfer"), or "heartbeat"."""
        return "heartbeat" if self.body is None else self.body.NAME

    def encode(self) -> bytes:
        """The frame's bytes (identical to the input for a frame decoded unchanged)."""
        return encode_frame(self.body, self.channel, self.payload, self.type, self.ext)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Frame):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in Frame.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Frame(offset={self.offset}, size={self.size}, type={self.type}, "
            f"channel={self.channel}, body={self.body!r}, payload={len(self.payload)} bytes)"
        )


class FrameError(Exception):
    """Bytes that are not a valid frame: where, what was expected, what was found.

    Returned as an item by the reader (not raised). `frame_offset` is the offset of the
    frame the error is in (None when it is outside any frame); `fatal` says the reader
    could not go on past it; `limit` is the reader's size limit when the frame announced
    a larger size (None for every other error).
    """

    def __init__(
        self,
        offset: int,
        expected: str,
        found: str,
        frame_offset: int | None = None,
        fatal: bool = False,
        channel: int | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(offset, expected, found)
        self.offset = offset
        self.expected = expected
        self.found = found
        self.frame_offset = frame_offset
        self.fatal = fatal
        self.channel = channel
        self.limit = limit

    def __str__(self) -> str:
        where = f"at offset {self.offset}"
        if self.frame_offset is not None and self.frame_offset != self.offset:
            where += f" (in the frame at offset {self.frame_offset})"
        return f"{where}: expected {self.expected}, found {self.found}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameError) and (
            other.offset,
            other.expected,
            other.found,
            other.fatal,
        ) == (self.offset, self.expected, self.found, self.fatal)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrameError({self})"


Item = ProtocolHeader | Frame | FrameError


def parse_protocol_header(
    data: bytes | bytearray | memoryview, offset: int = 0
) -> ProtocolHeader | None:
    """The protocol header at the start of `data`, or None if it does not start with one."""
    if len(data) >= 8 and bytes(data[:4]) == b"AMQP":
        return ProtocolHeader(offset, bytes(data[:8]))
    return None


def _describe(value: Any) -> str:
    """A value that is no performative, in AMQP terms (no Python class names)."""
    if isinstance(value, Composite):
        return f"{value.NAME} (descriptor 0x{value.CODE:x})"
    if type(value) is Described:
        d = value.descriptor
        desc = (f"0x{d:x}" if isinstance(d, int) and not isinstance(d, bool)
                else _short_text(key_value(d)))
        return f"a described value (descriptor {desc}) holding {_describe(value.value)}"
    kind = _kind(value)
    if kind.startswith("a ") or value is None or kind == "described":
        return kind
    if kind == "binary":
        return f"binary of {len(value)} bytes"
    return f"{kind} {_short_text(value)}"


def _type_name(value: Any) -> str:
    from amqpcli.codec.encode import PYTHON_TYPE_NAMES

    t = type(value)
    name = PYTHON_TYPE_NAMES.get(t)
    if name is None:
        name = next((n for c, n in PYTHON_TYPE_NAMES.items()
                     if c is not type(None) and isinstance(value, c)), "described")
    return name


def _kind(value: Any) -> str:
    """What a value is, for a SASL frame body too (its type and size: no content)."""
    if type(value) is Described or isinstance(value, Composite):
        return "a described value"
    name = _type_name(value)
    if name in ("list", "map", "array"):
        n = len(value)
        unit = "entr" if name == "map" else "item"
        plural = ("ies" if n != 1 else "y") if name == "map" else ("s" if n != 1 else "")
        return f"a {name} of {n} {unit}{plural}"
    return name


def _short_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(str(value)) if isinstance(value, str) else str(
        float(value) if isinstance(value, float) else int(value) if isinstance(value, int)
        else value)
    return text if len(text) <= 40 else text[:37] + "..."


class FrameReader:
    """Turns a byte stream (in any split) into protocol headers, frames and frame errors."""

    def __init__(self, max_frame_size: int | None = None, *, sanity: bool = False) -> None:
        """`max_frame_size`: larger frames are a fatal error; `sanity`: that size is not a
        negotiated max-frame-size but a bound past which a size can only be damage (a
        capture's reader), and the error says so."""
        if max_frame_size is not None and max_frame_size < 8:
            raise ValueError("max_frame_size must be at least 8 (the frame header)")
        self.max_frame_size = max_frame_size
        self._limit = _MAX_SIZE if max_frame_size is None else max_frame_size
        # what the limit is, for the error: "max-frame-size", or another name for it
        self._limit_name = ("a sanity limit: a size past it is damage" if sanity
                            else "max-frame-size")
        # (limit, its name) from the first open frame on (None: no switch)
        self._after_open: tuple[int, str] | None = None
        self._buf = bytearray()
        self._offset = 0  # stream offset of self._buf[0]
        self._need = 8  # bytes self._buf must hold before parsing it again is worth it
        # None while framed; the header kind ("tls", "amqp0-10", …) once the stream is
        # opaque, or "error" after a fatal frame error.
        self.opaque: str | None = None
        self.opaque_bytes = 0

    def set_max_frame_size(self, size: int, name: str = "max-frame-size") -> None:
        """Hold the frames from here on to `size` bytes (`name` says in an error what
        the limit is). Cancels a `limit_after_open` not reached yet."""
        if size < 8:
            raise ValueError("max_frame_size must be at least 8 (the frame header)")
        self.max_frame_size = size
        self._limit = min(size, _MAX_SIZE)
        self._limit_name = name
        self._after_open = None

    def limit_after_open(self, size: int, name: str = "max-frame-size") -> None:
        """From the first AMQP open frame read on (frames after it in the same bytes
        included), hold frames to `size` bytes (as `set_max_frame_size`)."""
        if size < 8:
            raise ValueError("max_frame_size must be at least 8 (the frame header)")
        self._after_open = (size, name)

    def hold_to(self, other: FrameReader) -> None:
        """Read with `other`'s size limit as it stands now, its switch at the open frame
        included: a reader that watches the bytes `other` is about to read then refuses
        the frames `other` refuses."""
        self.max_frame_size = other.max_frame_size
        self._limit = other._limit
        self._limit_name = other._limit_name
        self._after_open = other._after_open

    def _opened(self) -> int:
        """An open frame was read: the limit after it (`limit_after_open`)."""
        after = self._after_open
        if after is not None:
            self.set_max_frame_size(*after)
        return self._limit

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet read as an item (opaque bytes excluded)."""
        return self._offset

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete item."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Item]:
        """Add bytes; return every item they complete (possibly none)."""
        if self.opaque is not None:
            self.opaque_bytes += len(data)
            return []
        pend = self._buf
        if pend:
            pend += data
            if len(pend) < self._need:
                return []  # the frame under way is still short: nothing to parse yet
            buf = bytes(pend)
        elif data.__class__ is bytes:
            buf = data
        else:
            # one copy per chunk: the frames are then sliced from bytes, which is much
            # cheaper than slicing a memoryview and copying each slice
            buf = bytes(data)
        items: list[Item] = []
        pos = self._parse(buf, items)
        if pos < len(buf):
            self._buf = bytearray(buf[pos:])
        elif pend:
            self._buf = bytearray()
        self._offset += pos
        if self.opaque is not None:
            # The bytes after an opaque header or a fatal error are not ours to parse.
            self.opaque_bytes += len(self._buf)
            self._buf = bytearray()
        return items

    def close_stream(self) -> tuple[list[Item], CutShort | None]:
        """The end of a stream that may stop anywhere (a FIN, a reset, the end of a
        capture): a tail whose start is sound (`cut_short`) is the item the end cut short,
        given back instead of its error; bytes that cannot start one are still an error
        (as `close` reports them)."""
        cut = cut_short(bytes(self._buf)) if self._buf else None
        errors = self.close()
        return ([], cut) if cut is not None else (errors, None)

    def close(self) -> list[Item]:
        """End of input that should have been whole: report a truncated tail, if any."""
        if not self._buf:
            return []
        buf = bytes(self._buf)
        off = self._offset
        self._offset += len(buf)
        self._buf = bytearray()
        if b"AMQP".startswith(buf[:4]):
            return [
                FrameError(
                    off,
                    "an 8-byte protocol header",
                    f"end of input after {len(buf)} bytes",
                    fatal=True,
                )
            ]
        if len(buf) < 8:
            return [
                FrameError(
                    off,
                    "an 8-byte frame header",
                    f"end of input after {len(buf)} bytes",
                    off,
                    fatal=True,
                )
            ]
        size = int.from_bytes(buf[:4], "big")
        return [
            FrameError(
                off,
                f"a frame of {size} bytes",
                f"end of input after {len(buf)} bytes",
                off,
                fatal=True,
            )
        ]

    # The hot path: one pass over `buf` (bytes), returning how many bytes it consumed.
    def _parse(self, buf: bytes, items: list[Item]) -> int:
        n = len(buf)
        pos = 0
        base = self._offset
        limit = self._limit
        fast_transfer = _decode_transfer_fast
        append = items.append
        self._need = 8
        while n - pos >= 8:
            size, doff, ftype, channel = _unpack_header(buf, pos)
            end = pos + size
            if (doff == 2 and ftype == 0 and 8 < size <= limit and end <= n
                    and size != _AMQP_MAGIC):
                # the usual frame, whole: AMQP, no extended header, a performative (the
                # checks below, in fewer steps)
                bstart = pos + 8
                fast = fast_transfer(buf, bstart, end)
                if fast is not None:
                    perf, bend = fast
                    append(Frame(base + pos, size, 2, 0, channel, b"", perf,
                                 buf[bstart + bend : end]))
                else:
                    item = self._decode_body(memoryview(buf)[bstart:end], base + pos, size, 2,
                                             0, channel, b"")
                    append(item)
                    if self._after_open is not None and item.__class__ is Frame and (
                            item.body.__class__ is Open):  # type: ignore[union-attr]
                        limit = self._opened()
                pos = end
                continue
            if size == _AMQP_MAGIC:
                header = ProtocolHeader(base + pos, buf[pos : pos + 8])
                append(header)
                pos += 8
                if header.kind not in _FRAMED_KINDS:
                    self.opaque = header.kind
                    break
                continue
            off = base + pos
            if size < 8:
                append(
                    FrameError(off, "a frame size of at least 8", f"size {size}", off, fatal=True)
                )
                self.opaque = "error"
                break
            if size > limit:
                append(
                    FrameError(
                        off,
                        f"a frame size of at most {limit} ({self._limit_name})",
                        f"size {size}",
                        off,
                        fatal=True,
                        limit=limit,
                    )
                )
                self.opaque = "error"
                break
            if end > n:
                self._need = size
                break  # wait for the rest; nothing is allocated for it
            dstart = doff * 4
            if doff < 2 or dstart > size:
                append(
                    FrameError(
                        off + 4,
                        f"a data offset from 2 to {size // 4} (4-byte words)",
                        f"doff {doff}",
                        off,
                        channel=channel,
                    )
                )
                pos = end
                continue
            ext = buf[pos + 8 : pos + dstart] if dstart > 8 else b""
            if dstart == size:
                append(Frame(off, size, doff, ftype, channel, ext, None, b""))
            elif ftype > 1:
                append(
                    FrameError(
                        off + 5,
                        "frame type 0 (AMQP) or 1 (SASL)",
                        f"frame type {ftype}",
                        off,
                        channel=channel,
                    )
                )
            else:
                bstart = pos + dstart
                fast = fast_transfer(buf, bstart, end) if ftype == 0 else None
                if fast is not None:
                    perf, bend = fast
                    append(Frame(off, size, doff, 0, channel, ext, perf,
                                 buf[bstart + bend : end]))
                else:
                    item = self._decode_body(memoryview(buf)[bstart:end], off, size, doff,
                                             ftype, channel, ext)
                    append(item)
                    if self._after_open is not None and item.__class__ is Frame and (
                            item.body.__class__ is Open and ftype == 0):  # type: ignore[union-attr]
                        limit = self._opened()
            pos = end
        return pos

    def _decode_body(
        self,
        body: memoryview,
        off: int,
        size: int,
        doff: int,
        ftype: int,
        channel: int,
        ext: bytes,
    ) -> Frame | FrameError:
        body_off = off + doff * 4
        try:
            perf, end = _decode(body, 0)
        except DecodeError as e:
            e = e.moved(body_off)  # (the body's offsets, those in its text too)
            return FrameError(e.offset, e.expected, e.found, off, channel=channel)
        except RecursionError:
            return FrameError(
                body_off, "a performative", "values nested too deeply", off, channel=channel
            )
        except Exception as e:  # noqa: BLE001 - a body must never stop the reader
            found = f"undecodable bytes ({type(e).__name__}: {e})"
            return FrameError(body_off, "a performative", found, off, channel=channel)
        codes = _AMQP_CODES if ftype == 0 else _SASL_CODES
        if not isinstance(perf, Composite) or perf.CODE not in codes:
            kind = "an AMQP performative" if ftype == 0 else "a SASL frame body"
            # Not what a SASL body holds: a damaged sasl-init or sasl-response holds a secret.
            shown = ftype == 0 or isinstance(perf, Composite)
            found = _describe(perf) if shown else _kind(perf)
            return FrameError(body_off, kind, found, off, channel=channel)
        payload = bytes(body[end:]) if end < len(body) else b""
        return Frame(off, size, doff, ftype, channel, ext, perf, payload)


def _decode(buf: Any, offset: int) -> tuple[Any, int]:
    # Bound lazily: the decoder module imports composites, which are large.
    global _decode
    from amqpcli.codec.decode import decode

    _decode = decode
    return decode(buf, offset)


_u32 = Struct(">I").unpack_from
_u32u32 = Struct(">II").unpack_from
_new = object.__new__
# uint and ubyte values below 256, made once: a transfer's handle, small delivery ids
_UINTS = tuple(UInt(i) for i in range(256))
_UBYTES = tuple(UByte(i) for i in range(256))
_UINT0 = _UINTS[0]
# delivery states whose fields are all optional, by descriptor code
_EMPTY_STATES: dict[int, Any] = {c.CODE: c for c in (Accepted, Rejected, Released, Modified)}
# descriptor code -> (class, its _fill, a None per field, delivery states without fields
# taken); dispositions are most of what is not a transfer in a busy stream
_FAST_LISTS: dict[int, tuple[type[Composite], Any, tuple[None, ...], bool]] = {
    0x14: (Transfer, Transfer._fill, (None,) * Transfer._N, False),
    0x15: (Disposition, Disposition._fill, (None,) * Disposition._N, True),
}


def _empty_state(scls: Any, raw: bytes) -> Any:
    """A delivery state written without fields (accepted, released, ...), built as the
    codec builds a composite from an empty list."""
    st = _new(scls)
    st._raw = (raw, [])
    scls._fill(st, [None] * scls._N)
    return st


def _decode_transfer_fast(b: bytes | bytearray | memoryview, start: int = 0,
                          stop: int | None = None) -> tuple[Composite, int] | None:
    """A transfer's (or a disposition's) performative in `b[start:stop]` decoded without
    the generic decoder, as `(performative, its length)`, or None.

    Transfers are most of a busy stream, and their fields are a handful of small uints,
    booleans and a short binary tag; dispositions add a delivery state with no fields.
    Only those encodings are taken here; anything else (a delivery state, an odd width, a
    short or malformed body) returns None and the generic decoder does the work and the
    error reporting, so both give the same result. `b` is read as bytes (other buffers
    are copied first).

    The transfers of a link differ only in their delivery id and tag, so their bytes
    nearly always have one of a few layouts: once a layout has been decoded twice by
    `_decode_list_fast`, a template of it (`_learn`) decodes the next ones by checking
    its format codes and lengths in one step and reading the values in one `unpack`.
    """
    if b.__class__ is not bytes:
        b = bytes(b)
    n = len(b) if stop is None else stop
    if n - start >= 6 and b[start + 3] == 0xC0:
        end = start + 5 + b[start + 4]
        if end <= n:
            raw = b[start:end]
            # (the key is the first six bytes: the descriptor's 00 53 included)
            for check, expected, build in _TEMPLATES.get(raw[:6], ()):
                if check(raw) == expected:
                    return build(raw), end - start
    if n - start < 6 or b[start] != 0x00 or b[start + 1] != 0x53:
        return None
    return _decode_list_fast(b, start, n)


def _decode_list_fast(b: bytes, start: int, n: int) -> tuple[Composite, int] | None:
    """`_decode_transfer_fast` field by field (and the layouts it sees, for `_learn`)."""
    fast = _FAST_LISTS.get(b[start + 2])
    if fast is None:
        return None
    cls, fill, nones, states = fast
    c = b[start + 3]
    if c == 0xC0:
        end = start + 5 + b[start + 4]
        count = b[start + 5]
        p = start + 6
    elif c == 0xD0:
        if n - start < 12:
            return None
        size, count = _u32u32(b, start + 4)
        end = start + 8 + size
        p = start + 12
    else:
        return None
    if end > n or count > len(nones):
        return None
    vals: list[Any] = [*nones]
    codes: list[int] = []  # per field: where its format code is (from `start`)
    i = 0
    try:
        # a field running past `end` reads bytes after it (or past the buffer: an
        # IndexError or struct.error) and is then refused by the position checks
        while i < count:
            if p >= end:
                return None
            codes.append(p - start)
            code = b[p]
            if code == 0x43:
                vals[i] = _UINT0
                p += 1
            elif code == 0x52:
                vals[i] = _UINTS[b[p + 1]]
                p += 2
            elif code == 0x42:
                vals[i] = False
                p += 1
            elif code == 0x41:
                vals[i] = True
                p += 1
            elif code == 0x40:
                p += 1
            elif code == 0xA0:
                e = p + 2 + b[p + 1]
                if e > end:
                    return None
                vals[i] = b[p + 2 : e]
                p = e
            elif code == 0x70:
                vals[i] = UInt(_u32(b, p + 1)[0])
                p += 5
            elif code == 0x50:
                vals[i] = _UBYTES[b[p + 1]]
                p += 2
            elif (code == 0x00 and states and p + 4 <= end and b[p + 1] == 0x53
                  and b[p + 3] == 0x45):
                scls = _EMPTY_STATES.get(b[p + 2])
                if scls is None:
                    return None
                vals[i] = _empty_state(scls, b[p : p + 4])
                p += 4
            else:
                return None
            i += 1
    except (IndexError, struct_error):
        return None
    if p != end:
        return None
    o = _new(cls)
    # As the codec does: the bytes, and the decoded items the fields still hold.
    raw = b[start:end]
    o._raw = (raw, vals)  # trailing Nones compare like absent items
    fill(o, vals)
    if c == 0xC0:
        _learn(raw, codes, cls)
    return o, end - start


# Layout templates of transfer and disposition lists (list8), by their first six bytes
# (descriptor, list8 code, size, count): (check, expected, build) triples. `check(raw)`
# gives the other bytes that fix the layout (format codes, binary lengths, state
# descriptors; the size and count again, so that it always gives a tuple),
# `build(raw)` the performative. A layout is made a template the second time it is seen.
_TEMPLATES: dict[bytes, tuple[tuple[Any, tuple[int, ...], Any], ...]] = {}
_SEEN: dict[tuple[object, ...], int] = {}
_MAX_TEMPLATES = 256
_MAX_SEEN = 4096


def _learn(raw: bytes, codes: list[int], cls: Any) -> None:
    """Count the layout of a list `_decode_list_fast` just decoded (`codes`: where each
    field's format code is in `raw`); at the second sighting make it a template."""
    where = [4, 5]
    for p in codes:
        code = raw[p]
        where.append(p)
        if code == 0xA0:
            where.append(p + 1)
        elif code == 0x00:
            where += (p + 1, p + 2, p + 3)
    expected = tuple(raw[p] for p in where)
    sig = (raw[:6], *where, -1, *expected)
    seen = _SEEN.get(sig, 0) + 1
    if seen < 2:
        if len(_SEEN) >= _MAX_SEEN:
            _SEEN.clear()
        _SEEN[sig] = seen
        return
    del _SEEN[sig]
    if sum(len(t) for t in _TEMPLATES.values()) >= _MAX_TEMPLATES:
        _TEMPLATES.clear()
    key = raw[:6]
    _TEMPLATES[key] = (*_TEMPLATES.get(key, ()), (itemgetter(*where), expected,
                                                   _template(raw, codes, cls)))


def _template(raw: bytes, codes: list[int], cls: Any) -> Any:
    """`build(raw)` for lists laid out as `raw`: the values read with one `unpack_from`
    (uints and binaries), the constants (null, booleans, uint0) and field-less states
    written in."""
    env: dict[str, Any] = {"_new": _new, "cls": cls, "fill": cls._fill, "_UINTS": _UINTS,
                           "_UBYTES": _UBYTES, "_UINT0": _UINT0, "UInt": UInt,
                           "_empty_state": _empty_state}
    fmt = ">"
    at = 0  # bytes of raw the format covers so far
    names: list[str] = []
    items: list[str] = []
    for i, p in enumerate(codes):
        code = raw[p]
        if code in (0x52, 0x50, 0x70, 0xA0):
            v = f"v{i}"
            names.append(v)
            vp, width = p + 1, {0x52: "B", 0x50: "B", 0x70: "I"}.get(code, "")
            if code == 0xA0:
                vp, width = p + 2, f"{raw[p + 1]}s"
            if vp > at:
                fmt += f"{vp - at}x"
            fmt += width
            at = vp + (4 if code == 0x70 else 1 if width == "B" else raw[p + 1])
            items.append({0x52: f"_UINTS[{v}]", 0x50: f"_UBYTES[{v}]",
                          0x70: f"UInt({v})"}.get(code, v))
        elif code == 0x00:
            env[f"S{i}"] = _EMPTY_STATES[raw[p + 2]]
            items.append(f"_empty_state(S{i}, raw[{p}:{p + 4}])")
        else:
            items.append({0x43: "_UINT0", 0x41: "True", 0x42: "False", 0x40: "None"}[code])
    items += ["None"] * (cls._N - len(codes))
    lines = ["def build(raw):"]
    if names:
        env["unpack"] = Struct(fmt).unpack_from
        lines.append(f"    {', '.join(names)}, = unpack(raw)")
    lines += [f"    vals = [{', '.join(items)}]",
              "    o = _new(cls)",
              "    o._raw = (raw, vals)",
              "    fill(o, vals)",
              "    return o"]
    exec("\n".join(lines), env)  # noqa: S102 - built above from the format codes only
    return env["build"]


def encode_frame(
    performative: Composite | None,
    channel: int = 0,
    payload: bytes = b"",
    type: int = FRAME_TYPE_AMQP,
    ext: bytes = b"",
) -> bytes:
    """One frame's bytes. `performative=None` (and no payload) makes a heartbeat."""
    if len(ext) % 4:
        raise ValueError("the extended header must be a whole number of 4-byte words")
    if not 0 <= channel <= 0xFFFF:
        raise ValueError(f"channel {channel} is outside 0..65535")
    if not 0 <= type <= 0xFF:
        raise ValueError(f"frame type {type} is outside 0..255")
    out = bytearray(8)
    out += ext
    if performative is not None:
        from amqpcli.codec.encode import encode_into

        encode_into(out, performative)
    elif payload:
        raise ValueError("a frame with a payload needs a performative")
    out += payload
    if len(out) > _MAX_SIZE:
        raise ValueError("frame larger than 4 GiB")
    _pack_header(out, 0, len(out), 2 + len(ext) // 4, type, channel)
    return bytes(out)


_HEADER_IDS = {"amqp": 0, "tls": 2, "sasl": 3}


def encode_protocol_header(
    protocol: str | int = "amqp", version: tuple[int, int, int] = (1, 0, 0)
) -> bytes:
    """`AMQP` id major minor revision; `protocol` is "amqp", "sasl", "tls" or the id byte."""
    pid = _HEADER_IDS[protocol] if isinstance(protocol, str) else protocol
    return b"AMQP" + bytes((pid, *version))
