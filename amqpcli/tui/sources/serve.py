"""Playing the broker by hand: `amqp tui --serve [--listen HOST:PORT]`.

The peer package's `Server` and `Broker` (the engine in its peer role) run on an asyncio
loop in a thread of their own. Every message an application sends waits in the broker
(the decider says "not yet") until the user settles it with a key: accepted (it is
stored and can be received), rejected, released or modified. Receivers get what was
accepted, with the broker's usual credit and dispatch.

As with our own client connection, each connection's engine is wrapped on its instance
so every model change happens under the source's lock and a copy of the bytes both ways
goes through a frame reader into the frame log.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from amqpcli.codec.frames import FrameReader
from amqpcli.tui import adapter
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.sources.base import Source, Unsupported
from amqpcli.tui.sources.client import OUTCOMES
from amqpcli.tui.watch import ConnWatch, Watch

if TYPE_CHECKING:
    from amqpcli.tui.app import AmqpTui


class ServeSource(Source):
    kind = "client"  # the settle keys work here: we are one end of every connection

    def __init__(self, listen: tuple[str, int], *, history: int = 1000,
                 frames: int = 200_000) -> None:
        super().__init__(history=frames)
        self.listen = listen
        self.watch = Watch(history)
        self.server: Any = None
        self.broker: Any = None
        self.bound: tuple[str, int] | None = None
        self.error: str | None = None
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.title = f"serving on {listen[0]}:{listen[1]}"

    # -- the server's thread ------------------------------------------------------------------

    def start(self, app: AmqpTui | None) -> None:  # type: ignore[override]
        self.app = app
        self._thread = threading.Thread(target=self._run, name="serve", daemon=True)
        self._thread.start()

    def _post(self, msg: Any) -> None:
        if self.app is not None:
            self.app.post_message(msg)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except OSError as e:
            self.error = f"cannot listen on {self.listen[0]}:{self.listen[1]}: {(e.strerror or str(e)).lower()}"
            self._post(SourceFailed(self.error))
        except Exception as e:  # noqa: BLE001 - the server's end is shown, not raised
            self.error = f"serve failed: {type(e).__name__}: {e}"
            self._post(SourceFailed(self.error))
        finally:
            self.ready.set()
            loop.close()

    async def _main(self) -> None:
        from amqpcli.peer import Broker, Server

        source = self
        lock = self.lock

        class _Watched(Broker):
            def connect(self, endpoint: Any, name: str, peer: str = "") -> Any:
                conn = super().connect(endpoint, name, peer)
                source._instrument(endpoint, name, peer)
                return conn

            def handle(self, conn: Any, events: list[Any]) -> None:
                with lock:
                    cw = source.watch.conns.get(conn.name)
                    if cw is not None:
                        cw.take(events)
                    super().handle(conn, events)

        # Nothing is decided automatically: every message waits for a key press.
        self.broker = _Watched(decide=lambda incoming: None)
        self.server = Server(self.listen, self.broker)
        self._stop = asyncio.Event()
        self.bound = await self.server.start()
        self.ready.set()
        self._post(SourceNotice(f"serving on {self.bound[0]}:{self.bound[1]}: "
                                "settle each message with a, r, l or m"))
        try:
            await self._stop.wait()
        finally:
            await self.server.close()

    def _instrument(self, engine: Any, name: str, peer: str) -> None:
        lock = self.lock
        readers = {"client": FrameReader(), "server": FrameReader()}
        store = self.store
        self.watch.conns[name] = ConnWatch(name, peer, self.watch.history, observer=engine)
        receive_data, data_to_send, handle_timer = (
            engine.receive_data, engine.data_to_send, engine.handle_timer)

        def log(side: str, data: bytes) -> None:
            for item in readers[side].feed(data):
                store.append(engine.now, name, side, item)

        def rd(data: bytes, time: float) -> list[Any]:
            with lock:
                log("client", data)
                return receive_data(data, time)

        def ds() -> bytes:
            with lock:
                out = data_to_send()
                if out:
                    log("server", out)
                return out

        def ht(now: float) -> list[Any]:
            with lock:
                return handle_timer(now)

        engine.receive_data, engine.data_to_send, engine.handle_timer = rd, ds, ht

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)

    # -- reading --------------------------------------------------------------------------------

    def connections(self) -> list[tuple[str, ConnWatch]]:
        return self.watch.items()

    def status(self) -> str:
        if self.error:
            return self.error
        where = f"{self.bound[0]}:{self.bound[1]}" if self.bound else "…"
        waiting = len(self.broker.pending) if self.broker is not None else 0
        return f"serving on {where}: {len(self.watch.conns)} connection(s), {waiting} message(s) waiting"

    # -- actions --------------------------------------------------------------------------------

    def _call(self, fn: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            raise Unsupported("not serving")

        def run() -> None:
            try:
                with self.lock:
                    fn()
            except Exception as e:  # noqa: BLE001 - an action that fails says so, once
                self._post(SourceNotice(f"{type(e).__name__}: {e}", "error"))

        loop.call_soon_threadsafe(run)

    def settle(self, delivery: str, outcome: str) -> None:
        with self.lock:
            found = adapter.find_link(self.connections(), delivery.rsplit(adapter.SEP, 1)[0])
            d = None if found is None else adapter.find_delivery(found[0], found[1], delivery)
            pending = [] if self.broker is None else self.broker.pending
            inc = next((i for i in pending if i.delivery is d), None)
        if d is None or inc is None:
            raise Unsupported("only messages an application sent us wait for an outcome")
        state = OUTCOMES[outcome]()
        broker = self.broker
        self._call(lambda: broker.settle_incoming(inc, state))

    def grant_credit(self, link: str, n: int) -> None:
        raise Unsupported("the broker grants credit itself when serving")

    def drain(self, link: str) -> None:
        raise Unsupported("the broker grants credit itself when serving")

    def send(self, link: str) -> None:
        raise Unsupported("when serving, messages reach receivers once accepted")
