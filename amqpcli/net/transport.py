"""The pump between a byte stream and the sans-IO engine.

One task reads the socket and feeds `engine.receive_data(bytes, now)`; after every step
whatever `engine.data_to_send()` holds is written; a timer task wakes the engine at its
next deadline (heartbeats, idle timeout). Events go to `on_event` in the order the engine
produced them. The transport never builds or parses a frame itself.

Whatever ends the reading or the timers ends the stream: the peer closing it, a socket
error, or a step of ours that raised (the engine could not take the peer's bytes or build
its answer, a handler of its events failed). `lost` then says why and `on_event` gets
`StreamEnded` with it, so whoever waits on the connection learns of it at once; a task
ending on its own exception would leave the connection hanging, unheard, until the peer
gives up. The two are told apart by where they were raised, not by their type: what the
socket's read or write raised is the network's (`internal` False); what a step raised is
a bug of ours (`internal` True), to be reported as one and not as a lost connection.
The peer closing the stream and a read or write that fails (a reset) all end it in the
engine first (`receive_eof`): what it still held is judged (a frame cut short is no framing
error) and what is unsettled abandoned.

Two hooks for whoever watches the engine from outside (the TUI): `on_events(events)` sees
each batch of events before `on_event` gets them one by one (`StreamEnded` too), and `lock`
(a re-entrant lock, or any context manager) is held through every step that drives the
engine — bytes in with their events and answer, a timer, end of stream, `flush()` — so
another thread holding it sees the model between steps. Without them the steps run as
plain calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from amqpcli.aio import wait_within
from amqpcli.errors import secret_forms

__all__ = ["EngineLike", "StreamEnded", "Transport", "now", "without_secrets"]

_READ_SIZE = 1 << 18


def now() -> float:
    """The one clock the transport hands the engine (seconds since the epoch)."""
    return time.time()


class EngineLike(Protocol):
    """What the transport needs from the engine's client role."""

    def receive_data(self, data: bytes, time: float) -> list[Any]: ...
    def receive_eof(self, time: float, how: str = "fin") -> list[Any]: ...
    def data_to_send(self) -> bytes: ...
    def take_events(self) -> list[Any]: ...
    def set_time(self, now: float) -> None: ...
    def next_timer(self) -> float | None: ...
    def handle_timer(self, now: float) -> list[Any]: ...


