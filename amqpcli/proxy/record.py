"""Recording a proxy's traffic as a pcapng file that `amqp pcap-dump` and Wireshark read.

Each proxied connection becomes one synthetic TCP conversation between the application's
address and the broker's, with a handshake, the bytes of each direction as they were
forwarded (at the time they were read), and its end as the proxy saw it: a side's FIN
when that side ended its stream, a side's RST when its socket failed (a reset; nothing
of that conversation is written after it), and, when the proxy drops the connection or
stops, FINs for the sides still open. The capture package writes the packets; this
module only decides what goes in.

The file is readable by its owner only (0600), as dumpcap makes its captures: it holds a
SASL PLAIN password in clear.

What is recorded reaches the file promptly: after each turn of the event loop that wrote
packets (one flush for the batch), so `amqp pcap-dump` reads the traffic while the proxy
runs, and a crash or SIGKILL loses at most the packets of that turn.

A file that cannot be written (`/dev/full`) is refused when the recorder is made: its
first block is written through at once. One that fails later (a disk that fills up, a
file size limit) stops the recording, never the forwarding: `failed` says why, and
`on_failure` is told once, when it happens; the file keeps what reached it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import stat
from collections.abc import Callable
from typing import Any, BinaryIO

from amqpcli.capture.decode import ACK, FIN
from amqpcli.capture.tcp import C2S, S2C, Direction
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.errors import Exit, UserError

RAW_IP = 101  # link type: packets start at the IP header
MSS = 65000  # one segment per forwarded chunk where the chunk allows


def _why(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


class Recorder:
    def __init__(self, path: str | os.PathLike[str],
                 on_failure: Callable[[str], None] | None = None) -> None:
        """`on_failure(why)`: told once when the recording stops because the file cannot
        be written any more (`why`: the error, as "no space left on device")."""
        self.path = path
        self.on_failure = on_failure
        self.failed: str | None = None  # why the recording stopped early, if it did
        try:
            self._file = _open_private(path)
        except OSError as e:
            raise UserError(f"cannot write {os.fspath(path)}: {_why(e)}", Exit.USAGE) from None
        try:
            self.writer = CaptureWriter(self._file, linktype=RAW_IP)
            self.writer.flush()  # a file that takes nothing (/dev/full) is refused now
        except OSError as e:
            _close_quietly(self._file)
            raise UserError(f"cannot write {os.fspath(path)}: {_why(e)}", Exit.USAGE) from None
        self._convs: dict[int, TcpConversation] = {}  # by the connection's serial
        self._fins: dict[int, list[Direction]] = {}  # the directions that sent a FIN
        self.closed = False
        self._flush_pending = False

    def _fail(self, e: OSError) -> None:
        """The file cannot be written: the recording stops here (what reached the file
        stays), said once through `on_failure`."""
        if self.failed is not None:
            return
        self.failed = _why(e)
        self.closed = True
        self._convs.clear()
        self._fins.clear()
        _close_quietly(self._file)
        if self.on_failure is not None:
            self.on_failure(self.failed)

    def _written(self) -> None:
        """Packets were written: flush once the event loop's current turn is over (all the
        packets of the turn in one flush), or now outside an event loop."""
        if self._flush_pending or self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._flush()
            return
        self._flush_pending = True
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        if self.closed:
            return
        try:
            self.writer.flush()
        except OSError as e:  # the file cannot take more (a full disk)
            self._fail(e)

    def open(self, conn: Any) -> None:
        if self.closed:
            return
        try:
            self._open(conn)
        except OSError as e:
            self._fail(e)

    def _open(self, conn: Any) -> None:
        t = _ns(conn.started)
        # step 0: every packet of a chunk carries the time the chunk was seen, as printed
        client, server = _one_family(conn.client, conn.upstream)
        conv = TcpConversation(self.writer, client, server, start_ns=t, step_ns=0)
        conv.handshake()
        self._convs[conn.serial] = conv
        self._fins[conn.serial] = []
        self._written()

    def data(self, conn: Any, side: str, data: bytes, time: float) -> None:
        conv = self._convs.get(conn.serial)
        if conv is None or self.closed:
            return
        conv.now = max(conv.now, _ns(time))
        try:
            conv.send(_dir(side), bytes(data), mss=MSS, ack=False)
        except OSError as e:
            self._fail(e)
            return
        self._written()

    def fin(self, conn: Any, side: str, time: float) -> None:
        """`side` ended its stream: its FIN (and, when the other side's came first, the
        last ACK: the conversation is over)."""
        conv = self._convs.get(conn.serial)
        if conv is None or self.closed:
            return
        conv.now = max(conv.now, _ns(time))
        try:
            self._fin(conn.serial, conv, _dir(side))
        except OSError as e:
            self._fail(e)
            return
        self._written()

    def reset(self, conn: Any, side: str, time: float) -> None:
        """`side`'s socket failed (it reset the connection): its RST ends the conversation."""
        conv = self._convs.pop(conn.serial, None)
        self._fins.pop(conn.serial, None)
        if conv is None or self.closed:
            return
        conv.now = max(conv.now, _ns(time))
        try:
            conv.reset(_dir(side))
        except OSError as e:
            self._fail(e)
            return
        self._written()

    def end(self, conn: Any) -> None:
        """The connection is over: FINs for the sides that did not end their streams."""
        conv = self._convs.get(conn.serial)
        if conv is not None and not self.closed:
            try:
                self._finish(conn.serial, conv)
            except OSError as e:
                self._fail(e)
                return
            self._written()

    def _fin(self, serial: int, conv: TcpConversation, d: Direction) -> None:
        fins = self._fins[serial]
        if d in fins:
            return
        conv.packet(d, conv.seq[d], flags=FIN | ACK)
        conv.seq[d] = (conv.seq[d] + 1) & 0xFFFFFFFF
        fins.append(d)
        if len(fins) == 2:  # the first to close acknowledges the other's FIN
            conv.packet(fins[0], conv.seq[fins[0]], flags=ACK)
            del self._convs[serial], self._fins[serial]

    def _finish(self, serial: int, conv: TcpConversation) -> None:
        for d in (C2S, S2C):
            if serial in self._convs:
                self._fin(serial, conv, d)

    def close(self) -> None:
        """The end of the recording: FINs for the conversations still open, and the file
        closed (a failure to write them is a `_fail`, never raised)."""
        if self.closed:
            return
        try:
            for serial, conv in list(self._convs.items()):
                self._finish(serial, conv)
            self._convs.clear()
            self._fins.clear()
            self.writer.close()
            self._file.close()
        except OSError as e:
            self._fail(e)
        finally:
            self.closed = True
            _close_quietly(self._file)


