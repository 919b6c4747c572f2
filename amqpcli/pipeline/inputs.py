"""Capture sets: which files, and their segments in the canonical order.

`expand(captures)` turns what the user gave (files, folders, globs) into a sorted list of
local capture files (the Spark executor lists remote paths through Hadoop instead), which
also says which of them were found in folders or by globs rather than named (`found`):
the readers are given that, for a file found that cannot be opened is a damaged file of
the set, and one named a usage error.

The canonical order of segments, which both executors follow for every flow key: by
*effective time*, then file index, then packet number. A file's effective time is the
running maximum of its packets' times, so a packet whose timestamp goes backwards keeps
its place in the file; within one file the order is therefore the file's own order, and
across files it is a merge by time. The events still carry each packet's own time. It is
the order in which `pcap-dump` reads the captures themselves: the in-process executor
merges with its merge (`amqpcli.capture.reader.merge_by_time`, where the rule is), and
the Spark executor sorts each key's segments by the same three columns.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import sys
from collections.abc import Callable, Collection, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from amqpcli.capture import CaptureError, PacketDecoder, flow_key, read_packets
from amqpcli.capture.files import BLOCK_SIZE, ExpandedPaths, found_paths, was_found
from amqpcli.capture.reader import merge_by_time
from amqpcli.errors import Exit, UserError
from amqpcli.render.types import printable

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".cap.gz")
# the usual names of frame-trace logs: a folder's files so named are looked at (their
# first lines) to tell a log
LOG_SUFFIXES = (".log", ".txt", ".trace", ".log.gz", ".txt.gz", ".trace.gz")


def is_capture_name(name: str) -> bool:
    return name.lower().endswith(CAPTURE_SUFFIXES)


def is_log_name(name: str) -> bool:
    return name.lower().endswith(LOG_SUFFIXES)


def are_logs(paths: list[str]) -> bool:
    """Whether a set `expand` gave is of frame-trace logs (else of captures), by the first
    lines of its regular files (a named pipe is not looked at: the reader peeks at it);
    logs and captures together are a usage error, worded as the views word it."""
    from amqpcli.capture.tracelog import are_trace_logs

    regular = [p for p in paths if _is_regular(p)]
    return are_trace_logs(regular) if regular else False


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and os.access(path, os.R_OK)
    except OSError:
        return False


def expand(captures: list[str], note: Callable[[str], None] | None = None) -> ExpandedPaths:
    """Files as given, capture files found in folders (recursively) and the frame-trace
    logs there (`_walk_folder`: files named as logs are, that are logs by their first
    lines), glob matches; sorted and without duplicates. A name that matches nothing, and
    a file named that cannot be opened, are usage errors. Whether the set is of logs or
    of captures (never both) says `are_logs`.

    What a folder or a glob gives is taken as it comes: a named pipe, a socket or a
    device there is not a capture file (only regular files are; a pipe would wait for a
    writer that may never come) and is skipped with a one-line `note` (default: on
    stderr); one that cannot be opened (a dangling link, no permission) stays in the set,
    and reading it reports it as a damaged file (the result, an `ExpandedPaths`, says
    which files were found: given to a reader as it is, it tells the reader)."""
    say = note if note is not None else _note
    out: list[str] = []
    found: list[str] = []
    skipped: list[str] = []  # files named as logs that are none: said once the set is known

    for c in captures:
        if any(ch in c for ch in "*?["):
            hits = sorted(glob.glob(c, recursive=True))
            if not hits:
                raise UserError(f"{c}: no files match", Exit.USAGE)
            for h in hits:
                found.extend(_walk_folder(h, say, skipped) if os.path.isdir(h)
                             else _entry(h, say))
        elif os.path.isdir(c):
            got = _walk_folder(c, say, skipped)
            if not got:
                raise UserError(f"{c}: no capture files (*.pcap, *.pcapng, gzipped) in it",
                                Exit.USAGE)
            found.extend(got)
        elif os.path.exists(c):
            _check_named(c)
            out.append(c)
        else:
            raise UserError(f"{c}: no such file", Exit.USAGE)
    for text in skipped:
        say(text)
    named = {_resolved(p) for p in out}
    paths = {_resolved(p) for p in found} - named
    return ExpandedPaths(sorted(named | paths), paths)


def _resolved(path: str) -> str:
    """The path to read: resolved (links followed), except a dangling link, which stays
    the path of the link (made absolute) for its error to name."""
    if os.path.islink(path) and not os.path.exists(path):
        return os.path.abspath(path)
    return str(Path(path).resolve())


def _note(text: str) -> None:
    print(f"amqp: note: {text}", file=sys.stderr, flush=True)


_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _entry(path: str, note: Callable[[str], None]) -> list[str]:
    """A file a folder or a glob gave: `[path]`, or `[]` with a note when it is not a
    regular file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return [path]  # (a dangling link, no permission: reading it says so)
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return [path]
    what = next((w for test, w in _KINDS if test(mode)), "not a regular file")
    note(f"{printable(path)}: {what}, not a capture file: skipped")
    return []


