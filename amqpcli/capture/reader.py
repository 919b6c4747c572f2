"""Capture files → flow events (`read_capture`), and → flow-keyed segments (`read_segments`)
for executors that group packets by flow before reassembling them."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from heapq import heappop, heappush, heapreplace
from typing import Any, BinaryIO, TypeVar

from amqpcli.capture.decode import _FAST, PacketDecoder, Segment
from amqpcli.capture.files import (
    BLOCK_SIZE,
    CaptureError,
    Packet,
    found_paths,
    read_batches,
    read_packets,
    was_found,
)
from amqpcli.capture.tcp import Event, FlowKey, FlowTracker, flow_key

Source = str | os.PathLike[str] | BinaryIO


def _guarded(source: Source, errors: list[CaptureError] | None,
             block_size: int = BLOCK_SIZE,
             waiting: AbstractContextManager[Any] | None = None,
             found: Collection[str] = ()) -> Generator[Packet, None, None]:
    """One file's packets; its error ends that file only and is kept for the caller to
    raise once the other files are done (`errors=None`: ignored, for a first look)."""
    try:
        yield from read_packets(source, block_size=block_size, waiting=waiting,
                                found=was_found(source, found))
    except CaptureError as e:
        if errors is not None:
            errors.append(e)


def merge_files(sources: Sequence[Source], errors: list[CaptureError],
                waiting: AbstractContextManager[Any] | None = None,
                found: Collection[str] = ()) -> Iterator[Packet]:
    """The packets of several captures merged by time (`merge_by_time`). Each file's
    errors are appended to `errors`; every read is inside `waiting` (see
    `amqpcli.capture.files`); `found` as for `read_capture`."""
    return merge_by_time(sources, lambda i, errs, block: _guarded(sources[i], errs, block,
                                                                  waiting, found), errors)


T = TypeVar("T", bound=tuple[Any, ...])
# (source index, where its errors go (None: ignored, for a first look), block size) →
# that source's items, each a tuple whose first member is its time
OpenSource = Callable[[int, "list[CaptureError] | None", int], Generator[T, None, None]]


# A packet of several files as one int, for the tracker to keep with bytes held beyond a
# hole (`FlowTracker.feed`'s `packet`): the file's index and the packet's number in that
# file (numbers stay far below 2**40). `file << FILE_SHIFT | number`; `key & NUMBER_MASK`.
FILE_SHIFT = 40
NUMBER_MASK = (1 << FILE_SHIFT) - 1


def merge_by_time(sources: Sequence[Source], open_source: OpenSource[T],
                  errors: list[CaptureError]) -> Iterator[T]:
    """The items of several captures merged by time, opening each file only when the
    merged stream reaches its first item: files that follow each other in time (a ring
    buffer's) are read one at a time, so a long set costs no more memory or file handles
    than the files that overlap. A file is peeked at for its first time and opened again
    when its turn comes; a stream cannot be read twice and stays open, and so does a
    named pipe or a device (`rereadable`).

    The order, the one every reader of a capture set follows (`pcap-dump` of the
    captures, and both executors of `--out`, `amqpcli.pipeline.inputs`): by time, then
    the file's place in `sources`, then the item's place in its file. An item's time is
    its first member, an int (ns): each packet's own time (pcap-dump: nothing more to
    do per packet) or its file's running maximum of them (the tables' effective time,
    `inputs.file_segments`). The order is the same: a packet whose time goes back is,
    once the packet before it in its file went out, before every other file's next item
    by either key, so it goes next either way (tests/capture/test_merge_order.py)."""
    # (first time, index, open iterator, its first item); paths are peeked and closed
    queued: list[tuple[int, int, Generator[T, None, None] | None, T | None]] = []
    for i, s in enumerate(sources):
        is_path = rereadable(s)
        it = open_source(i, None if is_path else errors, 1 << 16 if is_path else BLOCK_SIZE)
        first = next(it, None)
        if first is None:
            if is_path:  # read it again for its error, if it has one
                for _ in open_source(i, errors, BLOCK_SIZE):
                    pass
            continue
        if is_path:
            it.close()
            queued.append((first[0], i, None, None))
        else:
            queued.append((first[0], i, it, first))
    queued.sort(key=lambda w: (w[0], w[1]))
    heap: list[tuple[int, int, T, Generator[T, None, None]]] = []
    wi = 0
    while True:
        while wi < len(queued) and (not heap or queued[wi][0] <= heap[0][0]):
            _t, i, opened, first = queued[wi]
            wi += 1
            if opened is None:
                opened = open_source(i, errors, BLOCK_SIZE)
                first = next(opened, None)
            if first is not None:
                heappush(heap, (first[0], i, first, opened))
        if not heap:
            return
        _t, i, p, cur = heap[0]
        yield p
        if len(heap) == 1:
            # the only open file: stream it until the next file's first item is due; at
            # the same time, that file's item goes first if that file comes first
            limit = None
            if wi < len(queued):
                limit = queued[wi][0] - 1 if queued[wi][1] < i else queued[wi][0]
            for p in cur:
                if limit is not None and p[0] > limit:
                    heapreplace(heap, (p[0], i, p, cur))
                    break
                yield p
            else:
                heappop(heap)
            continue
        nxt = next(cur, None)
        if nxt is None:
            heappop(heap)
        else:
            heapreplace(heap, (nxt[0], i, nxt, cur))


def read_capture(
    sources: Source | Iterable[Source],
    *,
    ports: Collection[int] = (),
    all_flows: bool = False,
    max_buffer: int = 4 << 20,
    gap_timeout: float = 30.0,
    tracker: FlowTracker | None = None,
    decoder: PacketDecoder | None = None,
    waiting: AbstractContextManager[Any] | None = None,
    found: Collection[str] | None = None,
) -> Iterator[Event]:
    """Events (`Opened`, `Data`, `Gap`, `Closed`) of the TCP flows in one or more capture
    files, merged by time. See `amqpcli.capture.tcp` for what each event means.

    A damaged file raises `CaptureError` (exit code DECODE) after every event that could
    be read — from all files — was yielded and the open flows were closed (how="end"):
    the first damaged file in path order, saying how many more there were (`first_of`).
    `found`: the paths that were found in folders or by globs, not named (None: as
    `sources` says, when it is an `ExpandedPaths`, what `amqpcli.pipeline.inputs.expand`
    returns): one of them that cannot be opened is a damaged file, where one named is a
    usage error.
    Pass your own `tracker`/`decoder` to read their counters afterwards.
    """
    if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read"):
        srcs: list[Source] = [sources]  # type: ignore[list-item]
    else:
        srcs = list(sources)  # type: ignore[arg-type]
    if tracker is None:
        tracker = FlowTracker(ports, all_flows=all_flows, max_buffer=max_buffer,
                              gap_timeout=gap_timeout)
    return _read(srcs, tracker, decoder or PacketDecoder(), waiting,
                 found_paths(sources, found))


def _read(srcs: list[Source], tracker: FlowTracker, dec: PacketDecoder,
          waiting: AbstractContextManager[Any] | None,
          found: Collection[str]) -> Iterator[Event]:
    """`read_capture`'s events (one generator, so every event is handed out from here).

    One file's packets are read in place, block by block (no object per packet); the
    usual IPv4 frame is decoded here (`PacketDecoder.decode_at`'s fast path, inlined: a
    property test holds the two together) and any other by the decoder, whose packet
    count is kept right for the events handed out: it is the number of the packet each
    event belongs to (the packet just read, or, for bytes held beyond a hole given up,
    the packet that carried them: the tracker's `late_packets`)."""
    errors: list[CaptureError] = []
    out = tracker.events
    late = tracker.late_packets
    feed = tracker.feed
    count = dec.packets
    try:
        if len(srcs) == 1:
            decode_at = dec.decode_at
            last_linktype = -1  # the fast path's parts for it (most files have one):
            unpack: Any = None
            ip_off = min_len = 0
            ipv4: object = None
            try:
                for buf, records in read_batches(srcs[0], waiting=waiting,
                                                 found=was_found(srcs[0], found)):
                    for ts, linktype, start, stop in records:
                        count += 1
                        if linktype != last_linktype:
                            last_linktype = linktype
                            fast = _FAST.get(linktype)
                            unpack = None if fast is None else fast[0]
                            if fast is not None:
                                ip_off, ipv4, min_len = fast[1], fast[2], fast[3]
                        if unpack is not None and stop - start >= min_len:
                            (et, vihl, total, frag, proto, src, dst, sport, dport, seq, ack,
                             offflags) = unpack(buf, start)
                            if (vihl == 0x45 and proto == 6 and not frag & 0x3FFF
                                    and et == ipv4):
                                ip = start + ip_off
                                end = ip + total
                                if end > stop or total < 40:
                                    end = stop
                                # None: the in-order path, no event of an earlier packet
                                if feed(ts, src, sport, dst, dport, seq, ack,
                                        offflags & 0x1FF,
                                        buf[ip + 20 + ((offflags >> 12) << 2) : end],
                                        count) is None or not late:
                                    if out:
                                        dec.packets = count
                                        yield from out
                                        out.clear()
                                    continue
                                # (after the usual case's continue, which so stays a short
                                # jump back: this loop is the reader's hot path)
                                yield from _numbered(tracker, dec, count)
                                out.clear()
                                continue
                        seg = decode_at(linktype, buf, start, stop)
                        if seg is not None:
                            if feed(ts, *seg, count) is not None and late:
                                yield from _numbered(tracker, dec, count)
                                out.clear()
                            elif out:
                                dec.packets = count
                                yield from out
                                out.clear()
            finally:
                dec.packets = count  # (also when the file's damage ends the loop)
        else:
            decode = dec.decode
            for ts, linktype, data in merge_files(srcs, errors, waiting, found):
                seg = decode(linktype, data)
                if seg is not None:
                    if feed(ts, *seg, dec.packets) is not None and late:
                        yield from _numbered(tracker, dec, dec.packets)
                        out.clear()
                    elif out:
                        yield from out
                        out.clear()
    except CaptureError as e:  # only from the single file: merged ones are guarded
        errors.append(e)
    tracker.finish()
    if out:
        yield from _numbered(tracker, dec, dec.packets)
        out.clear()
    if errors:
        raise first_of(errors)


def _numbered(tracker: FlowTracker, dec: PacketDecoder, count: int) -> Iterator[Event]:
    """The tracker's events, `dec.packets` set to the packet of each as it is handed
    out (`FlowTracker.event_packets`: `count`, the packet read last, for most); `count`
    again after them."""
    numbers = tracker.event_packets(count)
    try:
        for ev, number in zip(tracker.events, numbers, strict=True):
            dec.packets = number
            yield ev
    finally:
        dec.packets = count


def in_path_order(errors: Iterable[CaptureError]) -> list[CaptureError]:
    """Damaged files' errors in the order of their paths, whatever order the reading met
    them in (a merge by time meets a file with no packet before any packet is read): the
    order in which every reader and executor names them."""
    return sorted(errors, key=lambda e: e.path)


def first_of(errors: list[CaptureError]) -> CaptureError:
    """The error to raise for damaged files: the first in path order, saying how many
    more there were (`and_more_damaged`)."""
    if len(errors) == 1:
        return errors[0]
    first = in_path_order(errors)[0]
    return CaptureError(first.path, first.offset, first.problem, first.where,
                        more=sum(1 + e.more for e in errors) - 1)


def rereadable(source: Source) -> bool:
    """Whether `source` can be read twice, from its start: a path of a regular file (or
    one that will not open: its error comes when it is opened), not a stream, a named
    pipe or a device."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        return stat.S_ISREG(os.stat(source).st_mode)
    except (OSError, ValueError):
        return True


def read_segments(source: Source, *, copy: bool = True,
                  decoder: PacketDecoder | None = None) -> Iterator[tuple[FlowKey, int, Segment]]:
    """`(flow key, time_ns, segment)` for every TCP segment of one file, in file order.
    The flow key is canonical (the same for both directions), so segments can be grouped
    by flow across files and tasks, sorted by time (ties: file order, then position in
    the file) and given to `reassemble` or a `FlowTracker`. With `copy` the payload is
    `bytes` (picklable), else a memoryview into the read block."""
    dec = decoder or PacketDecoder()
    for ts, linktype, data in read_packets(source):
        seg = dec.decode(linktype, data)
        if seg is None:
            continue
        s = Segment._make(seg)
        if copy:
            s = s._replace(payload=bytes(s.payload))
        yield flow_key(s.src, s.sport, s.dst, s.dport), ts, s


def reassemble(items: Iterable[tuple[int, Segment | tuple[object, ...]]], *,
               ports: Collection[int] = (), all_flows: bool = False,
               max_buffer: int = 4 << 20, gap_timeout: float = 30.0) -> Iterator[Event]:
    """Events from `(time_ns, segment)` pairs in time order — typically one flow's
    segments, gathered from `read_segments` of several files."""
    tracker = FlowTracker(ports, all_flows=all_flows, max_buffer=max_buffer,
                          gap_timeout=gap_timeout)
    out = tracker.events
    for ts, seg in items:
        tracker.feed(ts, *seg)  # type: ignore[arg-type]
        if out:
            yield from out
            out.clear()
    tracker.finish()
    yield from out
    out.clear()