def _close_quietly(f: BinaryIO) -> None:
    """`f` closed; what it still buffered for a file that cannot take it is dropped (the
    failure was said already)."""
    try:
        f.close()
    except OSError:
        # a buffered file that failed to flush stays open: close its descriptor
        raw = getattr(f, "raw", None)
        if raw is not None:
            try:
                raw.close()
            except OSError:
                pass


def _open_private(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for writing, truncated, readable by its owner only: the recording
    holds what the applications sent, a SASL PLAIN password in clear. A new file is made
    0600 (as dumpcap makes its captures), whatever the umask; an existing regular file
    that others could read is made 0600 too before anything is written to it. A FIFO or a
    device (``/dev/stdout``) keeps its mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
                 0o600)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def _one_family(client: tuple[str, int],
                server: tuple[str, int]) -> tuple[tuple[str, int], tuple[str, int]]:
    """The conversation's ends in one address family: an application that reached the
    proxy over IPv6 and a broker reached over IPv4 (or the other way round: `localhost`
    may resolve to ::1) make one TCP conversation only if both are IPv6, so the IPv4 end
    is written as its IPv4-mapped IPv6 address (`::ffff:127.0.0.1`)."""
    try:
        a, b = ipaddress.ip_address(client[0]), ipaddress.ip_address(server[0])
    except ValueError:  # (no address to write: the conversation fails as it would)
        return client, server
    if a.version == b.version:
        return client, server
    if a.version == 4:
        return (f"::ffff:{a}", client[1]), server
    return client, (f"::ffff:{b}", server[1])


def _dir(side: str) -> Direction:
    return C2S if side == "client" else S2C


def _ns(t: float) -> int:
    """`t` in nanoseconds, on the microsecond the frame lines print (they round; the
    file keeps microseconds, which would truncate): the recording reads back the same."""
    return round(t * 1_000_000) * 1000
