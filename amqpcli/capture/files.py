"""Capture files → raw packets: classic pcap, pcapng, gzip-compressed either way.

`read_packets(source)` yields `(time_ns, linktype, data)` for every packet record, where
`data` is a memoryview slice of the block read from the file (no copy); `read_batches`
gives the same a block at a time, each packet as offsets into the block. Files are read in
large blocks; a record that straddles two blocks costs one small join. Memory does not grow
with the file: each block is released once no caller holds a view into it.

`waiting`, where a reader takes it, is a context manager entered around every read of
the file or stream (a pipe's read may block until more input comes): a caller that
prints as it goes flushes its output there, and one that stops on a signal knows it can
stop without leaving anything half done.

The file is opened inside `waiting` too: a named pipe's open waits for its writer, and a
reader that stops on a signal must be able to stop there. A reader in a thread of its own,
which no signal reaches, reads a named pipe or standard input through a `PipeStream`
instead: another thread can stop it wherever it waits, its writer's open included.

Problems in the file raise `CaptureError` (a `UserError` with exit code DECODE) carrying
the file offset; every packet before that offset has already been yielded. A file that
cannot be opened is a usage error (`UserError`), unless the caller says it was found in a
folder or by a glob (`found`: `amqpcli.pipeline.inputs.expand` tells which): then it is
one more damaged file of the set.
"""

from __future__ import annotations

import heapq
import io
import os
import select
import stat
import threading
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from operator import itemgetter
from struct import Struct
from typing import IO, Any

from amqpcli.capture.decode import SUPPORTED_LINKTYPES
from amqpcli.errors import Exit, UserError

BLOCK_SIZE = 1 << 20
# A record longer than this is taken as corruption, not a packet (jumbo frames and
# offloaded loopback segments stay far below it).
MAX_RECORD = 16 << 20

Packet = tuple[int, int, memoryview]  # (time in ns since the epoch, link type, frame bytes)
# A block of the file and its packets: (time in ns, link type, start, stop) each
Batch = tuple[bytes, list[tuple[int, int, int, int]]]

_PCAP_MAGIC = {
    # magic as read little-endian → (byte order, ns per fraction unit, record header size)
    0xA1B2C3D4: ("<", 1000, 16),
    0xA1B23C4D: ("<", 1, 16),
    0xA1B2CD34: ("<", 1000, 24),  # "modified" pcap (Kuznetzov): 8 more bytes per record
    0xD4C3B2A1: (">", 1000, 16),
    0x4D3CB2A1: (">", 1, 16),
    0x34CDB2A1: (">", 1000, 24),
}
_SHB = 0x0A0D0D0A
_BOM = 0x1A2B3C4D
_GZIP_MAGIC = b"\x1f\x8b"


class CaptureError(UserError):
    """A capture file could not be read past `offset` (a byte offset in the file, or in the
    uncompressed stream for gzip input). Packets before it were delivered. `where` says
    where in words when the offset alone would mislead (gzip input; "" for nowhere), and
    `more` how many other files of the set were damaged too."""

    def __init__(self, path: str, offset: int, problem: str, where: str | None = None,
                 more: int = 0) -> None:
        text = f"{path}: {problem}"
        at = f"at byte offset {offset}" if where is None else where
        if at:
            text += f" ({at})"
        super().__init__(and_more_damaged(text, more), Exit.DECODE)
        self.path = path
        self.offset = offset
        self.problem = problem
        self.where = where  # None: at `offset` in the file
        self.more = more


def and_more_damaged(first: str, more: int) -> str:
    """How the damaged captures of a set are named, by every reader and executor alike:
    the error of the first in path order (`first`), then how many `more` there are."""
    if not more:
        return first
    return f"{first}; and {more} more damaged file{'s' if more > 1 else ''}"


class ExpandedPaths(list[str]):
    """Capture files of a set as `amqpcli.pipeline.inputs.expand` lists them (in path
    order), with `found`: those found in folders or by globs rather than named one by
    one. Given to a reader as its sources, it tells the reader which these are (their
    `found`, `found_paths`): one of them that cannot be opened is a damaged file of the
    set, where a file named on its own is a usage error (`open_error`)."""

    def __init__(self, paths: Iterable[str] = (), found: Iterable[str] = ()) -> None:
        super().__init__(paths)
        self.found: frozenset[str] = frozenset(found)