class Transport:
    HIGH_WATER = 1 << 20  # bytes waiting in the socket buffer before senders wait

    def __init__(
        self,
        engine: EngineLike,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_event: Callable[[Any], None],
        *,
        on_events: Callable[[list[Any]], None] | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self.engine = engine
        self.reader = reader
        self.writer = writer
        self.on_event = on_event
        self.lost: BaseException | None = None  # why the stream ended, if it did
        self.internal = False  # ... and it was a step of ours that raised (see the module's text)
        self.finished = asyncio.Event()  # set when the stream ended (cleanly or not)
        self._ending = False  # the engine is being told the stream ended
        self._timer_wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.bytes_in = 0
        self.bytes_out = 0
        self.head = b""  # the peer's first bytes (up to 8), for an error that ends early
        self.on_events = on_events
        self.lock = lock
        # The hooks swap in other variants of the steps on this instance only, so the
        # plain ones stay as they were.
        if on_events is not None:
            self._dispatch = self._dispatch_watched  # type: ignore[method-assign]
        if lock is not None:
            for step in ("flush", "receive", "_timer_step", "_eof_step", "_lose"):
                setattr(self, step, _held(lock, getattr(self, step)))

    def start(self) -> None:
        self.flush()
        self._tasks = [
            asyncio.create_task(self._read_loop(), name="amqp-read"),
            asyncio.create_task(self._timer_loop(), name="amqp-timers"),
        ]

    # --- writing -------------------------------------------------------------------

    def flush(self) -> None:
        """Hand out the events of engine calls and write what the engine has to send."""
        try:
            self._dispatch(self.engine.take_events())
            data = self.engine.data_to_send()
        except Exception as e:  # noqa: BLE001 - a step of ours: see the module's text
            self._lose(e, internal=True)
            return
        if data and not self.writer.is_closing():
            self.bytes_out += len(data)
            try:
                self.writer.write(data)
            except OSError as e:
                self._eof_step("rst", e)
                return
        self._timer_wake.set()

    async def drain(self) -> None:
        """Wait while the socket's write buffer is above the high-water mark."""
        transport = self.writer.transport
        if transport.get_write_buffer_size() > self.HIGH_WATER and not self.writer.is_closing():
            try:
                await self.writer.drain()
            except (ConnectionError, OSError) as e:
                self._eof_step("rst", e)

    # --- reading and timers --------------------------------------------------------

    def receive(self, data: bytes) -> None:
        """Bytes from the peer: into the engine, its events out, its answer written (what
        the read loop does with each read; also for bytes read before `start()`)."""
        try:
            self._dispatch(self.engine.receive_data(data, now()))
        except Exception as e:  # noqa: BLE001 - a step of ours: see the module's text
            self._lose(e, internal=True)
            return
        self.flush()

    def _dispatch(self, events: list[Any] | None) -> None:
        if events:
            for ev in events:
                self.on_event(ev)

    def _dispatch_watched(self, events: list[Any] | None) -> None:
        if events:
            self.on_events(events)  # type: ignore[misc]
            for ev in events:
                self.on_event(ev)

    def _eof_step(self, how: str, why: BaseException) -> None:
        """The peer's stream ended (`how`: "fin", or "rst" for a read that failed): the
        engine judges what it still held and abandons what is unsettled, then the stream
        is lost for `why`. Not after the stream was lost otherwise: the events of an engine
        whose connection is over would come after `StreamEnded`."""
        if self.finished.is_set() or self._ending:
            return
        self._ending = True  # a handler of its events may write, and fail, again
        try:
            self._dispatch(self.engine.receive_eof(now(), how))
        except Exception as e:  # noqa: BLE001 - a step of ours: see the module's text
            self._lose(e, internal=True)
            return
        self._lose(why)

    def _timer_step(self) -> None:
        try:
            self._dispatch(self.engine.handle_timer(now()))
        except Exception as e:  # noqa: BLE001 - a step of ours: see the module's text
            self._lose(e, internal=True)
            return
        self.flush()

    async def _read_loop(self) -> None:
        while not self.finished.is_set():
            try:
                data = await self.reader.read(_READ_SIZE)
            except Exception as e:  # noqa: BLE001 - whatever the read raises is the socket's
                self._eof_step("rst", e)  # (a reset, or a TLS failure: the stream ended)
                return
            if not data:
                self._eof_step("fin", EOFError("connection closed by peer"))
                return
            if not self.bytes_in:
                self.head = data[:8]
            self.bytes_in += len(data)
            self.receive(data)  # a step that raises ends the stream itself

    async def _timer_loop(self) -> None:
        try:
            while not self.finished.is_set():
                self._timer_wake.clear()
                deadline = self.engine.next_timer()
                if deadline is None:
                    await self._timer_wake.wait()
                    continue
                delay = deadline - now()
                if delay > 0:
                    try:
                        await wait_within(self._timer_wake.wait(), delay)
                    except TimeoutError:
                        pass
                    continue
                self._timer_step()
        except Exception as e:  # noqa: BLE001 - only the engine's calls raise here: ours
            self._lose(e, internal=True)

    def _lose(self, exc: BaseException, internal: bool = False) -> None:
        if self.finished.is_set():
            return
        self.lost = exc
        self.internal = internal
        self.finished.set()
        self._timer_wake.set()
        ended = StreamEnded(exc, internal=internal)
        if self.on_events is not None:
            try:
                self.on_events([ended])
            except Exception:  # noqa: BLE001, S110 - a watcher failing must not keep the end from on_event
                pass
        self.on_event(ended)

    async def close(self) -> None:
        """Flush, close the socket and stop the tasks."""
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()
        try:
            if not self.writer.is_closing():
                await wait_within(self.writer.drain(), 2)
            self.writer.close()
            await wait_within(self.writer.wait_closed(), 2)
        except (ConnectionError, OSError, TimeoutError):
            pass
        if not self.finished.is_set():
            self.finished.set()


def _held(lock: AbstractContextManager[Any], step: Callable[..., None]) -> Callable[..., None]:
    def run(*args: Any, **kwargs: Any) -> None:
        with lock:
            step(*args, **kwargs)
    return run


class StreamEnded:
    """Not an engine event: the byte stream ended (`error` says why). `internal`: `error`
    was raised by a step of ours (a bug), not by the socket."""

    __slots__ = ("error", "internal")

    def __init__(self, error: BaseException, internal: bool = False) -> None:
        self.error = error
        self.internal = internal

    def __repr__(self) -> str:
        return f"StreamEnded({self.error!r}{', internal=True' if self.internal else ''})"


def without_secrets(exc: BaseException, secrets: list[str]) -> BaseException:
    """`exc` with `secrets` (a password) masked as `***` in its text, for an error that is
    shown. A step's exception may quote what the engine held, the SASL exchange included,
    which is never shown elsewhere. Its arguments are masked in place (the traceback
    stays); one whose text still holds a secret is left with its masked text alone."""
    secrets = [s for s in secrets if s]
    if not secrets:
        return exc

    def masked(value: Any) -> Any:
        for secret in secrets:
            if isinstance(value, str):
                value = value.replace(secret, "***")
            elif isinstance(value, (bytes, bytearray)):
                value = bytes(value).replace(secret.encode("utf-8", "surrogateescape"), b"***")
        return value

    def shows(text: str) -> bool:
        return any(form in text for s in secrets for form in secret_forms(s))

    exc.args = tuple(masked(a) for a in exc.args)
    text = str(exc)
    if shows(text):
        for secret in secrets:
            for form in secret_forms(secret):
                text = text.replace(form, "***")
        exc.args = (text,)
    return exc
