"""An asyncio client over the engine's client endpoint: connect, links, send, receive.

The command loops (`sending`, `receiving`) await this API; this module turns engine
events into resolved waits and failures into one-line `UserError`s:

* cannot reach / TLS / SASL failures → `Exit.CONNECTION`;
* the peer closing the connection, ending the session, or refusing/detaching a link with
  an error → `Exit.REFUSED` with the peer's condition and description;
* the stream ending under an open connection → `ConnectionLost` (the send loop may
  reconnect), whose `.error` is the one-line `Exit.CONNECTION` error;
* a step of ours raising while it drives the connection (the engine taking the peer's
  bytes, a handler below) → that exception itself, raised to the caller as any bug is
  (the CLI's "internal error", its traceback under --debug), never `ConnectionLost`.

Every call into the engine is in this file, so the transport stays protocol-free.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any

from amqpcli.aio import wait_within
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.engine import events as ev
from amqpcli.engine.connection import MIN_MAX_FRAME_SIZE
from amqpcli.engine.delivery import TERMINAL_TYPES
from amqpcli.engine.endpoint import FrameTooLarge
from amqpcli.errors import Exit, UserError, mask_secrets, register_secret
from amqpcli.net.config import Backoff, ConnectionConfig
from amqpcli.net.connect import connection_error, open_stream
from amqpcli.net.quirks import PeerInfo, peer_info
from amqpcli.net.transport import StreamEnded, Transport, without_secrets
from amqpcli.net.transport import now as _now
from amqpcli.render.types import printable, quoted

__all__ = ["FORCED", "Client", "ConnectionLost", "Incoming", "InternalError", "Pending",
           "ReceiverLink", "SenderLink", "connect_retrying", "forced_close", "raise_exit"]

_FLUSH_EVERY = 256  # sends between hand-offs to the socket when credit never runs out
LOCAL = "client"
REMOTE = "server"
# How long a step of our close (a detach, the close) waits for the peer's answer. A healthy
# peer answers in milliseconds: one that has not in this time has stopped (frozen, its
# network gone), and is said to have (`Client.close_unanswered`).
CLOSE_WAIT = 5.0
# A receive with a timeout (recv's --timeout, browse's) waits no longer than that for the
# answers to its close, but not less than this (a slow network's round trip).
CLOSE_WAIT_FLOOR = 1.0
# Outcomes that give a message back to the peer: it comes again whether our settlement
# reached the peer or not (`Client.close_unanswered` does not count them).
_GIVEN_BACK = (c.Released, c.Modified)


async def close_interrupted(client: Client | None, timeout: float) -> bool:
    """After Ctrl-C (asyncio.run cancels the running task): take the cancel back and close
    the connection as a finished run does, so the summary is printed and the peer sees a
    close. True when the connection closed cleanly (nothing left to abort)."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
    if client is None:
        return False
    try:
        await wait_within(client.close(), timeout)
        return True
    except (ConnectionLost, TimeoutError, OSError):
        return False


async def connect_retrying(cfg: ConnectionConfig, delays: Backoff | None,
                           on_warning: Callable[[str], None] | None = None,
                           on_retry: Callable[[UserError], None] | None = None,
                           **hooks: Any) -> Client:
    """`Client.connect`, tried again after each delay in `delays` (consumed; None: one
    try) while the failure is one a pause may cure (refused, reset, timed out). With a
    failover list each try goes round its hosts, from the one after the host last
    connected to, with no pause between them; a failure no pause would cure ends it at
    once. The client's `cfg` is the host's own (its errors name that host).
    `on_retry(error)`: a try failed and another follows, its delay taken from `delays`
    (`reconnecting.Reconnects` says so). `hooks`: `Client.connect`'s."""
    hosts = cfg.endpoint.hosts()
    while True:
        failures: list[UserError] = []
        for i in range(len(hosts)):
            k = (cfg.next_host[0] + i) % len(hosts)
            one = cfg if len(hosts) == 1 else replace(cfg, endpoint=hosts[k])
            try:
                client = await Client.connect(one, on_warning=on_warning, **hooks)
            except UserError as e:
                if not getattr(e, "retryable", False):
                    if failures:  # (the hosts passed over before it, named too)
                        raise _none_reached([*failures, e], e.code) from None
                    raise
                failures.append(e)
                continue
            moved = cfg.next_host[0] != 0 or failures  # (not the list's first connect)
            cfg.next_host[0] = k + 1
            if len(hosts) > 1 and moved and on_warning is not None:
                passed = "; ".join(str(e).removeprefix("cannot connect to ") for e in failures)
                on_warning(f"failover: connected to {hosts[k].hostport}"
                           + (f" (passed over {passed})" if passed else ""))
            return client
        if not delays:
            raise _none_reached(failures)
        delay = delays.pop()
        if on_retry is not None:
            on_retry(_none_reached(failures))
        await asyncio.sleep(delay)


def _none_reached(failures: list[UserError], code: Exit = Exit.CONNECTION) -> UserError:
    """The error of a try at the hosts of a failover list (or of the one host): each
    host's reason, in the order tried."""
    if len(failures) == 1:
        return failures[0]
    prefix = "cannot connect to "
    reasons = [str(e).removeprefix(prefix) for e in failures]
    err = UserError(f"cannot connect to any of {len(failures)} hosts: {'; '.join(reasons)}",
                    code)
    err.retryable = all(getattr(e, "retryable", False) for e in failures)  # type: ignore[attr-defined]
    return err


_TRACE_LABELS = itertools.count(1)

FORCED = "amqp:connection:forced"
DETACH_FORCED = "amqp:link:detach-forced"
# A broker shutting down, or its operator closing the connection: RabbitMQ ends every
# session with amqp:internal-error and the Erlang reason as the description, before it
# closes the socket. 3.10 says "shutdown" when the node or its app stops, and
# "{shutdown,{connection_closing,{server_initiated_close,320,<<...>>}}}" for
# `rabbitmqctl close_all_connections` (320: AMQP 0-9-1's connection-forced; the binary
# is the operator's reason). Other reasons (a channel's 404 or 406) are the
# application's: not retried.
INTERNAL_ERROR = "amqp:internal-error"
SHUTDOWN = "shutdown"
OPERATOR_CLOSE = "{shutdown,{connection_closing,{server_initiated_close,320,"
# RabbitMQ's vhost as our open's hostname names it (--open-hostname vhost:NAME), and how
# it refuses a vhost that does not exist (or one the user may not use): see _vhost_hint.
VHOST_PREFIX = "vhost:"
UNAUTHORIZED = "amqp:unauthorized-access"