def found_paths(sources: object, found: Collection[str] | None = None) -> Collection[str]:
    """The paths of a reader's `sources` that were found in folders or by globs: `found`
    when the caller gives it, else those an `ExpandedPaths` holds (none otherwise)."""
    if found is not None:
        return found
    return sources.found if isinstance(sources, ExpandedPaths) else ()


def was_found(source: object, found: Collection[str]) -> bool:
    """Whether `source` is a path of `found` (found in a folder or by a glob)."""
    return bool(found) and isinstance(source, (str, os.PathLike)) and (
        os.fspath(source) in found)


def open_error(name: str, e: OSError, found: bool) -> UserError:
    """The error for a capture file that cannot be opened: a `CaptureError` (damaged) for
    a file `found` in a folder or by a glob, which is one file of a set; a usage error for
    one named on its own."""
    reason = e.strerror or str(e)
    if os.path.islink(name) and not os.path.exists(name):
        try:
            reason = f"a broken symbolic link (to {os.readlink(name)})"
        except OSError:
            reason = "a broken symbolic link"
    if found:
        return CaptureError(name, 0, f"cannot open: {reason}", where="")
    return UserError(f"{name}: cannot open: {reason}", Exit.USAGE)


def starts_as_capture(head: bytes) -> bool:
    """Whether bytes start as a pcap or pcapng file does (its magic number)."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little") in (_SHB, *_PCAP_MAGIC)


def is_capture_file(source: Any) -> bool:
    """Whether `source` is a path to a file that starts as a pcap or pcapng file does: no
    frame-trace log, told without the log reader (a gzipped file, a stream or anything
    else may be one)."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        with open(source, "rb") as f:
            return starts_as_capture(f.read(4))
    except OSError:
        return False


# How much of a file read once is held to be peeked at (as much as a log is sniffed by)
PEEK_BYTES = 1 << 16


class _Head(io.RawIOBase):
    """The raw stream under a `ReadOnce`: the bytes read ahead to tell what the file is
    (`fill`), handed out first, then the rest of the stream as it comes."""

    def __init__(self, raw: Any, limit: int, waiting: AbstractContextManager[Any] | None,
                 owns: bool) -> None:
        super().__init__()
        self._raw = raw
        self._limit = limit
        self._waiting = waiting if waiting is not None else nullcontext()
        self._owns = owns
        self._held = bytearray()
        self._read = getattr(raw, "read1", None) or raw.read  # (one read, what is there)
        self._readinto = getattr(raw, "readinto1", None) or raw.readinto
        self.begun = False  # read ahead, or read from: nothing more is read ahead

    def fill(self) -> None:
        """Read until the first bytes tell what the file is (`settles`), each read inside
        `waiting` (a pipe's read waits for its writer's next write): a capture's magic
        number, a frame line, SNIFF_LINES whole lines, the end of the input, or `limit`
        bytes held. A pipe's first write is not its first lines: a log's writer may
        write other text first, and a line at a time."""
        if self.begun:
            return
        self.begun = True
        from amqpcli.capture.tracelog import settles

        held = self._held
        while len(held) < self._limit:
            with self._waiting:
                data = self._read(self._limit - len(held))
            if not data:
                return
            held += data
            if settles(bytes(held)):
                return

    def readinto(self, b: Any) -> int:
        self.begun = True
        held = self._held
        if held:
            n = min(len(b), len(held))
            memoryview(b).cast("B")[:n] = held[:n]
            del held[:n]
            return n
        return self._readinto(b)  # type: ignore[no-any-return]

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()  # type: ignore[no-any-return]

    @property
    def name(self) -> Any:
        return getattr(self._raw, "name", "<stream>")

    def close(self) -> None:
        if not self.closed and self._owns:
            self._raw.close()
        super().close()


