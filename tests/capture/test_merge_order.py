"""The one order of the packets of several capture files: by time, then the file's place
in the set, then the packet's place in its file (`amqpcli.capture.reader.merge_by_time`).
pcap-dump reads captures in it (`merge_files`, and the dissector's numbered merge), and
`--out` gives each flow key's segments to its `FlowJob` in it (`merged_segments`, and
Spark's sort by effective time, file, packet): so the summary of the captures and the
summary of their tables cannot see packets of equal time in two orders (they did: a
file read on its own went on past a packet of the next file at the same time, and two
colliding connections came out with 8 violations one way, 9 the other)."""

from __future__ import annotations

import io
from collections.abc import Generator
from itertools import accumulate
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.capture.decode import ACK, PacketDecoder
from amqpcli.capture.reader import merge_by_time, merge_files
from amqpcli.capture.writer import CaptureWriter, link_frame, tcp_packet
from amqpcli.pipeline.inputs import merged_segments

T0 = 1_700_000_000_000_000_000


def _write(path: Path, times: list[int], file_no: int) -> str:
    """A capture of one TCP segment per time, each numbered in its sequence number:
    file_no * 1000 + its packet number (1-based)."""
    with CaptureWriter(path) as w:
        for n, t in enumerate(times, 1):
            w.write(T0 + t, link_frame(1, tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672,
                                                     file_no * 1000 + n, 1, ACK)))
    return str(path)


def _expected(files: list[list[int]]) -> list[tuple[int, int]]:
    """(file, packet) of every packet by (time, file, packet), times taken as each
    file's running maximum (a packet whose time goes back keeps its place in its file)."""
    keyed = [(eff, f, n) for f, times in enumerate(files)
             for n, eff in enumerate(accumulate(times, max), 1)]
    return [(f, n) for _eff, f, n in sorted(keyed)]


def _both_readers(paths: list[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(file, packet) in the order pcap-dump reads the captures, and in the order the
    tables are made from them."""
    dec = PacketDecoder()
    captures = []
    for _ts, linktype, data in merge_files(paths, []):
        seq = dec.decode(linktype, data)[4]  # type: ignore[index]
        captures.append(divmod(seq, 1000))
    tables = [(f, n) for _ts, f, n, _seg in merged_segments(paths, [])]
    return captures, tables


def test_a_packet_at_the_time_of_an_earlier_files_first_waits_for_it(tmp_path: Path) -> None:
    """b, the second file, starts first and is read on its own until a's first packet
    is due; its packets at that very time come after a's (a is first in the set)."""
    files = [[20, 20, 25], [10, 20, 20, 30]]
    paths = [_write(tmp_path / f"{name}.pcapng", times, f)
             for f, (name, times) in enumerate(zip("ab", files, strict=True))]
    captures, tables = _both_readers(paths)
    assert captures == tables == _expected(files) == [
        (1, 1), (0, 1), (0, 2), (1, 2), (1, 3), (0, 3), (1, 4)]


def test_equal_times_across_overlapping_files(tmp_path: Path) -> None:
    """Files open together (the merge by heap): ties by file, then packet; a packet
    whose time goes back stays after the one before it in its file."""
    files = [[5, 10, 10, 8, 10, 30], [5, 10, 12], [0, 5, 10, 10, 40]]
    paths = [_write(tmp_path / f"{f}.pcapng", times, f) for f, times in enumerate(files)]
    captures, tables = _both_readers(paths)
    assert captures == tables == _expected(files)


# a regular file, which the merge peeks at and opens again (`rereadable`); `items` below
# makes up its packets
_A_FILE = __file__


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 6), max_size=7), st.booleans()),
                min_size=1, max_size=4),
       st.booleans())
def test_merge_by_time_is_one_order_whatever_the_key(files: list[tuple[list[int], bool]],
                                                    effective: bool) -> None:
    """Keyed by each packet's own time (pcap-dump) or by its file's running maximum (the
    tables), with files peeked at and opened again (paths) or kept open (streams), the
    merge is the one order: by running maximum, then file, then packet."""
    times = [t for t, _path in files]
    # (a path is peeked at and opened again; anything else is read once)
    sources = [_A_FILE if path else io.BytesIO() for _t, path in files]

    def items(i: int, _errors: object, _block: int
              ) -> Generator[tuple[int, int, int], None, None]:
        keys = accumulate(times[i], max) if effective else times[i]
        for n, key in enumerate(keys, 1):
            yield key, i, n

    got = [(i, n) for _key, i, n in merge_by_time(sources, items, [])]
    assert got == _expected(times)
