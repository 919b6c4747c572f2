"""Whether bytes can be the start of an AMQP 1.0 frame or protocol header.

The checks a reader makes of bytes it cannot take on trust: a protocol header ("AMQP" and
a known 1.0 version), or a frame header with a sane size, data offset and frame type whose
body starts with a performative's descriptor and decodes to one. A capture's reader hunting
for the next frame boundary makes them (`amqpcli.dissect.streams`), and so does the
judgement of a stream that ended (a FIN, a reset, the end of a capture) inside an item:
one whose start is sound was cut short (`cut_short`), which is no frame error; bytes that
cannot start one are (`FrameReader.close_stream`). Every view of a stream's end (pcap-dump,
the proxy, the TUI) judges it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from struct import Struct
from typing import Any

# Frames larger than this are taken as corrupt headers, not waited for.
MAX_FRAME = 1 << 26

_header = Struct(">IBBH").unpack_from
_u64 = Struct(">Q").unpack_from
_AMQP_CODES = frozenset(range(0x10, 0x19))
_SASL_CODES = frozenset(range(0x40, 0x45))
_VERSIONS = frozenset((b"\x00\x01\x00\x00", b"\x03\x01\x00\x00", b"\x02\x01\x00\x00"))


def _descriptor(buf: Any, p: int, n: int) -> int | None:
    """The small-ulong or ulong descriptor code at `p` (None: not one, -1: need bytes)."""
    if p + 3 > n:
        return -1
    if buf[p] != 0x00:
        return None
    c = buf[p + 1]
    if c == 0x53:
        return int(buf[p + 2])
    if c == 0x80:
        if p + 10 > n:
            return -1
        v: int = _u64(buf, p + 2)[0]
        return v
    return None


def plausible_start(buf: Any, p: int, n: int, limit: int) -> int:
    """Is there a plausible frame header (and descriptor), or a protocol header, at `p` of
    the first `n` bytes of `buf`? 1 yes, 0 no, -1 need more bytes to say."""
    if p + 8 > n:
        return -1
    if buf[p : p + 4] == b"AMQP":
        return 1 if bytes(buf[p + 4 : p + 8]) in _VERSIONS else 0
    size, doff, ftype, _ch = _header(buf, p)
    if size < 8 or size > limit or doff < 2 or doff * 4 > size or ftype > 1:
        return 0
    if doff * 4 == size:
        return 1  # an empty frame (heartbeat)
    code = _descriptor(buf, p + doff * 4, n)
    if code == -1:
        return -1
    if code is None:
        return 0
    return 1 if code in (_AMQP_CODES if ftype == 0 else _SASL_CODES) else 0


def performative_at(buf: Any, p: int, n: int) -> tuple[int, Any]:
    """Does the performative of the plausible frame at `p` decode? (1 yes, 0 no, -1 need
    bytes; with the performative when it does: None for a protocol header or an empty
    frame)."""
    if buf[p : p + 4] == b"AMQP":
        return 1, None
    size, doff, ftype, _ch = _header(buf, p)
    start = p + doff * 4
    end = p + size
    if start == end:
        return 1, None
    from amqpcli.codec.decode import decode
    from amqpcli.codec.types import Composite, DecodeError

    view = memoryview(buf)[start:min(end, n)]
    try:
        value, _end = decode(view, 0)
    except DecodeError:
        return (-1 if end > n else 0), None
    except Exception:  # noqa: BLE001 - garbage that upsets the decoder is not a frame
        return 0, None
    finally:
        view.release()
    ok = isinstance(value, Composite) and value.CODE in (_AMQP_CODES if ftype == 0 else _SASL_CODES)
    return (1, value) if ok else (0, None)


# how a stream ended (a capture's `Closed.how`), as the notice of a frame it cut short says it
_ENDED = {"end": "the capture ends", "fin": "the stream ended (FIN)",
          "rst": "the connection was reset (RST)",
          "reset-by-peer": "the connection was reset by the other side (RST)"}


@dataclass(frozen=True, slots=True)
class CutShort:
    """The end of a stream (FIN, reset, the capture's end) inside a protocol header or
    frame whose start is sound: an item cut short, not bytes that cannot be framed."""

    received: int  # its bytes that came
    size: int | None  # the frame size its header gave (None: not all 4 bytes of it came)
    header: bool  # a protocol header (8 bytes), not a frame
    performative: str | None  # its performative's name, when what came of it decodes

    def text(self, side: str, how: str, frame_no: int) -> str:
        """`the connection was reset (RST) inside frame 11 from the client (transfer,
        16339 of 65536 bytes)`: what the end of the stream from `side` (`how`: "fin",
        "rst", "reset-by-peer" or "end", the capture's) cut short; `frame_no`, the number that frame would
        have had (both directions counted)."""
        if self.header:
            return (f"{_ENDED[how]} inside a protocol header from the {side} "
                    f"({self.received} of 8 bytes)")
        got = (f"{self.received} of {self.size} bytes" if self.size is not None
               else f"{self.received} bytes of its header")
        what = f"{self.performative}, {got}" if self.performative else got
        return f"{_ENDED[how]} inside frame {frame_no} from the {side} ({what})"


def cut_short(tail: bytes) -> CutShort | None:
    """The item `tail` (the bytes a stream ended inside) was the start of, or None when
    they cannot start one: a frame header out of bounds, a body that is no performative."""
    n = len(tail)
    if b"AMQP".startswith(tail[:4]):  # (shorter than 8 bytes, or it would have been read)
        return CutShort(n, 8, True, None)
    size = int.from_bytes(tail[:4], "big") if n >= 4 else None
    if size is not None and not 8 <= size <= MAX_FRAME:
        return None
    ok = plausible_start(tail, 0, n, MAX_FRAME)
    if ok == 0:
        return None
    performative = None
    if ok == 1:
        ok, value = performative_at(tail, 0, n)
        if ok == 0:
            return None
        performative = getattr(value, "NAME", None)
    return CutShort(n, size, False, performative)