class ReadOnce(io.BufferedReader):
    """A file that can be read only once (a named pipe, a shell's `<(...)`, a device,
    standard input), opened with a buffer its first bytes stay in: peeked at to tell a
    capture from a frame-trace log, then read from the start by the reader it is given
    to, which closes it (and `raw` with it, unless `owns` is false: a caller's stream).

    The first `peek` reads as much as tells what the file is, however many reads of the
    pipe that takes, each inside `waiting` (see `_Head.fill`): a capture's first 4 bytes
    suffice, a log's first frame line is waited for (up to SNIFF_LINES lines or
    `buffer_size` bytes). Everything read is then read again from the buffer: nothing is
    lost or read twice."""

    def __init__(self, raw: Any, buffer_size: int = PEEK_BYTES,
                 waiting: AbstractContextManager[Any] | None = None,
                 owns: bool = True) -> None:
        self._head = _Head(raw, buffer_size, waiting, owns)
        super().__init__(self._head, buffer_size)

    def peek(self, size: int = 0) -> bytes:
        self._head.fill()  # (once, before anything is read)
        return super().peek(size)


def opened_once(source: Any, waiting: AbstractContextManager[Any] | None = None) -> Any:
    """`source` as a `ReadOnce` if it is the path of a file that can be read only once
    (opened inside `waiting`: a named pipe's open waits for its writer), or a stream of
    the system's (standard input: its `fileno`), which stays open when the `ReadOnce`
    closes; otherwise as it is (a regular file is peeked at by opening it again)."""
    if not isinstance(source, (str, os.PathLike)):
        if isinstance(source, ReadOnce):
            return source
        try:
            source.fileno()
        except (AttributeError, OSError, ValueError):
            return source  # (a stream in memory: the reader takes it as it is)
        return ReadOnce(source, PEEK_BYTES, waiting, owns=False)
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return source  # (the reader says why it cannot be opened)
    if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return source
    name = os.fspath(source)
    try:
        with waiting if waiting is not None else nullcontext():
            raw = open(name, "rb", buffering=0)  # noqa: SIM115 (closed by the reader)
    except OSError as e:
        raise open_error(name, e, False) from None
    return ReadOnce(raw, PEEK_BYTES, waiting)


def _open(source: str | os.PathLike[str] | IO[bytes],
          waiting: AbstractContextManager[Any] | None = None,
          found: bool = False) -> tuple[str, IO[bytes], bool]:
    """Open a path (inside `waiting`: a named pipe's open waits for a writer) or take a
    binary file object; returns (name, stream, we_own_it). `found`: see `open_error`."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        try:
            with waiting if waiting is not None else nullcontext():
                f: IO[bytes] = open(name, "rb", buffering=0)  # noqa: SIM115 (closed by caller)
        except OSError as e:
            raise open_error(name, e, found) from None
        return name, f, True
    label = getattr(source, "name", None)
    name = label if isinstance(label, str) else "<stream>"
    return name, source, isinstance(source, ReadOnce)


class Stopped(Exception):
    """The reading of a `PipeStream` was stopped (its `stop` event was set)."""


class PipeStream(io.RawIOBase):
    """A named pipe, or an open descriptor (standard input), read as a capture is written
    into it, so that another thread can stop the reading at any moment: `read` waits for
    input in slices of `tick` seconds and raises `Stopped` once `stop` is set. A named
    pipe is opened without waiting for its writer (a plain open blocks until a writer
    opens it, where nothing can stop it): that wait is in the first read. For readers
    in threads of their own, which no signal interrupts (pcap-dump's main thread stops
    on its signal inside `waiting` instead). The descriptor is closed by `close`. Unix:
    it selects on the pipe. A raw stream: given to a `ReadOnce`, its first bytes can be
    peeked at (a capture or a frame-trace log?) and then read from the start.

    `name` is what errors call the stream; `got` counts the bytes read so far."""

    def __init__(self, source: str | os.PathLike[str] | int, stop: threading.Event, *,
                 name: str | None = None, tick: float = 0.1) -> None:
        super().__init__()
        self.fd = -1  # (until open: `close` has nothing to close)
        self.stop = stop
        self.tick = tick
        self.got = 0
        if isinstance(source, int):
            self.name = name or f"<fd {source}>"
            self.fd = source
        else:
            self.name = name or os.fspath(source)
            try:
                # (for reading, O_NONBLOCK opens a named pipe at once, writer or not)
                fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
            except OSError as e:
                raise open_error(self.name, e, False) from None
            os.set_blocking(fd, True)  # the reads wait in select, then read what is there
            self.fd = fd

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes as soon as there are any (b"": the writer closed the pipe)."""
        fd = self.fd
        while True:
            if self.stop.is_set():
                raise Stopped(self.name)
            # (a named pipe no writer opened yet is not ready; one whose writer closed is)
            ready, _, _ = select.select([fd], [], [], self.tick)
            if ready:
                data = os.read(fd, n if n > 0 else BLOCK_SIZE)
                self.got += len(data)
                return data

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        n = len(data)
        memoryview(b).cast("B")[:n] = data
        return n

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        super().close()


