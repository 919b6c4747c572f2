"""The send loop: window, rate, duration, transactions, reconnect, and the summary.

Nothing is lost silently: every message handed to `run_send` ends in exactly one of
the summary's buckets. When the connection drops, the unconfirmed ones are "in doubt"
(reported by number and message-id); with reconnects left they are sent again
(at-least-once) and counted as resent. With --txn-size, those sent in a transaction
never committed are not in doubt: the peer rolls a transaction back when its
controller's link or connection ends before the discharge (Part 4), so they were not
delivered ("not committed"). Only a commit sent and not answered leaves them in doubt.

`--timestamp`: each message's stamp (the application property `ts`, see
amqpcli/net/outgoing.py) is filled in with the wall clock when the message is handed to
the connection — after its credit came and its turn under `--rate`, so neither wait counts
as latency; a run of messages framed together shares one reading. A message sent again
after a reconnect is a new transfer and gets a new stamp.

`--on-release retry:N`: released is an outcome, not a failure (Part 3 §3.4.4: the message
was not delivered and may be delivered again), so a reconnect leaves it alone. With retry,
a released message waits out a pause (`retry_wait`: 0.1 s before its first retry, doubled
for each one after, at most 5 s), for a peer that releases because it is busy or has no
consumer would otherwise get it back at once, again and again; the messages ready
meanwhile go on. Its pause over, it goes back in the queue of messages to send, behind
those already waiting there and ahead of the input not yet taken, as a new delivery of
the same bytes (a new stamp with `--timestamp`), up to N times; one released N + 1
times, or whose retry the run ended before sending (its pause included), counts as
released. A lost connection takes the paused ones back with the rest: the reconnect's
own pause stands for theirs. In a transaction a release is provisional until the
commit, and a retry would go in another one: the two do not go together (`--txn-size`
refuses it).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import (
    Client,
    ConnectionLost,
    InternalError,
    Pending,
    SenderLink,
    close_interrupted,
    run_on,
)
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outcomedetails import OutcomeDetails, numbers_text
from amqpcli.net.outgoing import OutgoingMessage, stamp_bytes, stamped
from amqpcli.net.progress import Progress
from amqpcli.net.receiving import run_interruptible
from amqpcli.net.reconnecting import Reconnects
from amqpcli.net.reporting import Interval, Reports
from amqpcli.net.sendrun import Offering, close_failed
from amqpcli.net.txn import in_doubt_exit, txn_json, txn_parts

__all__ = ["SendPlan", "SendSummary", "parse_on_release", "retry_wait", "run_send",
           "summary_exit", "summary_text"]

OUTCOMES = ("accepted", "rejected", "released", "modified")
RUN = 256  # messages framed at a time by the send loop at most
# What a peer offers in its open when a sender link with a null target address routes
# each message by its `to` (AMQP Anonymous Terminus for Message Routing, OASIS).
ANONYMOUS_RELAY = "ANONYMOUS-RELAY"
# --on-release retry: how many times a released message is sent again when N is not given
RELEASE_RETRIES = 3
# ... and at most (a peer that releases every message would otherwise keep a run sending
# one for ever)
RELEASE_RETRIES_MAX = 100
# The pause before a released message goes again: RETRY_WAIT_FIRST seconds before its
# first retry, doubled for each one after, at most RETRY_WAIT_MAX (`retry_wait`)
RETRY_WAIT_FIRST = 0.1
RETRY_WAIT_MAX = 5.0


def parse_on_release(text: str) -> int:
    """--on-release: `fail` (released messages are counted so: 0 retries) or `retry[:N]`
    (each sent again up to N times, N at least 1; `RELEASE_RETRIES` by default)."""
    what, sep, n = text.partition(":")
    if what == "fail" and not sep:
        return 0
    if what == "retry":
        if not sep:
            return RELEASE_RETRIES
        if n.isascii() and n.isdigit() and 1 <= int(n) <= RELEASE_RETRIES_MAX:
            return int(n)
    raise UserError(f"--on-release: expected fail, retry or retry:N (N from 1 to "
                    f"{RELEASE_RETRIES_MAX}), got {text!r}", Exit.USAGE)


def retry_wait(retry: int) -> float:
    """How long a released message waits before its `retry`-th retry (1 on): a peer that
    releases because it is busy, or has no consumer yet, is given time, more at each
    release, rather than the message back at once."""
    return min(RETRY_WAIT_FIRST * 2.0 ** min(retry - 1, 64), RETRY_WAIT_MAX)


@dataclass(frozen=True)
class SendPlan:
    address: str | None  # None: each message goes to its `to` (the anonymous relay)
    force_relay: bool = False  # use the relay even when the peer does not offer it
    settled: bool = False
    window: int = 1000
    rate: float | None = None
    duration: float | None = None
    txn_size: int | None = None
    rollback: bool = False
    timeout: float = 30.0
    progress: bool = False
    expected: int | None = None
    link_name: str | None = None  # the attach's name (default amqp-sender-N)
    capabilities: tuple[str, ...] = ()  # the target's (topic, queue, ...)
    # --timestamp: each message's stamp (`OutgoingMessage.stamp_at`) is filled in with the
    # wall clock as it is handed to the connection, after its credit came
    timestamp: bool = False
    report_every: float | None = None  # --report-every: seconds between reports on stderr
    report_json: bool = False  # the reports as JSON objects (with --json)
    release_retries: int = 0  # --on-release retry:N (0: fail, a release is counted at once)

    def target(self) -> c.Target:
        """Our target: the node's address (none for the anonymous relay) and capabilities."""
        return c.Target(address=self.address,
                        capabilities=[Symbol(x) for x in self.capabilities] or None)


