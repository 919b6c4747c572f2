"""What every source gives the app: a lock, the engine model, the frame log, and actions.

A source feeds the engine from its own thread (a replay worker, the proxy's event loop, a
client connection) while holding `lock`; the app takes the same lock ten times a second to
copy what it shows into `view` rows. Actions a source cannot do raise `Unsupported`, which
the app turns into a notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from amqpcli.engine.frametap import FrameTap
from amqpcli.errors import UserError
from amqpcli.tui import adapter
from amqpcli.tui.adapter import RateMeter
from amqpcli.tui.messages import SourceFailed, SourceNotice
from amqpcli.tui.store import FrameStore
from amqpcli.tui.view import Snapshot

if TYPE_CHECKING:
    from amqpcli.tui.app import AmqpTui
    from amqpcli.tui.widgets.framelog import FrameSeq


DEFAULT_KEY_GROUPS = {
    "replay": frozenset({"replay"}),
    "client": frozenset({"recv", "settle", "send"}),
}


class Unsupported(Exception):
    """This source cannot do that (e.g. settle a delivery seen in a capture)."""


class Source:
    kind = "base"  # what the source is: "replay", "client" (one end is ours), "live"
    title = "amqp"

    @property
    def key_groups(self) -> frozenset[str]:
        """The groups of keys (`keys.KEYS`) that work with this source; the app hides and
        refuses the others. By default what the kind allows."""
        return DEFAULT_KEY_GROUPS.get(self.kind, frozenset())

    def __init__(self, history: int = 200_000) -> None:
        self.lock = threading.RLock()
        self.store = FrameStore(limit=history)
        self.app: AmqpTui | None = None
        self.rates = RateMeter()

    @property
    def frames(self) -> FrameSeq:
        return self.store

    def start(self, app: AmqpTui) -> None:
        self.app = app

    def stop(self) -> None:
        pass

    def _post(self, msg: Any) -> None:
        """Tell the app something (safe from any thread); nothing without an app."""
        if self.app is not None:
            self.app.post_message(msg)

    def connections(self) -> list[tuple[str, Any]]:
        """(key, engine connection) pairs, called under `lock`."""
        return []

    def snapshot(self, link: str | None, delivery: str | None, now: float,
                 conn: str | None = None) -> Snapshot:
        with self.lock:
            return adapter.snapshot(
                self.connections(), link, delivery, now, self.rates, ours=self.kind == "client",
                conn=conn,
            )

    def status(self) -> str:
        return ""

    @property
    def untimed(self) -> Collection[str]:
        """The keys of the connections whose times are unknown (a frame-trace log's
        without times): their frame lines show `-` for the time."""
        return ()

    def now(self) -> float:
        """The time ages are measured against (capture time for a replay)."""
        import time

        return time.time()

    # -- actions on our own links ------------------------------------------------------------

    def grant_credit(self, link: str, n: int) -> None:
        raise Unsupported("granting credit needs our own receiving link (amqp tui URL --recv)")

    def drain(self, link: str) -> None:
        raise Unsupported("draining needs our own receiving link (amqp tui URL --recv)")

    def settle(self, delivery: str, outcome: str) -> None:
        raise Unsupported("settling needs our own receiving link (amqp tui URL --recv)")

    def send(self, link: str) -> None:
        raise Unsupported("sending needs our own sending link (amqp tui URL --send)")


class ThreadedSource(Source):
    """A source whose network side runs `_main()` on an asyncio loop in a daemon thread.

    A failure of `_main()` becomes `error` and a `SourceFailed` message, worded (with its
    exit status) by `_failure()` (which returns None for errors it lets propagate);
    `ready` is set once `_main()` is under way (by `_main()` itself) or over. `stop()` calls `_halt()` on the
    loop's behalf, then waits up to `join_timeout` seconds for the thread. By default
    `_halt()` sets `_halted`, an asyncio event `_main()` may create and wait on.
    """

    thread_name = "source"
    join_timeout = 5.0
    not_running = "not connected"  # why an action cannot be done before or after `_main()`

    def __init__(self, history: int = 200_000) -> None:
        super().__init__(history=history)
        self.error: str | None = None
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._halted: asyncio.Event | None = None

    def start(self, app: AmqpTui | None) -> None:  # type: ignore[override]
        self.app = app
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except Exception as e:
            error = self._failure(e)
            if error is None:
                raise
            self.error = str(error)
            self._post(SourceFailed(error))
        finally:
            self.ready.set()
            loop.close()

    async def _main(self) -> None:
        raise NotImplementedError

    def _failure(self, e: Exception) -> UserError | None:
        """What `e`, ending `_main()`, reads as; None lets it propagate."""
        return None

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            self._halt(loop)
        if self._thread is not None:
            self._thread.join(timeout=self.join_timeout)

    def _call(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the loop under the lock (from the UI thread); a failure is a notice."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise Unsupported(self.not_running)

        def run() -> None:
            try:
                with self.lock:
                    fn()
            except Exception as e:  # noqa: BLE001 - an action that fails says so, once
                self._post(SourceNotice(f"{type(e).__name__}: {e}", "error"))

        loop.call_soon_threadsafe(run)

    def _halt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Ask `_main()` to finish (called from another thread while the loop is open)."""
        halted = self._halted
        if halted is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(halted.set)


def frame_log_tap(endpoint: Any, store: FrameStore, key: str, *, incoming: str,
                  outgoing: str) -> FrameTap:
    """A tap for an engine endpoint (`Endpoint.set_tap`): its frames both ways go into
    `store` under `key`, as side `incoming` (received) or `outgoing` (sent). It runs where
    the engine is driven, so under the lock the source gives the transport
    (`Client.connect(lock=)`, `peer.Server(lock=)`)."""
    append = store.append

    def log(side: str, item: Any, t: float) -> None:
        append(t, key, side, item)
    return FrameTap(endpoint, log, incoming=incoming, outgoing=outgoing)