class _Blocks:
    """Reads a stream in large blocks; `read()` returns b"" at the end. Gzip input is
    recognised by its magic number and decompressed on the fly (`_Gunzip`).

    A gzip stream that is cut short or damaged (a capture stopped while writing it, a
    partial download, a bad byte) gives every byte that could be decompressed first; the
    error comes with the next read, at the offset where the good bytes end, and says where
    in the compressed file the damage is."""

    __slots__ = ("_closers", "_read", "_waiting", "first", "gzip", "name", "size")

    def __init__(self, name: str, f: IO[bytes], size: int = BLOCK_SIZE,
                 waiting: AbstractContextManager[Any] | None = None) -> None:
        self.name = name
        self.size = size
        self._waiting = waiting if waiting is not None else nullcontext()
        self._closers: list[IO[bytes]] = [f]
        self.gzip = False
        read = getattr(f, "read1", None) or f.read
        first = self._guard(read, 0)
        if first[:2] == _GZIP_MAGIC:
            self.gzip = True
            read = _Gunzip(first, read).read
            first = self._guard(read, 0)
        self._read = read
        self.first = first

    def _guard(self, read: Any, offset: int) -> bytes:
        try:
            with self._waiting:
                return read(self.size)  # type: ignore[no-any-return]
        except _GzipDamage as e:
            raise CaptureError(self.name, offset, e.problem, where=e.where) from None
        except (OSError, EOFError, zlib.error) as e:
            raise CaptureError(self.name, offset,
                               f"cannot read: {getattr(e, 'strerror', None) or e}") from None

    def read(self, offset: int) -> bytes:
        return self._guard(self._read, offset)

    def close(self) -> None:
        for c in self._closers:
            c.close()


