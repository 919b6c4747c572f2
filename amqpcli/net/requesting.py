"""The request loop of `amqp request`: requests out, replies matched back, and the summary.

One connection, two links: a receiver for the replies (a dynamic node the peer creates,
or a node the user names) and a sender for the requests. Each request carries the reply
node's address in `reply-to`, and a reply answers it when the reply's `correlation-id`
equals the request's `message-id` (the JMS convention) or its `correlation-id` (what
proton's examples/python/server.py copies back). A reply's own `message-id` is never
taken for a correlation: no convention puts the request's id there.

At most `concurrency` requests wait for their reply at a time; the next one goes when a
reply comes, or when a request is refused (rejected, released, modified: no reply will
come). A request's send follows `amqp send`'s rules (unsettled, outcomes counted in a
`SendSummary`, in doubt when the connection ends first or --timeout passes without its
outcome).

--reconnect, as send's (`Reconnects`: the attempts, their pauses, a warning for each loss):
a request whose reply had not come when the connection was lost is in doubt, since the
service may have acted on it, and is said one by one. As send does with a message whose
outcome had not come, a request with no outcome is sent again on the next connection
(at least once: the service may get it twice); one the peer had accepted is not (the
service had it) and stays in doubt, unless its reply still comes on a --reply-to node.
A dynamic reply node goes with its connection: the next connection makes a new one, and
a request sent on it names that one in its reply-to.

--timeout is the longest wait with nothing happening to the requests: only a matched
reply or a request's outcome starts it again. A reply that answers no request does not
(a busy --reply-to node would otherwise keep the run waiting for ever).

Replies are written out before they are accepted, as `amqp recv` writes messages: those
taken from the link together are written together, and only those written whole are
accepted (`_replies`). An output that takes nothing for a while (a pipe whose reader
stopped reading) is waited for as the network is, so heartbeats go on and Ctrl-C or
SIGTERM stops the run meanwhile: the reply whose line the output took part of is said,
and neither it nor those after it are accepted (the peer keeps them; their requests
count as missing).

Replies that come once the run no longer takes them (a second reply to an answered
request, a late one after --timeout, those in flight at Ctrl-C or a failure) are given
back, never written: the reply credit is taken back and those already here are released
(Part 3 §3.4.4: not delivered; rather than left with the link, which a peer may count as
a failed delivery attempt); those that come in the last moments of the link or
connection are left with it, which the peer takes back too (`_give_back`, `_left_over`).
The summary counts them all (`given_back`), with the matched replies a stop or a failed
output left unwritten; a pre-settled one, which cannot be given back, is said as lost.

A drain of the request link (Part 2 §2.6.7) waits for the requests the run still has,
those --concurrency holds back included (`Offering`); it is answered, the unused credit
given back, once the run has none to send. A run that fails closes the connection
(`close_failed`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError, ULong
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import (
    Client,
    ConnectionLost,
    Incoming,
    InternalError,
    Pending,
    ReceiverLink,
    close_interrupted,
    describe_error,
    run_on,
)
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.receiving import OutputError, WriteStopped, cut_short, run_interruptible
from amqpcli.net.reconnecting import Reconnects
from amqpcli.net.sending import OUTCOMES, PulledInThread, SendSummary, summary_exit
from amqpcli.net.sending import _id_text as _json_id
from amqpcli.net.sendrun import Offering, close_failed
from amqpcli.percentiles import percentile

__all__ = ["RequestPlan", "RequestSummary", "request_exit", "run_requests"]

POLL = 0.25  # seconds between looks at the request link while waiting for replies
SHOWN = 20  # most refused requests named one by one in the summary text
REPLY_CREDIT_LOW = 5  # reply credit left at which it is granted again

# Writes a run of replies out (recv's `Sink.write_many_async`), returning once they are
# flushed; while the output takes nothing the event loop runs on (the connection is
# served, a stop is taken), `before_waiting` called first. `OutputError` when the output
# fails, `WriteStopped` when the run is stopped meanwhile: each says how many of the run,
# from the first, were written whole.
WriteReplies = Callable[[Sequence[Incoming], Callable[[], None] | None], Awaitable[None]]


@dataclass(frozen=True)
class RequestPlan:
    address: str  # where the requests go
    reply_to: str | None = None  # the reply node; None: a dynamic node
    concurrency: int = 1
    timeout: float = 10.0  # the longest wait for a reply (or an outcome)
    expected: int | None = None  # requests asked for, when known


@dataclass
class RequestSummary:
    send: SendSummary = field(default_factory=SendSummary)  # the requests' outcomes
    replies: int = 0  # replies matched to a request (and printed)
    unmatched: int = 0  # replies that answer no request waiting for one
    # replies neither written nor accepted: released or left with the link (the run
    # took no more of them, or its output failed or was stopped while they waited)
    given_back: int = 0
    missing: list[int] = field(default_factory=list)  # requests sent, no reply
    not_sent: int = 0  # requests asked for and never sent (the run stopped first)
    round_trips: list[float] = field(default_factory=list)  # seconds, per reply
    reply_address: str | None = None
    timed_out: bool = False  # stopped waiting for replies
    errors: list[str] = field(default_factory=list)  # rejected conditions, one line each

    @property
    def failure(self) -> UserError | None:
        return self.send.failure

    def percentile(self, p: float) -> float | None:
        """The p-th percentile of the round trips (nearest rank), or None."""
        rtts = sorted(self.round_trips)
        if not rtts:
            return None
        return percentile(rtts, p)

    def to_json(self) -> dict[str, Any]:
        s = self.send
        out: dict[str, Any] = {
            "requests": s.messages,
            **{name: getattr(s, name) for name in OUTCOMES},
            "in-doubt": len(s.in_doubt),
            "replies": self.replies,
            "unmatched": self.unmatched,
            "missing": len(self.missing),
        }
        if self.given_back:
            out["given-back"] = self.given_back
        if self.not_sent:
            out["not-sent"] = self.not_sent
        if s.resent:
            out["resent"] = s.resent
        if s.reconnects:
            out["reconnects"] = s.reconnects
        if s.in_doubt:
            out["in-doubt-messages"] = [
                {"number": n, "message-id": _json_id(mid)} for n, mid in s.in_doubt
            ]
        if self.round_trips:
            out["round-trip-ms"] = {"p50": _ms(self.percentile(50)),
                                    "max": _ms(max(self.round_trips))}
        if self.reply_address is not None:
            out["reply-to"] = self.reply_address
        out["elapsed"] = round(s.elapsed, 6)
        if self.errors:
            out["errors"] = self.errors
        if s.warnings:
            out["warnings"] = s.warnings
        code, why = request_exit(self)
        if code != Exit.OK:
            out["error"], out["exit"] = why, int(code)
        return out

    def text(self) -> str:
        s = self.send
        parts = [f"requests sent {s.messages}"]
        for name in OUTCOMES:
            n = getattr(s, name)
            if n or name == "accepted":
                parts.append(f"{name} {n}")
        if s.in_doubt:
            parts.append(f"in doubt {len(s.in_doubt)}")
        parts.append(f"replies {self.replies}")
        if self.unmatched:
            parts.append(f"unmatched {self.unmatched}")
        if self.given_back:
            parts.append(f"given back {self.given_back}")
        if self.missing:
            parts.append(f"missing {len(self.missing)}")
        if self.not_sent:
            parts.append(f"not sent {self.not_sent}")
        if s.resent:
            parts.append(f"resent {s.resent}")
        if s.reconnects:
            parts.append(f"{s.reconnects} reconnect(s)")
        if self.round_trips:
            p50 = self.percentile(50) or 0.0
            parts.append(f"round trip p50 {p50 * 1000:.1f} ms, max "
                         f"{max(self.round_trips) * 1000:.1f} ms")
        lines = [", ".join(parts) + f" in {s.elapsed:.2f}s"]
        for n, mid in s.in_doubt[:SHOWN]:  # as send lists them
            lines.append(f"in doubt: request {n}{_named(mid)}")
        if len(s.in_doubt) > SHOWN:
            lines.append(f"in doubt: … and {len(s.in_doubt) - SHOWN} more (see --json)")
        lines.extend(self.errors[:SHOWN])
        return "\n".join(lines)


def _named(message_id: Any) -> str:
    """How a request's message-id is said after its number (nothing when it has none)."""
    return f" (message-id {_json_id(message_id)!r})" if message_id is not None else ""


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def request_exit(s: RequestSummary) -> tuple[Exit, str]:
    """The exit code and its one-line reason: the requests' sends as `amqp send` judges
    them (in doubt 7, the failure's code, not accepted 6), then missing replies (5)."""
    code, why = summary_exit(s.send)
    if code != Exit.OK:
        return code, why
    if s.missing:
        n, sent = len(s.missing), s.send.messages
        return Exit.TIMEOUT, (f"no reply to {n} of {sent} request(s)"
                              + (" within the timeout" if s.timed_out else "")
                              + (f" ({s.not_sent} more not sent)" if s.not_sent else ""))
    return Exit.OK, ""


