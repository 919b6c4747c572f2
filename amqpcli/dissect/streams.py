"""One direction of an AMQP 1.0 conversation: bytes in, frame-reader items out, with
resynchronisation where the stream cannot be trusted.

The codec's `FrameReader` needs to start at a frame boundary and stops for good at a
frame header it cannot trust. A capture breaks both assumptions: it may start in the middle
of a connection, lose bytes (a TCP gap), or hold corrupt bytes. In those cases this reader
*hunts*: it looks for the next plausible frame boundary — a sane size, data offset and
frame type, a body that starts with a performative's descriptor and decodes to one (the
codec's checks, `amqpcli.codec.framestart`) — and confirms it with the frame that follows
(its header must be sane as well) before it hands the bytes on to a fresh `FrameReader`.
A protocol header ("AMQP" and a known version) is a boundary too.

The end of a stream (FIN, reset, the capture's end) may come inside a frame: one whose
start is sound (the same checks) was cut short, which is no frame error (`CutShort`,
judged by the codec for every view of a stream's end).
"""

from __future__ import annotations

from struct import Struct
from typing import Any

from amqpcli.codec.frames import Frame, FrameError, FrameReader, ProtocolHeader
from amqpcli.codec.framestart import MAX_FRAME, CutShort, performative_at, plausible_start

Item = ProtocolHeader | Frame | FrameError

# Sizes a hunted-for frame may have (a real one beyond this is waited for only when the
# stream is already in sync).
HUNT_MAX_FRAME = 1 << 24
# Bytes kept while hunting; beyond, the oldest are dropped.
HUNT_WINDOW = 1 << 22

_frame_size = Struct(">I").unpack_from


def _decodes(buf: Any, p: int, n: int) -> int:
    """Does the performative of the frame at `p` decode? 1 yes, 0 no, -1 need bytes."""
    return performative_at(buf, p, n)[0]


def find_boundary(buf: Any, start: int = 0, *, final: bool = False,
                  limit: int = HUNT_MAX_FRAME) -> tuple[int | None, int]:
    """The offset of the first confirmed frame boundary in `buf` at or after `start`.

    Returns `(offset, resume)`: `offset` None when there is none yet; `resume` is where a
    later search (with more bytes) must start again. With `final` (no more bytes will
    come) a candidate that cannot be confirmed by a following frame is taken if its own
    frame is complete and decodes.
    """
    n = len(buf)
    p = start
    while True:
        # candidates: a protocol header, or a performative descriptor 8 bytes in
        d = buf.find(b"\x00\x53", p + 8) if n - p >= 10 else -1
        a = buf.find(b"AMQP", p)
        cands = [x for x in (d - 8 if d >= 0 else -1, a) if x >= p]
        if not cands:
            # keep the tail that could still start a frame
            return None, max(start, n - 16)
        c = min(cands)
        ok = plausible_start(buf, c, n, limit)
        if ok == -1:
            if not final:
                return None, c
            ok = 0
        if ok == 1:
            dec = _decodes(buf, c, n)
            if dec == -1:
                if final:
                    p = c + 1
                    continue
                return None, c
            if dec == 1:
                if buf[c : c + 4] == b"AMQP":
                    nxt = c + 8
                else:
                    nxt = c + _frame_size(buf, c)[0]
                if nxt == n:
                    # a decodable frame that ends exactly where the bytes end (segments
                    # usually end at frame boundaries): taken now, not held back for
                    # a next frame that may come much later
                    return c, c
                conf = plausible_start(buf, nxt, n, limit)
                if conf == 1:
                    return c, c
                if conf == -1:
                    if final and nxt <= n:
                        return c, c
                    return None, c
        p = c + 1


class DirectionReader:
    """Frames of one direction. `hunting=True` starts by looking for a frame boundary (a
    capture that joined the connection late). `notes` collects what a reader of the
    output should know (bytes skipped, resynchronised), for the caller to take; `cut`,
    after `close`, the item the end of the stream cut short."""

    def __init__(self, hunting: bool = False) -> None:
        self.reader: FrameReader | None = None if hunting else FrameReader(MAX_FRAME, sanity=True)
        self._hunt = bytearray()
        self._skipped = 0  # bytes thrown away while hunting
        self.hunting = hunting
        self.notes: list[str] = []
        self.opaque: str | None = None  # protocol after an opaque header ("tls", ...)
        self.resyncs = 0
        self.skipped_total = 0
        self.cut: CutShort | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> list[Item]:
        r = self.reader
        if r is not None:
            items = r.feed(data)
            if r.opaque is not None:
                self._after_opaque(r, items)
            return items
        if self.opaque is not None:
            return []
        self._hunt += data
        return self._search(False)

    def _after_opaque(self, r: FrameReader, items: list[Item]) -> None:
        if r.opaque == "error":
            bad = items[-1] if items and isinstance(items[-1], FrameError) else None
            self.notes.append(
                f"frame header cannot be trusted ({bad.found if bad else 'corrupt'}); "
                "looking for the next frame")
            self.reader = None
            self.hunting = True
            self._hunt = bytearray()
        else:
            self.opaque = r.opaque

    def gap(self, size: int) -> None:
        """Bytes the capture does not hold: drop what was pending and hunt."""
        if self.opaque is not None:
            return
        if self.reader is not None:
            self.reader = None
        self._hunt = bytearray()
        self.hunting = True

    def _search(self, final: bool) -> list[Item]:
        buf = self._hunt
        pos, resume = find_boundary(buf, 0, final=final)
        if pos is None:
            if resume > 0:
                self._skipped += resume
                del buf[:resume]
            if len(buf) > HUNT_WINDOW:
                cut = len(buf) - HUNT_WINDOW
                self._skipped += cut
                del buf[:cut]
            return []
        skipped = self._skipped + pos
        self._skipped = 0
        if skipped:  # starting right at a frame boundary needs no word
            self.skipped_total += skipped
            self.resyncs += 1
            self.notes.append(
                f"resynchronised: frames found again after skipping {skipped} bytes")
        self.hunting = False
        r = self.reader = FrameReader(MAX_FRAME, sanity=True)
        rest = bytes(buf[pos:])
        self._hunt = bytearray()
        items = r.feed(rest)
        if r.opaque is not None:
            self._after_opaque(r, items)
        return items

    def close(self) -> list[Item]:
        """End of the stream: a last search with what is left (when hunting), then the
        tail: an item cut short (`cut`), or a frame error for bytes that cannot be one."""
        if self.reader is not None:
            return self._tail(self.reader)
        if self.opaque is not None or not self._hunt:
            return []
        items = self._search(True)
        if self.reader is not None:
            items += self._tail(self.reader)
        elif self._hunt or self._skipped:
            self.notes.append(
                f"no frame boundary found in the last {self._skipped + len(self._hunt)} bytes")
        return items

    def _tail(self, reader: FrameReader) -> list[Item]:
        errors, self.cut = reader.close_stream()
        return errors
