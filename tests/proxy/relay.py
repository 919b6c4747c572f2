"""For the proxy tests: a byte-recording TCP relay and an event loop in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running in a thread; `run(coro)` runs a coroutine there and waits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close_server(self, server: asyncio.base_events.Server) -> None:
        """Close a server of this loop from its own thread: closing it from another races
        the loop's own bookkeeping when a connection ends (asyncio is not thread-safe)."""
        async def close() -> None:
            server.close()
        self.run(close())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Relay:
    """A plain TCP relay that records every byte going each way (a wiretap for tests)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.up = bytearray()  # towards target
        self.down = bytearray()  # back from target
        self.server: asyncio.base_events.Server | None = None
        self.port = 0
        self.done = asyncio.Event()
        self.connections = 0

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self.port

    async def _accept(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self.connections += 1
        ur, uw = await asyncio.open_connection(*self.target)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, buf: bytearray) -> None:
            try:
                while data := await src.read(65536):
                    buf += data
                    dst.write(data)
                    await dst.drain()
                if dst.can_write_eof():
                    dst.write_eof()
            except (ConnectionError, OSError):
                dst.close()

        await asyncio.gather(pump(r, uw, self.up), pump(ur, w, self.down))
        w.close()
        uw.close()
        self.done.set()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