class _GzipDamage(Exception):
    """Gzip input that does not decompress: what is wrong, and where in the compressed
    file (`at`, a byte offset) it was found."""

    def __init__(self, problem: str, at: int, cut_short: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.at = at
        self.where = (f"after {at} bytes" if cut_short
                      else f"found at byte offset {at} of the compressed file")


class _Gunzip:
    """The decompressed bytes of gzip input, member after member (zero padding between
    members skipped, as gzip does). `read(n)` gives up to n bytes, b"" at the end.

    Damage is found to the byte: the compressed input goes in small pieces, and the piece
    in which zlib fails is fed again, a prefix at a time, to a copy of the decompressor
    as it was before it; the bytes the good prefix decompresses to are handed out, and
    the next read raises `_GzipDamage` with the offset of the bad byte. Input that ends
    inside a member (a file cut short) raises it at the end of the file."""

    PIECE = 1 << 14  # compressed bytes per step (a step's output is at most ~1000 times it)

    def __init__(self, head: bytes, read_raw: Callable[[int], bytes]) -> None:
        self._raw = read_raw  # (called inside the reader's `waiting`)
        self._buf = head  # compressed input; _buf[_off:] is not fed yet
        self._off = 0
        self._pos = 0  # offset in the compressed file of _buf[_off]
        self._raw_eof = False
        self._d: Any = zlib.decompressobj(31)
        self._member_done = False
        self._full = False  # the last step's output filled what was asked for
        self._error: _GzipDamage | None = None

    def _more(self) -> bool:
        """Read more compressed input; False at the end of the file."""
        if self._raw_eof:
            return False
        data = self._raw(BLOCK_SIZE)
        if not data:
            self._raw_eof = True
            return False
        self._buf = self._buf[self._off:] + data if self._off < len(self._buf) else data
        self._off = 0
        return True

    def read(self, n: int) -> bytes:
        if self._error is not None:
            raise self._error
        parts: list[bytes] = []
        got = 0
        while got < n:
            if self._member_done:
                # zero padding, then another member or the end
                buf, off = self._buf, self._off
                while off < len(buf) and buf[off] == 0:
                    off += 1
                self._pos += off - self._off
                self._off = off
                if len(buf) - off < 2:
                    if self._more():
                        continue
                    if off == len(buf):
                        break
                if buf[off : off + 2] != _GZIP_MAGIC:
                    self._error = _GzipDamage(
                        "bytes that are not gzip data follow the gzip data", self._pos)
                    break
                self._d = zlib.decompressobj(31)
                self._member_done = self._full = False
            if self._off == len(self._buf) and not self._full and not self._more():
                self._error = _GzipDamage(_CUT_SHORT, self._pos, cut_short=True)
                break
            d = self._d
            data = self._buf[self._off : self._off + self.PIECE]
            before = d.copy()
            try:
                piece = d.decompress(data, n - got)
            except zlib.error as e:
                good, bad = _locate(before, data)
                if good:
                    parts.append(good)
                    got += len(good)
                self._error = _GzipDamage(f"gzip data is corrupt: {_zlib_reason(e)}",
                                          self._pos + bad)
                break
            # (output that did not fit may wait inside the decompressor, input used up)
            self._full = len(piece) == n - got
            used = len(data) - len(d.unused_data if d.eof else d.unconsumed_tail)
            self._pos += used
            self._off += used
            if d.eof:
                self._member_done = True
            parts.append(piece)
            got += len(piece)
        if not got and self._error is not None:
            raise self._error
        return parts[0] if len(parts) == 1 else b"".join(parts)


_CUT_SHORT = "gzip file is cut short: it ends inside its compressed data"


def _locate(before: Any, data: bytes) -> tuple[bytes, int]:
    """`data` made the decompressor (as it was: `before`) fail: the bytes its longest good
    prefix decompresses to, and the index in `data` of the byte that fails."""
    lo, hi = 0, len(data)  # data[:lo] decompresses, data[:hi] fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            before.copy().decompress(data[:mid])
        except zlib.error:
            hi = mid
        else:
            lo = mid
    return (before.copy().decompress(data[:lo]) if lo else b""), lo


def _zlib_reason(e: zlib.error) -> str:
    """zlib's reason without its prefix ('Error -3 while decompressing data: ...')."""
    text = str(e)
    return text.split(": ", 1)[1] if ": " in text else text


def read_packets(source: str | os.PathLike[str] | IO[bytes], *,
                 block_size: int = BLOCK_SIZE,
                 waiting: AbstractContextManager[Any] | None = None,
                 found: bool = False) -> Iterator[Packet]:
    """Yield `(time_ns, linktype, data)` for each packet of one capture (pcap or pcapng,
    optionally gzip-compressed). `source` is a path or a binary stream (a pipe works).
    The file is read `block_size` bytes at a time, each read inside `waiting`. `found`:
    the path was found in a folder or by a glob, not named (see `open_error`)."""
    for buf, records in read_batches(source, block_size=block_size, waiting=waiting,
                                     found=found):
        mv = memoryview(buf)
        for ts, linktype, start, stop in records:
            yield ts, linktype, mv[start:stop]


def read_batches(source: str | os.PathLike[str] | IO[bytes], *,
                 block_size: int = BLOCK_SIZE,
                 waiting: AbstractContextManager[Any] | None = None,
                 found: bool = False) -> Iterator[Batch]:
    """The packets of one capture a block at a time: `(block, records)` where each record
    is `(time_ns, linktype, start, stop)` and the packet is `block[start:stop]` (`block`
    is bytes). What `read_packets` yields, without an object per packet for the loops
    that read the headers in place (`read_capture`). A damaged file yields the records
    before the damage, then raises `CaptureError`. `found`: as for `read_packets`."""
    name, f, own = _open(source, waiting, found)
    try:
        blocks = _Blocks(name, f, block_size, waiting)
    except BaseException:
        if own:
            f.close()
        raise
    try:
        head = blocks.first
        while len(head) < 4:
            more = blocks.read(len(head))
            if not more:
                break
            head += more
        if len(head) < 4:
            raise CaptureError(name, 0, "not a capture file: too short to be pcap or pcapng")
        magic = int.from_bytes(head[:4], "little")
        if magic == _SHB:
            yield from _pcapng(blocks, head)
        elif magic in _PCAP_MAGIC:
            yield from _pcap(blocks, head, magic)
        else:
            raise _not_a_capture(name, head, blocks.gzip)
    except CaptureError as e:
        if blocks.gzip and e.where is None:  # an offset in the decompressed data, not the file
            raise CaptureError(name, e.offset, e.problem, where=(
                f"at byte offset {e.offset} of the decompressed data")) from None
        raise
    finally:
        if own:
            blocks.close()


# Other compressions, by their magic numbers: named, since only gzip is read
_COMPRESSED = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"),
               (b"\x04\x22\x4d\x18", "lz4"))