def forced_close(client: Client | None, error: BaseException) -> bool:
    """Whether `error` is the peer closing the connection with ``amqp:connection:forced``,
    ending our session as a broker shutting down or its operator closing the connection
    does (RabbitMQ: `SHUTDOWN`, `OPERATOR_CLOSE`), or detaching one of our links with
    ``amqp:link:detach-forced`` (an operator, a broker shutting down or moving the queue,
    `amqp serve --close-after`/`--detach-after`): a drop to reconnect after, as
    docs/serve.md says, not a refusal."""
    if client is None:
        return False
    if error is client.error:
        conn = getattr(client.engine, "connection", None)
        close = conn.close.get(REMOTE) if conn is not None else None
        session = client._session
        end = session.end.get(REMOTE) if session is not None else None
        return _condition(close) == FORCED or _shutdown(close) or _shutdown(end)
    for link in client._links.values():
        if error is link.error:
            return _condition(link.link.detach.get(REMOTE)) == DETACH_FORCED
    return False


async def run_on(client: Client, work: Callable[[Client], Awaitable[None]],
                 ended_when_complete: Callable[[UserError | ConnectionLost], bool]) -> bool:
    """One connection's part of a run: `work(client)`, then a clean close. A forced close is
    raised as `ConnectionLost` (a drop to reconnect after); an end that
    `ended_when_complete` accepts (it came once the run had done all it was asked) is
    not raised. The connection is closed or dropped either way. True when the peer
    answered our close (`Client.close`: it had everything sent before it)."""
    try:
        await work(client)
        answered = await client.close()
        if client.peer_close_error is not None:
            # The peer closed with an error: said even when our close crossed it (its close
            # then reads as the answer to ours), or timing would decide the exit code.
            raise client.peer_close_error
        return answered
    except (UserError, ConnectionLost) as e:
        if ended_when_complete(e):
            await client.abort()
            return False
        if isinstance(e, UserError) and forced_close(client, e):
            raise ConnectionLost(e) from None
        raise


def _condition(performative: Any) -> str | None:
    err = getattr(performative, "error", None)
    return None if err is None else str(err.condition)


def _shutdown(performative: Any) -> bool:
    err = getattr(performative, "error", None)
    if err is None or str(err.condition) != INTERNAL_ERROR:
        return False
    description = str(err.description or "")
    return description == SHUTDOWN or description.startswith(OPERATOR_CLOSE)


class ConnectionLost(Exception):
    """The connection ended under us; `error` is the one line to show for it."""

    def __init__(self, error: UserError) -> None:
        super().__init__(str(error))
        self.error = error


class InternalError(UserError):
    """A step of ours that raised in the middle of a run (the engine, a handler of its
    events, the loop itself: a bug), kept as the run's failure so that the run ends as a
    lost connection does as far as its report goes: the summary, the sends in doubt, the
    messages written. Its text is the CLI's internal-error line's; `error` is the
    exception itself, raised again once the summary is out (`raise_exit`). No reconnect
    follows one."""

    def __init__(self, error: Exception, password: str | None = None) -> None:
        without_secrets(error, [password or ""])  # (in place)
        super().__init__(f"internal error: {type(error).__name__}: {error}", Exit.FAILURE)
        self.error = error


def raise_exit(code: Exit, why: str, failure: UserError | None) -> None:
    """End a run's command with `code` and its one-line reason `why` (nothing for OK).
    When an internal error decides the code (1), the step's own exception is raised
    (the CLI's internal-error line, its traceback under --debug); messages in doubt still
    win (7), with the exception as the cause --debug shows."""
    if code == Exit.OK:
        return
    internal = failure.error if isinstance(failure, InternalError) else None
    if internal is not None and code == Exit.FAILURE:
        raise internal
    raise UserError(why, code) from internal


def describe_error(err: Any) -> str:
    """``condition: description`` of a peer's `Error` (or 'no error given'), on one line
    and otherwise as the peer wrote it: line breaks, tabs and other control characters
    escaped (`\\n`, `\\t`, `\\x1b`), a backslash as `\\\\`, spaces kept (an aligned table,
    a quoted value with two spaces); an Erlang binary of printable text in it as that
    text (`_erlang_text`). Every command that reports a peer's error (send, recv, browse,
    request, the TUI) words it here."""
    if err is None:
        return "no error given"
    cond = getattr(err, "condition", None)
    desc = getattr(err, "description", None)
    text = printable(str(cond)) if cond is not None else "unknown condition"
    # (a peer may quote what it was sent: the password masked, as everywhere)
    return mask_secrets(f"{text}: {_erlang_text(printable(desc))}" if desc else text)


# An Erlang binary as RabbitMQ's descriptions write it (`~w`): its bytes as numbers.
_ERLANG_BINARY = re.compile(r"<<(\d{1,3}(?:,\d{1,3})*)>>")
_LINE_CONTROLS = str.maketrans("", "", "\t\n\r")


def _erlang_text(description: str) -> str:
    """`description` with each Erlang binary whose bytes are printable UTF-8 (tabs and line
    breaks too, escaped) shown as its text, as Erlang writes such a string: ``<<"maintenance">>`` for
    ``<<109,97,105,110,116,101,110,97,110,99,101>>`` (an operator's reason in RabbitMQ's
    `{shutdown,{connection_closing,...}}`), quotes and backslashes escaped, ``/utf8``
    after text beyond ASCII. Other binaries stay numbers."""

    def as_text(m: re.Match[str]) -> str:
        numbers = [int(n) for n in m.group(1).split(",")]
        if max(numbers) > 255:
            return m.group(0)
        try:
            text = bytes(numbers).decode()
        except UnicodeDecodeError:
            return m.group(0)
        if not text.translate(_LINE_CONTROLS).isprintable():
            return m.group(0)  # (tabs and line breaks are text: `quoted` escapes them)
        return f"<<{quoted(text)}{'' if text.isascii() else '/utf8'}>>"

    return _ERLANG_BINARY.sub(as_text, description)


class Pending:
    """A message we sent: resolved when the peer settles it (or the connection ends)."""

    __slots__ = ("_callbacks", "_done", "_future", "delivery", "lost", "tag")

    def __init__(self, delivery: Any) -> None:
        self.delivery = delivery
        self.tag: Any = None  # the caller's (sending: the message)
        self._done = False
        self._callbacks: list[Callable[[Pending], None]] = []
        self._future: asyncio.Future[None] | None = None
        self.lost = False

    @property
    def done(self) -> bool:
        return self._done

    @property
    def state(self) -> Any:
        """The peer's delivery state (an outcome composite), or None."""
        d = self.delivery
        return d.receiver_state if d is not None else None

    def on_done(self, fn: Callable[[Pending], None]) -> None:
        if self._done:
            fn(self)
        else:
            self._callbacks.append(fn)

    def _resolve(self, lost: bool = False) -> None:
        if self._done:
            return
        self._done = True
        self.lost = lost
        for fn in self._callbacks:
            if not lost:
                fn(self)
        self._callbacks.clear()
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    async def wait(self) -> None:
        if self._done:
            return
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        await self._future


