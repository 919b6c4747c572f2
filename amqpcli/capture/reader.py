"""Capture files → flow events (`read_capture`), and → flow-keyed segments (`read_segments`)
for executors that group packets by flow before reassembling them."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from typing import BinaryIO

from amqpcli.capture.decode import PacketDecoder, Segment
from amqpcli.capture.files import CaptureError, Packet, merge_packets, read_packets
from amqpcli.capture.tcp import Event, FlowKey, FlowTracker, flow_key

Source = str | os.PathLike[str] | BinaryIO


def _guarded(source: Source, errors: list[CaptureError]) -> Iterator[Packet]:
    """One file's packets; its error ends that file only and is kept for the caller to
    raise once the other files are done."""
    try:
        yield from read_packets(source)
    except CaptureError as e:
        errors.append(e)


def read_capture(
    sources: Source | Iterable[Source],
    *,
    ports: Collection[int] = (),
    all_flows: bool = False,
    max_buffer: int = 4 << 20,
    gap_timeout: float = 30.0,
    tracker: FlowTracker | None = None,
    decoder: PacketDecoder | None = None,
) -> Iterator[Event]:
    """Events (`Opened`, `Data`, `Gap`, `Closed`) of the TCP flows in one or more capture
    files, merged by time. See `amqpcli.capture.tcp` for what each event means.

    A damaged file raises `CaptureError` (exit code DECODE) after every event that could
    be read — from all files — was yielded and the open flows were closed (how="end").
    Pass your own `tracker`/`decoder` to read their counters afterwards.
    """
    if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read"):
        srcs: list[Source] = [sources]  # type: ignore[list-item]
    else:
        srcs = list(sources)  # type: ignore[arg-type]
    if tracker is None:
        tracker = FlowTracker(ports, all_flows=all_flows, max_buffer=max_buffer,
                              gap_timeout=gap_timeout)
    dec = decoder or PacketDecoder()
    errors: list[CaptureError] = []
    if len(srcs) == 1:
        packets = read_packets(srcs[0])
    else:
        packets = merge_packets(_guarded(s, errors) for s in srcs)
    out = tracker.events
    decode = dec.decode
    feed = tracker.feed
    try:
        for ts, linktype, data in packets:
            seg = decode(linktype, data)
            if seg is not None:
                feed(ts, *seg)
                if out:
                    yield from out
                    out.clear()
    except CaptureError as e:  # only from the single file: merged ones are guarded
        errors.append(e)
    tracker.finish()
    if out:
        yield from out
        out.clear()
    if errors:
        if len(errors) > 1:
            first = errors[0]
            raise CaptureError(first.path, first.offset,
                               f"{first.problem} (and {len(errors) - 1} more damaged files)")
        raise errors[0]


def read_segments(source: Source, *, copy: bool = True,
                  decoder: PacketDecoder | None = None) -> Iterator[tuple[FlowKey, int, Segment]]:
    """`(flow key, time_ns, segment)` for every TCP segment of one file, in file order.
    The flow key is canonical (the same for both directions), so segments can be grouped
    by flow across files and tasks, sorted by time and fed to a `FlowTracker`. With
    `copy` the payload is `bytes` (picklable), else a memoryview into the read block."""
    dec = decoder or PacketDecoder()
    for ts, linktype, data in read_packets(source):
        seg = dec.decode(linktype, data)
        if seg is None:
            continue
        s = Segment._make(seg)
        if copy:
            s = s._replace(payload=bytes(s.payload))
        yield flow_key(s.src, s.sport, s.dst, s.dport), ts, s