def _not_a_capture(name: str, head: bytes, gzipped: bool) -> CaptureError:
    if gzipped and head[:2] == _GZIP_MAGIC:
        return CaptureError(name, 0, "not a capture file: gzip data inside gzip data "
                            "(compressed twice: gunzip it once first)", where="")
    for magic, what in _COMPRESSED:
        if head.startswith(magic):
            return CaptureError(name, 0, f"not a capture file: {what}-compressed data "
                                f"(decompress it first: only gzip is read as it is)",
                                where="")
    return CaptureError(name, 0, f"not a capture file: starts with {bytes(head[:4]).hex()} "
                        "(expected a pcap or pcapng magic number)")


def _unsupported(name: str, linktypes: Iterable[int], packets: int | None) -> CaptureError:
    """A capture whose packets are all of link types the decoder does not read."""
    lts = sorted(linktypes)
    what = (f"link type {lts[0]} is" if len(lts) == 1
            else f"link types {', '.join(map(str, lts))} are")
    which = "none of its packets" if packets is None else (
        f"none of its {packets} packet{'' if packets == 1 else 's'}")
    return CaptureError(name, 0, f"{what} not supported: {which} can be read (supported: "
                        "Ethernet, Linux cooked capture, raw IP, BSD loopback)", where="")


def _pcap(blocks: _Blocks, buf: bytes, magic: int) -> Iterator[Batch]:
    order, frac_ns, rec_size = _PCAP_MAGIC[magic]
    name = blocks.name
    base = 0  # file offset of buf[0]
    while len(buf) < 24:
        more = blocks.read(len(buf))
        if not more:
            raise CaptureError(name, len(buf), "truncated pcap file header")
        buf += more
    _vmaj, _vmin, _zone, _sig, snaplen, network = Struct(order + "HHiIII").unpack_from(buf, 4)
    linktype = network & 0xFFFF  # the upper bits may carry FCS information
    if linktype not in SUPPORTED_LINKTYPES:
        raise _unsupported(name, [linktype], None)
    limit = max(snaplen, 262144) if snaplen <= MAX_RECORD else MAX_RECORD
    rec = Struct(order + "IIII").unpack_from
    pos = 24
    while True:
        n = len(buf)
        records: list[tuple[int, int, int, int]] = []
        append = records.append
        error = None
        while pos + rec_size <= n:
            sec, frac, incl, _orig = rec(buf, pos)
            end = pos + rec_size + incl
            if end > n:
                if incl > limit:
                    error = CaptureError(
                        name, base + pos, f"corrupt pcap record: captured length {incl}"
                    )
                break
            append((sec * 1_000_000_000 + frac * frac_ns, linktype, pos + rec_size, end))
            pos = end
        if records:
            yield buf, records
        if error is not None:
            raise error
        more = blocks.read(base + n)
        if not more:
            if pos < n:
                raise CaptureError(
                    name, base + pos, "truncated pcap file: last packet record is cut short"
                )
            return
        base += pos
        buf = buf[pos:] + more
        pos = 0


