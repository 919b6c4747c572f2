"""The proxy: accept an application's connections, forward each to the broker, watch both ways.

Theory of operation: for every accepted connection the proxy opens one to the broker (TLS
when the URL says `amqps://`), then runs two pumps. A pump reads whatever bytes have
arrived, writes them to the other side at once and unchanged, and only then hands a copy
to the tap: one engine `Observer` per connection, which runs a frame reader per direction. So the
application and the broker see exactly the bytes the other sent, in the same chunks as far
as TCP allows, and parsing never delays forwarding (it does share the event loop, which is
why the pump waits for the writer's buffer to drain before reading more).

A protocol error in the copy (a frame that does not decode) becomes an item in the
stream like any other; it never touches the forwarded bytes. When one side closes, the
other is half-closed, and the connection ends when both directions have, or when the
side still open sends nothing for `half_close_timeout` seconds after the other closed its
direction (haproxy's `timeout client-fin`/`server-fin`: in AMQP nothing is expected then
but the answering close, so a silent side is dead or hung). The proxy then ends the
connection itself: the silent side's stream is taken as ended there (its FIN in the
recording, at that time: what the application saw, its socket closed by the proxy), and
the connection's note says so. A side whose
socket fails (a reset) ends the connection; the failure is that side's, whichever pump
met it. A stream that ended inside a frame whose start is sound (its sender died while
sending it) cut that frame short: a `ProxyNotice`, as `amqp pcap-dump` of the recording
says it, not a frame error (the codec's judgement, `FrameReader.close_stream`).

Nothing here prints: callers get `on_open`, `on_item` (each frame or notice, and the
events it caused), `on_events` (events of a stream's end), `on_close` callbacks (the CLI
prints lines, the TUI feeds its model), and an optional `Recorder` writes a capture.
Forwarding never depends on them: an exception from a callback or the recorder is kept on
the connection (`ProxyConnection.watch_error`, reported when it closes) and the bytes go
on.

Numbering: a connection is numbered (`c1`, `c2`, …) when its first bytes pass through,
in that order: the order in which `amqp pcap-dump` numbers the conversations of the
recording (by the first bytes that name the protocol, not by the handshake). So a
connection's label is the same in the proxy's output and in pcap-dump of its `--record`,
and a connection that carries no byte (a port probe, a broker that cannot be reached) has
no number: it is named by the application's address. `on_open` comes with the number.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec.frames import ProtocolHeader
from amqpcli.codec.framestart import CutShort
from amqpcli.engine.events import Event
from amqpcli.engine.observer import Observer
from amqpcli.errors import Exit, UserError, listen_error
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.connect import check_resolvable, connection_error, open_stream

CLIENT, SERVER = "client", "server"
READ_SIZE = 64 * 1024
# seconds a side may stay silent once the other closed its direction (`Proxy`)
HALF_CLOSE_TIMEOUT = 30.0


def _ep(a: tuple[str, int]) -> str:
    return f"[{a[0]}]:{a[1]}" if ":" in a[0] else f"{a[0]}:{a[1]}"


@dataclass
class ProxyConnection:
    """One proxied connection: the application's end, the broker's end, what was seen."""

    serial: int  # in the order accepted (the recording's key for it)
    client: tuple[str, int]  # the application's address
    listen: tuple[str, int]  # our listening address it connected to
    upstream: tuple[str, int] = ("", 0)  # the broker's address (after connecting)
    # Reads both directions' bytes (a frame reader per side) into the engine model.
    observer: Observer = field(default_factory=lambda: Observer((CLIENT, SERVER)))
    bytes: dict[str, int] = field(default_factory=lambda: {CLIENT: 0, SERVER: 0})
    started: float = 0.0
    ended: str = ""  # how it ended ("" while open)
    # 0, 1, ... once its first bytes passed (c1, c2, ...); None before (see the module)
    index: int | None = None
    # the engine's number of the frame last handed to `on_item` (both directions
    # counted, a protocol header not: as pcap-dump's `frame`); 0 for a protocol header
    frame_no: int = 0
    frames: int = 0  # frames so far (both directions)
    watch_error: str = ""  # the first failure of a callback or the recorder, if any
    # how each side's stream ended ("fin", or "rst": a reset ends both) and when, as the
    # recording has it
    ends: dict[str, tuple[str, float]] = field(default_factory=dict)
    # since when (the event loop's clock) each side's pump has waited for that side's
    # bytes; None while it forwards what it read (the half-close timeout counts from here)
    waiting: dict[str, float | None] = field(default_factory=lambda: {CLIENT: None, SERVER: None})

    @property
    def key(self) -> str:
        # c1, c2, ... as pcap-dump and the TUI number the connections of its recording;
        # the application's address for one not numbered (it carried no byte)
        return f"c{self.index + 1}" if self.index is not None else _ep(self.client)

    def describe(self) -> str:
        return f"{_ep(self.client)} -> {_ep(self.upstream) if self.upstream[0] else '?'}"


@dataclass(frozen=True, slots=True)
class ProxyNotice:
    """An item that is no frame: what pcap-dump's notice of `kind` says of the recording
    (`truncated`: the stream ended inside a frame, cut short)."""

    kind: str
    text: str


OnOpen = Callable[[ProxyConnection], None]
OnItem = Callable[[ProxyConnection, str, Any, float, list[Event]], None]
OnClose = Callable[[ProxyConnection, str], None]
OnChunk = Callable[[ProxyConnection, str, bytes, float], None]
OnEvents = Callable[[ProxyConnection, str, list[Event]], None]  # events not caused by a frame


def _noop(*_: Any) -> None:
    return None


def parse_listen(spec: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """`PORT`, `:PORT`, `HOST:PORT` or `[V6]:PORT` → (host, port). Loopback by default."""
    s = spec.strip()
    host, port_s = default_host, s
    if s.startswith("["):
        end = s.find("]")
        if end < 0 or not s[end + 1 :].startswith(":"):
            raise UserError(f"bad listen address {spec!r}: use [v6addr]:PORT", Exit.USAGE)
        host, port_s = s[1:end], s[end + 2 :]
    elif ":" in s:
        h, port_s = s.rsplit(":", 1)
        host = h or default_host
    try:
        port = int(port_s)
    except ValueError:
        raise UserError(f"bad listen address {spec!r}: the port must be a number", Exit.USAGE) from None
    if not 0 <= port < 65536:
        raise UserError(f"bad listen port {port}: must be 0-65535 (0 picks a free one)",
                        Exit.USAGE)
    return host, port


class Proxy:
    def __init__(
        self,
        listen: tuple[str, int],
        upstream: ConnectionConfig,
        *,
        on_open: OnOpen = _noop,
        on_item: OnItem = _noop,
        on_close: OnClose = _noop,
        on_chunk: OnChunk = _noop,
        on_events: OnEvents = _noop,
        recorder: Any = None,
        parse: bool = True,
        lock: contextlib.AbstractContextManager[Any] | None = None,
        half_close_timeout: float = HALF_CLOSE_TIMEOUT,
    ) -> None:
        """`half_close_timeout`: seconds the side still open may send nothing once the
        other has closed its direction before the proxy ends the connection (0: wait
        for ever)."""
        self.listen = listen
        self.upstream = upstream
        self.on_open = on_open
        self.on_item = on_item
        self.on_close = on_close
        self.on_chunk = on_chunk
        self.on_events = on_events
        self.recorder = recorder
        self.parse = parse
        self.half_close_timeout = half_close_timeout
        # Held while the model is fed, so a reader on another thread sees whole frames.
        self.lock = lock if lock is not None else contextlib.nullcontext()
        # the connections open now (an ended one is handed to `on_close`, then dropped:
        # the proxy itself keeps no model of the connections it has seen; a caller that
        # wants them, as the TUI does, keeps them from `on_close`)
        self.connections: list[ProxyConnection] = []
        self.bound: tuple[str, int] | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._serials = itertools.count()
        self._numbers = itertools.count()
        self._closed = asyncio.Event()

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> tuple[str, int]:
        host, port = self.listen
        try:
            check_resolvable(host)  # (an OSError, as for a name the resolver does not know)
            self._server = await asyncio.start_server(self._accept, host, port, reuse_address=True)
        except OSError as e:
            raise listen_error(host, port, e) from None
        sock = self._server.sockets[0]
        addr = sock.getsockname()
        self.bound = (addr[0], addr[1])
        return self.bound

    async def serve(self) -> None:
        """Start (if not yet) and run until `close()`."""
        if self._server is None:
            await self.start()
        await self._closed.wait()

    async def wait_idle(self) -> None:
        """Until every connection accepted so far has ended on its own."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.recorder is not None:
            self.recorder.close()
        self._closed.set()

    # -- one connection --------------------------------------------------------------------

    async def _accept(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            await self._proxy(creader, cwriter)
        except asyncio.CancelledError:
            # The proxy is closing with this connection still open: drop it quietly
            # (re-raising would only make asyncio print a traceback for the callback).
            cwriter.close()
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]

    async def _proxy(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        peer = cwriter.get_extra_info("peername") or ("?", 0)
        here = cwriter.get_extra_info("sockname") or self.bound or ("?", 0)
        _nodelay(cwriter)
        conn = ProxyConnection(next(self._serials), (peer[0], peer[1]), (here[0], here[1]),
                               started=time.time())
        self.connections.append(conn)
        try:
            sreader, swriter = await open_stream(self.upstream)
        except UserError as e:
            conn.ended = str(e)
            self._closed_conn(conn)
            cwriter.close()
            return
        except Exception as e:  # noqa: BLE001 - any failure to reach the broker ends this one
            conn.ended = str(connection_error(self.upstream, e))
            self._closed_conn(conn)
            cwriter.close()
            return
        up = swriter.get_extra_info("peername") or (self.upstream.endpoint.host, self.upstream.endpoint.port)
        conn.upstream = (up[0], up[1])
        if self.recorder is not None:
            self._guarded(conn, self.recorder.open, conn)
        pumps: dict[str, asyncio.Future[Any]] = {CLIENT: asyncio.ensure_future(self._pump(conn, CLIENT, creader, swriter)),
                                                 SERVER: asyncio.ensure_future(
                                                     self._pump(conn, SERVER, sreader, cwriter))}
        try:
            silent = await self._until_ended(conn, pumps)
        except asyncio.CancelledError:
            running = [side for side, task in pumps.items() if not task.done()]
            for task in pumps.values():
                task.cancel()
            await asyncio.gather(*pumps.values(), return_exceptions=True)
            # the streams still open end here, with the FINs the recording gives them now:
            # what their readers held (a frame under way is cut short) is told as
            # pcap-dump of the recording tells it
            for side in running:
                self._stream_ended(conn, side, "fin", time.time())
                if self.parse:
                    self._stream_tail(conn, side)
            swriter.close()
            conn.ended = "dropped: the proxy stopped"
            if self.recorder is not None:
                self._guarded(conn, self.recorder.end, conn)
            self._closed_conn(conn)
            raise
        if silent is not None:
            self._end_silent(conn, silent, pumps[silent])
            await asyncio.gather(pumps[silent], return_exceptions=True)
            for w in (cwriter, swriter):
                # (not a close that would wait to write what a side does not read)
                w.transport.abort()
            other = SERVER if silent == CLIENT else CLIENT
            conn.ended = (f"closed: the {silent} sent nothing for {self.half_close_timeout:g} s "
                          f"after the {other} closed its side")
            if self.recorder is not None:
                self._guarded(conn, self.recorder.end, conn)
            self._closed_conn(conn)
            return
        for w in (cwriter, swriter):
            w.close()
            with contextlib.suppress(Exception):
                await w.wait_closed()
        results = [_outcome(pumps[CLIENT]), _outcome(pumps[SERVER])]
        conn.ended = self._how(conn, results)
        if self.recorder is not None:
            self._guarded(conn, self.recorder.end, conn)
        self._closed_conn(conn)

    async def _until_ended(self, conn: ProxyConnection,
                           pumps: dict[str, asyncio.Future[Any]]) -> str | None:
        """Until both pumps are over (None), or until the side still open has sent
        nothing for `half_close_timeout` seconds after the other side ended its stream
        with a FIN: that side, its pump still running."""
        await asyncio.wait(pumps.values(), return_when=asyncio.FIRST_COMPLETED)
        first = next(s for s, task in pumps.items() if task.done())
        other = SERVER if first == CLIENT else CLIENT
        limit = self.half_close_timeout
        if (pumps[other].done() or not limit or _outcome(pumps[first]) != "eof"):
            # both over, no bound, or a socket failed (the other direction is closed
            # with it: its pump ends at once)
            await asyncio.gather(*pumps.values(), return_exceptions=True)
            return None
        loop = asyncio.get_running_loop()
        half_closed = loop.time()
        while True:
            since = conn.waiting[other]
            # silent since the later of the half-close and its last bytes; a pump that is
            # forwarding (waiting for the closed side to take its bytes) is not silent
            left = limit if since is None else max(since, half_closed) + limit - loop.time()
            if left <= 0:
                return other
            await asyncio.wait([pumps[other]], timeout=left)
            if pumps[other].done():
                return None

    def _end_silent(self, conn: ProxyConnection, side: str, pump: asyncio.Future[Any]) -> None:
        """`side` sent nothing for the half-close timeout: its pump stops, and its stream
        is taken as ended now, with a FIN (the recording's, the observer's), as the
        application sees it when the proxy closes its socket."""
        pump.cancel()
        self._stream_ended(conn, side, "fin", time.time())
        if self.parse:
            self._stream_tail(conn, side)

    def _stream_tail(self, conn: ProxyConnection, side: str) -> None:
        """No more is read from `side`: what its frame reader still held (a frame cut
        short is a notice), then the end of its stream (what is left unsettled is
        abandoned), at the time it ended. Told as it happens, so in the order (and with
        the times) pcap-dump of the recording gives."""
        how, t = conn.ends[side]  # (every way `_forward` returns sets it)
        with self.lock:
            for item, events in conn.observer.read_tail(side, t):
                if isinstance(item, CutShort):
                    # numbered as the frame it would have been, as pcap-dump numbers it
                    item = ProxyNotice("truncated", item.text(side, how, conn.frames + 1))
                self._guarded(conn, self._item, conn, side, item, t, events)
            events = conn.observer.transport_closed(side, t, how)
            self._guarded(conn, self.on_events, conn, side, events)

    def _stream_ended(self, conn: ProxyConnection, side: str, how: str, t: float) -> None:
        """`side` ended its stream ("fin"), or its socket failed ("rst"): a reset ends
        both streams, as its RST ends the recorded conversation. The first end of a
        stream is the one that counts."""
        for s in (CLIENT, SERVER) if how == "rst" else (side,):
            conn.ends.setdefault(s, (how, t))
        rec = self.recorder
        if rec is not None:
            self._guarded(conn, rec.reset if how == "rst" else rec.fin, conn, side, t)

    def _how(self, conn: ProxyConnection, results: Sequence[Any]) -> str:
        """How the connection ended, from its pumps' results: "closed" when both sides
        ended their streams, or when a side's socket failed after the AMQP close exchange
        (RabbitMQ answers a FIN with a reset); else what happened on each side."""
        if all(r == "eof" for r in results):
            return "closed"
        if (all(r == "eof" or isinstance(r, tuple) for r in results) and self.parse
                and len(conn.observer.connection.close) == 2):
            return "closed"  # both sides had closed the connection: nothing was lost
        hows = []
        for r in results:
            if isinstance(r, tuple):
                hows.append(f"{r[0]} {type(r[1]).__name__}")
            elif isinstance(r, str):
                hows.append(r)
            else:
                hows.append(f"error: {r}")
        return ", ".join(hows)

    def _closed_conn(self, conn: ProxyConnection) -> None:
        if conn.watch_error:
            conn.ended += f" (not everything was shown or recorded: {conn.watch_error})"
        self._guarded(conn, self.on_close, conn, conn.ended)
        with contextlib.suppress(ValueError):
            self.connections.remove(conn)

    async def _pump(
        self,
        conn: ProxyConnection,
        side: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> str | tuple[str, BaseException]:
        """`_forward`, then the end of what was read from `side` (`_stream_tail`)."""
        end = await self._forward(conn, side, reader, writer)
        if self.parse:
            self._stream_tail(conn, side)
        return end

    async def _forward(
        self,
        conn: ProxyConnection,
        side: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> str | tuple[str, BaseException]:
        """Forward what `side` sends until its stream ends ("eof"), or until a socket fails:
        then (the side whose socket it is, the error), and the other direction is closed."""
        other = SERVER if side == CLIENT else CLIENT
        loop = asyncio.get_running_loop()
        while True:
            conn.waiting[side] = loop.time()
            try:
                data = await reader.read(READ_SIZE)
            except (ConnectionError, OSError) as e:
                # The other direction cannot go on either: close both ends.
                self._stream_ended(conn, side, "rst", time.time())
                writer.close()
                return side, e
            if not data:
                break
            conn.waiting[side] = None
            writer.write(data)  # forward first, untouched
            try:
                self._tap(conn, side, data)
            except Exception as e:  # noqa: BLE001 - watching must never stop the forwarding
                self._watch_failed(conn, e)
            try:
                await writer.drain()
            except (ConnectionError, OSError) as e:
                self._stream_ended(conn, other, "rst", time.time())
                writer.close()
                return other, e
        self._stream_ended(conn, side, "fin", time.time())
        if writer.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                writer.write_eof()
        else:  # TLS cannot half-close: close the stream
            writer.close()
        return "eof"

    def _tap(self, conn: ProxyConnection, side: str, data: bytes) -> None:
        t = time.time()
        if conn.index is None:
            # its first bytes: numbered now, in the order the recording shows them
            conn.index = next(self._numbers)
            self._guarded(conn, self.on_open, conn)
        conn.bytes[side] += len(data)
        self._guarded(conn, self.on_chunk, conn, side, data, t)
        if self.recorder is not None:
            self._guarded(conn, self.recorder.data, conn, side, data, t)
        if not self.parse:
            return
        with self.lock:
            for item, events in conn.observer.read(side, data, t):
                self._guarded(conn, self._item, conn, side, item, t, events)

    def _item(self, conn: ProxyConnection, side: str, item: Any, t: float,
              events: list[Event]) -> None:
        if isinstance(item, (ProtocolHeader, ProxyNotice)):
            conn.frame_no = 0
        else:
            conn.frames += 1
            conn.frame_no = conn.frames
        self.on_item(conn, side, item, t, events)

    def _guarded(self, conn: ProxyConnection, fn: Callable[..., Any], *args: Any) -> None:
        """Call a callback (or the recorder): what it raises is kept on the connection and
        reported when it closes, never allowed to stop the forwarding."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001
            self._watch_failed(conn, e)

    @staticmethod
    def _watch_failed(conn: ProxyConnection, e: Exception) -> None:
        if not conn.watch_error:
            conn.watch_error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _outcome(task: asyncio.Future[Any]) -> Any:
    """A finished pump's result, or what it raised (as `gather(return_exceptions=True)`)."""
    if task.cancelled():
        return asyncio.CancelledError()
    return task.exception() or task.result()


def _nodelay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
