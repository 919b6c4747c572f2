"""The loop of `amqp respond`: requests in, one reply each to its reply-to, and the summary.

One connection, a receiver on the service's node and senders for the replies: one link to
the peer's anonymous relay when its open offers it (each reply routed by its `to`), else a
link per reply-to address, opened when a request first names it and kept for the next
(`REPLY_LINKS` at most, the least recently used closed first). A reply's `correlation-id`
is the request's correlation-id, or its message-id when it has none: what
`amqp request` (amqpcli/net/requesting.py) and JMS requesters match a reply by.

Nothing is lost: a request is written out (as recv writes messages) before it is answered,
and accepted only once the peer has accepted its reply. A request that cannot be answered
is not accepted:

* one with no reply-to (or that is no AMQP message) is rejected, saying why: given back,
  it would come back and fail again;
* one whose reply the peer did not accept (refused, released, the reply link refused or
  ended, no credit or outcome within `REPLY_WAIT`) is given back as a failed delivery
  attempt (modified, delivery-failed: Part 3 §3.4.5; the peer counts it in the message's
  delivery-count, which its redelivery limits and dead-lettering go by), held until the
  run ends or `HELD` such requests wait, so that it does not come straight back to this
  responder: another one, or the next run, answers it.

A request the requester sent pre-settled is answered as any other, and counted as such
(it exists nowhere else); it cannot be given back: one whose reply failed is lost, and
said so. A run stopped (Ctrl-C, SIGTERM) waits for the outcomes of the replies on their
way (as long as its close may take), then releases the requests it took and had not
answered (Part 3 §3.4.4: not delivered, for another responder; one whose reply the peer
accepted is accepted); a connection lost while replies are on their way leaves their
requests unsettled: the peer delivers them again. Either way a requester may get a second
reply (at least once), which `amqp request` counts as unmatched.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from amqpcli.aio import wait_within
from amqpcli.codec import composites as c
from amqpcli.codec.encode import PYTHON_TYPE_NAMES, encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError, Symbol
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import (
    Client,
    ConnectionLost,
    Incoming,
    InternalError,
    Pending,
    ReceiverLink,
    SenderLink,
    close_interrupted,
    describe_error,
    run_on,
)
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.receiving import OutputError, WriteStopped, cut_short, run_interruptible
from amqpcli.net.reconnecting import Reconnects
from amqpcli.net.sending import ANONYMOUS_RELAY
from amqpcli.net.sendrun import close_failed

__all__ = ["RespondPlan", "RespondSummary", "respond_exit", "run_respond"]

CREDIT = 100  # requests granted at a time
CREDIT_LOW = 10  # credit left at which it is granted again
# sender links kept for reply-to addresses (no relay); no fewer than CREDIT, so that the
# link closed for a new address never carries a reply of the same batch (at most CREDIT)
REPLY_LINKS = 100
REPLY_WAIT = 30.0  # seconds a reply waits for credit, then for its outcome
SHOWN = 20  # most unanswered requests named one by one in the summary text
HELD = 100  # requests whose reply failed held at most before they are given back
ERRORS_KEPT = 1000  # lines kept of why requests went unanswered (the rest counted)
NO_REPLY_TO = "amqp:precondition-failed"
NOT_A_MESSAGE = "amqp:decode-error"

# Writes a run of requests out (recv's `Sink.write_many_async`), returning once they are
# flushed: `OutputError` when the output fails, `WriteStopped` when the run is stopped
# meanwhile, each saying how many of the run were written whole.
WriteRequests = Callable[[Sequence[Incoming], Callable[[], None] | None], Awaitable[None]]


@dataclass(frozen=True)
class RespondPlan:
    address: str  # where the requests come from
    count: int | None = None  # requests to answer, then stop
    timeout: float | None = None  # stop when no request comes for this long
    # the reply's body sections, encoded; None: the request's body, echoed as it came
    body: bytes | None = None


@dataclass
class RespondSummary:
    requests: int = 0  # taken and written out
    presettled: int = 0  # of them, sent pre-settled by the requester (none can be given back)
    replied: int = 0  # their reply accepted by the peer, then they were accepted
    rejected: int = 0  # no reply-to, or no message: rejected
    given_back: int = 0  # their reply not accepted: given back as failed (modified)
    lost: int = 0  # pre-settled requests whose reply failed: nothing to give back
    released: int = 0  # not answered when the run was stopped: released, for another responder
    errors: list[str] = field(default_factory=list)  # why, one line per request
    errors_more: int = 0  # lines past ERRORS_KEPT, counted only
    warnings: list[str] = field(default_factory=list)
    relay: bool | None = None  # the replies went through the anonymous relay
    reconnects: int = 0
    elapsed: float = 0.0
    timed_out: bool = False
    failure: UserError | None = None
    attached: bool = False  # the request link was attached

    @property
    def failed(self) -> int:
        """Requests not answered."""
        return self.rejected + self.given_back + self.lost

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": self.requests}
        if self.presettled:
            out["pre-settled"] = self.presettled
        out |= {
            "replied": self.replied,
            "failed": self.failed,
            "rejected": self.rejected,
            "given-back": self.given_back,
        }
        if self.lost:
            out["lost"] = self.lost
        if self.released:
            out["released"] = self.released
        if self.relay is not None:
            out["relay"] = self.relay
        if self.reconnects:
            out["reconnects"] = self.reconnects
        out["elapsed"] = round(self.elapsed, 6)
        if self.errors:
            out["errors"] = self.errors
        if self.errors_more:
            out["errors-more"] = self.errors_more
        if self.warnings:
            out["warnings"] = self.warnings
        return out

    def text(self) -> str:
        parts = [f"requests {self.requests}", f"replied {self.replied}",
                 f"failed {self.failed}"]
        if self.presettled:
            parts[0] += f" ({self.presettled} pre-settled)"
        kinds = [f"{name} {n}" for name, n in (("rejected", self.rejected),
                                               ("given back", self.given_back),
                                               ("lost", self.lost)) if n]
        if kinds:
            parts[-1] += f" ({', '.join(kinds)})"
        if self.released:
            parts.append(f"released {self.released} (stopped before their replies were "
                         "accepted)")
        if self.reconnects:
            parts.append(f"{self.reconnects} reconnect(s)")
        lines = [", ".join(parts) + f" in {self.elapsed:.2f}s"]
        shown = self.errors[:SHOWN]
        lines.extend(shown)
        more = len(self.errors) + self.errors_more - len(shown)
        if more:
            lines.append(f"… and {more} more" + (" (see --json)" if len(shown) < len(self.errors)
                                                 else ""))
        return "\n".join(lines)


def respond_exit(s: RespondSummary, count: int | None) -> tuple[Exit, str]:
    """The exit code and its one-line reason: what ended the run (3, 4, 130, …), then
    --count not met when --timeout passed (5), then requests not answered (6)."""
    if s.failure is not None:
        after = f" (after {s.requests} request(s))" if s.requests else ""
        return s.failure.code, f"{s.failure}{after}"
    if count is not None and s.requests < count and s.timed_out:
        return Exit.TIMEOUT, f"received {s.requests} of {count} request(s) before the timeout"
    if s.failed:
        return Exit.REJECTED, f"{s.failed} of {s.requests} request(s) not answered"
    return Exit.OK, ""


def run_respond(cfg: ConnectionConfig, plan: RespondPlan, write_requests: WriteRequests,
                on_warning: Callable[[str], None]) -> RespondSummary:
    """Answer the requests on `plan.address`, each written out with `write_requests`
    before it is answered (see the module doc)."""
    return run_interruptible(_Responder(cfg, plan, write_requests, on_warning).run())


def reply_correlation(props: Any) -> Any:
    """The correlation-id a reply to a request with properties `props` carries: the
    request's correlation-id, else its message-id (None: neither)."""
    if props is None:
        return None
    return props.correlation_id if props.correlation_id is not None else props.message_id