def _check_named(path: str) -> None:
    """A file named on its own must open (up front, a usage error otherwise). Only a
    regular file is opened to see: a named pipe is read as it is given (`mkfifo f;
    tcpdump -w f & amqp pcap-dump f`), and opening it here would let its writer start
    before the reader is there."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISSOCK(mode):
            raise UserError(f"{printable(path)}: a socket, not a capture file", Exit.USAGE)
        if stat.S_ISREG(mode):
            os.close(os.open(path, os.O_RDONLY))
        elif not os.access(path, os.R_OK):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as e:
        raise UserError(f"{printable(path)}: cannot open: {e.strerror or e}",
                        Exit.USAGE) from None


def _walk_folder(folder: str, note: Callable[[str], None], skipped: list[str]) -> list[str]:
    """A folder's capture files (by name), and its files named as logs are
    (`LOG_SUFFIXES`) that are frame-trace logs by their first lines (64 KiB read of
    each); one so named that is not is skipped, with a note added to `skipped`. Both
    kinds in one set are a usage error (`are_logs`), never one of them left out."""
    from amqpcli.capture.tracelog import SNIFF_LINES, is_trace_log

    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for f in files:
            if is_capture_name(f):
                found.extend(_entry(os.path.join(root, f), note))
            elif is_log_name(f):
                path = os.path.join(root, f)
                got = _entry(path, note)
                if got and _is_regular(path) and not is_trace_log(path):
                    skipped.append(f"{printable(path)}: not a frame-trace log (no frame "
                                   f"line in its first {SNIFF_LINES} lines): skipped")
                    continue
                found.extend(got)
    return found


Source = str | BinaryIO


def file_segments(source: Source, errors: list[CaptureError] | None = None,
                  found: bool = False, block_size: int = BLOCK_SIZE
                  ) -> Generator[tuple[int, int, int, tuple[Any, ...]], None, None]:
    """`(effective time, time, packet number, segment tuple)` of one file, in file order.
    Packet numbers count every record (1-based); the segment's payload is a memoryview
    into the read block (copy what you keep). A damaged file ends after its last
    readable packet; its error goes to `errors` (raised when `errors` is None). `found`:
    the file was found in a folder or by a glob (`read_packets`)."""
    dec = PacketDecoder()
    decode = dec.decode
    eff = -(1 << 62)
    n = 0
    try:
        for ts, linktype, data in read_packets(source, found=found, block_size=block_size):
            n += 1
            eff = max(eff, ts)
            seg = decode(linktype, data)
            if seg is not None:
                yield eff, ts, n, seg
    except CaptureError as e:
        if errors is None:
            raise
        errors.append(e)


def merged_segments(paths: list[str], errors: list[CaptureError],
                    found: Collection[str] | None = None
                    ) -> Iterator[tuple[int, int, int, tuple[Any, ...]]]:
    """`(time, file index, packet, segment)` of several files in canonical order: the
    merge of `pcap-dump`'s reader (`amqpcli.capture.reader.merge_by_time`, which says
    the order), over effective times. A file is opened when the merge reaches its first
    packet, so a long set of consecutive files costs one open file at a time (a named
    pipe, which cannot be read twice, is opened once and stays open). Damaged files end
    early; their errors go to `errors`. `found`: the paths found in folders or by globs
    (None: as `paths` says, when it is what `expand` returns, an `ExpandedPaths`)."""
    found = found_paths(paths, found)

    def segments(i: int, errs: list[CaptureError] | None, block_size: int
                 ) -> Generator[tuple[int, int, int, int, tuple[Any, ...]], None, None]:
        path = paths[i]
        # (errs None: a first look, whose error is not kept)
        for eff, ts, n, seg in file_segments(path, [] if errs is None else errs,
                                             was_found(path, found), block_size):
            yield eff, ts, i, n, seg

    for _eff, ts, i, n, seg in merge_by_time(paths, segments, errors):
        yield ts, i, n, seg


def key_of(seg: tuple[Any, ...]) -> tuple[Any, ...]:
    return flow_key(seg[0], seg[1], seg[2], seg[3])