class Incoming:
    """A message that arrived: the delivery, its bytes, and whether it is settled."""

    __slots__ = ("delivery", "number")

    def __init__(self, delivery: Any, number: int) -> None:
        self.delivery = delivery
        self.number = number

    @property
    def payload(self) -> bytes:
        return bytes(self.delivery.payload)

    @property
    def settled(self) -> bool:
        d = self.delivery
        return bool(d.presettled or d.sender_settled)

    @property
    def message_format(self) -> int:
        """Its transfer's message-format (0: the AMQP message format)."""
        return int(self.delivery.message_format or 0)


class _Link:
    def __init__(self, client: Client, link: Any, address: str | None) -> None:
        self.client = client
        self.link = link
        self.address = address
        self.attached: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.changed = asyncio.Event()
        self.error: UserError | None = None
        self.remote_attach: Any = None
        self.detaching = False

    def _fail(self, error: UserError) -> None:
        self.error = error
        if not self.attached.done():
            self.attached.set_exception(error)
        self.changed.set()

    def _check(self) -> None:
        self.client._check()
        if self.error is not None:
            raise self.error

    @property
    def what(self) -> str:
        """The link's far end as errors name it: its address, else what asked for none."""
        if self.address is not None:
            return repr(self.address)
        ours = self.link.requested
        end = None if ours is None else ours.target if self.link.sender == LOCAL else ours.source
        if isinstance(end, c.Coordinator):
            return "the coordinator"
        if getattr(end, "dynamic", None):
            return "a dynamic node"
        return "a node with no address"

    @property
    def ended(self) -> bool:
        """Whether the link or its connection has ended: nothing can be settled on it."""
        c = self.client
        return (self.error is not None or c.lost is not None or c.error is not None
                or c.failed is not None or REMOTE in self.link.detach)

    async def wait_changed(self, deadline: float | None, what: str) -> None:
        """Wait for a change on the link or its connection, then raise the failure if one
        came; `what` is the timeout's error once `deadline` has passed.

        A change is kept until a wait takes it: one that came before the call (while the
        caller looked at its condition, wrote, or let the loop run) ends the wait at once.
        So the loop "look; if not yet, wait_changed" misses no wake-up; at worst a change
        the caller has already seen ends one wait early and it looks again. One waiter per
        link at a time (a change taken by one wait is not there for another)."""
        changed = self.changed
        if not changed.is_set():
            # A failure whose change an earlier wait took (one that handed out the
            # messages queued before it, say) ends this wait at once.
            self._check()
            timeout = None if deadline is None else deadline - asyncio.get_running_loop().time()
            if timeout is not None and timeout <= 0:
                raise UserError(what, Exit.TIMEOUT)
            try:
                # asyncio.timeout, not wait_for: no task per wait (this runs per wake-up)
                async with asyncio.timeout(timeout):
                    await changed.wait()
            except TimeoutError:
                raise UserError(what, Exit.TIMEOUT) from None
        # Taken now, before the caller looks again: what changes from here on sets it anew.
        changed.clear()
        self._check()

    async def close(self, keep: bool = False, timeout: float | None = None) -> None:
        """Detach (closing the link unless `keep`) and wait for the peer's detach, so an
        objection to what we sent last (an outcome it refuses) is heard before we go: for
        `timeout` seconds, by default the client's wait for the steps of a close
        (`Client.answer_wait`). No answer is said (a warning), not raised."""
        if self.error is not None or self.client.ended:
            return
        self.detaching = True
        if keep:
            self.client._engine_detach_keep(self.link)
        else:
            self.client._engine_detach(self.link)
        wait = self.client.answer_wait(timeout)
        deadline = asyncio.get_running_loop().time() + wait
        try:
            while REMOTE not in self.link.detach:
                await self.wait_changed(deadline, "no detach from the peer")
        except UserError as e:
            if e.code != Exit.TIMEOUT:
                raise
            self.client.close_unanswered("detach", wait)