@dataclass
class SendSummary:
    sent: int = 0  # transfers completed on the wire (resends included)
    messages: int = 0  # distinct messages taken from the input
    settled: int = 0  # sent pre-settled: no outcome will come
    # of those, sent on a connection that ended without the peer's answer to our close
    # (lost, aborted, the close unanswered): not known to have arrived
    settled_unconfirmed: int = 0
    accepted: int = 0
    rejected: int = 0
    released: int = 0
    modified: int = 0
    other: int = 0  # a settlement without a known outcome
    resent: int = 0
    reconnects: int = 0  # connections made again after a drop
    expected: int | None = None  # the messages asked for (--count), when known
    committed: int = 0  # transactions
    rolled_back: int = 0
    rolled_back_messages: int = 0
    in_doubt: list[tuple[int, Any]] = field(default_factory=list)  # (number, message-id)
    # sent in a transaction the run ended without committing (none of its commit went
    # out, or it was refused): rolled back, so not delivered; (number, message-id)
    not_committed: list[tuple[int, Any]] = field(default_factory=list)
    # what the rejected and modified outcomes carried, grouped
    details: OutcomeDetails = field(default_factory=OutcomeDetails)
    # the messages counted released (with --on-release retry: released on their last try,
    # or their retry not sent before the run ended): (number, message-id)
    released_messages: list[tuple[int, Any]] = field(default_factory=list)
    release_retries: int = 0  # --on-release retry:N (0: fail)
    # released, then sent again (--on-release retry): number -> (message-id, retries sent)
    retried_messages: dict[int, tuple[Any, int]] = field(default_factory=dict)
    retries: int = 0  # the transfers that were such retries
    warnings: list[str] = field(default_factory=list)  # what did not end the run
    elapsed: float = 0.0
    failure: UserError | None = None  # what ended the run early, if anything
    # the sender link was attached: the messages stood ready to go, so a summary says
    # something even when none went (no credit came)
    link_opened: bool = False

    @property
    def finished(self) -> int:
        """Messages whose send is over: an outcome heard, or sent pre-settled."""
        return (self.settled + self.accepted + self.rejected + self.released + self.modified
                + self.other)

    @property
    def sent_first(self) -> int:
        """Messages sent at least once: the transfers less those that sent one again
        (after a reconnect, or a release)."""
        return self.sent - self.resent - self.retries

    @property
    def not_sent(self) -> int:
        """After a failure: messages asked for (or taken from the input) never sent."""
        if self.failure is None:
            return 0
        asked = self.expected if self.expected is not None else self.messages
        return max(0, asked - self.sent_first)

    @property
    def rate(self) -> float:
        return self.sent / self.elapsed if self.elapsed > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sent": self.sent,
            "messages": self.messages,
            "settled": self.settled,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "released": self.released,
            "modified": self.modified,
            "in-doubt": len(self.in_doubt),
            "resent": self.resent,
            **({"retried": len(self.retried_messages), "retries": self.retries}
               if self.release_retries else {}),
            "reconnects": self.reconnects,
            "elapsed": round(self.elapsed, 6),
            "rate": round(self.rate, 1),
        }
        if self.other:
            out["other"] = self.other
        if self.settled_unconfirmed:
            out["settled-unconfirmed"] = self.settled_unconfirmed
        if self.not_sent:
            out["not-sent"] = self.not_sent
        if self.not_committed:
            out["not-committed"] = len(self.not_committed)
        out.update(txn_json(self))
        if self.in_doubt:
            out["in-doubt-messages"] = _numbered_json(self.in_doubt)
        if self.not_committed:
            out["not-committed-messages"] = _numbered_json(self.not_committed)
        if self.released_messages:
            out["released-messages"] = _numbered_json(self.released_messages)
        if self.retried_messages:
            out["retried-messages"] = [
                {"number": n, "message-id": _id_text(mid), "retries": k}
                for n, (mid, k) in sorted(self.retried_messages.items())]
        if self.details:
            out["outcome-details"] = self.details.to_json()
        if self.warnings:
            out["warnings"] = self.warnings
        if self.failure is not None:
            out["error"] = str(self.failure)
        code, _ = summary_exit(self)
        if code != Exit.OK:
            # The code the process exits with (in doubt beats the failure's own code).
            out["exit"] = int(code)
        return out


