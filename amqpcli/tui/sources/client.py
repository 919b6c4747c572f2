"""Our own connection as a TUI source: `amqp tui URL --recv` / `--send`.

The network layer's `Client` runs on an asyncio loop in a thread of its own, with one
link: a receiver (nothing is granted until the user presses the credit key, so every
delivery can be settled by hand with any outcome) or a sender (each key press sends one
message). The engine is the client's own endpoint; its model is what the views show.

The client is watched through its public hooks: the source's lock is held through every
step of its transport (and the actions, which the UI thread hands to the client's loop,
take it too), each batch of engine events goes to the connection's watch, and a byte tap
on the engine puts a copy of the bytes in each direction into the frame log.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.errors import Exit, UserError
from amqpcli.net.config import ConnectionConfig
from amqpcli.tui import adapter
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.sources.base import ThreadedSource, Unsupported, frame_log_tap
from amqpcli.tui.watch import ConnWatch

OUTCOMES: dict[str, Callable[[], Any]] = {
    "accepted": c.Accepted,
    "rejected": c.Rejected,
    "released": c.Released,
    "modified": lambda: c.Modified(delivery_failed=True),
}

KEY = "c1"  # as the first connection is labelled everywhere else (pcap-dump, --trace)
INTERNAL = "ended by an internal error"  # how a connection a step of ours failed on ended


class ClientSource(ThreadedSource):
    kind = "client"
    thread_name = "client"
    join_timeout = 6.0

    def __init__(self, cfg: ConnectionConfig, *, receive: bool, history: int = 1000,
                 frames: int = 200_000) -> None:
        super().__init__(history=frames)
        self.cfg = cfg
        self.receive = receive
        self.history = history
        self.client: Any = None
        self.link: Any = None  # the net layer's ReceiverLink / SenderLink
        self.cw: ConnWatch | None = None
        self._numbers = itertools.count(1)
        role = "receiving from" if receive else "sending to"
        more = len(cfg.endpoint.alternates)
        self.title = (f"{role} {cfg.endpoint.address or '(no address)'} at {cfg.endpoint.hostport}"
                      + (f" (or {more} more: failover)" if more else ""))

    @property
    def key_groups(self) -> frozenset[str]:
        return frozenset({"recv", "settle"} if self.receive else {"send"})

    # -- the client's thread ------------------------------------------------------------------

    def _failure(self, e: Exception) -> UserError:
        from amqpcli.net.client import ConnectionLost

        if isinstance(e, ConnectionLost):  # lost before our link was attached
            self._ended("lost")
            return e.error
        if isinstance(e, UserError):
            if self.cw is not None:
                self._ended("closed")
            return e
        # Anything else is a bug of ours (a step the client's transport ran, say): shown
        # as one, not raised and not as the network failing.
        self._ended(INTERNAL)
        return internal_error(e)

    def _ended(self, how: str) -> None:
        """Mark our connection as ended in the model the views show."""
        with self.lock:
            if self.cw is not None and not self.cw.ended:
                self.cw.ended = how

    async def _main(self) -> None:
        from amqpcli.net.client import connect_retrying

        self._halted = asyncio.Event()
        # (a failover list: which host it reached, when not the first, is a notice)
        client = await connect_retrying(self.cfg, None, lambda text: self._post(SourceNotice(text)),
                                        on_engine=self._instrument, on_events=self._take,
                                        lock=self.lock)
        self.client = client
        address = self.cfg.endpoint.address
        if self.receive:
            self.link = await client.open_receiver(address)
        else:
            self.link = await client.open_sender(address)
        self.ready.set()
        self._post(SourceNotice(f"attached {'receiver' if self.receive else 'sender'} "
                                f"{self.link.link.name!r}"))
        try:
            # Until the user quits, or the connection ends under us: that is shown as soon
            # as it happens (as `amqp recv` reports it), not at the next key press.
            halted = asyncio.ensure_future(self._halted.wait())
            finished = asyncio.ensure_future(client.transport.finished.wait())
            await asyncio.wait({halted, finished}, return_when=asyncio.FIRST_COMPLETED)
            for fut in (halted, finished):
                fut.cancel()
            if not self._halted.is_set():
                self._lost(client)
        finally:
            try:
                await client.close()
            except Exception:
                if self.error is None:  # not shown by _lost: _failure words it
                    raise

    def _lost(self, client: Any) -> None:
        """The transport ended while we still wanted the connection."""
        error: UserError
        if client.failed is not None:
            how, error = INTERNAL, internal_error(client.failed)
        elif client.lost is not None:
            how, error = "lost", client.lost.error
        elif client.error is not None:
            how, error = "closed by peer", client.error
        else:
            how, error = "lost", UserError(f"the connection to {client.cfg.endpoint.hostport} "
                                           "ended", Exit.CONNECTION)
        self._ended(how)
        self.error = str(error)
        self._post(SourceFailed(error))

    def _instrument(self, engine: Any) -> None:
        """The new engine, before any byte moves: watch its model, log its bytes."""
        self.cw = ConnWatch(KEY, self.cfg.endpoint.hostport, self.history, observer=engine)
        engine.set_tap(frame_log_tap(engine, self.store, KEY, incoming="server",
                                   outgoing="client"))

    def _take(self, events: list[Any]) -> None:
        """A batch of the engine's events (the transport holds the lock)."""
        if self.cw is not None:
            self.cw.take(events)

    # -- reading --------------------------------------------------------------------------------

    @property
    def engine_connection(self) -> Any:
        return None if self.cw is None else self.cw.connection

    def connections(self) -> list[tuple[str, ConnWatch]]:
        return [] if self.cw is None else [(KEY, self.cw)]

    @property
    def sent(self) -> int:
        """Messages the send key made that went out: transfers on our sending link."""
        if self.receive or self.link is None:
            return 0
        with self.lock:
            return int(self.link.link.deliveries)

    @property
    def waiting(self) -> int:
        """Messages the send key made that the engine holds until the peer gives credit."""
        if self.receive or self.client is None or self.link is None:
            return 0
        with self.lock:
            return int(self.client.engine.queued(self.link.link))

    def status(self) -> str:
        if self.error:
            return self.error
        if self.link is None:
            return f"{self.title}: connecting…"
        extra = ""
        if not self.receive:
            waiting = self.waiting
            extra = f", sent {self.sent}" + (f", {waiting} waiting for credit" if waiting else "")
        return f"{self.title}: credit {self.link.link.link_credit}{extra}"

    # -- actions (UI thread → the client's loop) -------------------------------------------------

    def _call(self, fn: Callable[[], None]) -> None:
        if self.error is not None:
            raise Unsupported(self.error)
        if self.link is None:
            raise Unsupported(self.not_running)
        super()._call(fn)

    def _own_link(self, key: str) -> Any:
        if self.link is None:
            # Our attach is on screen as soon as it is sent; the link is ours to act on
            # once the peer has answered it.
            raise Unsupported("our link is not attached yet" if self.error is None
                              else self.error)
        with self.lock:
            found = adapter.find_link(self.connections(), key)
        if found is None or found[1] is not self.link.link:
            raise Unsupported("that is not our link")
        return found

    def grant_credit(self, link: str, n: int) -> None:
        if not self.receive:
            raise Unsupported("credit is granted by a receiving link (amqp tui URL --recv)")
        self._own_link(link)
        lk = self.link
        self._call(lambda: lk.flow(lk.credit + n))

    def drain(self, link: str) -> None:
        if not self.receive:
            raise Unsupported("draining is asked by a receiving link (amqp tui URL --recv)")
        self._own_link(link)
        lk = self.link
        self._call(lambda: lk.flow(lk.credit, drain=True))

    def settle(self, delivery: str, outcome: str) -> None:
        if not self.receive:
            raise Unsupported("settling by hand needs our receiving link (amqp tui URL --recv)")
        cw, link, _ = self._own_link(delivery.rsplit(adapter.SEP, 1)[0])
        with self.lock:
            d = adapter.find_delivery(cw, link, delivery)
        if d is None or d.done:
            raise Unsupported("that delivery is already settled")
        state = OUTCOMES[outcome]()
        from amqpcli.net.client import Incoming

        rl = self.link

        def go() -> None:
            rl.settle(Incoming(d, 0), state)
            flush = getattr(rl, "flush_settlements", None)  # settlements may be batched
            if flush is not None:
                flush()
            if d.done:  # gone from the link's unsettled map: the delivery tab finds it here
                cw.keep_settled(d)

        self._call(go)

    def send(self, link: str) -> None:
        if self.receive:
            raise Unsupported("sending needs our sending link (amqp tui URL --send)")
        self._own_link(link)
        n = next(self._numbers)
        msg = Message(c.AmqpValue(f"message {n} from amqp tui"),
                      properties=c.Properties(message_id=f"tui-{n}"))
        payload = msg.encode()
        sl = self.link
        engine = self.client.engine

        def go() -> None:
            sl.send(payload, settled=False)
            if engine.queued(sl.link) == 1:  # the first to wait (the engine sends in order)
                self._post(SourceNotice("no credit from the peer: messages wait until it "
                                        "grants some", "warning"))

        self._call(go)


def internal_error(e: BaseException) -> UserError:
    """A bug of ours as the status line says it (the CLI's words, less its --debug hint),
    with the exit status of one."""
    text = " ".join(str(e).split())  # one line, whatever the text holds
    return UserError(f"internal error: {type(e).__name__}" + (f": {text}" if text else ""),
                     Exit.FAILURE)