class SenderLink(_Link):
    def __init__(self, client: Client, link: Any, address: str | None) -> None:
        super().__init__(client, link, address)
        self.unsettled: dict[int, Pending] = {}
        self._since_flush = 0
        # deliveries sent by `send_many` that the peer settled, handed over in runs
        self.on_settled: Callable[[list[Any]], None] | None = None

    @property
    def credit(self) -> int:
        return int(self.link.link_credit)

    def _queued(self) -> int:
        """Deliveries the engine holds for this link, not yet framed (waiting for credit)."""
        return int(self.client.engine.queued(self.link))

    async def wait_sendable(self, window: int, timeout: float) -> None:
        """Wait for link credit not already spoken for by queued deliveries, and for fewer
        than `window` unsettled messages."""
        deadline: float | None = None
        transport = self.client.transport
        self._since_flush += 1
        if self._since_flush >= _FLUSH_EVERY:
            # With credit to spare this loop never waits: hand frames and events on every
            # so often, so neither piles up in memory (and outcomes are counted as they come).
            self._since_flush = 0
            transport.flush()
            if transport.writer.transport.get_write_buffer_size() > transport.HIGH_WATER:
                await transport.drain()
            else:
                await asyncio.sleep(0)
        while True:
            self._check()
            if self.link.link_credit > self._queued() and self.in_flight() < window:
                return
            if deadline is None:
                deadline = asyncio.get_running_loop().time() + timeout
            what = (
                f"no credit from the peer for {timeout:g}s"
                if self.link.link_credit <= self._queued()
                else f"no outcomes from the peer for {timeout:g}s"
            )
            self.client.transport.flush()
            await self.wait_changed(deadline, what)

    def in_flight(self) -> int:
        """Messages sent or queued and not yet settled by the peer."""
        return len(self.link.live) + self._queued()

    def room(self, window: int) -> int:
        """How many messages could go out now: credit not spoken for, window not full."""
        return min(self.link.link_credit - self._queued(), window - self.in_flight())

    def send_many(self, payloads: list[bytes], *, settled: bool) -> tuple[int, list[Any]]:
        """Send a run of messages without a `Pending` each: (how many of `payloads`, from
        the first, went out; their deliveries, none when pre-settled). The peer's outcomes
        come to `on_settled` in runs. What did not go out is the caller's to send with
        `send()` (no credit, a full window, a message larger than a frame)."""
        n, ds = self.client._engine_send_many(self.link, payloads, settled)
        if n:
            self.client._schedule_flush()
        return n, ds

    async def hand_off(self) -> None:
        """Write what is framed and let the event loop run (outcomes come in), waiting
        while the socket's buffer is full."""
        transport = self.client.transport
        transport.flush()
        if transport.writer.transport.get_write_buffer_size() > transport.HIGH_WATER:
            await transport.drain()
        else:
            await asyncio.sleep(0)

    def send(self, payload: bytes, *, settled: bool, txn_id: bytes | None = None,
             message_format: int = 0) -> Pending:
        d = self.client._engine_send(self.link, payload, None, settled, txn_id, message_format)
        p = Pending(d)
        if settled:
            p._resolve()
        else:
            self.client._pending[id(d)] = p
            self.unsettled[id(d)] = p
        self.client._schedule_flush()
        return p

    async def wait_written(self, timeout: float) -> None:
        """Everything sent so far is framed and has left our buffers (what "sent" means
        for pre-settled messages)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queued():
            self.client.transport.flush()
            await self.wait_changed(deadline, f"no credit from the peer for {timeout:g}s")
        self.client.transport.flush()
        try:
            await wait_within(self.client.transport.writer.drain(), timeout)
        except (ConnectionError, OSError) as e:
            raise ConnectionLost(self.client._lost_error(e)) from None


class ReceiverLink(_Link):
    def __init__(self, client: Client, link: Any, address: str | None) -> None:
        super().__init__(client, link, address)
        self.queue: deque[Incoming] = deque()
        self._batch: list[Any] = []
        self._batch_state: Any = None
        self.unsent = 0  # settlements made after the link or connection ended (never sent)
        self.received = 0
        self.draining = False
        self.drained = False

    @property
    def available(self) -> int | None:
        return self.link.available

    @property
    def credit(self) -> int:
        return int(self.link.link_credit)

    @property
    def deliveries(self) -> int:
        """The deliveries begun on the link so far, by the engine's count: each took a
        credit (Part 2 §2.6.7), an aborted one too (§2.6.14), though only whole messages
        are queued."""
        return int(self.link.deliveries)

    @property
    def incoming(self) -> bool:
        """A delivery is part way in: the rest of it, or its abort, is still to come."""
        return self.link.current is not None

    def flow(self, credit: int, drain: bool = False) -> None:
        self._check()
        if REMOTE in self.link.detach:
            raise self.error or UserError(f"the peer detached the link to {self.what}", Exit.REFUSED)
        self.drained = False
        self.draining = drain
        # Settlements first: a peer that counts unsettled deliveries against the prefetch
        # sees the window free before it is granted again.
        self.flush_settlements()
        self.client._engine_flow(self.link, credit, drain)
        self.client._schedule_flush()

    async def get(self, timeout: float | None,
                  idle: Callable[[], object] | None = None) -> Incoming | None:
        """The next message, or None when the timeout passes or a drain ended empty.
        `idle` is called whenever no message is there, before waiting for one: it may
        grant credit (the timeout runs on).

        Messages that arrived before the link or connection ended (in the same read as
        the peer's detach or close, say) are handed out before the end is raised: they
        are ours to write, and pre-settled ones exist nowhere else."""
        if not self.queue:
            self.flush_settlements()
        deadline = None
        if timeout is not None:
            deadline = asyncio.get_running_loop().time() + timeout
            # a receive that waits this long for the peer waits no longer for the answers
            # to its close
            self.client.close_wait = min(CLOSE_WAIT, max(timeout, CLOSE_WAIT_FLOOR))
        coming = self._coming()
        loop = asyncio.get_running_loop()
        while not self.queue:
            self._check()
            if idle is not None:
                idle()  # (before the drain's end: its credit may be used up, not given back)
            if self.drained:
                return None
            # (looked at four times a timeout: a delivery in many frames that is still
            # coming in is the peer at work, not silent, and the timeout starts again)
            step = None if deadline is None or timeout is None else min(
                deadline, loop.time() + timeout / 4)
            try:
                await self.wait_changed(step, "timeout")
            except UserError as e:
                if self.queue:
                    break
                if e.code == Exit.TIMEOUT and str(e) == "timeout":
                    now = self._coming()
                    assert deadline is not None and timeout is not None
                    if now is not None and now != coming:
                        coming = now
                        deadline = loop.time() + timeout
                        continue
                    if loop.time() < deadline:
                        continue
                    return None
                raise
        return self.queue.popleft()

    def _coming(self) -> tuple[int, int] | None:
        """The delivery arriving in several frames (its identity and bytes so far)."""
        d = self.link.current
        return None if d is None else (id(d), d.size)

    def take(self, limit: int | None) -> list[Incoming]:
        """The messages already here (at most `limit`), without waiting."""
        q = self.queue
        if limit is None or limit >= len(q):
            out = list(q)
            q.clear()
            return out
        return [q.popleft() for _ in range(limit)]

    def settle(self, incoming: Incoming, state: Any) -> None:
        """Settle with our outcome (None: none). Settlements wait for `flush_settlements`
        (done before `get` waits for the network), so a run of consecutive deliveries with
        one outcome goes out as one disposition."""
        if self._batch_state is not state and self._batch:
            self.flush_settlements()
        self._batch_state = state
        self._batch.append(incoming.delivery)

    def settle_many(self, deliveries: list[Any], state: Any) -> None:
        """`settle` for a run of deliveries with one outcome."""
        if self._batch_state is not state and self._batch:
            self.flush_settlements()
        self._batch_state = state
        self._batch += deliveries

    def flush_settlements(self) -> None:
        if self._batch:
            batch, self._batch = self._batch, []
            if self.ended:
                # Nothing reaches the peer any more: it delivers these again.
                self.unsent += len(batch)
                return
            self.client._engine_dispose(batch, self._batch_state, True)
            self.client._schedule_flush()

    async def close(self, keep: bool = False, timeout: float | None = None) -> None:
        self.flush_settlements()
        await super().close(keep, timeout)


class Client:
    """One connection. Use `await Client.connect(cfg)`."""

    def __init__(self, cfg: ConnectionConfig) -> None:
        self.cfg = cfg
        register_secret(cfg.endpoint.password)  # (a peer's text that repeats it: masked)
        self.engine: Any = None
        self.transport: Transport = None  # type: ignore[assignment]
        self.ended = False
        self.closing = False  # we sent close: a plain close from the peer is the answer
        self.error: UserError | None = None
        self.lost: ConnectionLost | None = None
        # a step of ours raised (a bug): raised as it is by every wait, see _check
        self.failed: BaseException | None = None
        self._failed_tb: Any = None
        self.opened: asyncio.Future[None] | None = None
        self.closed_by_peer: asyncio.Future[None] | None = None
        # the error the peer's close carried, whether or not it answered ours
        self.peer_close_error: UserError | None = None
        self.warnings: list[str] = []
        self.peer: PeerInfo = peer_info(None)
        self.on_warning: Callable[[str], None] | None = None
        self._links: dict[int, _Link] = {}
        self._pending: dict[int, Pending] = {}
        self._session: Any = None
        self._txn: dict[int, asyncio.Future[Any]] = {}
        self._coordinator: SenderLink | None = None
        self._flush_scheduled = False
        self._count = itertools.count(1)
        self._lock: AbstractContextManager[Any] = nullcontext()  # see connect(lock=)
        # the wait for each step of our close (`answer_wait`); a receive's timeout lowers
        # it (`ReceiverLink.get`)
        self.close_wait = CLOSE_WAIT
        self.unanswered = False  # the peer left a step of our close unanswered
        # deliveries we settled (taking them off the peer) since the peer last sent a
        # byte, `_heard_at` being how many it had sent then (`close_unanswered`)
        self._settled_unheard = 0
        self._heard_at = -1
        self._open_size = 0  # our open's frame, in bytes (`_open_hint`)

    def offers(self, capability: str) -> bool:
        """Whether the peer's open offers `capability` (offered-capabilities, Part 2
        §2.7.1)."""
        peer_open = self.engine.connection.open.get(REMOTE)
        if peer_open is None:
            return False
        return any(str(cap) == capability for cap in peer_open.as_list("offered_capabilities"))

    @property
    def gone(self) -> bool:
        """Whether the connection is over (lost, failed, or closed by the peer): a link's
        failure then is the connection's, not the link's own."""
        return (self.lost is not None or self.failed is not None
                or REMOTE in self.engine.connection.close)

    # --- connect / close ------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        cfg: ConnectionConfig,
        on_warning: Callable[[str], None] | None = None,
        *,
        on_engine: Callable[[Any], None] | None = None,
        on_events: Callable[[list[Any]], None] | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> Client:
        """Open the stream and the connection (each within `cfg.connect_timeout`) and begin
        a session. Hooks for watching the connection from outside (none is needed otherwise):

        * `on_engine(endpoint)` — called with the engine's `Endpoint` once it is made and
          before any byte moves (e.g. to `set_tap` it, or to read its model later);
        * `on_events(events)` — each batch of engine events, before the client acts on them;
        * `lock` — held through every step of the transport that drives the engine (see
          `net.transport`) and the client's own begin, attach, detach and close; sending,
          credit and settling change the engine on the caller's behalf, under the caller's
          lock if it wants one (their paths stay as fast as without).
        """
        self = cls(cfg)
        self.on_warning = on_warning
        reader, writer = await open_stream(cfg)
        loop = asyncio.get_running_loop()
        self.opened = loop.create_future()
        self.closed_by_peer = loop.create_future()
        self.engine = self._engine_new()
        if cfg.trace is not None:
            self._trace(cfg.trace)
        if on_engine is not None:
            on_engine(self.engine)
        if lock is not None:
            self._lock = lock
        self.transport = Transport(self.engine, reader, writer, self._on_event,
                                   on_events=on_events, lock=lock)
        self.transport.start()
        try:
            await wait_within(asyncio.shield(self.opened), cfg.connect_timeout)
            # what came with the open (a frame that broke the protocol) ends it here
            self._check()
        except TimeoutError:
            await self.abort()
            err = UserError(
                f"cannot connect to {cfg.endpoint.hostport}: no AMQP open from the peer within "
                f"{cfg.connect_timeout:g}s",
                Exit.CONNECTION,
            )
            err.retryable = True  # type: ignore[attr-defined] # a broker still starting up
            raise err from None
        except ConnectionLost as e:
            await self.abort()
            raise self._open_hint(e.error) from None
        except Exception as e:  # a UserError, or a step of ours that failed (self.failed)
            await self.abort()
            self._raise_failed()
            hinted = self._open_hint(e)
            if hinted is e:
                raise
            raise hinted from None
        self._session = self._engine_begin()
        self._schedule_flush()
        return self

    def _trace(self, trace: Callable[[str, str, Any, float], None]) -> None:
        """Every frame of this connection to `trace`, labelled c1, c2, ... in the order the
        process made its connections (a reconnect is the next label)."""
        from amqpcli.engine.frametap import FrameTap

        label = f"c{next(_TRACE_LABELS)}"
        self.engine.set_tap(FrameTap(self.engine,
                                     lambda side, item, t: trace(label, side, item, t),
                                     incoming="<-", outgoing="->"))

    async def close(self, timeout: float | None = None) -> bool:
        """Close cleanly: send close, wait for the peer's close (for `timeout`, by default
        `answer_wait`), drop the socket. A step of ours that failed, before or meanwhile,
        is raised once the socket is shut. True when the peer's close came (it had read
        everything sent before ours)."""
        if not self.ended and self.lost is None and self.failed is None:
            self._engine_close()
            self.transport.flush()
            wait = self.answer_wait(timeout)
            try:
                assert self.closed_by_peer is not None
                await wait_within(asyncio.shield(self.closed_by_peer), wait)
            except TimeoutError:
                self.close_unanswered("close", wait)
            except (ConnectionLost, UserError):
                pass
            except Exception:
                if self.failed is None:
                    raise
        peer = self.closed_by_peer
        answered = (peer is not None and peer.done() and not peer.cancelled()
                    and peer.exception() is None)
        await self.abort()
        self._raise_failed()
        return answered

    def answer_wait(self, timeout: float | None) -> float:
        """How long a step of our close (a detach, the close) waits for the peer's answer:
        `timeout` if given; else `close_wait`, and not at all once the peer has left a step
        unanswered (it has stopped: the rest are sent, not waited for, so a peer that
        answers nothing holds the run up once, not once per step)."""
        if timeout is not None:
            return timeout
        return 0.0 if self.unanswered else self.close_wait

    def close_unanswered(self, step: str, waited: float) -> None:
        """The peer did not answer our `step` (detach, close) in `waited` seconds: said
        once per connection, with the settlements it may never have had (sent after the
        last byte it sent: nothing confirms a settlement, so it may deliver those messages
        again). The run's outcome is not changed: what it was asked to do was done."""
        if self.unanswered:
            return
        self.unanswered = True
        text = f"the peer did not answer our {step} within {waited:g}s (it may have stopped)"
        unheard = self._settled_unheard if self.transport.bytes_in == self._heard_at else 0
        if unheard:
            text += (f": {unheard} settlement(s) sent after the peer last sent anything may "
                     "not have reached it: it may deliver those messages again")
        self.warn(text)

    def _count_settled(self, n: int) -> None:
        heard = self.transport.bytes_in
        if heard != self._heard_at:
            self._heard_at, self._settled_unheard = heard, 0
        self._settled_unheard += n

    async def abort(self) -> None:
        self.ended = True
        if self.transport is not None:
            await self.transport.close()

    # --- links ------------------------------------------------------------------------

    async def open_sender(self, address: str | None, *, settled: bool = False,
                          name: str | None = None, target: Any = None,
                          coordinator: bool = False) -> SenderLink:
        self._check()
        name = name or f"amqp-sender-{next(self._count)}"
        if target is None:
            target = c.Coordinator(capabilities=[Symbol("amqp:local-transactions")]) if coordinator \
                else c.Target(address=address)
        link = self._engine_attach(name, sender=True, source=c.Source(), target=target,
                                   snd_settle_mode=1 if settled else 0, rcv_settle_mode=0)
        s = SenderLink(self, link, address)
        self._links[id(link)] = s
        self._schedule_flush()
        await self._attached(s)
        return s

    async def open_receiver(self, address: str | None, *, source: Any = None,
                            name: str | None = None, rcv_settle_mode: int = 0,
                            snd_settle_mode: int | None = None) -> ReceiverLink:
        self._check()
        name = name or f"amqp-receiver-{next(self._count)}"
        if source is None:
            source = c.Source(address=address)
        link = self._engine_attach(name, sender=False, source=source, target=c.Target(),
                                   snd_settle_mode=snd_settle_mode, rcv_settle_mode=rcv_settle_mode,
                                   max_message_size=self.cfg.max_message_size)
        r = ReceiverLink(self, link, address)
        self._links[id(link)] = r
        self._schedule_flush()
        await self._attached(r)
        return r

    async def _attached(self, link: _Link) -> None:
        try:
            await wait_within(asyncio.shield(link.attached), self.cfg.connect_timeout)
        except TimeoutError:
            raise UserError(
                f"the peer did not answer the attach to {link.what} within "
                f"{self.cfg.connect_timeout:g}s",
                Exit.TIMEOUT,
            ) from None
        link._check()

    # --- transactions -------------------------------------------------------------------

    async def declare(self) -> bytes:
        coord = await self._coordinator_link()
        await coord.wait_sendable(1, self.cfg.connect_timeout)
        p = coord.send(_encode_value(c.Declare()), settled=False)
        await self._wait_pending(p, "declare")
        state = p.state
        if not isinstance(state, c.Declared):
            raise UserError(f"the peer did not declare a transaction: {_state_text(state)}", Exit.REFUSED)
        return bytes(state.txn_id)

    async def discharge(self, txn_id: bytes, fail: bool) -> None:
        coord = await self._coordinator_link()
        await coord.wait_sendable(1, self.cfg.connect_timeout)
        p = coord.send(_encode_value(c.Discharge(txn_id=txn_id, fail=fail)), settled=False)
        await self._wait_pending(p, "discharge")
        if not isinstance(p.state, c.Accepted):
            what = "roll back" if fail else "commit"
            raise UserError(f"the peer did not {what} the transaction: {_state_text(p.state)}", Exit.REFUSED)

    async def _coordinator_link(self) -> SenderLink:
        if self._coordinator is None:
            self._coordinator = await self.open_sender(None, coordinator=True, name="amqp-txn")
        return self._coordinator

    async def _wait_pending(self, p: Pending, what: str) -> None:
        self._schedule_flush()
        try:
            await wait_within(p.wait(), self.cfg.connect_timeout * 3)
        except TimeoutError:
            raise UserError(f"no answer to the transaction {what}", Exit.TIMEOUT) from None
        self._check()

    # --- state and failures ------------------------------------------------------------

    def _check(self) -> None:
        self._raise_failed()
        if self.lost is not None:
            raise self.lost
        if self.error is not None:
            raise self.error

    def _raise_failed(self) -> None:
        if self.failed is not None:
            # from where it was raised, each time (not a traceback growing per wait)
            raise self.failed.with_traceback(self._failed_tb)

    def _open_hint(self, err: BaseException) -> BaseException:
        """A connection that failed before the peer's open, when ours was larger than a
        peer must accept then (Part 2 §2.7.1: RabbitMQ and proton take more, a strict peer
        ends the connection): said with the error, as the likely cause."""
        if self._open_size <= MIN_MAX_FRAME_SIZE or not isinstance(err, UserError):
            return err
        hinted = UserError(
            f"{err} (our open was {self._open_size} bytes, over the {MIN_MAX_FRAME_SIZE} "
            "every peer must accept before the opens are exchanged: a shorter "
            "--container-id or --open-hostname may be taken)", err.code)
        hinted.retryable = getattr(err, "retryable", False)  # type: ignore[attr-defined]
        return hinted

    def _lost_error(self, exc: BaseException) -> UserError:
        # before the peer's open the connection was never made: "cannot connect to"
        opened = self.opened is not None and self.opened.done() and not (
            self.opened.cancelled() or self.opened.exception() is not None)
        if opened:
            return connection_error(self.cfg, exc, during="keep the connection to")
        # what the peer said before it ended the stream tells why it may have (a TLS port)
        heard = self.transport.head if self.transport is not None else None
        return connection_error(self.cfg, exc, heard=heard)

    def _fail_all(self) -> None:
        for p in list(self._pending.values()):
            p._resolve(lost=True)
        self._pending.clear()
        for link in self._links.values():
            link.changed.set()
            if not link.attached.done():
                link.attached.set_exception(self.failed or self.lost or self.error or UserError("closed"))
                link.attached.exception()  # mark retrieved
        for fut in (self.opened, self.closed_by_peer):
            if fut is not None and not fut.done():
                fut.set_exception(self.failed or self.lost or self.error or UserError("closed"))
                fut.exception()

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(text)

    def _schedule_flush(self) -> None:
        # Many sends in one loop turn go out in one write.
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._do_flush)

    def _do_flush(self) -> None:
        self._flush_scheduled = False
        if self.transport is not None:
            self.transport.flush()

    # --- engine events --------------------------------------------------------------------

    def _on_event(self, e: Any) -> None:
        handler = _HANDLERS.get(type(e))
        if handler is not None:
            handler(self, e)

    def _ev_stream_ended(self, e: StreamEnded) -> None:
        if e.internal:
            # Our bug, not the network's: whoever waits gets it at once, as it is (its
            # text without our password: it may quote the SASL exchange).
            if self.failed is None:
                self.failed = without_secrets(e.error, [self.cfg.endpoint.password or ""])
                self._failed_tb = e.error.__traceback__
            self._fail_all()
            return
        if self.ended or (self.closed_by_peer is not None and self.closed_by_peer.done()):
            return
        self.lost = ConnectionLost(self._lost_error(e.error))
        self._fail_all()

    def _ev_sasl_outcome(self, e: ev.SaslOutcome) -> None:
        if not e.ok:
            kinds = {1: "authentication failed", 2: "system error", 3: "permanent system error",
                     4: "temporary system error"}
            self.error = UserError(
                f"cannot connect to {self.cfg.endpoint.hostport}: SASL {e.mechanism or ''} "
                f"{kinds.get(e.code, f'failed (code {e.code})')}".replace("  ", " "),
                Exit.CONNECTION,
            )
            self._fail_all()

    def _ev_opened(self, e: ev.ConnectionOpened) -> None:
        if e.side == REMOTE:
            self.peer = peer_info(getattr(e.open, "properties", None))
            if self.opened is not None and not self.opened.done():
                self.opened.set_result(None)

    def _ev_closed(self, e: ev.ConnectionClosed) -> None:
        if e.side == LOCAL and e.error is not None and self.opened is not None \
                and not self.opened.done():
            # The engine gave up before the connection opened (no usable SASL mechanism).
            said = describe_error(e.error)
            if self.engine.no_sasl_offered and not self.cfg.endpoint.user:
                said += " (--sasl-mechanism none connects without SASL)"
            self.error = UserError(f"cannot connect to {self.cfg.endpoint.hostport}: "
                                   f"{said}", Exit.CONNECTION)
            self._fail_all()
            return
        if e.side != REMOTE:
            return
        if e.error is not None:
            self.error = UserError(f"the peer closed the connection: {describe_error(e.error)}"
                                   f"{self._vhost_hint(e.error)}", Exit.REFUSED)
            self.peer_close_error = self.error
        elif not self.closing:
            self.error = UserError("the peer closed the connection", Exit.REFUSED)
        if self.closed_by_peer is not None and not self.closed_by_peer.done():
            self.closed_by_peer.set_result(None)
        if self.error is not None:
            self._fail_all()

    def _vhost_hint(self, error: Any) -> str:
        """What the peer's close refusing us access gets added when our open named a
        RabbitMQ vhost (`vhost:NAME`): RabbitMQ takes the open of a vhost that does not
        exist, then closes at the first attach with unauthorized-access ("insufficient
        permissions"), which reads as a matter of the user's rights alone."""
        hostname = self.cfg.hostname or ""
        if (str(getattr(error, "condition", "")) != UNAUTHORIZED
                or not hostname.startswith(VHOST_PREFIX)):
            return ""
        vhost = quoted(hostname.removeprefix(VHOST_PREFIX))
        return f" (the open named vhost {vhost}: does it exist, and may this user use it?)"

    def _ev_session_ended(self, e: ev.SessionEnded) -> None:
        if e.side == REMOTE and (e.error is not None or not self.closing):
            self.error = UserError(f"the peer ended the session: {describe_error(e.error)}", Exit.REFUSED)
            self._fail_all()

    def _ev_link_attached(self, e: ev.LinkAttached) -> None:
        link = self._links.get(id(e.link))
        if link is None or e.side != REMOTE:
            return
        link.remote_attach = e.link.attach.get(REMOTE)
        if not link.attached.done():
            link.attached.set_result(None)
        link.changed.set()

    def _ev_link_refused(self, e: ev.LinkRefused) -> None:
        link = self._links.get(id(e.link))
        if link is not None:
            link._fail(UserError(f"the peer refused the link to {link.what}: {describe_error(e.error)}", Exit.REFUSED))

    def _ev_link_detached(self, e: ev.LinkDetached) -> None:
        link = self._links.get(id(e.link))
        if link is None or e.side != REMOTE:
            return
        for p in getattr(link, "unsettled", {}).values():
            self._pending.pop(id(p.delivery), None)
            p._resolve(lost=True)
        link.changed.set()
        # (a refusal's detach: LinkRefused, which comes first, said it)
        if (e.error is not None or not link.detaching) and not e.link.refused:
            link._fail(UserError(f"the peer detached the link to {link.what}: {describe_error(e.error)}", Exit.REFUSED))
        elif e.link.retired and link.error is None:
            # closed by us and answered: no later frame concerns it, so a client that
            # opens link after link does not keep them all (one that failed stays, for
            # `forced_close` to tell why)
            del self._links[id(e.link)]

    def _ev_mismatch(self, e: ev.TerminusMismatch) -> None:
        for d in e.differences:
            if _worth_a_warning(d):
                self.warn(_difference_warning(d))

    def _ev_credit(self, e: ev.CreditChanged) -> None:
        if e.link is not None:
            link = self._links.get(id(e.link))
            if link is not None:
                if (isinstance(link, ReceiverLink) and e.side == REMOTE and link.draining
                        and e.link_credit == 0):
                    # The sender used up or gave back all credit: nothing more is coming.
                    link.draining = False
                    link.drained = True
                link.changed.set()
        else:
            for link in self._links.values():
                link.changed.set()

    def _ev_delivery_final(self, d: Any) -> None:
        p = self._pending.pop(id(d), None)
        link = self._links.get(id(d.link))
        # Only the peer's settlement or its terminal outcome confirms; an abandoned
        # delivery stays in doubt.
        confirmed = d.receiver_settled or isinstance(d.receiver_state, TERMINAL_TYPES)
        if p is not None:
            if isinstance(link, SenderLink):
                link.unsettled.pop(id(d), None)
                link.changed.set()
            p._resolve(lost=not confirmed)
        elif isinstance(link, SenderLink):  # sent by send_many
            if confirmed and link.on_settled is not None:
                link.on_settled([d])
            link.changed.set()

    def _ev_delivery_updated(self, e: ev.DeliveryUpdated) -> None:
        d = e.delivery
        entry = e.entry
        link = self._links.get(id(d.link))
        if (entry.side == REMOTE and not entry.settled and isinstance(link, SenderLink)
                and isinstance(d.receiver_state, TERMINAL_TYPES) and not d.sender_settled):
            # A terminal outcome the receiver did not settle (a proton receiver's update()
            # without settle()): the outcome is known, so settle as the sender, as proton
            # does; waiting for the receiver's settlement reported it in doubt. (Inside a
            # transaction the state is transactional, and stays open until discharge.)
            self.engine.settle(d)
            self._schedule_flush()
            self._ev_delivery_final(d)
        elif id(d) in self._pending:
            if entry.side == REMOTE and entry.settled:
                self._ev_delivery_final(d)
        elif link is not None:
            link.changed.set()

    def _ev_delivery_settled(self, e: ev.DeliverySettled) -> None:
        self._ev_delivery_final(e.delivery)

    def _ev_deliveries_settled(self, e: ev.DeliveriesSettled) -> None:
        pending = self._pending
        runs: dict[int, list[Any]] = {}
        for d in e.deliveries:
            if pending and id(d) in pending:
                self._ev_delivery_final(d)
            else:
                run = runs.get(id(d.link))
                if run is None:
                    run = runs[id(d.link)] = []
                run.append(d)
        for key, run in runs.items():
            link = self._links.get(key)
            if isinstance(link, SenderLink):
                if link.on_settled is not None:
                    link.on_settled(run)
                link.changed.set()

    def _ev_message(self, e: ev.MessageReceived) -> None:
        link = self._links.get(id(e.delivery.link))
        if isinstance(link, ReceiverLink):
            link.received += 1
            link.queue.append(Incoming(e.delivery, link.received))
            link.changed.set()

    def _ev_violation(self, e: ev.Violation) -> None:
        if e.side != REMOTE or e.scope is None:
            return
        where = self.cfg.endpoint.hostport
        if e.kind == "idle-timeout":
            engine = self.engine
            if engine is not None and engine.local not in engine.connection.close:
                # silent past twice what our open advertised, not for all of --idle-timeout
                # (the advertised milliseconds were rounded down): the engine keeps the
                # connection, so do we
                return
            err = UserError(f"lost the connection to {where}: the peer went silent ({e.detail})",
                            Exit.CONNECTION)
        elif e.kind == "message-size-exceeded":
            # (the engine detaches the link: the message stays with the peer)
            err = UserError(f"the peer at {where} sent a message larger than our "
                            f"max-message-size ({e.detail})", Exit.REFUSED)
        else:
            err = UserError(f"the peer at {where} broke the protocol: {e.detail}", Exit.CONNECTION)
        link = self._links.get(id(e.link)) if e.link is not None else None
        if e.scope == "link" and link is not None:
            link._fail(err)  # the engine detaches that link; the connection goes on
            return
        self.error = err
        self._fail_all()

    # --- the engine's client endpoint: every call in one place ------------------------------

    def _engine_new(self) -> Any:
        from amqpcli.engine.endpoint import DEFAULT_MAX_FRAME_SIZE, Endpoint
        from amqpcli.engine.sasl import SaslConfig

        cfg = self.cfg
        ep = cfg.endpoint
        hostname = cfg.hostname or cfg.tls.server_name or ep.host
        mechanism = cfg.mechanism()
        sasl = None if mechanism == "NONE" else SaslConfig(  # NONE: the AMQP header first
            mechanism=mechanism,
            username=ep.user,
            password=ep.password if ep.password is not None else "",
            hostname=hostname,
            external=bool(cfg.uses_tls and cfg.tls.cert_file),
        )
        self.engine = Endpoint(
            "client",
            container_id=cfg.effective_container_id(),
            hostname=hostname,
            sasl=sasl,
            max_frame_size=cfg.max_frame_size or DEFAULT_MAX_FRAME_SIZE,
            idle_timeout=cfg.idle_timeout,
            sides=(LOCAL, REMOTE),
            lean_events=True,  # the events below do not need the engine's own transfers
        )
        # measured for a failure before the peer's open (`_open_hint`)
        self._open_size = len(encode_frame(self.engine.open_frame(), 0))
        self._acting().open()
        return self.engine

    def _acting(self) -> Any:
        """The engine, its clock set to now: every step of ours goes through here, so the
        frames it makes are stamped with when they went (--trace, and the last-sent time
        idle-timeout keep-alives count from), not with when the peer last sent (a detach
        after a timeout, a close after SIGTERM)."""
        self.engine.set_time(_now())
        return self.engine

    def _engine_begin(self) -> Any:
        with self._lock:
            return self._acting().begin()

    def _engine_attach(self, name: str, *, sender: bool, source: Any, target: Any,
                       snd_settle_mode: int | None, rcv_settle_mode: int | None,
                       max_message_size: int | None = None) -> Any:
        with self._lock:
            engine = self._acting()
            attach = engine.attach_sender if sender else engine.attach_receiver
            try:
                return attach(self._session, name, source, target,
                              snd_settle_mode=snd_settle_mode, rcv_settle_mode=rcv_settle_mode,
                              max_message_size=max_message_size)
            except FrameTooLarge as e:
                raise UserError(f"{e}: the link's name, address, filters or capabilities "
                                "are too long for it", Exit.USAGE) from None

    def _engine_send(self, link: Any, payload: bytes, tag: bytes | None, settled: bool,
                     txn_id: bytes | None, message_format: int = 0) -> Any:
        return self._acting().send(link, payload, tag=tag, settled=settled, txn_id=txn_id,
                                   message_format=message_format)

    def _engine_send_many(self, link: Any, payloads: list[bytes], settled: bool,
                          ) -> tuple[int, list[Any]]:
        return self._acting().send_many(link, payloads, settled=settled)  # type: ignore[no-any-return]

    def _engine_flow(self, link: Any, credit: int, drain: bool) -> None:
        self._acting().flow(link, credit, drain=drain)

    def _engine_drained(self, link: Any) -> None:
        self._acting().drained(link)

    def _engine_dispose(self, delivery: Any, state: Any, settled: bool) -> None:
        self._acting().dispose(delivery, state, settled=settled)
        if settled and not isinstance(state, _GIVEN_BACK):
            self._count_settled(len(delivery) if isinstance(delivery, list) else 1)

    def _engine_detach(self, link: Any) -> None:
        with self._lock:
            self._acting().detach(link, closed=True)
        self._schedule_flush()

    def _engine_detach_keep(self, link: Any) -> None:
        with self._lock:
            self._acting().detach(link, closed=False)
        self._schedule_flush()

    def _engine_close(self) -> None:
        with self._lock:
            self._acting().close()


