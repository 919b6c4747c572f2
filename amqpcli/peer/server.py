"""The asyncio side of `amqp serve`: accept connections, run one engine per connection
through `net.transport.Transport`, and hand every engine event to the `Broker`.

SASL is decided by what the client opens with: a SASL header gets SASL (ANONYMOUS and
PLAIN offered), a plain AMQP header gets none — unless `sasl="required"` (credentials
given: PLAIN only, checked) or `sasl="none"` (a SASL header is answered with the AMQP
header, which tells the client SASL is not spoken here).

Watching from outside (the TUI's `--serve`): `on_connect(conn)` is called with each new
`PeerConnection` before any of its bytes move (its `endpoint` can be given a tap then),
`on_events(conn, events)` with each batch of its engine events before the broker handles
them, `on_disconnect(conn)` once it is gone (the broker let it go), and `lock` is held
through everything the server does with the broker and the endpoints: each transport
step, a connection's start and end, the broker's timers.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from amqpcli import __version__
from amqpcli.aio import wait_within
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FRAME_TYPE_SASL, Frame, FrameReader, ProtocolHeader
from amqpcli.codec.types import Symbol
from amqpcli.engine import ConnectionClosed
from amqpcli.engine.endpoint import FrameTooLarge
from amqpcli.engine.frametap import FrameTap
from amqpcli.engine.sasl import AUTH, OK, CredentialsNotText, SaslConfig, plain_credentials
from amqpcli.net.connect import check_resolvable
from amqpcli.net.transport import StreamEnded, Transport, without_secrets

from .broker import Broker, PeerConnection
from .endpoint import PeerEndpoint

__all__ = ["Server", "Tap"]

_HEADER_WAIT = 30.0  # seconds a client has to send its protocol header
_CLOSE_WAIT = 5.0  # seconds we wait for the client's close after ours
_STOP_WAIT = 2.0  # seconds clients have to answer our close when the server stops
SASL_MODES = ("optional", "required", "none")


# A frame tap: (connection name, "->" from the client or "<-" from us, frame reader item,
# time). The CLI renders it; the peer package only hands the items over.
Tap = Callable[[str, str, Any, float], None]


def _wants_sasl(header: bytes) -> bool:
    """Whether the client's protocol header is SASL's (protocol id 3)."""
    return header[4:5] == b"\x03"


class _SaslFramesTap:
    """A byte tap that sizes the client's SASL frames (its sasl-init, and whatever SASL
    frame it sends), which the disconnect line's bytes in leave out: they would give away
    its credentials' length. It reads the SASL exchange alone, and hands every byte on to
    the tap it wraps (`--trace`'s, the TUI's), if any."""

    def __init__(self, endpoint: Any, inner: Any) -> None:
        self.endpoint = endpoint
        self.inner = inner
        self.size = 0  # bytes in the client's SASL frames
        self._reader: FrameReader | None = FrameReader()

    def received(self, data: bytes, time: float) -> None:
        reader = self._reader
        if reader is not None:
            reader.hold_to(self.endpoint.reader)  # (a frame too large for it is no frame)
            for item in reader.feed(data):
                if item.__class__ is Frame and item.type == FRAME_TYPE_SASL:
                    self.size += item.size
                elif item.__class__ is not ProtocolHeader or item.kind != "sasl":
                    self._reader = None  # the SASL exchange is over (or broken): done
                    break
        if self.inner is not None:
            self.inner.received(data, time)
        if self._reader is None:
            # Done: the tap it wrapped (or none) takes its place, so the rest of the
            # connection runs as untapped as it would without this.
            self.endpoint.set_tap(self.inner)

    def sent(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.sent(data)


class Server:
    """Listens on `listen` and serves every connection from one `Broker`.

    `trace` gets every frame both ways (a tap on each endpoint; an `on_connect` that sets
    its own tap replaces it). `on_connect`, `on_events`, `on_disconnect` and `lock`: see
    the module's text.
    """

    def __init__(
        self,
        listen: tuple[str, int],
        broker: Broker,
        *,
        sasl: str = "optional",
        user: str | None = None,
        password: str | None = None,
        trace: Tap | None = None,
        max_frame_size: int = 65536,
        idle_timeout: float | None = None,
        on_connect: Callable[[PeerConnection], None] | None = None,
        on_events: Callable[[PeerConnection, list[Any]], None] | None = None,
        on_disconnect: Callable[[PeerConnection], None] | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        if sasl not in SASL_MODES:
            raise ValueError(f"sasl must be one of {SASL_MODES}")
        self.listen = listen
        self.broker = broker
        self.sasl = sasl
        self.user = user
        self.password = password
        self.trace = trace
        self.max_frame_size = max_frame_size
        self.idle_timeout = idle_timeout
        self.on_connect = on_connect
        self.on_events = on_events
        self.on_disconnect = on_disconnect
        self.lock = lock
        self._held: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self._ids = itertools.count(1)
        self._server: asyncio.Server | None = None
        self._transports: dict[PeerConnection, Transport] = {}
        self._dirty: set[PeerConnection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._done: dict[PeerConnection, asyncio.Event] = {}
        self._greeting: set[asyncio.Task[None]] = set()  # still waiting for a header
        broker.wake = self._wake
        broker.call_later = self._call_later

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> tuple[str, int]:
        """Bind and listen; returns the address bound (port 0 picks a free port). A host
        that cannot be resolved or bound: OSError (`socket.gaierror` for the name)."""
        host, port = self.listen
        check_resolvable(host)  # (an OSError, as for a name the resolver does not know)
        self._server = await asyncio.start_server(self._accept, host, port, limit=1 << 20)
        sock = self._server.sockets[0].getsockname()
        return str(sock[0]), int(sock[1])

    async def serve_forever(self) -> None:
        assert self._server is not None, "start() first"
        async with self._server:
            await self._server.serve_forever()

    async def close(self, error: Any = None, wait: float = _STOP_WAIT) -> None:
        """Stop listening and end every connection.

        Each open connection gets `close` with `error` (by default amqp:connection:forced,
        "server stopping"), written out before its socket is closed; its client has `wait`
        seconds to answer. A connection that is not open yet (protocol header, SASL) is
        dropped. Returns when every connection has ended.
        """
        if self._server is not None:
            self._server.close()
        if error is None:
            error = c.Error(condition=Symbol("amqp:connection:forced"),
                            description="server stopping")
        with self._held:
            for conn, t in list(self._transports.items()):
                ep = conn.endpoint
                if ep.local in ep.connection.open and conn.open:
                    ep.close(error)
                    t.flush()
                else:
                    self._done[conn].set()
        for task in list(self._greeting):
            task.cancel()
        tasks = list(self._tasks)
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=wait)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    # --- glue -------------------------------------------------------------------------

    def _call_later(self, delay: float, fn: Callable[[], None]) -> None:
        lock = self.lock
        if lock is not None:
            step = fn

            def held() -> None:
                with lock:
                    step()
            fn = held
        asyncio.get_running_loop().call_later(delay, fn)

    def _wake(self, conn: PeerConnection) -> None:
        if not self._dirty:
            asyncio.get_running_loop().call_soon(self._flush_dirty)
        self._dirty.add(conn)

    def _flush_dirty(self) -> None:
        while self._dirty:
            conn = self._dirty.pop()
            t = self._transports.get(conn)
            if t is not None:
                t.flush()

    def _sasl_config(self, header: bytes, who: dict[str, str]) -> SaslConfig | None:
        if self.sasl == "none" or (self.sasl == "optional" and not _wants_sasl(header)):
            return None
        if self.sasl == "optional":
            def anyone(mechanism: str, response: bytes | None) -> int:
                if mechanism == "PLAIN" and response is not None and response.count(b"\0") == 2:
                    try:
                        who["user"] = plain_credentials(response)[1]
                    except CredentialsNotText:
                        who["not-text"] = "PLAIN"  # (any credentials, but text: RFC 4616)
                        return AUTH
                return OK
            return SaslConfig(offer=("ANONYMOUS", "PLAIN"), authenticate=anyone)

        def check(mechanism: str, response: bytes | None) -> int:
            if mechanism != "PLAIN" or response is None or response.count(b"\0") != 2:
                return AUTH
            try:
                _, user, password = plain_credentials(response)
            except CredentialsNotText:
                who["not-text"] = "PLAIN"
                return AUTH
            # (what we were given is held to UTF-8 by `amqp serve`; here a lone surrogate
            # encodes to bytes no client's text can match, never to an error)
            ok = hmac.compare_digest(user.encode(), (self.user or "").encode(
                "utf-8", "surrogatepass")) and hmac.compare_digest(
                password.encode(), (self.password or "").encode("utf-8", "surrogatepass"))
            if ok:
                who["user"] = user
            else:
                who["failed"] = user
            return OK if ok else AUTH
        return SaslConfig(offer=("PLAIN",), authenticate=check)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve_one(reader, writer)
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            # Stopping (close() cancels a connection whose client did not answer in
            # time). Not re-raised: asyncio's stream callback would report a cancelled
            # task as an error.
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def _serve_one(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        name = f"c{next(self._ids)}"
        peer = writer.get_extra_info("peername")
        where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        task = asyncio.current_task()
        if task is not None:
            self._greeting.add(task)
        try:
            header = await wait_within(reader.readexactly(8), _HEADER_WAIT)
        except (asyncio.IncompleteReadError, TimeoutError, ConnectionError, OSError,
                asyncio.CancelledError):
            writer.close()
            return
        finally:
            if task is not None:
                self._greeting.discard(task)
        who: dict[str, str] = {}
        ep = PeerEndpoint(
            container_id="amqp-serve",
            sasl=self._sasl_config(header, who),
            max_frame_size=self.max_frame_size,
            idle_timeout=self.idle_timeout,
            properties={Symbol("product"): "amqpcli", Symbol("version"): __version__},
            offered_capabilities=[Symbol("ANONYMOUS-RELAY")],
        )
        if self.trace is not None:
            trace = self.trace
            ep.set_tap(FrameTap(ep, lambda side, item, t: trace(name, side, item, t),
                                incoming="->", outgoing="<-"))
        broker = self.broker
        with self._held:
            conn = broker.connect(ep, name, where)
            if self.on_connect is not None:
                self.on_connect(conn)
            sasl_frames = None
            if _wants_sasl(header):
                sasl_frames = _SaslFramesTap(ep, ep.tap)
                ep.set_tap(sasl_frames)
        done = asyncio.Event()
        loop = asyncio.get_running_loop()

        def on_event(e: Any) -> None:
            cls = e.__class__
            if cls is StreamEnded:
                done.set()
                return
            if conn.user is None and "user" in who:
                conn.user = who["user"]
            try:
                broker.handle(conn, [e])
            except FrameTooLarge as exc:
                # an answer that echoes what the client sent (the smallest the broker
                # could make of it) does not fit the max-frame-size the client set
                ep.close(c.Error(condition=Symbol("amqp:frame-size-too-small"),
                                 description=f"our {exc.name} would be {exc.size} bytes, "
                                             f"over the client's max-frame-size {exc.limit}"))
                return
            except Exception as exc:  # noqa: BLE001 - a bug here must not leave the client hanging
                broker.log(f"{name} internal error: {type(exc).__name__}: {exc}")
                ep.close(c.Error(condition=Symbol("amqp:internal-error"),
                                 description=f"{type(exc).__name__}: {exc}"))
                done.set()
                return
            if cls is ConnectionClosed or ep.failed:
                if len(ep.connection.close) == 2 or ep.failed:
                    done.set()
                elif e.side == ep.local:
                    loop.call_later(_CLOSE_WAIT, done.set)  # the client may never answer

        on_events = self.on_events
        transport = Transport(
            ep, reader, writer, on_event, lock=self.lock,
            on_events=None if on_events is None else lambda evs: on_events(conn, evs))
        self._transports[conn] = transport
        self._done[conn] = done
        try:
            transport.bytes_in += len(header)  # read here, before the transport ran
            transport.receive(header)
            transport.start()
            await done.wait()
            transport.flush()
            lost = transport.lost
            if lost is not None and transport.internal:
                # A step of ours failed (our open or another answer could not be built, a
                # watcher failed): no frame can tell the client, the log must, as the bug
                # it is and not as the client going away.
                lost = without_secrets(lost, [self.password or ""])
                text = " ".join(str(lost).split())
                broker.log(f"{name} from {where}: internal error: {type(lost).__name__}: {text}")
            elif ep.failed and "not-text" in who:
                broker.log(f"{name} SASL PLAIN refused from {where}: the credentials are not "
                           "UTF-8 text")
            elif ep.failed and "failed" in who:
                broker.log(f"{name} SASL PLAIN refused for user {who['failed']!r} from {where}")
            elif ep.failed and ep.local in ep.connection.close:
                pass  # the broker logged our close and its error
            elif ep.failed and ep.failure is not None:
                broker.log(f"{name} from {where}: {ep.failure}")
            elif ep.failed:
                broker.log(f"{name} from {where}: protocol header not accepted "
                           f"({header[:8]!r})")
        finally:
            self._transports.pop(conn, None)
            self._done.pop(conn, None)
            self._dirty.discard(conn)
            await transport.close()
            with self._held:
                broker.disconnect(conn)
                if self.on_disconnect is not None:
                    self.on_disconnect(conn)
            bytes_in, note = transport.bytes_in, ""
            if sasl_frames is not None and sasl_frames.size:
                bytes_in -= sasl_frames.size
                note = "; the client's SASL frames not counted"
            broker.log(f"{name} disconnected ({bytes_in} bytes in, {transport.bytes_out} "
                       f"out{note})")
