"""Playing the broker by hand: `amqp tui --serve [--listen HOST:PORT]`.

The peer package's `Server` and `Broker` (the engine in its peer role) run on an asyncio
loop in a thread of their own. Every message an application sends waits in the broker
(the decider says "not yet") until the user settles it with a key: accepted (it is
stored and can be received), rejected, released or modified. Receivers get what was
accepted, with the broker's usual credit and dispatch.

As with our own client connection, the server is watched through its public hooks: it
holds the source's lock through everything it does with the broker and the endpoints,
each connection gets a watch and a byte tap (a copy of the bytes both ways into the frame
log) when it starts, and each batch of its engine events goes to its watch.
"""

from __future__ import annotations

import asyncio
from typing import Any

from amqpcli.errors import Exit, UserError, listen_error
from amqpcli.net.transport import StreamEnded
from amqpcli.tui import adapter
from amqpcli.tui.messages import SourceNotice
from amqpcli.tui.sources.base import ThreadedSource, Unsupported, frame_log_tap
from amqpcli.tui.sources.client import INTERNAL, OUTCOMES, internal_error
from amqpcli.tui.watch import KEEP_ENDED, ConnWatch, ConnWatch010, Watch


class ServeSource(ThreadedSource):
    kind = "client"  # the settle keys work here: we are one end of every connection
    thread_name = "serve"
    not_running = "not serving"
    join_timeout = 10.0

    def __init__(self, listen: tuple[str, int], *, history: int = 1000,
                 frames: int = 200_000, keep_ended: int = KEEP_ENDED) -> None:
        super().__init__(history=frames)
        self.listen = listen
        self.watch = Watch(history, keep_ended)
        self.server: Any = None
        self.broker: Any = None
        self.bound: tuple[str, int] | None = None
        self.title = f"serving on {listen[0]}:{listen[1]}"

    @property
    def key_groups(self) -> frozenset[str]:
        return frozenset({"settle"})  # the broker grants credit and sends by itself

    # -- the server's thread ------------------------------------------------------------------

    def _failure(self, e: Exception) -> UserError:
        if isinstance(e, OSError):
            return listen_error(self.listen[0], self.listen[1], e)
        # The server's end is shown, not raised.
        return UserError(f"serve failed: {type(e).__name__}: {e}", Exit.FAILURE)

    async def _main(self) -> None:
        from amqpcli.peer import Broker, Server

        # Nothing is decided automatically: every message waits for a key press.
        self.broker = Broker(decide=lambda incoming: None)
        self.server = Server(self.listen, self.broker, on_connect=self._instrument,
                             on_events=self._take, lock=self.lock,
                             on_disconnect=lambda conn: self.watch.end(conn.name))
        self._halted = asyncio.Event()
        self.bound = await self.server.start()
        self.ready.set()
        self._post(SourceNotice(f"serving on {self.bound[0]}:{self.bound[1]}: "
                                "settle each message with a, r, l or m"))
        try:
            await self._halted.wait()
        finally:
            await self.server.close()

    def _instrument(self, conn: Any) -> None:
        """A new connection, before any of its bytes move: watch its model, log its bytes."""
        ep, name = conn.endpoint, conn.name
        self.watch.conns[name] = ConnWatch(name, conn.peer, self.watch.history, observer=ep)
        ep.set_tap(frame_log_tap(ep, self.store, name, incoming="client", outgoing="server"))

    def _take(self, conn: Any, events: list[Any]) -> None:
        """A batch of a connection's engine events (the server holds the lock)."""
        cw = self.watch.engine_conn(conn.name)
        if cw is not None:
            cw.take(events)
        end = events[-1]
        if type(end) is StreamEnded and end.internal:
            # A step of ours failed on this connection (the server logs it and closes
            # it): said as the bug it is, not as the client going away.
            if cw is not None:
                cw.ended = INTERNAL
            self._post(SourceNotice(f"{conn.name}: {internal_error(end.error)}", "error"))

    # -- reading --------------------------------------------------------------------------------

    def connections(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        return self.watch.items()

    def status(self) -> str:
        if self.error:
            return self.error
        where = f"{self.bound[0]}:{self.bound[1]}" if self.bound else "…"
        waiting = len(self.broker.pending) if self.broker is not None else 0
        return f"serving on {where}: {self.watch.counts()}, {waiting} message(s) waiting"

    # -- actions --------------------------------------------------------------------------------

    def settle(self, delivery: str, outcome: str) -> None:
        with self.lock:
            found = adapter.find_link(self.connections(), delivery.rsplit(adapter.SEP, 1)[0])
            d = None if found is None else adapter.find_delivery(found[0], found[1], delivery)
            pending = [] if self.broker is None else self.broker.pending
            inc = next((i for i in pending if i.delivery is d), None)
            # a message an application sent us (the broker's side receives it)
            received = found is not None and d is not None and d.receiver == found[0].connection.local
        if inc is None:
            if received:  # settled by an earlier key, or by the sender itself
                raise Unsupported("that delivery is already settled")
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