# Terminus fields whose change alters what the user asked for. Others (default-outcome,
# outcomes, capabilities, a settle mode we left to the peer) are the peer's business.
_WARN_FIELDS = frozenset({
    "source.address", "target.address", "source.distribution-mode", "source.durable",
    "source.expiry-policy", "source.dynamic", "target.durable", "target.expiry-policy",
    "rcv-settle-mode",
})


def _worth_a_warning(d: Any) -> bool:
    if d.field == "snd-settle-mode":
        return d.requested is not None and int(d.requested) != 2
    if d.field.endswith(".address"):
        # None asked for: a dynamic node (the peer names it) or the anonymous relay. None
        # granted: a peer that does not echo the address says nothing of it.
        return d.requested is not None and d.granted is not None
    return d.field in _WARN_FIELDS or d.field.startswith("source.filter.")


def _difference_warning(d: Any) -> str:
    """The warning for one field the peer granted otherwise (`ev.Difference`): the field
    and both values (as the frame lines draw them); a filter the peer dropped or added
    says so."""
    from amqpcli.render.text import terminus_field_text

    asked = terminus_field_text(d.field, d.requested)
    got = terminus_field_text(d.field, d.granted)
    field = printable(d.field)  # (a filter's key as the peer wrote it)
    if d.granted is None:
        return f"the peer dropped {field}: asked {asked}"
    if d.requested is None:
        return f"the peer added {field}: got {got}"
    return f"the peer changed {field}: asked {asked}, got {got}"