def run_requests(cfg: ConnectionConfig, plan: RequestPlan, messages: Iterator[OutgoingMessage],
                 *, on_reply_to: Callable[[str], None], write_replies: WriteReplies,
                 on_warning: Callable[[str], None], input_waits: bool = False) -> RequestSummary:
    """Send `messages` as requests and write the matched replies out with `write_replies`
    (each numbered by its request): a reply is accepted only once written whole.
    `on_reply_to(address)` is called once the reply
    node is attached and before the first message is taken, and again for each new node
    (a dynamic one on each connection): the messages taken after it are built with that
    address as their reply-to. `input_waits`: taking the next message may wait for
    its input (lines): it is taken in a thread, as `run_send` does."""
    if input_waits:
        messages = PulledInThread(messages)
    return run_interruptible(_Requester(cfg, plan, on_reply_to, write_replies,
                                        on_warning).run(messages))


def id_key(value: Any) -> tuple[str, Any] | None:
    """A message-id or correlation-id as a key that keeps its AMQP type: ulong 5 and the
    string "5" are different ids."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "binary", bytes(value)
    if isinstance(value, str):
        return "string", str(value)
    if isinstance(value, int):
        return "ulong", int(value)
    return type(value).__name__, value  # a uuid


@dataclass(eq=False)
class _Request:
    msg: OutgoingMessage
    keys: tuple[tuple[str, Any], ...]
    sent_at: float
    pending: Pending

    @property
    def number(self) -> int:
        return self.msg.number

    @property
    def message_id(self) -> Any:
        return self.msg.message_id


class _Requester:
    def __init__(self, cfg: ConnectionConfig, plan: RequestPlan,
                 on_reply_to: Callable[[str], None], write_replies: WriteReplies,
                 on_warning: Callable[[str], None]) -> None:
        self.cfg = cfg
        self.plan = plan
        self.on_reply_to = on_reply_to
        self.write_replies = write_replies
        self.on_warning = on_warning
        self.s = RequestSummary(send=SendSummary(expected=plan.expected))
        self.waiting: dict[int, _Request] = {}  # number -> request waiting for its reply
        self.by_key: dict[tuple[str, Any], _Request] = {}
        self.unsettled: dict[int, _Request] = {}  # number -> request with no outcome yet
        # what goes next, in number order, each with whether it went out before (a resend):
        # requests to send again (--reconnect), and the one taken and waiting for credit,
        # kept here until it is sent so that a lost connection leaves it counted as it was
        self.again: list[tuple[OutgoingMessage, bool]] = []
        # accepted, no reply when a connection was lost: in doubt; a reply that still comes
        # (a --reply-to node outlives the connection) answers it, by its ids (`late`)
        self.doubtful: dict[int, _Request] = {}
        self.late: dict[tuple[str, Any], _Request] = {}
        self.replies: ReceiverLink | None = None
        self.warned_unmatched = False
        self.progress = 0  # matched replies and outcomes so far: what restarts --timeout
        self.input_error: UserError | None = None  # the input failed: nothing more sent
        # the run has requests still to send (those --concurrency holds back too): a drain
        # of the request link waits for them
        self.offering = Offering()

    def _warn(self, text: str) -> None:
        self.s.send.warnings.append(text)
        self.on_warning(text)

    async def run(self, messages: Iterator[OutgoingMessage]) -> RequestSummary:
        start = time.monotonic()
        reconnects = Reconnects(self.cfg.reconnect, self._warn)
        client: Client | None = None
        s = self.s.send
        try:
            while True:
                progress = self.progress
                try:
                    client = await reconnects.connect(self.cfg, on_engine=self.offering.on_engine)
                    s.reconnects = reconnects.made
                    await run_on(client, lambda cl: self._exchange(cl, messages),
                                 lambda e: False)
                    client = None
                    s.failure = self.input_error
                    break
                except ConnectionLost as e:
                    if client is not None:
                        await client.abort()
                        client = None
                    if self.progress > progress:  # a connection that got somewhere
                        reconnects.got_somewhere()
                    pause = reconnects.after_loss(e.error)
                    self._lost(again=pause is not None)
                    if pause is None:
                        s.failure = e.error
                        break  # (the replies that came with the end: `finally`)
                    # what came with the lost connection, not taken: a --reply-to node
                    # delivers it again; a dynamic node went with the connection
                    self.replies = None
                    await asyncio.sleep(pause)
        except UserError as e:
            s.failure = e
            if client is not None:  # (no credit, no outcome): the peer is still there
                self._give_back()
                await close_failed(client)
                client = None
        except asyncio.CancelledError:
            s.failure = UserError("interrupted", Exit.INTERRUPTED)
            if client is not None:
                self._give_back()
            if await close_interrupted(client, self.cfg.connect_timeout):
                client = None
        except Exception as e:  # noqa: BLE001 - a bug of ours: reported as a drop is
            s.failure = InternalError(e, self.cfg.endpoint.password)
        finally:
            if client is not None:
                await client.abort()
            if self.replies is not None:
                # come while the connection ended: left with it
                self._left_over(self.replies.take(None))
            if self.unsettled:
                # no outcome heard before the end (the connection's, or --timeout): in
                # doubt, as send says
                if s.failure is None:
                    s.failure = UserError(
                        f"no outcome for {len(self.unsettled)} request(s) within "
                        f"{self.plan.timeout:g}s", Exit.TIMEOUT)
                s.in_doubt.extend((r.number, r.message_id) for r in self.unsettled.values())
            s.in_doubt.extend((r.number, r.message_id) for r in self.doubtful.values())
            # to be sent again when no connection came back (the one waiting for credit
            # included): in doubt if it went out before; one never sent is `not_sent`
            s.in_doubt.extend((m.number, m.message_id) for m, sent in self.again if sent)
            s.in_doubt.sort(key=lambda nm: nm[0])
            self.s.missing = sorted(self.waiting)
            if self.plan.expected is not None:
                self.s.not_sent = max(0, self.plan.expected - s.messages)
            s.elapsed = time.monotonic() - start
        return self.s

    def _lost(self, again: bool) -> None:
        """The connection was lost: each request still without its reply is in doubt (the
        service may have acted on it). `again` (a reconnect follows): one with no outcome
        is sent again, as send does, and one taken and not yet sent goes first; each is
        said. Else those with no outcome are left to the run's end, which says them, as it
        says what is still to be sent (`again`)."""
        said: list[str] = []
        for number in sorted(self.waiting):
            req = self.waiting[number]
            if number in self.unsettled:
                if not again:
                    continue  # in doubt at the run's end (`run`)
                self.again.append((req.msg, True))
                said.append(f"request {number}{_named(req.message_id)}: no outcome when the "
                            "connection was lost: sent again (the service may get it twice)")
            else:
                self.doubtful[number] = req
                for k in req.keys:
                    self.late[k] = req
                said.append(f"request {number}{_named(req.message_id)}: accepted, no reply "
                            "when the connection was lost: in doubt (the service may have "
                            "acted on it); not sent again")
        if not again:
            # answered, the outcome unheard: the reply says the service had it
            self.unsettled = {n: r for n, r in self.unsettled.items() if n in self.waiting}
        else:
            self.again.sort(key=lambda mw: mw[0].number)
            self.unsettled.clear()
            for text in said[:SHOWN]:
                self._warn(text)
            if len(said) > SHOWN:
                self._warn(f"… and {len(said) - SHOWN} more request(s) in doubt or sent again "
                           "(see the summary)")
        self.waiting.clear()
        self.by_key.clear()

    # --- the links --------------------------------------------------------------

    async def _open_replies(self, client: Client) -> ReceiverLink:
        plan = self.plan
        if plan.reply_to is not None:
            link = await client.open_receiver(plan.reply_to)
            address = plan.reply_to
        else:
            try:
                link = await client.open_receiver(None, source=c.Source(dynamic=True))
            except UserError as e:
                # a refusal, the session ended with it included (RabbitMQ 3.10 ends it with
                # amqp:not-implemented); not the connection ending: not the node's fault
                if e.code != Exit.REFUSED or client.gone:
                    raise
                raise UserError(f"{e} (asked for a dynamic node for the replies: --reply-to "
                                "ADDRESS names a node instead)", e.code) from None
            got = getattr(getattr(link.remote_attach, "source", None), "address", None)
            if got is None:
                raise UserError("the peer created no dynamic node for the replies (no address "
                                "in its attach): --reply-to ADDRESS names a node instead",
                                Exit.REFUSED)
            address = str(got)
        self.s.reply_address = address
        self._reply_credit(link)
        return link

    def _reply_credit(self, replies: ReceiverLink) -> None:
        """Credit for every request in flight and a few replies that answer none, granted
        again once few are left. Left by the engine's count (`ReceiverLink.credit`): a
        reply delivery the responder aborted (Part 2 §2.6.14) took a credit as a reply
        does though none came of it, so aborts alone may use the credit up."""
        if replies.credit <= REPLY_CREDIT_LOW:
            replies.flow(self.plan.concurrency + 10)

    async def _exchange(self, client: Client, messages: Iterator[OutgoingMessage]) -> None:
        plan = self.plan
        before = self.s.reply_address
        replies = self.replies = await self._open_replies(client)
        assert self.s.reply_address is not None
        pulled = messages if isinstance(messages, PulledInThread) else None
        if self.s.reply_address != before:
            # the requests built from now on name it: none is decoded again (`_prepared`)
            self.on_reply_to(self.s.reply_address)
            if pulled is not None:
                # read from now on (the requests carry the reply node's address): a drain
                # that comes with the request link's attach finds the lines already there
                pulled.start()
        sender = await client.open_sender(plan.address)
        self.s.send.link_opened = True  # (the requests stood ready: a summary says so)
        offering = self.offering
        while True:
            if len(self.waiting) >= plan.concurrency and not await self._take_replies(
                    replies, sender, lambda: len(self.waiting) < plan.concurrency):
                break  # no reply in time: the rest is not sent
            if not self.again:
                if pulled is not None and self.input_error is None:
                    # (the loop goes on serving the connection meanwhile)
                    await offering.wait_input(pulled, sender)
                try:
                    taken = next(messages, None) if self.input_error is None else None
                except UserError as e:
                    # (a bad line of --lines) what was sent is seen through to its reply,
                    # then the error ends the run (`run`), as send does
                    self.input_error = e
                    break
                if taken is None:
                    break
                self.again.append((taken, False))
            msg, was_sent = self.again[0]
            msg, keys = self._prepared(msg)
            await sender.wait_sendable(plan.concurrency, plan.timeout)
            del self.again[0]  # (only now: see `again`)
            self._sent(msg, keys, sender.send(msg.payload, settled=False), was_sent)
        # no more requests: a drain of the request link is answered now, the credit they
        # left unused going back (Part 2 §2.6.7)
        offering.offer(False, sender)
        # the last replies, then the outcomes still to come (a reply may come before its
        # request's outcome); after a timeout, none of it is waited for again
        if not self.s.timed_out and await self._take_replies(
                replies, sender, lambda: not self.waiting):
            await self._take_replies(replies, sender, lambda: not self.unsettled)
        sender._check()
        await sender.close()
        self._give_back()
        await replies.close()
        self._left_over(replies.take(None))  # (come before the peer's detach: left with it)

    def _prepared(self, msg: OutgoingMessage) -> tuple[OutgoingMessage,
                                                       tuple[tuple[str, Any], ...]]:
        """`msg` as it goes, its reply-to the reply node of this connection (a request
        built for a dynamic node a lost connection took with it, sent before or read ahead
        of the new node, is encoded again with it), and the
        ids a reply to it may carry; an id of a request still waiting for its reply is a
        usage error (their replies could not be told apart)."""
        try:
            decoded: Message | None = Message.decode(msg.payload)
            props = decoded.properties if decoded is not None else None
        except (DecodeError, ValueError):
            decoded = props = None
        address = self.s.reply_address
        if decoded is not None and props is not None and props.reply_to != address:
            props.reply_to = address
            decoded.properties = props
            msg = OutgoingMessage(msg.number, decoded.encode(), msg.message_id)
        keys = _request_keys(msg, props)
        for k in keys:
            other = self.by_key.get(k)
            if other is not None:
                raise UserError(
                    f"request {msg.number} has the id {k[1]!r} of request {other.number}, which "
                    "still waits for its reply: replies could not be told apart (use {n} or "
                    "{uuid} in --message-id / --correlation-id)", Exit.USAGE)
            # the newer request's reply, should one come (`late`: a request in doubt)
            self.late.pop(k, None)
        return msg, keys

    def _sent(self, msg: OutgoingMessage, keys: tuple[tuple[str, Any], ...],
              pending: Pending, was_sent: bool) -> None:
        req = _Request(msg, keys, time.monotonic(), pending)
        self.s.send.sent += 1
        if was_sent:
            self.s.send.resent += 1
        else:
            self.s.send.messages += 1
        self.waiting[req.number] = req
        self.unsettled[req.number] = req
        for k in keys:
            self.by_key[k] = req
        pending.on_done(lambda p: self._outcome(req, p.state))

    def _outcome(self, req: _Request, state: Any) -> None:
        if self.unsettled.get(req.number) is not req:
            return  # (sent on a connection since lost: it is in doubt or sent again)
        del self.unsettled[req.number]
        self.progress += 1
        s = self.s.send
        name = getattr(state, "NAME", None)
        if name in OUTCOMES:
            setattr(s, name, getattr(s, name) + 1)
        else:
            s.other += 1
        if name == "accepted":
            return
        if isinstance(state, c.Rejected) and state.error is not None:
            self.s.errors.append(f"rejected: request {req.number}: {describe_error(state.error)}")
        # refused: no reply will come, the next request may go
        self._done(req)
        if self.replies is not None:
            self.replies.changed.set()

    def _done(self, req: _Request) -> None:
        self.waiting.pop(req.number, None)
        for k in req.keys:
            if self.by_key.get(k) is req:
                del self.by_key[k]

    # --- replies ----------------------------------------------------------------

    async def _take_replies(self, replies: ReceiverLink, sender: Any,
                            enough: Callable[[], bool]) -> bool:
        """Take replies until `enough()`; False when --timeout passes first (a wait with
        no matched reply and no outcome for that long: replies that answer no request do
        not count, however many come)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.plan.timeout
        progress = self.progress
        while not enough():
            left = deadline - loop.time()
            if left <= 0:
                self.s.timed_out = True
                return False
            replies.flush_settlements()
            if not replies.queue:
                # in slices, so that the request link's end is seen while replies are
                # awaited (an outcome that frees a place wakes this wait: `_outcome`)
                try:
                    await replies.wait_changed(loop.time() + min(left, POLL), "timeout")
                except UserError as e:
                    if e.code != Exit.TIMEOUT:
                        raise
            sender._check()
            await self._replies(replies, replies.take(None))
            self._reply_credit(replies)  # (every turn, not only when replies came: aborts bring none)
            if self.progress != progress:  # a matched reply or an outcome
                progress = self.progress
                deadline = loop.time() + self.plan.timeout
        return True

    async def _replies(self, replies: ReceiverLink, taken: list[Incoming]) -> None:
        """The replies `taken` from the link: those that answer a request waiting for one
        are written out together, and accepted only once written whole; one that is not
        (the output failed, or the run was stopped while the output took nothing) is no
        reply received: not accepted (the peer keeps it), its request still waits for one
        (missing, if the run ends on it). Those that answer no request are counted and
        accepted unwritten."""
        now = time.monotonic()
        matched: list[tuple[Incoming, _Request]] = []
        answered: set[int] = set()  # (the requests among them)
        for inc in taken:
            req = self._answered(inc, answered)
            if req is not None:
                matched.append((inc, req))
                answered.add(req.number)
            elif not inc.settled:
                replies.settle(inc, _ACCEPTED)
        if not matched:
            return
        written = len(matched)
        failed: OutputError | WriteStopped | None = None
        try:
            # (the settlements of the replies before go out before a wait for the output)
            await self.write_replies([Incoming(inc.delivery, req.number) for inc, req in matched],
                                     replies.flush_settlements)
        except (OutputError, WriteStopped) as e:
            failed, written = e, e.written
            cut = isinstance(e, WriteStopped) and e.cut
            if cut:
                inc, req = matched[written]
                self._warn(cut_short(inc, f"the reply to request {req.number}",
                                     "not accepted: the peer keeps it"))
            lost = [req.number for inc, req in matched[written + cut:] if inc.settled]
            if lost:
                self._warn(f"{len(lost)} pre-settled reply(ies) not written: lost (the "
                           f"responder settled them as it sent them): request(s) "
                           f"{_numbers(lost)}")
        for inc, req in matched[:written]:
            self._done(req)
            self.progress += 1
            self.s.replies += 1
            self.s.round_trips.append(now - req.sent_at)
            if not inc.settled:
                replies.settle(inc, _ACCEPTED)
        if failed is not None:
            replies.flush_settlements()  # (what was written is accepted before the run ends)
            # the others, not accepted, stay with the peer
            self.s.given_back += sum(not inc.settled for inc, _ in matched[written:])
            raise failed

    def _give_back(self) -> None:
        """The run takes no more replies: the reply credit is taken back and the replies
        already here, not taken, are released (never seen: not delivered, Part 3 §3.4.4)
        and counted (`_left_over`). Those that still come are left with the link."""
        replies = self.replies
        if replies is None:
            return
        left = replies.take(None)
        if not (replies.ended or replies.detaching):  # (else they went back with the link)
            if replies.credit:
                replies.flow(0)
            unsettled = [inc.delivery for inc in left if not inc.settled]
            if unsettled:
                replies.settle_many(unsettled, _RELEASED)
                replies.flush_settlements()
        self._left_over(left)

    def _left_over(self, left: list[Incoming]) -> None:
        """Count the replies `left` once the run took no more: given back (released, or
        left with the link or connection), a pre-settled one said as lost."""
        lost = sum(inc.settled for inc in left)
        self.s.given_back += len(left) - lost
        if lost:
            self._warn(f"{lost} pre-settled reply(ies) came once the run took no more: not "
                       "written, lost (the responder settled them as it sent them)")

    def _answered(self, inc: Incoming, answered: set[int]) -> _Request | None:
        """The request waiting for a reply that `inc` answers, unless its number is among
        those `answered` by the replies before it; None (counted as unmatched) when there
        is none."""
        try:
            props = Message.decode(inc.payload).properties
            corr = props.correlation_id if props is not None else None
        except (DecodeError, ValueError):
            corr = None
        key = id_key(corr)
        req = self.by_key.get(key) if key is not None else None
        if req is None and key is not None and (late := self.late.pop(key, None)) is not None:
            # the reply to a request in doubt since a lost connection: answered after all
            for k in late.keys:
                self.late.pop(k, None)
            if self.doubtful.pop(late.number, None) is late:
                self.waiting[late.number] = late
                self.by_key.update((k, late) for k in late.keys)
                req = late
        if req is not None and req.number in answered:
            req = None  # (a second reply to it among those taken together)
        if req is None:
            self.s.unmatched += 1
            if not self.warned_unmatched:
                self.warned_unmatched = True
                said = "no correlation-id" if corr is None else f"correlation-id {_id_text(corr)}"
                self.on_warning(f"a reply with {said} answers no request waiting for "
                                "one: not printed, counted as unmatched (said once)")
        return req


def _numbers(numbers: list[int]) -> str:
    """Request numbers as a summary lists them: the first `SHOWN`, then how many more."""
    shown = ", ".join(map(str, numbers[:SHOWN]))
    return shown + (f" and {len(numbers) - SHOWN} more" if len(numbers) > SHOWN else "")


_ACCEPTED = c.Accepted()
_RELEASED = c.Released()


def _request_keys(msg: OutgoingMessage, props: Any) -> tuple[tuple[str, Any], ...]:
    """What a reply's correlation-id may hold to answer this request (its properties
    `props`): its message-id and its correlation-id."""
    ids = [msg.message_id] if props is None else [props.message_id, props.correlation_id]
    keys = []
    for value in ids:
        k = id_key(value)
        if k is not None and k not in keys:
            keys.append(k)
    return tuple(keys)


def _id_text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return f"binary {bytes(value).hex()}"
    if isinstance(value, ULong):
        return f"ulong {int(value)}"
    return repr(str(value))