def _numbered_json(messages: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    return [{"number": n, "message-id": _id_text(mid)} for n, mid in messages]


def _id_text(mid: Any) -> Any:
    if mid is None or isinstance(mid, (str, int)):
        return mid
    if isinstance(mid, bytes):
        return mid.hex()
    return str(mid)


def settlement_parts(s: SendSummary) -> list[str]:
    """What became of what was sent, for the summary and the reports: pre-settled, each
    outcome heard (accepted always), settled without one."""
    parts = [f"pre-settled {s.settled}"] if s.settled else []
    parts += [f"{name} {getattr(s, name)}" for name in OUTCOMES
              if name == "accepted" or getattr(s, name)]
    if s.other:
        parts.append(f"settled without outcome {s.other}")
    return parts


def summary_text(s: SendSummary) -> str:
    parts = [f"sent {s.sent}", *settlement_parts(s)]
    parts.append(f"in doubt {len(s.in_doubt)}")
    if s.not_committed:
        parts.append(f"not committed {len(s.not_committed)}")
    if s.not_sent:
        parts.append(f"not sent {s.not_sent}")
    if s.resent:
        parts.append(f"resent {s.resent}")
    if s.retried_messages:
        parts.append(f"retried {len(s.retried_messages)}")
    if s.reconnects:
        parts.append(f"{s.reconnects} reconnect(s)")
    parts.extend(txn_parts(s))
    lines = [", ".join(parts) + f" in {s.elapsed:.2f}s ({s.rate:.0f} msg/s)"]
    for n, mid in s.in_doubt[:20]:
        lines.append(f"in doubt: message {n}" + (f" (message-id {_id_text(mid)!r})" if mid is not None else ""))
    if len(s.in_doubt) > 20:
        lines.append(f"in doubt: … and {len(s.in_doubt) - 20} more (see --json)")
    if s.not_committed:
        numbers = [n for n, _ in s.not_committed]
        lines.append(f"not committed: {numbers_text(numbers)}: sent in a transaction the run "
                     "ended without committing, which the peer rolls back: not delivered")
    lines.extend(s.details.lines())
    lines.extend(_release_lines(s))
    return "\n".join(lines)


def _release_lines(s: SendSummary) -> list[str]:
    """Which messages were released in the end, and which were sent again after a
    release (--on-release retry): their numbers as runs, one line each."""
    lines = []
    if s.released_messages:
        numbers = [n for n, _ in s.released_messages]
        if s.release_retries:
            n = s.release_retries
            why = (f"released on each try (the first and {_retries_text(n)}: --on-release "
                   f"retry:{n}), or the run ended before the next")
        else:
            why = "--on-release retry sends such messages again"
        lines.append(f"released {len(numbers)} ({numbers_text(numbers)}): not delivered: {why}")
    if s.retried_messages:
        numbers = sorted(s.retried_messages)
        lines.append(f"retried {len(numbers)} ({numbers_text(numbers)}): released, then sent "
                     f"again ({_retries_text(s.retries)} in all)")
    return lines


def _retries_text(n: int) -> str:
    return f"{n} retry" if n == 1 else f"{n} retries"


def summary_exit(s: SendSummary) -> tuple[Exit, str]:
    """The exit code and its one-line reason (in doubt beats refused beats rejected)."""
    if (doubt := in_doubt_exit(len(s.in_doubt), s.failure)) is not None:
        return doubt
    if s.failure is not None:
        if s.not_committed:
            return s.failure.code, (f"{len(s.not_committed)} message(s) not committed: "
                                    f"{s.failure}")
        return s.failure.code, str(s.failure)
    # A delivery the peer settled with no outcome (no state, or one that is no outcome)
    # leaves what became of it unknown to us (Part 2 §2.6.12: the outcome is the
    # receiver's to state; Part 3 §3.5.3: the default-outcome is the source's, ours,
    # which tells the peer nothing): not accepted as far as we can say, so it is not 0,
    # which promises every message sent was accepted.
    bad = s.rejected + s.released + s.modified + s.other
    if bad:
        other = f", {s.other} settled without an outcome" if s.other else ""
        return Exit.REJECTED, (f"{bad} message(s) not accepted ({s.rejected} rejected, "
                               f"{s.released} released, {s.modified} modified{other})")
    return Exit.OK, ""


def run_send(cfg: ConnectionConfig, plan: SendPlan, messages: Iterator[OutgoingMessage],
             *, input_waits: bool = False,
             on_warning: Callable[[str], None] | None = None) -> SendSummary:
    """Send `messages`. `input_waits`: taking the next one may wait for its input (lines
    from a pipe or a terminal): it is then taken in a thread of its own (`PulledInThread`),
    so a message that has come goes out at once and the connection is served meanwhile.
    `on_warning(text)`: each warning as it happens (a lost connection, a peer granting
    otherwise), besides the summary's list of them."""
    sender = _Sender(cfg, plan, on_warning)
    if input_waits:
        sender.pulled = PulledInThread(messages)
        messages = sender.pulled
    return run_interruptible(sender.run(messages))


class NoOutcome(UserError):
    """The wait for outcomes timed out with `unheard` messages still without one."""

    def __init__(self, unheard: int, timeout: float) -> None:
        super().__init__(f"no outcome for {unheard} message(s) within {timeout:g}s",
                         Exit.TIMEOUT)
        self.unheard = unheard


class PulledInThread(Iterator[OutgoingMessage]):
    """Messages taken from their input in a thread of their own, at most `depth` ahead.

    The send loop runs in the event loop: a read that waits there (the next line of `tail
    -f … | amqp send --lines`) stopped the connection's heartbeats and Ctrl-C, and held
    the messages already read until the next ones came. `ready()` waits for a message
    (or the input's end or error) without blocking the loop; iterating takes what has
    come and never waits (`available()` says whether it would find something)."""

    _END = object()

    def __init__(self, messages: Iterator[OutgoingMessage], depth: int = 64) -> None:
        self._messages = messages
        self._items: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self._done = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._came: asyncio.Event | None = None
        self._waiting = False

    def start(self) -> None:
        """Start reading (once; `ready()` does if need be)."""
        if self._came is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._came = asyncio.Event()
        # a daemon: one waiting on its input when the run ends must not keep us
        threading.Thread(target=self._pull, name="send-input", daemon=True).start()

    def _pull(self) -> None:
        try:
            for msg in self._messages:
                self._put(msg)
            self._put(self._END)
        except BaseException as e:  # noqa: BLE001 - handed to the loop, raised there
            self._put(e)

    def _put(self, item: Any) -> None:
        self._items.put(item)
        # wake the loop only when it waits (`ready`): it said so before it last looked
        if not self._waiting:
            return
        loop, came = self._loop, self._came
        try:
            if loop is not None and came is not None:
                loop.call_soon_threadsafe(came.set)
        except RuntimeError:  # the loop is closed: the run is over
            pass

    def available(self) -> bool:
        return self._done or not self._items.empty()

    async def ready(self) -> None:
        self.start()
        came = self._came
        assert came is not None
        while not self.available():
            came.clear()
            self._waiting = True  # (before looking again: a message put after it wakes us)
            try:
                if self.available():
                    break
                await came.wait()
            finally:
                self._waiting = False

    def __next__(self) -> OutgoingMessage:
        if self._done:
            raise StopIteration
        try:
            item = self._items.get_nowait()
        except queue.Empty:
            raise RuntimeError("a message taken before ready()") from None
        if item is self._END:
            self._done = True
            raise StopIteration
        if isinstance(item, BaseException):
            self._done = True
            raise item
        return item  # type: ignore[no-any-return]


class _Sender:
    def __init__(self, cfg: ConnectionConfig, plan: SendPlan,
                 on_warning: Callable[[str], None] | None = None) -> None:
        self.cfg = cfg
        self.plan = plan
        self.on_warning = on_warning
        self.s = SendSummary(expected=plan.expected, release_retries=plan.release_retries)
        # sent, no outcome yet: number -> (message, its Pending, or its delivery when sent
        # in a run by `send_many`)
        self.unconfirmed: dict[int, tuple[OutgoingMessage, Any]] = {}
        self.by_delivery: dict[int, OutgoingMessage] = {}  # id(delivery) -> message (runs)
        self.queue: deque[tuple[OutgoingMessage, bool]] = deque()  # to send: (msg, sent before)
        self.holding: list[OutgoingMessage] = []  # taken, waiting for credit
        self.exhausted = False  # every message has been taken (or --duration is over)
        self.pulled: PulledInThread | None = None  # the input, when it is read in a thread
        self.input_error: UserError | None = None  # the input failed: nothing more taken
        self.sender: SenderLink | None = None
        # the send loop has messages for the link, or the input can give one at once: a
        # drain from the peer waits for them
        self.offering = Offering()
        self.txn_msgs: list[OutgoingMessage] = []  # settled in the open transaction
        self.txn_states: list[Any] = []
        # the open transaction's commit was handed on and not answered: it may have
        # committed, so its messages are in doubt (never discharged, it rolls back)
        self.txn_committing = False
        # messages of a transaction whose commit went unanswered on a lost connection:
        # in doubt, unless a resend of them (--reconnect) is committed, which delivers
        # them (a second time if the unanswered commit took effect: counted as resent)
        self.commit_unanswered: set[int] = set()
        # --on-release retry: how many times each message was released so far, and those
        # whose next send is a retry after a release (pausing, in the queue, or held for
        # credit)
        self.releases: dict[int, int] = {}
        self.retrying: set[int] = set()
        # ... those pausing before their retry (`retry_wait`): number -> (message, the
        # timer that queues it when its pause is over)
        self.pausing: dict[int, tuple[OutgoingMessage, asyncio.TimerHandle]] = {}
        # how a pause is timed: the event loop's call_later (None), or a test's clock
        self.call_later: Callable[..., asyncio.TimerHandle] | None = None
        # when the send loop began waiting to send (for credit, or room in the window);
        # None while it sends or waits for something else
        self.send_wait_since: float | None = None
        self.progress = Progress("send", plan.expected, enabled=plan.progress,
                                 status=self._waiting_text)
        self.interval: Interval | None = None  # --report-every: the last report's figures

    def _warn(self, text: str) -> None:
        self.s.warnings.append(text)
        if self.on_warning is not None:
            self.progress.clear()  # (redrawn on its next beat)
            self.on_warning(text)

    # --- outcomes ---------------------------------------------------------------

    def _record_done(self, pending: Pending) -> None:
        self._record(pending.tag, pending)

    def _record(self, msg: OutgoingMessage, pending: Pending) -> None:
        self.unconfirmed.pop(msg.number, None)
        if self.plan.txn_size:
            # Provisional until the transaction is discharged (`settle_txn`).
            self.txn_msgs.append(msg)
            self.txn_states.append(pending.state)
            return
        self._count(msg, pending.state)

    def settle_txn(self, committed: bool) -> None:
        """The current transaction was discharged: its messages' outcomes now hold."""
        for msg, state in zip(self.txn_msgs, self.txn_states, strict=True):
            self.commit_unanswered.discard(msg.number)
            if committed:
                self._count(msg, state)
            else:
                self.s.rolled_back_messages += 1
        self.txn_msgs.clear()
        self.txn_states.clear()

    def _settled_run(self, ds: list[Any]) -> None:
        """The peer settled deliveries sent in runs (`SenderLink.on_settled`)."""
        by = self.by_delivery
        unconfirmed = self.unconfirmed
        s = self.s
        for d in ds:
            msg = by.pop(id(d), None)
            if msg is None:
                continue
            unconfirmed.pop(msg.number, None)
            state = d.receiver_state
            if state.__class__ is c.Accepted:
                s.accepted += 1
            else:
                self._count(msg, state, progress=False)
        self.progress.update(s.sent)

    def _count(self, msg: OutgoingMessage, state: Any, progress: bool = True) -> None:
        if isinstance(state, c.TransactionalState):
            state = state.outcome
        name = getattr(state, "NAME", None)
        if name == "released" and self._retry(msg):
            return
        self.releases.pop(msg.number, None)  # (its last outcome: its count of tries goes)
        if name in OUTCOMES:
            setattr(self.s, name, getattr(self.s, name) + 1)
            if isinstance(state, (c.Rejected, c.Modified)):
                self.s.details.add(msg.number, state)
            elif name == "released":
                self.s.released_messages.append((msg.number, msg.message_id))
        else:
            self.s.other += 1
        if progress:
            self.progress.update(self.s.sent)

    def _retry(self, msg: OutgoingMessage) -> bool:
        """`msg` was released: if --on-release retry allows another try, it pauses
        (`retry_wait`) and is then queued to be sent again (`_pause_over`); False: its
        release stands. Nothing is offered to a drain while it pauses: the credit goes
        back rather than wait seconds for it."""
        released = self.releases.get(msg.number, 0) + 1
        if released > self.plan.release_retries:
            return False
        self.releases[msg.number] = released
        self.retrying.add(msg.number)
        later = self.call_later or asyncio.get_running_loop().call_later
        timer = later(retry_wait(released), self._pause_over, msg.number)
        self.pausing[msg.number] = (msg, timer)
        return True

    def _pause_over(self, number: int) -> None:
        """A released message's pause is over: queued to go again, and the send loop woken
        from whatever it waits for (an outcome, credit, the input)."""
        paused = self.pausing.pop(number, None)
        if paused is None:  # (taken back meanwhile: a lost connection, the run's end)
            return
        self.queue.append((paused[0], False))
        self.offering.offer(True, self.sender)  # (a drain waits for it)
        if self.sender is not None:
            self.sender.changed.set()

    def _counted_sent(self, msg: OutgoingMessage, was_sent: bool) -> None:
        """Count a message that went out again: resent after a reconnect, or retried
        after a release."""
        if was_sent:
            self.s.resent += 1
        elif msg.number in self.retrying:
            self.retrying.discard(msg.number)
            self.s.retries += 1
            mid, k = self.s.retried_messages.get(msg.number, (msg.message_id, 0))
            self.s.retried_messages[msg.number] = (mid, k + 1)

    # --- the run ----------------------------------------------------------------

    def _take_back(self) -> list[tuple[OutgoingMessage, bool]]:
        """After a lost connection: every message not confirmed, in number order, with
        whether it went out (sent once already: a resend) or not."""
        back = [(m, True) for m, _ in self.unconfirmed.values()]
        back += [(m, True) for m in self.txn_msgs]  # their transaction never committed
        if self.txn_committing:
            self.commit_unanswered.update(m.number for m, _ in back)
            self.txn_committing = False
        back += [(m, False) for m in self.holding]
        back += list(self.queue)
        for m, timer in self.pausing.values():  # (their pause ends with the connection)
            timer.cancel()
            back.append((m, False))
        self.pausing.clear()
        self.unconfirmed.clear()
        self.by_delivery.clear()
        self.txn_msgs.clear()
        self.txn_states.clear()
        self.holding = []
        self.queue.clear()
        back.sort(key=lambda mw: mw[0].number)
        return back

    def _credit_wait(self, now: float) -> float | None:
        """How long the send loop has waited for the peer's credit; None when it is not
        waiting for credit."""
        since, sender = self.send_wait_since, self.sender
        if since is None or sender is None or not _lacks_credit(sender):
            return None
        return now - since

    def _waiting_text(self, now: float) -> str | None:
        """What the progress line says of a run stalled for credit (`Progress.status`)."""
        return _credit_note(self._credit_wait(now))

    async def _wait_sendable(self, sender: SenderLink) -> None:
        """`SenderLink.wait_sendable`, noting when the wait began (`_credit_wait`)."""
        self.send_wait_since = time.monotonic()
        try:
            await sender.wait_sendable(self.plan.window, self.plan.timeout)
        finally:
            self.send_wait_since = None

    def _on_engine(self, engine: Any) -> None:
        """A connection's engine, before any byte moves: a drain on our link waits for the
        messages we have (set before the attach: a peer may write its attach and its
        drain together)."""
        self.offering.on_engine(engine)
        if self.pulled is not None:
            # reading from now on, while the link is attached: a drain that comes with
            # the attach finds the lines already written there (`_input_ready`)
            self.pulled.start()

    def _report(self, now: float) -> tuple[dict[str, Any], str]:
        """--report-every: the figures so far, and how many went out since the last."""
        s = self.s
        assert self.interval is not None
        delta, rate = self.interval.step(s.sent, now)
        elapsed = now - self.interval.start
        in_flight = len(self.unconfirmed)
        credit_wait = self._credit_wait(now)
        obj: dict[str, Any] = {"elapsed": round(elapsed, 3), "sent": s.sent,
                               "interval-sent": delta, "interval-rate": round(rate, 1),
                               "settled": s.settled}
        obj.update((name, getattr(s, name)) for name in OUTCOMES)
        obj.update({"other": s.other, "in-flight": in_flight, "resent": s.resent,
                    "reconnects": s.reconnects,
                    "waiting-for-credit": None if credit_wait is None else round(credit_wait, 3)})
        parts = [f"{elapsed:.1f}s sent {s.sent} (+{delta}, {rate:.0f}/s)",
                 *settlement_parts(s), f"in flight {in_flight}"]
        if self.plan.release_retries:
            obj.update({"retries": s.retries, "retries-pausing": len(self.pausing)})
        if s.resent:
            parts.append(f"resent {s.resent}")
        if s.retries or self.pausing:
            pausing = f" ({len(self.pausing)} pausing)" if self.pausing else ""
            parts.append(f"retries {s.retries}{pausing}")
        if s.reconnects:
            parts.append(f"{s.reconnects} reconnect(s)")
        if (note := _credit_note(credit_wait)) is not None:
            parts.append(note)
        return obj, " ".join(parts)

    async def run(self, messages: Iterator[OutgoingMessage]) -> SendSummary:
        start = time.monotonic()
        reconnects = Reconnects(self.cfg.reconnect, self._warn)
        client: Client | None = None
        reports = None
        if self.plan.report_every is not None:
            self.interval = Interval(start)
            reports = Reports(self.plan.report_every, self._report, self.plan.report_json)
            reports.start()
        self.progress.start()
        settled_before = 0
        try:
            while True:
                finished = self.s.finished
                settled_before = self.s.settled  # (pre-settled sends on this connection)
                try:
                    client = await reconnects.connect(self.cfg, on_engine=self._on_engine)
                    self.s.reconnects = reconnects.made
                    answered = await run_on(
                        client, lambda c: self._send_and_confirm(c, messages, start),
                        self._ended_when_complete)
                    client = None
                    if not answered:  # (what went pre-settled may not have arrived)
                        self.s.settled_unconfirmed += self.s.settled - settled_before
                    if self.input_error is not None:  # after what was sent was confirmed
                        self.s.failure = self.input_error
                    break
                except ConnectionLost as e:
                    back = self._take_back()
                    self.s.settled_unconfirmed += self.s.settled - settled_before
                    settled_before = self.s.settled
                    if client is not None:
                        await client.abort()
                        client = None
                    if self.s.finished > finished:  # a connection that got somewhere
                        reconnects.got_somewhere()
                    pause = reconnects.after_loss(e.error)
                    if pause is None:
                        self._left_unconfirmed(back)
                        self.s.failure = e.error
                        break
                    await asyncio.sleep(pause)
                    self.queue.extend(back)
        except UserError as e:
            self.s.failure = e
            if client is not None:  # (no credit, no outcome): the peer is still there
                if not await close_failed(client):
                    self.s.settled_unconfirmed += self.s.settled - settled_before
                client = None
        except asyncio.CancelledError:
            self.s.failure = UserError("interrupted", Exit.INTERRUPTED)
            if await close_interrupted(client, self.cfg.connect_timeout):
                client = None
        except Exception as e:  # noqa: BLE001 - a bug of ours: reported as a drop is, no reconnect
            self.s.failure = InternalError(e, self.cfg.endpoint.password)
        finally:
            if reports is not None:
                reports.stop()  # (the summary is the last word)
            if client is not None:
                # not closed cleanly: what went pre-settled on it may not have arrived (a
                # close the peer answered says it had everything before it)
                await client.abort()
                self.s.settled_unconfirmed += self.s.settled - settled_before
            if self.s.settled_unconfirmed:
                self._warn(f"{self.s.settled_unconfirmed} pre-settled message(s) sent on a "
                           "connection that ended without the peer's answer to our close: "
                           "whether they arrived is not known (pre-settled is at most once)")
            unheard = len(self.unconfirmed)  # sent, no outcome heard by the end
            taken_back = self._take_back()
            if isinstance(self.s.failure, NoOutcome):
                self.s.failure = self._timed_out(unheard, taken_back)
            if self._left_unconfirmed(taken_back) and self.s.failure is None:
                # nothing leaves without a bucket
                self.s.failure = UserError("the connection ended before every outcome arrived",
                                           Exit.IN_DOUBT)
            self.s.in_doubt.sort(key=lambda nm: nm[0])
            self.s.released_messages.sort(key=lambda nm: nm[0])
            self.s.not_committed.sort(key=lambda nm: nm[0])
            self.s.elapsed = time.monotonic() - start
            self.progress.close()
        return self.s

    def _left_unconfirmed(self, back: list[tuple[OutgoingMessage, bool]]) -> bool:
        """The run ends with `back` taken back: those sent are in doubt, but for those
        sent only in transactions it never committed (rolled back: not delivered). True
        when any was sent."""
        for m, was_sent in back:
            if not was_sent and m.number in self.retrying:
                # released, and the run ended before its retry went: its release stands
                self.retrying.discard(m.number)
                self.s.released += 1
                self.s.released_messages.append((m.number, m.message_id))
        sent = [m for m, was_sent in back if was_sent]
        for m in sent:
            if self.plan.txn_size and m.number not in self.commit_unanswered:
                self.s.not_committed.append((m.number, m.message_id))
            else:
                self.s.in_doubt.append((m.number, m.message_id))
        return bool(sent)

    def _timed_out(self, unheard: int,
                   taken_back: list[tuple[OutgoingMessage, bool]]) -> UserError | None:
        """The run's failure once its wait for outcomes timed out, decided with what was
        heard by its end, as the summary's counts are: an outcome that came as the wait
        ran out (read in the same turn of the loop, or while closing) counts, and the run
        whose every outcome came is no failure; otherwise the messages still without
        one are the error's number (they are the summary's in doubt)."""
        timeout = self.plan.timeout
        if unheard:
            return NoOutcome(unheard, timeout)
        if taken_back or not self.exhausted:
            # every outcome heard, but its transaction never discharged (its messages are
            # not committed, or in doubt), or messages left to send: the run still stopped
            # short
            return UserError(f"timed out after {timeout:g}s: the run stopped before its end "
                             "(the last outcomes came only as the wait for them ran out)",
                             Exit.TIMEOUT)
        return None

    def _ended_when_complete(self, e: UserError | ConnectionLost) -> bool:
        """Whether `e` is the link or connection ending once every message was sent and
        its outcome heard (the peer's close right after the last outcome, a dropped
        socket): the run did what it was asked, so the end is a warning, not its failure.
        Not so for pre-settled sends: no outcome says the peer had them before it ended."""
        sender = self.sender
        if (not self.exhausted or self.plan.settled or sender is None or not sender.ended
                or self.unconfirmed or self.queue or self.pausing or self.holding
                or self.txn_msgs):
            return False
        error = e.error if isinstance(e, ConnectionLost) else e
        self._warn(f"after the last outcome: {error}")
        return True

    async def _send_and_confirm(self, client: Client, messages: Iterator[OutgoingMessage],
                                start: float) -> None:
        # (with --on-release retry, a released message's pause ending ends the wait for
        # outcomes: it goes again then, the others' outcomes awaited after it)
        retry = bool(self.plan.release_retries)
        await self._send_all(client, messages, start)
        await self._wait_confirmed(client, or_retry=retry)
        # released messages to send again (or pausing still: an outcome that came as the
        # wait for it timed out ended that wait before their pause did)
        while (self.queue or self.pausing) and self.sender is not None:
            if self.queue:
                await self._send_queued(client, self.sender, messages, start)
            await self._wait_confirmed(client, or_retry=retry)

    async def _send_all(self, client: Client, messages: Iterator[OutgoingMessage],
                        start: float) -> None:
        plan = self.plan
        if plan.address is None:
            sender = self.sender = await _open_relay(client, plan)
        else:
            sender = self.sender = await client.open_sender(
                plan.address, settled=plan.settled, name=plan.link_name, target=plan.target())
        self.s.link_opened = True
        await self._send_queued(client, sender, messages, start)

    async def _send_queued(self, client: Client, sender: SenderLink,
                           messages: Iterator[OutgoingMessage], start: float) -> None:
        """Send what the queue holds and then the input, until the input is over (once
        it is, only what the queue holds: released messages to send again)."""
        plan = self.plan
        txn = _Txn(client, plan, self) if plan.txn_size else None
        if txn is None and not plan.rate:
            await self._send_runs(sender, messages, start)
            return
        next_turn = 0.0  # --rate: when the next message may be written
        while True:
            if self.queue:
                msg, was_sent = self.queue.popleft()
            else:
                if self.exhausted:
                    break
                if plan.duration is not None and (
                        time.monotonic() - start >= plan.duration
                        # with a rate, the next one's turn would come at the end or later:
                        # --duration 2 --rate 10 is 20 messages, not 21
                        or (plan.rate and self.s.messages / plan.rate >= plan.duration)):
                    self.exhausted = True
                    break
                ready = await self._input_ready(start)
                if self.queue:
                    continue  # a retry's pause ended while the input waited: it goes first
                if not ready:
                    self.exhausted = True  # --duration ended while the input waited
                    break
                nxt = self._next_input(messages)
                if nxt is None:
                    self.exhausted = True
                    break
                msg, was_sent = nxt, False
                self.s.messages += 1
            self.holding = [msg]
            if plan.rate:
                # each message's turn 1/R after the one before, never before now: a wait
                # (for input, credit, a reconnect) earns no burst after it
                now = time.monotonic()
                turn = max(next_turn, now)
                if turn > now:
                    await asyncio.sleep(turn - now)
                next_turn = turn + 1 / plan.rate
            await self._wait_sendable(sender)
            txn_id = await txn.current() if txn else None
            payload = stamped(msg, stamp_bytes(time.time_ns())) if plan.timestamp else msg.payload
            pending = sender.send(payload, settled=plan.settled, txn_id=txn_id,
                                  message_format=msg.message_format)
            if plan.rate and time.monotonic() > next_turn:
                # it waited past the next turn (for credit, a declare): the next one's turn
                # is 1/R after this one went, not at once
                next_turn = time.monotonic() + 1 / plan.rate
            self.holding = []
            self._sent_one(msg, was_sent, pending)
            if txn:
                await txn.sent_one(lambda: self._wait_confirmed(client))
        self.offering.offer(False, self.sender)
        if txn:
            await txn.finish(lambda: self._wait_confirmed(client))
        sender._check()  # a close that came in meanwhile: at once, not after the timeout
        await sender.wait_written(plan.timeout)

    async def _input_ready(self, start: float) -> bool:
        """Wait, without holding up the loop, until the input read in a thread has a
        message (or its end) — at most until --duration ends; False if it ended first —
        or until a released message's pause ends (it is queued: it goes without waiting
        for the next line)."""
        pulled = self.pulled
        if pulled is None:
            return True
        duration = self.plan.duration
        left = None if duration is None else start + duration - time.monotonic()
        waiting = asyncio.ensure_future(self.offering.wait_input(pulled, self.sender, left))
        watch: asyncio.Future[None] | None = None
        try:
            # A connection lost meanwhile is met now, not when the next line comes (after
            # hours of `tail -f`): said, reconnected, what it left in doubt sent again.
            while not waiting.done() and self.sender is not None:
                watch = asyncio.ensure_future(self.sender.wait_changed(None, "input"))
                await asyncio.wait((waiting, watch), return_when=asyncio.FIRST_COMPLETED)
                done, watch = watch, None
                if done.done():
                    done.result()  # (raises the connection's failure)
                else:
                    done.cancel()
                if self.queue:
                    return True
            await waiting
        finally:
            # Interrupted (Ctrl-C, SIGTERM cancel this task) or failed: neither wait is
            # left behind, to end later with the close's error that nothing retrieves
            # (asyncio's "Task exception was never retrieved" and a traceback).
            for task in (waiting, watch):
                _drop(task)
        return pulled.available()

    def _next_input(self, messages: Iterator[OutgoingMessage]) -> OutgoingMessage | None:
        """The next message of the input, or None at its end, or when it fails (a bad
        line, a read error): then the input stops there, what was sent is still seen
        through to its outcome, and the error ends the run after that (`run`)."""
        if self.input_error is not None:
            return None
        try:
            return next(messages, None)
        except UserError as e:
            self.input_error = e
            return None

    def _sent_one(self, msg: OutgoingMessage, was_sent: bool, pending: Pending) -> None:
        self.s.sent += 1
        self._counted_sent(msg, was_sent)
        if self.plan.settled:
            self.s.settled += 1
            self.progress.update(self.s.sent)
        else:
            self.unconfirmed[msg.number] = (msg, pending)
            pending.tag = msg
            pending.on_done(self._record_done)

    def _take(self, k: int, messages: Iterator[OutgoingMessage],
              start: float) -> list[tuple[OutgoingMessage, bool]]:
        """Up to `k` messages to send next: those to send again first, then new ones (as
        long as the run's duration lasts)."""
        plan = self.plan
        queue = self.queue
        out: list[tuple[OutgoingMessage, bool]] = []
        while len(out) < k:
            if queue:
                out.append(queue.popleft())
                continue
            if self.exhausted:  # (what is left are retries the queue gets later)
                break
            if plan.duration is not None and time.monotonic() - start >= plan.duration:
                self.exhausted = True
                break
            if self.pulled is not None and not self.pulled.available():
                # these go now, the next ones when they have come; none has come only
                # when --duration ended while the input waited
                if not out:
                    self.exhausted = True
                break
            nxt = self._next_input(messages)
            if nxt is None:
                self.exhausted = True
                break
            self.s.messages += 1
            out.append((nxt, False))
        return out

    async def _send_runs(self, sender: SenderLink, messages: Iterator[OutgoingMessage],
                         start: float) -> None:
        """The send loop without transactions or a rate: as many messages at a time as
        credit and the window allow, framed in one go, their outcomes counted as runs."""
        plan = self.plan
        settled = plan.settled
        stamp = plan.timestamp
        s = self.s
        sender.on_settled = self._settled_run
        while True:
            if not self.queue:
                if self.exhausted:
                    break
                # the next message before its credit: once the last one has gone out the
                # run ends here, not after waiting for credit it has no use for
                await self._input_ready(start)
                self.queue.extend(self._take(1, messages, start))
                if not self.queue:
                    break
            await self._wait_sendable(sender)
            batch = self._take(min(sender.room(plan.window), RUN), messages, start)
            if not batch:
                break
            self.holding = [m for m, _ in batch]
            if stamp:
                # one clock read for the run: it is framed and written in one go
                now = stamp_bytes(time.time_ns())
                payloads = [stamped(m, now) for m, _ in batch]
            else:
                payloads = [m.payload for m, _ in batch]
            # (a run goes out in transfers of message-format 0: from the first message of
            # another, the messages go one at a time below)
            odd = next((i for i, (m, _) in enumerate(batch) if m.message_format), None)
            if odd is not None:
                payloads = payloads[:odd]
            n, ds = sender.send_many(payloads, settled=settled)
            rest = batch[n:]
            if rest:  # the first one left goes on its own (larger than a frame, or the
                # peer's window is full): the engine queues and frames it as it can
                msg, was_sent = rest[0]
                payload = stamped(msg, stamp_bytes(time.time_ns())) if stamp else msg.payload
                self._sent_one(msg, was_sent, sender.send(payload, settled=settled,
                                                          message_format=msg.message_format))
                self.queue.extendleft(reversed(rest[1:]))
                batch = batch[:n]
            self.holding = []
            s.sent += n
            for msg, was_sent in batch:
                if was_sent or self.retrying:
                    self._counted_sent(msg, was_sent)
            if settled:
                s.settled += n
                self.progress.update(s.sent)
            else:
                unconfirmed = self.unconfirmed
                by = self.by_delivery
                for (msg, _), d in zip(batch, ds, strict=True):
                    unconfirmed[msg.number] = (msg, d)
                    by[id(d)] = msg
            await sender.hand_off()
        self.offering.offer(False, self.sender)
        sender._check()  # a close that came in meanwhile: at once, not after the timeout
        await sender.wait_written(plan.timeout)

    async def _wait_confirmed(self, client: Client, or_retry: bool = False) -> None:
        """Wait for every outcome (`or_retry`: and for every released message's pause,
        until one of them is queued to be sent again). --timeout bounds the wait for
        outcomes, not a pause."""
        sender = self.sender
        if (self.unconfirmed or (or_retry and self.pausing)) and sender is not None:
            deadline = asyncio.get_running_loop().time() + self.plan.timeout
            try:
                while ((self.unconfirmed or (or_retry and self.pausing))
                       and not (or_retry and self.queue)):
                    await sender.wait_changed(deadline if self.unconfirmed else None,
                                              "no outcome")
            except UserError as e:
                if e.code != Exit.TIMEOUT:
                    raise
                # The last outcome may have been read in the very turn of the loop the
                # wait timed out in: then nothing is missing, and the run goes on as one
                # whose outcomes came in time. (One read later, while closing, is counted
                # too: `run` decides the failure again at the end, `_timed_out`.)
                if self.unconfirmed:
                    raise NoOutcome(len(self.unconfirmed), self.plan.timeout) from None
        client._check()  # waits also end when the connection does


def _drop(task: asyncio.Future[None] | None) -> None:
    """A task no longer waited for: cancelled, or its end taken (a failure it ended with
    is the connection's, met by the run another way)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()  # (taken: not reported as never retrieved)


def _credit_note(wait: float | None) -> str | None:
    """How the progress line and the reports say a run has waited `wait` seconds for
    credit (None: it is not waiting for credit)."""
    return None if wait is None else f"waiting for credit {wait:.0f}s"


def _lacks_credit(sender: SenderLink) -> bool:
    """Whether the peer's credit is used up: what `wait_sendable` waits for first (and
    names when it times out)."""
    return sender.link.link_credit <= sender._queued()


async def _open_relay(client: Client, plan: SendPlan) -> SenderLink:
    """A sender link to the peer's anonymous relay: a target with no address."""
    if not plan.force_relay and not client.offers(ANONYMOUS_RELAY):
        raise UserError("no address, and the peer does not offer the anonymous relay "
                        f"({ANONYMOUS_RELAY} in its open): give the address in the URL "
                        "(--force-relay tries the relay anyway)", Exit.REFUSED)
    try:
        return await client.open_sender(None, settled=plan.settled, name=plan.link_name,
                                        target=plan.target())
    except UserError as e:
        if e.code != Exit.REFUSED:
            raise
        raise UserError(f"{e} (a link to the anonymous relay: give the address in the URL)",
                        e.code) from None