def _encode_value(value: Any) -> bytes:
    from amqpcli.codec.encode import encode

    return encode(c.AmqpValue(value))


def _state_text(state: Any) -> str:
    if isinstance(state, c.Rejected):
        return "rejected: " + describe_error(state.error)
    return getattr(state, "NAME", None) or repr(state)


_HANDLERS: dict[type, Callable[[Client, Any], None]] = {
    StreamEnded: Client._ev_stream_ended,
    ev.SaslOutcome: Client._ev_sasl_outcome,
    ev.ConnectionOpened: Client._ev_opened,
    ev.ConnectionClosed: Client._ev_closed,
    ev.SessionEnded: Client._ev_session_ended,
    ev.LinkAttached: Client._ev_link_attached,
    ev.LinkRefused: Client._ev_link_refused,
    ev.LinkDetached: Client._ev_link_detached,
    ev.TerminusMismatch: Client._ev_mismatch,
    ev.CreditChanged: Client._ev_credit,
    ev.DeliveryUpdated: Client._ev_delivery_updated,
    ev.DeliverySettled: Client._ev_delivery_settled,
    ev.DeliveriesSettled: Client._ev_deliveries_settled,
    ev.MessageReceived: Client._ev_message,
    ev.Violation: Client._ev_violation,
}