# Packet times a clock can show (years 1 to 9999, in ns since the epoch); a pcapng time
# outside them comes from a damaged block (a 64-bit count of microseconds reaches the year
# 586,000).
_MIN_NS = -62_135_596_800 * 1_000_000_000
_MAX_NS = 253_402_300_799 * 1_000_000_000


def _bad_time(name: str, offset: int) -> CaptureError:
    return CaptureError(name, offset, "corrupt pcapng packet block (time out of range)")


def _tsresol(v: int) -> tuple[int, int]:
    """if_tsresol → (multiplier, divisor) turning timestamp units into nanoseconds."""
    if v & 0x80:  # negative power of two
        return 1_000_000_000, 1 << (v & 0x7F)
    p = v & 0x7F
    return (10 ** (9 - p), 1) if p <= 9 else (1, 10 ** (p - 9))


def _pcapng(blocks: _Blocks, buf: bytes) -> Iterator[Batch]:
    name = blocks.name
    base = 0
    pos = 0
    order = "<"
    hdr = Struct("<II").unpack_from
    epb = Struct("<IIIII").unpack_from
    spb = Struct("<I").unpack_from
    opb = Struct("<HHIIII").unpack_from
    epb7 = Struct("<IIIIIII").unpack_from
    # per interface: (linktype, mul, div, offset_ns, snaplen)
    ifaces: list[tuple[int, int, int, int, int]] = []
    # per interface: (linktype, mul) when its times are units * mul, else (linktype, 0)
    quick: list[tuple[int, int]] = []
    last_ts = 0
    seen_shb = False
    # link types of the interfaces: a file whose packets are all on interfaces of link
    # types not read says so at its end, rather than seeming to hold no TCP at all
    readable = False
    unreadable: set[int] = set()
    packets = 0
    while True:
        n = len(buf)
        records: list[tuple[int, int, int, int]] = []
        append = records.append
        try:
            while pos + 12 <= n:
                if pos + 28 <= n:
                    # enhanced packet block, the common case: one unpack, checks inline
                    btype, blen, iface, hi, lo, caplen, _orig = epb7(buf, pos)
                else:
                    btype, blen = hdr(buf, pos)
                end = pos + blen
                if (btype == 6 and end <= n and blen >= 32 and not blen & 3
                        and spb(buf, end - 4)[0] == blen and caplen <= blen - 32
                        and iface < len(ifaces)):
                    # (blen >= 32 and end <= n imply the 7-field unpack above happened)
                    lt, mul = quick[iface]
                    if mul:  # (as below, with fewer operations on these large integers)
                        last_ts = ((hi << 32) | lo) * mul
                    else:
                        lt, mul, div, off, _snap = ifaces[iface]
                        last_ts = ((hi << 32) | lo) * mul // div + off
                    if not _MIN_NS <= last_ts <= _MAX_NS:
                        raise _bad_time(name, base + pos)
                    append((last_ts, lt, pos + 28, pos + 28 + caplen))
                    pos = end
                    continue
                if btype == _SHB:
                    bom_le = int.from_bytes(buf[pos + 8 : pos + 12], "little")
                    if bom_le == _BOM:
                        order = "<"
                    elif bom_le == 0x4D3C2B1A:
                        order = ">"
                    else:
                        raise CaptureError(name, base + pos, "corrupt pcapng section header")
                    hdr = Struct(order + "II").unpack_from
                    epb = Struct(order + "IIIII").unpack_from
                    spb = Struct(order + "I").unpack_from
                    opb = Struct(order + "HHIIII").unpack_from
                    epb7 = Struct(order + "IIIIIII").unpack_from
                    btype, blen = hdr(buf, pos)
                    ifaces = []
                    quick = []
                    seen_shb = True
                elif not seen_shb:
                    raise CaptureError(name, base + pos,
                                       "pcapng file does not start with a section")
                if blen < 12 or blen & 3 or blen > MAX_RECORD:
                    raise CaptureError(name, base + pos, f"corrupt pcapng block (length {blen})")
                end = pos + blen
                if end > n:
                    break
                if spb(buf, end - 4)[0] != blen:
                    raise CaptureError(
                        name, base + pos, "corrupt pcapng block (trailing length does not match)"
                    )
                if btype == 6:  # enhanced packet block
                    iface, hi, lo, caplen, _orig = epb(buf, pos + 8)
                    if caplen > blen - 32:
                        raise CaptureError(name, base + pos, "corrupt pcapng packet block length")
                    try:
                        lt, mul, div, off, _snap = ifaces[iface]
                    except IndexError:
                        raise CaptureError(
                            name, base + pos, f"packet for undeclared interface {iface}"
                        ) from None
                    ts = (hi << 32) | lo
                    last_ts = (ts * mul if div == 1 else ts * mul // div) + off
                    if not _MIN_NS <= last_ts <= _MAX_NS:
                        raise _bad_time(name, base + pos)
                    append((last_ts, lt, pos + 28, pos + 28 + caplen))
                elif btype == 3:  # simple packet block: interface 0, no timestamp
                    if not ifaces:
                        raise CaptureError(name, base + pos, "packet for undeclared interface 0")
                    orig = spb(buf, pos + 8)[0]
                    lt, _m, _d, _o, snap = ifaces[0]
                    caplen = min(orig, blen - 16)
                    if snap:
                        caplen = min(caplen, snap)
                    append((last_ts, lt, pos + 12, pos + 12 + caplen))
                elif btype == 1:  # interface description
                    ifaces.append(_idb(buf, pos, blen, order))
                    if ifaces[-1][0] in SUPPORTED_LINKTYPES:
                        readable = True
                    else:
                        unreadable.add(ifaces[-1][0])
                    lt, mul, div, off, _snap = ifaces[-1]
                    quick.append((lt, mul if div == 1 and not off else 0))
                elif btype == 2:  # obsolete packet block
                    iface, _drops, hi, lo, caplen, _orig = opb(buf, pos + 8)
                    if caplen > blen - 32 or iface >= len(ifaces):
                        raise CaptureError(name, base + pos, "corrupt pcapng packet block")
                    lt, mul, div, off, _snap = ifaces[iface]
                    ts = (hi << 32) | lo
                    last_ts = (ts * mul if div == 1 else ts * mul // div) + off
                    if not _MIN_NS <= last_ts <= _MAX_NS:
                        raise _bad_time(name, base + pos)
                    append((last_ts, lt, pos + 28, pos + 28 + caplen))
                # every other block (statistics, name resolution, secrets, custom) is skipped
                pos = end
        except CaptureError:
            if records:  # the packets before the damage first
                yield buf, records
            raise
        if records:
            packets += len(records)
            yield buf, records
        more = blocks.read(base + n)
        if not more:
            if pos < n:
                raise CaptureError(name, base + pos, "truncated pcapng file: last block is cut short")
            if unreadable and not readable and packets:
                raise _unsupported(name, unreadable, packets)
            return
        base += pos
        buf = buf[pos:] + more
        pos = 0


def _idb(buf: bytes, pos: int, blen: int, order: str) -> tuple[int, int, int, int, int]:
    linktype, _res, snaplen = Struct(order + "HHI").unpack_from(buf, pos + 8)
    mul, div, offset = 1000, 1, 0  # default resolution: microseconds
    opt = Struct(order + "HH").unpack_from
    p = pos + 16
    end = pos + blen - 4
    while p + 4 <= end:
        code, length = opt(buf, p)
        if code == 0:
            break
        v = p + 4
        if code == 9 and length >= 1:
            mul, div = _tsresol(buf[v])
        elif code == 14 and length >= 8:
            offset = Struct(order + "q").unpack_from(buf, v)[0] * 1_000_000_000
        p = v + ((length + 3) & ~3)
    return linktype, mul, div, offset, snaplen


def merge_packets(sources: Iterable[Iterator[Packet]]) -> Iterator[Packet]:
    """Merge several packet iterators by time (each must be in time order, as captures
    are); ties keep the order of `sources`."""
    its = list(sources)
    if len(its) == 1:
        return its[0]
    return heapq.merge(*its, key=itemgetter(0))
