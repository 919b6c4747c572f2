"""The proxy as a TUI source: `amqp tui --proxy LISTEN URL` (or `amqp proxy --tui`).

The proxy runs its own asyncio loop in a thread, so a busy connection never waits for the
UI and the UI never waits for the network. Each item the proxy's frame readers produce is
fed to that connection's observer by the proxy; here it is logged and its events taken,
under the source's lock. A frame a stream's end cut short is a note, not a frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import TYPE_CHECKING, Any

from amqpcli.errors import UserError
from amqpcli.net.config import ConnectionConfig
from amqpcli.tui.messages import SourceNotice
from amqpcli.tui.sources.base import ThreadedSource
from amqpcli.tui.watch import KEEP_ENDED, ConnWatch, ConnWatch010, EndOfStream, Watch

if TYPE_CHECKING:
    from amqpcli.proxy import Proxy, ProxyConnection


PAYLOAD_LIMIT = 16 * 1024  # the longest transfer payload the frame log keeps


class ProxySource(ThreadedSource):
    kind = "live"
    thread_name = "proxy"

    def __init__(
        self,
        listen: tuple[str, int],
        upstream: ConnectionConfig,
        *,
        record: str | os.PathLike[str] | None = None,
        history: int = 1000,
        frames: int = 200_000,
        half_close_timeout: float = 30.0,  # (the proxy's: `Proxy`)
        keep_ended: int = KEEP_ENDED,
    ) -> None:
        super().__init__(history=frames)
        # the frame log keeps no big transfer payload: the memory of a proxy watching
        # large messages is that of what it shows (a delivery's message, once, in the
        # engine model), not of every frame's bytes as well
        self.store.payload_limit = PAYLOAD_LIMIT
        self.listen = listen
        self.upstream = upstream
        self.record = record
        self.half_close_timeout = half_close_timeout
        self.record_failed: str | None = None  # why the recording stopped early
        self.watch = Watch(history, keep_ended)
        self.proxy: Proxy | None = None
        self.bound: tuple[str, int] | None = None
        self.title = f"proxy {listen[0]}:{listen[1]} → {upstream.endpoint.hostport}"

    # -- the proxy's thread -------------------------------------------------------------------

    async def _main(self) -> None:
        from amqpcli.proxy import Proxy, Recorder

        self.proxy = Proxy(self.listen, self.upstream, on_open=self._on_open,
                           on_item=self._on_item, on_close=self._on_close,
                           on_events=self._on_events, lock=self.lock,
                           half_close_timeout=self.half_close_timeout)
        self.bound = await self.proxy.start()
        if self.record:  # (opened once listening: a proxy that cannot start empties no file)
            try:
                self.proxy.recorder = Recorder(self.record, on_failure=self._record_failed)
            except BaseException:
                await self.proxy.close()
                raise
        self.ready.set()
        self._post(SourceNotice(f"listening on {self.bound[0]}:{self.bound[1]}"))
        await self.proxy.serve()

    def _record_failed(self, why: str) -> None:
        """The recording cannot be written any more: it stops, the proxy goes on."""
        self.record_failed = why
        self._post(SourceNotice(f"cannot write the recording {os.fspath(self.record or '')}: "
                                f"{why}; recording stopped, still forwarding", "warning"))

    def _failure(self, e: Exception) -> UserError | None:
        return e if isinstance(e, UserError) else None

    def _halt(self, loop: asyncio.AbstractEventLoop) -> None:
        proxy = self.proxy
        if proxy is not None:
            fut = asyncio.run_coroutine_threadsafe(proxy.close(), loop)
            # Stopping must not fail the app's exit, whatever the proxy's close raises.
            with contextlib.suppress(Exception):
                fut.result(timeout=5)

    # -- callbacks, on the proxy's thread ------------------------------------------------------

    def _on_open(self, conn: ProxyConnection) -> None:
        with self.lock:
            self.watch.conns[conn.key] = ConnWatch(conn.key, conn.describe(), self.watch.history,
                                                   observer=conn.observer)

    def _on_item(self, conn: ProxyConnection, side: str, item: Any, t: float, events: list[Any]) -> None:
        from amqpcli.proxy import ProxyNotice

        with self.lock:
            if isinstance(item, ProxyNotice):
                # no frame: a note, as the TUI notes it reading the proxy's recording
                self._post(SourceNotice(f"{conn.key} {side}: {item.text}", "warning"))
            else:
                self.store.append(t, conn.key, side, item)
            cw = self.watch.engine_conn(conn.key)
            if cw is not None:
                cw.take(events)

    def _on_events(self, conn: ProxyConnection, side: str, events: list[Any]) -> None:
        # The end of one side's stream (called with the lock held by the proxy): a FIN or
        # a reset, as the proxy saw it end.
        how, t = conn.ends.get(side, ("fin", time.time()))
        self.store.append(t, conn.key, side, EndOfStream(how))
        cw = self.watch.engine_conn(conn.key)
        if cw is not None:
            cw.take(events)

    def _on_close(self, conn: ProxyConnection, how: str) -> None:
        with self.lock:
            cw = self.watch.engine_conn(conn.key)
            if cw is not None:
                cw.ended = how
            self.watch.end(conn.key)
        if how not in ("closed",):
            self._post(SourceNotice(f"{conn.key}: {how}", "warning"))

    # -- reading --------------------------------------------------------------------------------

    def connections(self) -> list[tuple[str, ConnWatch | ConnWatch010]]:
        return self.watch.items()

    def status(self) -> str:
        if self.error:
            return self.error
        where = f"{self.bound[0]}:{self.bound[1]}" if self.bound else "…"
        rec = f", recording {os.fspath(self.record)}" if self.record else ""
        if self.record and self.record_failed:
            rec = f", recording {os.fspath(self.record)} stopped ({self.record_failed})"
        return f"proxy {where} → {self.upstream.endpoint.hostport}: {self.watch.counts()}{rec}"