class _Unanswerable(Exception):
    """A request that cannot be answered: rejected with `condition` and the text."""

    def __init__(self, condition: str, text: str) -> None:
        super().__init__(text)
        self.condition = condition


class _Responder:
    def __init__(self, cfg: ConnectionConfig, plan: RespondPlan,
                 write_requests: WriteRequests, on_warning: Callable[[str], None]) -> None:
        self.cfg = cfg
        self.plan = plan
        self.write_requests = write_requests
        self.on_warning = on_warning
        self.s = RespondSummary()
        self.requests: ReceiverLink | None = None
        self.relay: SenderLink | None = None
        self.reply_links: OrderedDict[str, SenderLink] = OrderedDict()
        # requests whose reply failed, and why: given back when the run ends (`HELD`)
        self.held: list[tuple[Incoming, str]] = []
        # requests taken off the link and not yet settled, held or given up, by number, and
        # the replies sent for them: what a stop releases (`_stopped`)
        self.in_hand: dict[int, Incoming] = {}
        self.cut: int | None = None  # the request whose line a stop cut short
        self.replies_out: dict[int, Pending] = {}
        self.settled_here = 0  # requests of this connection's link settled (or pre-settled)
        # the credit granted at a time: shrunk after a drop that left requests unsettled,
        # grown back window by window (`_lost`)
        self.credit = CREDIT

    def _warn(self, text: str) -> None:
        self.s.warnings.append(text)
        self.on_warning(text)

    async def run(self) -> RespondSummary:
        start = time.monotonic()
        reconnects = Reconnects(self.cfg.reconnect, self._warn)
        client: Client | None = None
        s = self.s
        try:
            while True:
                answered = s.requests
                try:
                    client = await reconnects.connect(self.cfg)
                    s.reconnects = reconnects.made
                    await run_on(client, self._serve, lambda e: False)
                    client = None
                    break
                except ConnectionLost as e:
                    if client is not None:
                        await client.abort()
                        client = None
                    self._lost()
                    if s.requests > answered:
                        reconnects.got_somewhere()
                    pause = None if self._done() else reconnects.after_loss(e.error)
                    if pause is None:
                        s.failure = e.error
                        break
                    await asyncio.sleep(pause)
        except UserError as e:
            s.failure = e
            if client is not None:
                self._give_back()
                await close_failed(client)
                client = None
        except asyncio.CancelledError:
            s.failure = UserError("interrupted", Exit.INTERRUPTED)
            await self._outcomes_on_their_way()
            self._give_back()
            self._stopped()
            if await close_interrupted(client, self.cfg.connect_timeout):
                client = None
        except Exception as e:  # noqa: BLE001 - a bug of ours: reported as a drop is
            s.failure = InternalError(e, self.cfg.endpoint.password)
        finally:
            if client is not None:
                await client.abort()
            s.elapsed = time.monotonic() - start
        return s

    def _lost(self) -> None:
        """The connection was lost: its unsettled requests (held ones too, not counted as
        failed: they may be answered yet) go back to the peer, which delivers them again.
        If some did, the credit shrinks below both half of it and their number: a peer
        that drops us after a fixed number of deliveries would otherwise hand the same
        requests back each time, none of them settled."""
        link = self.requests
        left = link.received - self.settled_here if link is not None else 0
        # pre-settled requests in hand do not come again: lost, and said so
        lost = [inc for inc in self.in_hand.values() if inc.settled]
        for inc in lost:
            self.s.lost += 1
            self._error(f"request {inc.number}: the connection was lost before its reply was "
                        "accepted: lost (it came pre-settled)")
        left -= len(lost)
        if left:
            text = (f"{left} request(s) not settled when the connection was lost: the peer "
                    "delivers them again")
            if self.credit > 1:
                self.credit = max(1, min(self.credit // 2, left - 1))
                text += f"; credit {self.credit} from now on"
            self._warn(text)
        self.requests = self.relay = None
        self.reply_links.clear()
        self.held.clear()
        self.in_hand.clear()
        self.replies_out.clear()
        self.settled_here = 0

    def _done(self) -> bool:
        return self.plan.count is not None and self.s.requests >= self.plan.count

    async def _serve(self, client: Client) -> None:
        plan = self.plan
        link = self.requests = await client.open_receiver(plan.address)
        self.s.attached = True
        self.s.relay = client.offers(ANONYMOUS_RELAY)
        if self.s.relay:
            self.relay = await self._open_relay(client)
        self._grant(link)
        while not self._done():
            inc = await link.get(plan.timeout, idle=lambda: self._grant(link))
            _raise_stop()
            if inc is None:
                self.s.timed_out = True
                break
            batch = [inc, *link.take(None if plan.count is None
                                     else plan.count - self.s.requests - 1)]
            if link.ended:
                # they came with the link's end: unsettled ones cannot be settled any
                # more (the peer delivers them again); pre-settled ones are ours to answer
                batch = [b for b in batch if b.settled]
                if not batch:
                    continue  # (the next `get` raises the end)
            await self._answer(client, link, batch)
            _raise_stop()
        self._give_back()
        link._check()
        await link.close()

    def _grant(self, link: ReceiverLink) -> None:
        """Credit for the next requests, no more than --count still wants, granted again
        once little is left (an aborted delivery takes a credit too)."""
        if link.credit > min(CREDIT_LOW, self.credit - 1):
            return
        if not link.credit and link.received:  # a window used up: the next one larger
            self.credit = min(CREDIT, self.credit * 2)
        want = self.credit
        if self.plan.count is not None:
            want = min(want, self.plan.count - self.s.requests - len(link.queue))
        if want > link.credit:
            link.flow(want)

    async def _answer(self, client: Client, link: ReceiverLink, batch: list[Incoming]) -> None:
        """Write the requests of `batch` out, answer each, and settle it by its reply's
        fate. A write that fails part way answers those written whole, then ends the run;
        one stopped (Ctrl-C) answers none: they go back to the peer with the link."""
        first = self.s.requests + 1
        numbered = [Incoming(inc.delivery, first + j) for j, inc in enumerate(batch)]
        self.in_hand.update((inc.number, inc) for inc in numbered)
        failed: OutputError | None = None
        try:
            await self.write_requests(numbered, link.flush_settlements)
        except OutputError as e:
            failed, numbered = e, numbered[:e.written]
        except WriteStopped as e:
            self._count_written(numbered[:e.written])  # (written, not answered: released)
            if e.cut:
                cut = numbered[e.written]
                self.cut = cut.number  # (`_stopped` settles it as a request written)
                fate = ("lost (it came pre-settled)" if cut.settled
                        else "released: the node delivers it again")
                self._warn(cut_short(cut, f"request {cut.number}", fate))
            raise
        self._count_written(numbered)
        replies: list[tuple[Incoming, Pending | None, str | None]] = []
        for inc in numbered:
            try:
                reply_to, reply = self._reply(inc)
            except _Unanswerable as e:
                self._reject(link, inc, e)
                continue
            pending, why = await self._send(client, reply_to, reply)
            if pending is not None:
                self.replies_out[inc.number] = pending
            replies.append((inc, pending, why))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REPLY_WAIT
        fates = [why if pending is None else await _outcome(pending, deadline - loop.time())
                 for _, pending, why in replies]
        # a connection that ended meanwhile takes the requests back unsettled: none of
        # them is answered or given back by us (the peer delivers them again)
        client._check()
        for (inc, _, _), why in zip(replies, fates, strict=True):
            if why is None:
                self._replied(link, inc)
            else:
                self._not_answered(inc, why)
        link.flush_settlements()
        if failed is not None:
            raise failed

    def _count_written(self, printed: Sequence[Incoming]) -> None:
        """Requests written out: counted as taken."""
        self.s.requests += len(printed)
        self.s.presettled += sum(1 for inc in printed if inc.settled)

    def _done_with(self, inc: Incoming) -> None:
        """`inc` is settled, held or given up: no longer the stop's to release."""
        self.in_hand.pop(inc.number, None)
        self.replies_out.pop(inc.number, None)

    def _replied(self, link: ReceiverLink, inc: Incoming) -> None:
        """The peer accepted the reply to `inc`: it is accepted."""
        self._done_with(inc)
        self.s.replied += 1
        self.settled_here += 1
        if not inc.settled:
            link.settle(inc, _ACCEPTED)

    def _reply(self, inc: Incoming) -> tuple[str, bytes]:
        """The reply to request `inc`: its reply-to address and its bytes."""
        if inc.message_format:
            raise _Unanswerable(NOT_A_MESSAGE, f"it is of message-format {inc.message_format}, "
                                "not an AMQP message: no reply-to to read")
        try:
            msg = Message.decode(inc.payload)
            props = msg.properties
            reply_to = props.reply_to if props is not None else None
            body = msg.body if self.plan.body is None else None
            body_bytes = self.plan.body if self.plan.body is not None else _encoded(body)
        except (DecodeError, ValueError) as e:
            raise _Unanswerable(NOT_A_MESSAGE, f"it is not a valid message: {e}") from None
        if props is None or reply_to is None or reply_to == "":
            raise _Unanswerable(NO_REPLY_TO, "the request has no reply-to: there is nowhere "
                                "to send its reply")
        if type(reply_to) is not str:  # (an address-string, Part 3 §3.2.4)
            raise _Unanswerable(NOT_A_MESSAGE, f"its reply-to is a {_amqp_type(reply_to)}, "
                                "not an address")
        reply_props = c.Properties(to=reply_to, correlation_id=reply_correlation(props))
        if self.plan.body is None:  # (the body echoed: what it is, too)
            reply_props.content_type = props.content_type
            reply_props.content_encoding = props.content_encoding
        return str(reply_to), encode(reply_props) + body_bytes

    async def _send(self, client: Client, address: str,
                    reply: bytes) -> tuple[Pending | None, str | None]:
        """Send `reply` to `address`: its pending outcome, or why it did not go."""
        try:
            sender = await self._sender_for(client, address)
            await sender.wait_sendable(1_000_000, REPLY_WAIT)
        except UserError as e:
            if client.error is not None or client.gone:
                raise
            return None, str(e)
        return sender.send(reply, settled=False), None

    async def _sender_for(self, client: Client, address: str) -> SenderLink:
        """The link a reply to `address` goes on: the relay's, else `address`'s own (one
        that ended is opened again)."""
        if self.s.relay:
            if self.relay is None or self.relay.ended:
                self.relay = await self._open_relay(client)
            return self.relay
        link = self.reply_links.pop(address, None)
        if link is None or link.ended:
            while len(self.reply_links) >= REPLY_LINKS:
                _, oldest = self.reply_links.popitem(last=False)
                with contextlib.suppress(UserError):
                    await oldest.close()
            link = await client.open_sender(address)
        self.reply_links[address] = link  # (the most recently used last)
        return link

    async def _open_relay(self, client: Client) -> SenderLink:
        return await client.open_sender(None, target=c.Target())

    def _error(self, text: str) -> None:
        if len(self.s.errors) < ERRORS_KEPT:
            self.s.errors.append(text)
        else:
            self.s.errors_more += 1

    def _reject(self, link: ReceiverLink, inc: Incoming, e: _Unanswerable) -> None:
        self._done_with(inc)
        self.settled_here += 1
        if inc.settled:
            self.s.lost += 1
            self._error(f"request {inc.number}: {e}: lost (it came pre-settled)")
            return
        self._error(f"request {inc.number}: {e}: rejected")
        self.s.rejected += 1
        link.settle(inc, c.Rejected(error=c.Error(condition=Symbol(e.condition),
                                                  description=str(e))))

    def _not_answered(self, inc: Incoming, why: str) -> None:
        """The reply to `inc` was not accepted: it is given back when the run ends, or
        once `HELD` wait (lost, if it came pre-settled)."""
        self._done_with(inc)
        if inc.settled:
            self.s.lost += 1
            self.settled_here += 1
            self._error(f"request {inc.number}: reply not sent ({why}): lost (it came "
                        "pre-settled)")
            return
        self.held.append((inc, why))
        inc.delivery.drop_payload()
        if len(self.held) >= HELD:
            self._give_back(ending=False)

    def _give_back(self, ending: bool = True) -> None:
        """Give back the requests whose reply failed, as failed delivery attempts (see the
        module doc); `ending`: the run ends, and takes no more requests (so that they do
        not come straight back to us)."""
        link = self.requests
        if not self.held or link is None or link.ended:
            return
        if ending and link.credit:
            link.flow(0)
        for inc, why in self.held:
            link.settle(inc, _FAILED)
            self.settled_here += 1
            self.s.given_back += 1
            self._error(f"request {inc.number}: reply not sent ({why}): given back")
        self.held.clear()
        link.flush_settlements()

    async def _outcomes_on_their_way(self) -> None:
        """After a stop: wait for the outcomes of the replies on their way (no longer than
        the close may take, `connect_timeout`), so that a request whose reply the peer
        accepts is accepted, not released to be answered twice."""
        waiting = [p for p in self.replies_out.values() if not p.done]
        if not waiting:
            return
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # (the stop is taken: what follows is the run's close)
        with contextlib.suppress(TimeoutError):
            await wait_within(asyncio.gather(*(p.wait() for p in waiting)),
                              self.cfg.connect_timeout)

    def _stopped(self) -> None:
        """The run was stopped (Ctrl-C, SIGTERM): the requests taken and not answered are
        released (Part 3 §3.4.4: not delivered, for another responder: no failed attempt
        of theirs), those the peer had accepted the reply to are accepted, and no more are
        taken. A pre-settled one cannot go back: lost, and said so."""
        link = self.requests
        if link is None or link.ended:
            return  # (the unsettled ones go back with the link)
        with contextlib.suppress(UserError):
            if link.credit:
                link.flow(0)
        # (written: its line, or the start of it a stop cut short, said so)
        taken = [(inc, inc.number <= self.s.requests or inc.number == self.cut)
                 for inc in self.in_hand.values()]
        taken += [(inc, False) for inc in link.take(None)]  # (never printed)
        unprinted_lost = 0
        for inc, printed in taken:
            pending = self.replies_out.get(inc.number) if printed else None
            if pending is not None and pending.done and _accepted(pending):
                self._replied(link, inc)
                continue
            self.settled_here += 1
            if not inc.settled:
                link.settle(inc, _RELEASED)
                if printed:
                    self.s.released += 1
            elif inc.number == self.cut:
                self.s.lost += 1  # (its cut line said so)
            elif printed:
                self.s.lost += 1
                self._error(f"request {inc.number}: stopped before its reply was accepted: "
                            "lost (it came pre-settled)")
            else:
                unprinted_lost += 1
        self.in_hand.clear()
        self.replies_out.clear()
        link.flush_settlements()
        if unprinted_lost:
            self._warn(f"{unprinted_lost} pre-settled request(s) lost: taken but not printed "
                       "when the run stopped (the peer settled them when it sent them)")


_ACCEPTED = c.Accepted()
# (not delivered: given back untried)
_RELEASED = c.Released()
# (a failed attempt: the peer counts it; it may deliver it again, here too)
_FAILED = c.Modified(delivery_failed=True)


def _encoded(body: Any) -> bytes:
    """A message's body sections as bytes (a decoded section re-encodes as it came)."""
    if body is None:
        return b""
    if isinstance(body, list):
        return b"".join(encode(section) for section in body)
    return encode(body)


def _amqp_type(value: Any) -> str:
    """The AMQP type of a decoded value, as the spec names it (`ulong`, `symbol`)."""
    return PYTHON_TYPE_NAMES.get(type(value), "described value")


def _raise_stop() -> None:
    """Raise a stop (Ctrl-C, SIGTERM) that a wait let pass, as `asyncio.wait_for` did
    before Python 3.12 when its awaitable completed as the cancellation came (the package
    waits with `wait_within` since; this guards the write that follows a wait for
    requests, which could otherwise never end on an output that takes nothing)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _accepted(pending: Pending) -> bool:
    """Whether the peer accepted the reply `pending`."""
    return isinstance(pending.state, c.Accepted)


async def _outcome(pending: Pending, wait: float) -> str | None:
    """None when the peer accepted the reply, else why not. `wait` may be spent (the
    batch's earlier replies took it): an outcome already here is taken all the same."""
    if not pending.done:
        try:
            # (shielded: a stop cancels this wait, not the reply's own, which it waits on)
            await wait_within(asyncio.shield(pending.wait()), max(wait, 0.0))
        except TimeoutError:
            return f"no outcome within {REPLY_WAIT:g}s"
    if _accepted(pending):
        return None
    state = pending.state
    if pending.lost or state is None:
        return "no outcome: the reply link ended"
    if isinstance(state, c.Rejected):
        return f"rejected: {describe_error(state.error)}"
    return getattr(state, "NAME", None) or repr(state)