class _Txn:
    """Transactions of `txn_size` sends, committed (or rolled back) as each fills."""

    def __init__(self, client: Client, plan: SendPlan, owner: _Sender) -> None:
        self.client = client
        self.owner = owner
        self.summary = owner.s
        self.size = plan.txn_size or 0
        self.rollback = plan.rollback
        self.txn_id: bytes | None = None
        self.in_txn = 0

    async def current(self) -> bytes:
        if self.txn_id is None:
            try:
                self.txn_id = await self.client.declare()
            except UserError as e:
                if e.code == Exit.REFUSED and not self.summary.sent:
                    # a peer without transactions refused its coordinator before any send:
                    # said as a refused link is, alone, with no summary of nothing sent
                    self.summary.link_opened = False
                raise
            self.in_txn = 0
        return self.txn_id

    async def sent_one(self, confirm: Any) -> None:
        self.in_txn += 1
        if self.in_txn >= self.size:
            await self.finish(confirm)

    async def finish(self, confirm: Any) -> None:
        if self.txn_id is None:
            return
        await confirm()
        txn_id, self.txn_id = self.txn_id, None
        # From here the commit may reach the peer (a rollback, like no discharge at all,
        # leaves nothing delivered). A refusal is an answer: it did not commit.
        self.owner.txn_committing = not self.rollback
        try:
            await self.client.discharge(txn_id, fail=self.rollback)
        except UserError as e:
            if e.code == Exit.REFUSED:
                self.owner.txn_committing = False
            raise
        self.owner.txn_committing = False
        self.owner.settle_txn(committed=not self.rollback)
        if self.rollback:
            self.summary.rolled_back += 1
        else:
            self.summary.committed += 1
