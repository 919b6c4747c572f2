"""The receive loop shared by `amqp recv` and `amqp browse`.

The rule that matters: a message is settled only after it has been written out
(`MessageSink.write` returns once the bytes are flushed, and fsync'd for files). If the
connection drops between the write and the settlement, the peer redelivers it: the
output may hold a duplicate (at-least-once), never a gap. When writing a run of messages
fails part way, the sink says how many of them were written whole (`OutputError`): those
are settled, the rest go back to the peer with the link. An output that takes nothing for
a while (a pipe whose reader stopped reading) is waited for without holding up the event
loop, so heartbeats go on and Ctrl-C or SIGTERM stops the run meanwhile: the messages not
written whole then are not settled either (`WriteStopped`).

Outcomes that give messages back (release, modify without undeliverable-here) hold those
deliveries, written, and give them back when the run ends (its count, its timeout, the end
of a drain): settled at once, they would come straight back (RabbitMQ puts them back at
the head of the queue) and the run would see the same messages for ever, its timeout
never reached. Messages that went back with a lost link and come again on the next one
are recognised and not written twice.

Messages written and settled whose settlement the lost connection may not have taken to the
peer (amqpcli/net/redelivery.py) are written again when they come again (the peer held
them: at least once), but --count counts distinct messages: the summary says how many
were redelivered.

Transactions (``--txn-size N``): the outcomes of every N messages are sent inside one
transaction, discharged when it holds N; amqpcli/net/txnreceive.py keeps them and says
what becomes of their messages (in doubt on an unanswered commit, again after a drop).
What a discharge gives back to the node comes again on this link: like what went back
with a lost link, it is known when it does, held unwritten and released at the end.

Pacing (``--rate R``): at most R messages written and settled a second, each at least 1/R
after the one before, and no more credit than a second at that rate takes (or --credit,
if smaller), so the node keeps the backlog rather than pushing it to us.

Duration (``--duration S``): the run stops taking messages S seconds after it started,
as --count stops it. A timer wakes the wait for a message at the end (`get` calls its
idle, which says the time is up); the credit is taken back, and of the messages already
here only the pre-settled ones, which exist nowhere else, are still written. Paced, a
message whose turn would come at the end or later is not taken. With --reconnect no
connection is made again past the end (`_connect`), and a connection lost after it ends
the run as the end does, whether or not the receive loop had seen the end yet.

Copy mode (``--copy`` and browse): deliveries are not settled one by one; they are held
and released together at the end, so a peer that ignores ``distribution-mode: copy`` gets
them back instead of losing them. Browse then attaches a second copy link while the
first still holds its deliveries: a peer that really copies shows the same messages
again (compared by identity, so messages added meanwhile are not taken for copies), one
that consumed them shows fewer, and we say so. After a reconnect the new copy
link starts again at the head of the node: what was shown before is passed over, held
unwritten (amqpcli/net/browseresume.py).

Latency: a message that carries a send-time stamp (the integer application property
`ts`, `send --timestamp`) counts the wall clock when it is handed to be written less the
stamp (amqpcli/net/latency.py); a message without one costs a substring search.
`--report-every` reports come from a timer (amqpcli/net/reporting.py), never from the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from amqpcli.aio import wait_within
from amqpcli.codec import composites as c
from amqpcli.codec.types import DecodeError, Described, Symbol, UInt
from amqpcli.errors import Exit, UserError
from amqpcli.net.browseresume import Identities, ShownBefore
from amqpcli.net.client import (
    Client,
    ConnectionLost,
    Incoming,
    InternalError,
    ReceiverLink,
    close_interrupted,
    run_on,
)
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.credit import DRAIN_BOUND, QUIET, CreditWindow, QuietDrain
from amqpcli.net.latency import STAMP_NEEDLE, Latencies, figures_text, stamp_of
from amqpcli.net.reconnecting import Reconnects
from amqpcli.net.redelivery import InDoubtSettlements
from amqpcli.net.reporting import Interval, Reports
from amqpcli.net.sendrun import close_failed
from amqpcli.net.sequence import SequenceCheck
from amqpcli.net.txn import txn_json, txn_parts
from amqpcli.net.txnreceive import ReceiveTransactions

__all__ = [
    "SELECTOR_DESCRIPTOR",
    "MessageSink",
    "Outcome",
    "OutputError",
    "RecvPlan",
    "RecvSummary",
    "WriteStopped",
    "cut_short",
    "parse_outcomes",
    "run_recv",
]

T = TypeVar("T")

SELECTOR_DESCRIPTOR = Symbol("apache.org:selector-filter:string")
SELECTOR_KEY = Symbol("jms-selector")


@dataclass(frozen=True)
class Outcome:
    name: str  # accept, release, reject, modify, none
    condition: str | None = None
    description: str | None = None
    delivery_failed: bool = False
    undeliverable_here: bool = False

    def state(self) -> Any:
        """The delivery state to send (one shared object per outcome, so consecutive
        settlements with it can share a disposition)."""
        st = _STATES.get(self)
        if st is None:
            st = _STATES[self] = self._make_state()
        return st

    def _make_state(self) -> Any:
        if self.name == "accept":
            return c.Accepted()
        if self.name == "release":
            return c.Released()
        if self.name == "reject":
            err = c.Error(condition=Symbol(self.condition), description=self.description) \
                if self.condition else None
            return c.Rejected(error=err)
        if self.name == "modify":
            return c.Modified(delivery_failed=self.delivery_failed or None,
                              undeliverable_here=self.undeliverable_here or None)
        return None

    @property
    def gives_back(self) -> bool:
        """The node keeps the message to deliver again (to us as well)."""
        return self.name == "release" or (self.name == "modify" and not self.undeliverable_here)


_STATES: dict[Outcome, Any] = {}


def parse_outcomes(text: str) -> list[Outcome]:
    """``accept``, ``release``, ``reject[:CONDITION[=DESCRIPTION]]``,
    ``modify[:failed][:undeliverable]``; a comma-separated list is a pattern applied in
    turn (``accept,accept,reject`` rejects every third message). Conditions have colons
    of their own (``amqp:link:detach-forced``), so the description follows ``=``."""
    out: list[Outcome] = []
    for item in text.split(","):
        name, _, rest = item.strip().partition(":")
        name = name.lower()
        if name in ("accept", "accepted", "release", "released") and _:
            # (nothing to add to these: a `:x` would be ignored without a word)
            raise UserError(f"--outcome {item.strip()!r}: {name} takes nothing after it",
                            Exit.USAGE)
        if name in ("accept", "accepted"):
            out.append(Outcome("accept"))
        elif name in ("release", "released"):
            out.append(Outcome("release"))
        elif name in ("reject", "rejected"):
            cond, _, desc = rest.partition("=")
            out.append(Outcome("reject", cond or None, desc or None))
        elif name in ("modify", "modified"):
            flags = {f for f in rest.split(":") if f}
            unknown = flags - {"failed", "undeliverable"}
            if unknown:
                raise UserError(f"--outcome modify: unknown flag(s) {', '.join(sorted(unknown))} "
                                "(use failed, undeliverable)", Exit.USAGE)
            out.append(Outcome("modify", delivery_failed="failed" in flags,
                               undeliverable_here="undeliverable" in flags))
        else:
            raise UserError(f"--outcome: unknown outcome {item.strip()!r} "
                            "(accept, release, reject[:CONDITION[=DESCRIPTION]], "
                            "modify[:failed][:undeliverable])", Exit.USAGE)
    return out


class OutputError(UserError):
    """Writing a run of messages out failed after the first `written` of them were
    written whole: those may be settled, the others must not be."""

    def __init__(self, message: str, code: Exit, written: int) -> None:
        super().__init__(message, code)
        self.written = written


class WriteStopped(asyncio.CancelledError):
    """The run was stopped (Ctrl-C, SIGTERM) while the output took a run of messages: the
    first `written` were written whole, and (`cut`) the next one part way. It is the
    cancellation it came from, carried on."""

    def __init__(self, written: int, cut: bool) -> None:
        super().__init__()
        self.written = written
        self.cut = cut


class MessageSink(Protocol):
    def write(self, incoming: Incoming) -> None:
        """Write one message out; return only when it is flushed (fsync'd for files)."""

    def close(self) -> None: ...


def _write_many(sink: MessageSink, before_waiting: Callable[[], None]
                ) -> Callable[[Sequence[Incoming]], Awaitable[None]]:
    """The sink's `write_many_async` (a run of messages, flushed once, the event loop
    running while the output takes nothing, `before_waiting` called then; an
    `OutputError` when it fails, `WriteStopped` when the run is stopped meanwhile), else
    its `write_many`, else one `write` each."""
    many_async = getattr(sink, "write_many_async", None)
    if many_async is not None:
        return lambda incomings: many_async(incomings, before_waiting)  # type: ignore[no-any-return]
    many = getattr(sink, "write_many", None)

    async def each(incomings: Sequence[Incoming]) -> None:
        if many is not None:
            many(incomings)
            return
        for n, inc in enumerate(incomings):
            try:
                sink.write(inc)
            except OutputError:
                raise
            except UserError as e:
                raise OutputError(str(e), e.code, n) from e
    return each


@dataclass(frozen=True)
class RecvPlan:
    address: str | None
    count: int | None = None
    timeout: float | None = None
    # --duration: stop taking messages this many seconds after the run started
    duration: float | None = None
    credit: int = 100
    drain: bool = False
    outcomes: tuple[Outcome, ...] = (Outcome("accept"),)
    settle_second: bool = False
    selector: str | None = None
    filters: tuple[tuple[Any, Any], ...] = ()
    subscription: str | None = None
    unsubscribe: bool = False
    link_name: str | None = None  # the attach's name (a subscription's is its own)
    capabilities: tuple[str, ...] = ()  # the source's (topic, queue, shared, ...)
    dynamic: bool = False
    copy: bool = False
    presettled: bool = False  # ask the sender to settle first: at most once
    txn_size: int | None = None  # outcomes in transactions of this many messages
    rollback: bool = False  # discharge them with fail=true: the messages stay
    rate: float | None = None  # at most this many messages a second
    check_copy: bool = False  # browse: verify that copy really did not consume
    # --verify-sequence: the property numbering the run, its first number if given, and
    # whether a duplicate fails the run (amqpcli/net/sequence.py)
    sequence_key: str | None = None
    sequence_start: int | None = None
    no_duplicates: bool = False
    report_every: float | None = None  # --report-every: seconds between reports on stderr
    report_json: bool = False  # the reports as JSON objects (with --json-summary)


@dataclass
class RecvSummary:
    received: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    presettled: int = 0
    # pre-settled messages received and not written (a write that failed, the run's end):
    # the peer no longer has them, so they are lost; counted in `received` and `presettled`
    presettled_lost: int = 0
    held: int = 0  # copy mode: held and released at the end
    seen_again: int = 0  # given back earlier in the run, came again, not written
    # settled as a connection was lost, came again: written again, not counted in `received`
    redelivered: int = 0
    address: str | None = None  # the dynamic node's address
    reconnects: int = 0
    committed: int = 0  # transactions
    rolled_back: int = 0
    rolled_back_messages: int = 0
    in_doubt: int = 0  # written in a transaction whose commit was not confirmed
    elapsed: float = 0.0
    timed_out: bool = False
    duration_over: bool = False  # --duration ended the run (the node may hold more)
    drained: bool = False
    # recv --drain: the seconds waited for the peer to answer the drain, when it did not
    drain_unanswered: float | None = None
    copy_consumed: int | None = None  # browse: how many the peer seems to have consumed
    copy_unchecked: str | None = None  # browse: why the copy check was not done
    warnings: list[str] = field(default_factory=list)
    failure: UserError | None = None
    attached: bool = False  # a receiving link was attached: the run reached the node
    sequence: SequenceCheck | None = None  # --verify-sequence: the numbers written
    # of the messages written that carry a send-time stamp (`ts`, send --timestamp)
    latency: Latencies = field(default_factory=Latencies)

    @property
    def written(self) -> int:
        """The messages received and written out."""
        return self.received - self.presettled_lost

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "received": self.received,
            "outcomes": dict(self.outcomes),
            "pre-settled": self.presettled,
            "elapsed": round(self.elapsed, 6),
        }
        if self.presettled_lost:
            out["pre-settled-lost"] = self.presettled_lost
        if self.held:
            out["held-and-released"] = self.held
        if self.seen_again:
            out["seen-again"] = self.seen_again
        if self.redelivered:
            out["redelivered"] = self.redelivered
        if self.address is not None:
            out["address"] = self.address
        if self.reconnects:
            out["reconnects"] = self.reconnects
        out.update(txn_json(self))
        if self.in_doubt:
            out["in-doubt"] = self.in_doubt
        if self.duration_over:
            out["duration-over"] = True
        if self.copy_consumed is not None:
            out["copy-consumed"] = self.copy_consumed
        if self.copy_unchecked is not None:
            out["copy-not-checked"] = self.copy_unchecked
        if self.sequence is not None:
            out["sequence"] = self.sequence.to_json()
        latency = self.latency.figures()
        if latency is not None:
            out["latency-ms"] = latency
        if self.warnings:
            out["warnings"] = self.warnings
        if self.failure is not None:
            out["error"] = str(self.failure)
            out["exit"] = int(self.failure.code)
        return out

    def text(self, verb: str = "received") -> str:
        parts = [f"{verb} {self.received}"]
        for name, n in sorted(self.outcomes.items()):
            parts.append(f"{name} {n}")
        if self.presettled:
            parts.append(f"pre-settled {self.presettled}" + (
                f" ({self.presettled_lost} of them lost: not written)"
                if self.presettled_lost else ""))
        if self.held:
            parts.append(f"released back {self.held}")
        if self.seen_again:
            parts.append(f"seen again {self.seen_again} (released, not written)")
        if self.redelivered:
            parts.append(f"{self.redelivered} redelivered (written again, not counted)")
        if self.reconnects:
            parts.append(f"{self.reconnects} reconnect(s)")
        if self.in_doubt:
            parts.append(f"in doubt {self.in_doubt}")
        parts.extend(txn_parts(self))
        rate = self.received / self.elapsed if self.elapsed > 0 else 0.0
        text = ", ".join(parts) + f" in {self.elapsed:.2f}s ({rate:.0f} msg/s)"
        latency = self.latency.figures()
        if latency is not None:
            text += ", " + figures_text(latency)
            if latency["count"] != self.written:
                text += f" ({latency['count']} stamped)"
        return text


def source_for(plan: RecvPlan) -> c.Source:
    filters: dict[Any, Any] = {}
    if plan.selector is not None:
        filters[SELECTOR_KEY] = Described(SELECTOR_DESCRIPTOR, plan.selector)
    for k, v in plan.filters:
        filters[Symbol(k) if isinstance(k, str) and not isinstance(k, Symbol) else k] = v
    src = c.Source(
        address=None if plan.dynamic else plan.address,
        dynamic=True if plan.dynamic else None,
        distribution_mode=Symbol("copy") if plan.copy else None,
        filter=filters or None,
        capabilities=[Symbol(x) for x in plan.capabilities] or None,
    )
    if plan.subscription:
        src.durable = UInt(2)  # unsettled-state
        src.expiry_policy = Symbol("never")
    return src


def run_recv(cfg: ConnectionConfig, plan: RecvPlan, sink: MessageSink,
             on_warning: Any = None, on_address: Any = None) -> RecvSummary:
    return run_interruptible(_Receiver(cfg, plan, sink, on_warning, on_address).run())


def run_interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` where Ctrl-C or SIGTERM cancels the run once and only once.

    asyncio's own handler cancels the task on the first SIGINT but raises
    KeyboardInterrupt wherever the main thread is on the next one — in the middle of the
    clean close, or of a write. A second SIGINT comes more often than one would think:
    ``timeout -s INT`` and ``kill -INT -PGID`` signal the process and then its group.
    Here every signal after the first is ignored: the run is closing already (the close
    is bounded by the connect timeout), and it ends with its summary; after an interrupted
    run both stay ignored while the caller reports and exits. A signal before the task
    started raises KeyboardInterrupt (nothing was done yet). SIGTERM (a service manager,
    `kill`) and SIGHUP (a closed terminal) stop the run as Ctrl-C does, summary and
    in-doubt messages included; SIGINT and SIGHUP are left alone where they were ignored
    (a background job, `nohup`)."""
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coro)
    take_sigint = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    interrupted = stopped = False
    cancel: Callable[[], object] | None = None

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            if cancel is not None:
                cancel()
            else:
                raise KeyboardInterrupt

    term_before = signal.signal(signal.SIGTERM, on_signal)
    hup_before = signal.getsignal(signal.SIGHUP)
    take_sighup = hup_before is not signal.SIG_IGN
    if take_sighup:
        signal.signal(signal.SIGHUP, on_signal)
    if take_sigint:
        signal.signal(signal.SIGINT, on_signal)
    try:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            task = loop.create_task(coro)
            cancel = lambda: loop.call_soon_threadsafe(task.cancel)
            try:
                return loop.run_until_complete(task)
            except asyncio.CancelledError:
                if interrupted:
                    raise KeyboardInterrupt from None
                raise
            finally:
                stopped = interrupted
                cancel = None  # from here on, nothing left to cancel: ignore the signals
                interrupted = True
    finally:
        # After an interrupt the caller only reports and exits: a repeated signal must not
        # cut its summary short.
        if take_sigint:
            signal.signal(signal.SIGINT,
                          signal.SIG_IGN if stopped else signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_IGN if stopped else term_before)
        if take_sighup:
            signal.signal(signal.SIGHUP, signal.SIG_IGN if stopped else hup_before)


_RELEASED = Outcome("release").state()


class _DurationOver(Exception):
    """--duration ended while the receive loop waited for a message."""


def cut_short(inc: Incoming, what: str | None = None,
              unsettled: str = "not settled: the node delivers it again") -> str:
    """What a stop left of the message (`what`: what it is called, "reply to request 3")
    whose line the output took part of, and what becomes of it (`unsettled`)."""
    fate = "it was pre-settled: lost" if inc.settled else unsettled
    return (f"stopped while the output took {what or f'message {inc.number}'}: its line is "
            f"cut short there ({fate})")


def _identity(inc: Incoming) -> int:
    """What tells a message from others however often it is delivered: its bare message,
    which no node may change (Part 3 §3.2; the header and annotations may); the whole
    payload when it is no message."""
    try:
        return hash(inc.delivery.message().bare_bytes)
    except DecodeError:
        return hash(inc.payload)


def _first_acquired(inc: Incoming) -> bool:
    """The header says this is the message's first delivery to any link."""
    try:
        h = inc.delivery.message().header
    except DecodeError:
        return False
    return h is not None and h.first_acquirer is True and not h.delivery_count


def _delivered_before(inc: Incoming) -> bool:
    """The header says this message was delivered before (amqpcli/net/redelivery.py): a
    delivery-count above 0, or first-acquirer false given in it (an absent field or header
    says nothing: every message of a sender that sets none would be taken for one)."""
    try:
        h = inc.delivery.message().header
    except DecodeError:
        return False
    return h is not None and (bool(h.delivery_count) or h.first_acquirer is False)


def _peer_settled(delivery: Any) -> bool:
    """Mode second: the sender has settled the delivery, so our outcome holds."""
    return bool(delivery.sender_settled or delivery.done)


class _AwaitingPeer:
    """Mode second: the deliveries whose outcome went out and that the sender has not
    settled yet. Only those are kept, without their payload (written out already), so what
    a run holds is what the peer has not settled, not every message of the run: settled
    ones leave the front as others come (peers settle in order), and all of them in a sweep
    whenever the deliveries kept have doubled since the last one (so one the peer leaves
    unsettled holds back no others for long)."""

    SWEEP_FROM = 1024  # no sweep below this many

    def __init__(self) -> None:
        self.deliveries: deque[Any] = deque()
        self.sweep_at = self.SWEEP_FROM

    def add(self, delivery: Any) -> None:
        delivery.drop_payload()
        kept = self.deliveries
        while kept and _peer_settled(kept[0]):
            kept.popleft()
        kept.append(delivery)
        if len(kept) >= self.sweep_at:
            self.deliveries = deque(d for d in kept if not _peer_settled(d))
            self.sweep_at = max(self.SWEEP_FROM, 2 * len(self.deliveries))

    def clear(self) -> None:
        self.deliveries.clear()
        self.sweep_at = self.SWEEP_FROM


class _Receiver:
    def __init__(self, cfg: ConnectionConfig, plan: RecvPlan, sink: MessageSink,
                 on_warning: Any, on_address: Any) -> None:
        self.cfg = cfg
        self.plan = plan
        self.sink = sink
        self.s = RecvSummary()
        if plan.sequence_key is not None:
            self.s.sequence = SequenceCheck(plan.sequence_key, plan.sequence_start,
                                            plan.no_duplicates)
        self.on_warning = on_warning
        self.on_address = on_address
        self.held: list[Incoming] = []
        self.held_idents: list[int] = []  # browse: what each held message is (`_identity`)
        self.second_mode_waits = _AwaitingPeer()
        # Messages given back are held to the end (see the module doc): each with the state
        # to settle it with then and what the message is (`_identity`). In a transaction
        # the outcome goes at once; what it gives back is known when it comes again.
        self.hold_back = not plan.copy and not plan.presettled and not plan.txn_size
        self.given_back: list[tuple[Incoming, Any, int]] = []
        # Written, then given back with a lost link or by a discharge: they come again.
        self.gone_back = Identities()
        # Copy mode with --reconnect: what was shown, passed over by the next link.
        self.shown_before = ShownBefore(_identity) if plan.copy and cfg.reconnect.limit else None
        # With --reconnect: what a lost connection may deliver again though it was settled
        # (a transaction's outcomes are its own: amqpcli/net/txnreceive.py)
        self.in_doubt = (InDoubtSettlements(_identity, _delivered_before)
                         if cfg.reconnect.limit and not (plan.copy or plan.presettled
                                                         or plan.txn_size) else None)
        self.link: ReceiverLink | None = None  # the current connection's link
        # --rate: no more credit than a second at the rate takes (see the module doc)
        self.full_credit = plan.credit if plan.rate is None else max(
            1, min(plan.credit, math.ceil(plan.rate)))
        self.credit = self.full_credit  # shrunk after a drop that came with deliveries unsettled
        self.next_turn = 0.0  # --rate: the loop time the next message may be written at
        self.taken: list[Incoming] = []  # --rate: taken from the link, waiting for its turn
        self.txns = ReceiveTransactions(plan.txn_size or 0, plan.rollback, self.s, self._warn,
                                        _identity)
        self.left_with_end = 0  # unsettled deliveries that came with this connection's end
        self.interval: Interval | None = None  # --report-every: the last report's figures
        self.deadline: float | None = None  # --duration: the loop time the run stops taking at
        self.latency_mark = 0  # the first latency since the last report

    def _warn(self, text: str) -> None:
        self.s.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(text)

    def _report(self, now: float) -> tuple[dict[str, Any], str]:
        """--report-every: the figures so far, and the interval's since the last report."""
        s = self.s
        assert self.interval is not None
        delta, rate = self.interval.step(s.received, now)
        elapsed = now - self.interval.start
        obj: dict[str, Any] = {"elapsed": round(elapsed, 3), "received": s.received,
                               "interval-received": delta, "interval-rate": round(rate, 1)}
        text = f"{elapsed:.1f}s received {s.received} (+{delta}, {rate:.0f}/s)"
        latency = s.latency.figures(self.latency_mark)
        self.latency_mark = len(s.latency)
        if latency is not None:
            obj["interval-latency-ms"] = latency
            text += " " + figures_text(latency, with_min=False)
        return obj, text

    async def run(self) -> RecvSummary:
        start = time.monotonic()
        loop = asyncio.get_running_loop()
        if self.plan.duration is not None:
            self.deadline = loop.time() + self.plan.duration
        reconnects = Reconnects(self.cfg.reconnect, self._warn)
        client: Client | None = None
        reports = None
        if self.plan.report_every is not None:
            self.interval = Interval(start)
            reports = Reports(self.plan.report_every, self._report, self.plan.report_json)
            reports.start()
        try:
            while True:
                progress = self._progress()
                try:
                    self._lost_unwritten()
                    client = await self._connect(reconnects)
                    if client is None:
                        # the run's time is up, with no connection: it ends here (what
                        # came unsettled with the lost one goes back to the peer)
                        self._warn("--duration ended before the connection was made again")
                        break
                    self._new_connection()
                    self.s.reconnects = reconnects.made
                    await run_on(client, self._session, self._ended_when_complete)
                    client = None
                    break
                except ConnectionLost as e:
                    # Held (copy) and unsettled messages go back to the peer with the link.
                    self.held.clear()
                    self.held_idents.clear()
                    self.gone_back.add(ident for _, _, ident in self.given_back)
                    self.given_back.clear()
                    if self.in_doubt is not None:
                        self.in_doubt.lost()
                    self._say_passed_over()
                    if client is not None:
                        await client.abort()
                        client = None
                    # a connection that got somewhere (a copy link passes over what was
                    # shown before: only a message not shown before counts)
                    if self._progress() > progress:
                        reconnects.got_somewhere()
                    if self.cfg.reconnect.limit and self._duration_over():
                        # The run's time is up: the loss ends it as the time does (exit 0),
                        # as one before the deadline does (the pause and the attempts to
                        # connect again end with it: `_connect`), whether or not the
                        # receive loop had seen the deadline yet.
                        self._warn(f"connection lost ({e.error}); the --duration is over: "
                                   "not reconnecting")
                        self._left_with_end(again=False)
                        break
                    pause = (None if self._done() or self._duration_over()
                             else reconnects.after_loss(e.error))
                    if pause is None:
                        self.s.failure = e.error
                        self._left_with_end(again=False)
                        break
                    self._left_with_end(again=True)
                    self.txns.lost(again=True)
                    if self.deadline is not None:
                        pause = min(pause, max(0.0, self.deadline - loop.time()))
                    await asyncio.sleep(pause)
        except UserError as e:
            self.s.failure = e
            self._left_with_end(again=False)
            if client is not None:  # (a refused or detached link: the peer is still there)
                self._send_settlements()  # what was written is settled
                await close_failed(client)
                client = None
        except asyncio.CancelledError:
            self.s.failure = UserError("interrupted", Exit.INTERRUPTED)
            self._release_held()
            self._send_settlements()  # before the close: what was written is settled
            await self._discharge_interrupted()
            if await close_interrupted(client, self.cfg.connect_timeout):
                client = None
        except Exception as e:  # noqa: BLE001 - a bug of ours: reported as a drop is, no reconnect
            self.s.failure = InternalError(e, self.cfg.endpoint.password)
            self._left_with_end(again=False)
        finally:
            if reports is not None:
                reports.stop()  # (the summary is the last word)
            if client is not None:
                await client.abort()
            self.sink.close()
            self._lost_unwritten()
            self.txns.lost(again=False)
            self._say_passed_over()
            s = self.s
            if s.presettled_lost:
                self._warn(f"{s.presettled_lost} pre-settled message(s) lost: received but not "
                           "written (the peer settled them when it sent them: at most once)")
            if (self.plan.check_copy and s.received and s.copy_consumed is None
                    and s.copy_unchecked is None):
                s.copy_unchecked = ("interrupted" if s.failure is not None
                                    and s.failure.code == Exit.INTERRUPTED
                                    else "the browse did not finish")
            s.elapsed = time.monotonic() - start
        return self.s

    async def _connect(self, reconnects: Reconnects) -> Client | None:
        """The run's connection, or (after a loss) the next one: with --duration, the
        attempts end at the deadline. Those to connect again end with None (a connection
        made later would only be closed); the first connection not made by then is the
        run's error, as with no --duration the last attempt's failure is."""
        if self.deadline is None:
            return await reconnects.connect(self.cfg)
        if reconnects.lost and self._duration_over():  # (the pause after the loss ended with it)
            return None
        try:
            async with asyncio.timeout_at(self.deadline):
                return await reconnects.connect(self.cfg)
        except TimeoutError:
            if not self._duration_over():
                raise  # (not the deadline's)
            if reconnects.lost:
                return None
            raise UserError(f"no connection made within the --duration of "
                            f"{self.plan.duration:g}s", Exit.CONNECTION) from None

    def _new_connection(self) -> None:
        """Forget how the last connection's receive ended (drained, timed out) and what its
        copy check found: the run ends as its last connection does, and a connection lost
        after its drain timed out is followed by one that may drain. What the run did
        carries over: the messages received and written, their outcomes, what is in doubt,
        what went back and is to be passed over."""
        self.link = None
        s = self.s
        s.drained = s.timed_out = False
        s.drain_unanswered = None
        s.copy_consumed = s.copy_unchecked = None

    def _progress(self) -> int:
        """What a connection that ends has done for good: messages received, or in
        transactions the discharges (`ReceiveTransactions.discharged`)."""
        return self.txns.discharged if self.plan.txn_size else self.s.received

    async def _discharge(self, link: ReceiverLink) -> None:
        """End the open transaction, if it holds messages, once its outcomes have gone out
        (and, in mode second, the peer has settled them); what it gave back to the node is
        recognised when it comes again (see the module doc)."""
        if not self.txns.to_discharge:
            return
        link.flush_settlements()
        if self.plan.settle_second:
            await self._settle_second_mode(link)
        self.gone_back.add(await self.txns.discharge(link.client))

    async def _discharge_interrupted(self) -> None:
        """Ctrl-C (or SIGTERM) with messages written in the open transaction: discharge it
        as the end of `--count` does (committed; rolled back with --rollback), so what
        was written is settled for good and not delivered again. Bounded by the connect
        timeout; a discharge not answered is said as such (`ReceiveTransactions.lost`)."""
        link = self.link
        if not self.plan.txn_size or link is None or not self.txns.to_discharge:
            return  # (a discharge under way when the interrupt came is waited for, not resent)
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # (the cancel was the interrupt, taken: the discharge must run)
        with contextlib.suppress(ConnectionLost, UserError, TimeoutError, OSError):
            await wait_within(self._discharge(link), self.cfg.connect_timeout)

    async def _pace(self, link: ReceiverLink) -> None:
        """--rate: wait for the next message's turn, at least 1/R after the last one's
        (a pause while nothing came earns no burst after it). The settlements waiting to go
        out together go before the wait: held through it, they would reach the peer only
        once the link's queue is empty, and not at all if the run is stopped meanwhile."""
        rate = self.plan.rate
        assert rate is not None
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self.next_turn > now:
            link.flush_settlements()
            await asyncio.sleep(self.next_turn - now)
            now = self.next_turn
        self.next_turn = now + 1 / rate

    def _lost_unwritten(self, lost: Sequence[Incoming] = ()) -> None:
        """Count as received and lost the pre-settled messages among `lost` (left unwritten
        by a failed write) and among those still waiting on the link (they came after the
        write failed, or after the run stopped): nobody else has them any more. Unsettled
        ones go back to the peer with the link and are not counted."""
        if self.taken:  # (and one taken that waited for its --rate turn)
            lost, self.taken = [*lost, *self.taken], []
        if self.link is not None and self.link.queue:
            lost = [*lost, *self.link.take(None)]
        n = sum(1 for inc in lost if inc.settled)
        self.s.received += n
        self.s.presettled += n
        self.s.presettled_lost += n

    def _done(self) -> bool:
        # --count counts the messages written (pre-settled ones lost unwritten are not)
        return self.plan.count is not None and self.s.written >= self.plan.count

    def _duration_over(self, at: float | None = None) -> bool:
        """Whether --duration is over (by the loop time `at`, else now); once it is, the
        summary says so."""
        if self.deadline is None:
            return False
        if at is None:
            at = asyncio.get_running_loop().time()
        if at >= self.deadline:
            self.s.duration_over = True
        return self.s.duration_over

    def _left_with_end(self, again: bool) -> None:
        """Say how many unsettled deliveries came with the connection's end (left to the
        peer, which delivers them again). Before a reconnect, also shrink the credit below
        both half of it and that number: a peer that drops us after a fixed number of
        deliveries, sending the last ones with its close, would otherwise hand the same
        window back each time, none of it settled."""
        n, self.left_with_end = self.left_with_end, 0
        if not n:
            return
        text = f"{n} unsettled message(s) came with the end: left to the peer, which delivers them again"
        if again and self.credit > 1:
            self.credit = max(1, min(self.credit // 2, n - 1))
            text += f"; credit {self.credit} from now on"
        self._warn(text)

    def _regrown(self, window: int) -> int:
        """The next window, once one was used up on a link that goes on: a credit shrunk by
        `_left_with_end` doubles back towards --credit (one drop with a window in flight
        must not slow the rest of a long run)."""
        if self.credit >= self.full_credit:
            return window
        self.credit = min(self.full_credit, self.credit * 2)
        return self.credit

    def _ended_when_complete(self, e: UserError | ConnectionLost) -> bool:
        """Whether `e` is the link or connection ending once the run was complete (the
        count met, the drain or the timeout over): the peer's close right after the last
        message, a dropped socket. The run did what it was asked, so the end is a warning,
        not its failure. Not so when something still needed the peer: our outcomes in
        settle-mode second, browse's copy check."""
        if isinstance(e, OutputError):
            return False  # our own output failed: never the peer's end
        link = self.link
        s = self.s
        complete = self._done() or s.drained or s.timed_out or s.duration_over
        if (not complete or link is None or not link.ended or self.plan.settle_second
                or self.plan.check_copy or self.txns.undischarged):
            return False
        error = e.error if isinstance(e, ConnectionLost) else e
        self._warn(f"after the last message: {error}")
        self._send_settlements()
        return True

    def _release_held(self) -> None:
        """Copy mode: release what was held, and count it; at the run's end, or when it is
        interrupted (a peer that consumed rather than copied takes them back then, not
        only when the link ends)."""
        link = self.link
        if not self.held or link is None or link.ended:
            return
        released = c.Released()
        for inc in self.held:
            link.settle(inc, released)
        self.s.held += len(self.held)
        self.held.clear()
        self.held_idents.clear()

    def _send_settlements(self) -> None:
        """As the run ends, send the settlements still waiting to go out together (each of
        a message already written out); say how many the link's end kept from the peer."""
        link = self.link
        if link is None:
            return
        link.flush_settlements()
        if link.unsent:
            self._warn(f"{link.unsent} message(s) written but not settled (the end came first): "
                       "the peer delivers them again")

    async def _session(self, client: Client) -> None:
        plan = self.plan
        name = plan.subscription or plan.link_name
        if plan.unsubscribe:
            link = await client.open_receiver(plan.address, source=source_for(plan), name=name)
            await link.close()
            return
        link = self.link = await client.open_receiver(
            plan.address, source=source_for(plan), name=name,
            rcv_settle_mode=1 if plan.settle_second else 0,
            snd_settle_mode=1 if plan.presettled else None,
        )
        self.s.attached = True
        self._check_outcomes(link)
        if plan.txn_size:
            # The first transaction before any credit: a peer with no coordinator refuses
            # it before anything is received or written.
            await self.txns.declare(link.client)
        if plan.dynamic:
            attach = link.remote_attach
            addr = getattr(getattr(attach, "source", None), "address", None)
            if addr is None:
                raise UserError("the peer created no dynamic node (no address in its attach)", Exit.REFUSED)
            self.s.address = str(addr)
            if self.on_address is not None:
                self.on_address(self.s.address)
        if self.shown_before is not None:
            self.shown_before.new_link()
        try:
            with self._woken_at_deadline(link):
                await self._receive(link, drain=plan.drain and client.peer.drain_works)
        except OutputError:
            # What was written before the failure is settled: the settlements go out with
            # the detach, which the peer answers after them; the rest goes back to it. No
            # credit any more (the window is taken back before the detach): a peer sending
            # pre-settled stops sending messages that could not be kept.
            with contextlib.suppress(UserError, ConnectionLost):
                if not link.ended:
                    link.flow(0)
                await self._discharge(link)  # (a commit not answered stays in doubt)
                self._give_back(link)
                await link.close(keep=bool(plan.subscription))
            # the pre-settled messages that came after the failure, before the peer's detach
            self._lost_unwritten()
            raise
        await self._discharge(link)  # the last, partial, batch
        self._give_back(link)
        if plan.copy:
            if plan.check_copy and self.held and self.s.timed_out:
                # The peer did not answer the drain: the listing did not finish, so what a
                # second link sees says nothing of copying (and it would wait as long).
                self.s.copy_unchecked = ("the browse did not finish: the peer did not answer "
                                         "the drain in time")
            elif plan.check_copy and self.held and self.s.duration_over:
                # A second listing of as many messages would take about as long again.
                self.s.copy_unchecked = "the browse stopped at its --duration"
            elif plan.check_copy and self.held:
                # Stopped by --count before the end (not drained): a consuming peer still
                # has the next messages to show the second link.
                at_count = self._done() and not self.s.drained
                await self._check_copy(client, len(self.held), at_count)
            self._release_held()
        await self._settle_second_mode(link)
        # The peer's own detach, if it came meanwhile, is said (not passed over by the close).
        link._check()
        if plan.subscription:
            # Detach without closing: a durable subscription stays for the next time.
            await link.close(keep=True)
        else:
            await link.close()

    def _check_outcomes(self, link: ReceiverLink) -> None:
        """Refuse up front an outcome the source says it does not support (its
        `outcomes` list, Part 3 §3.5.3), rather than have the peer end the session."""
        if self.plan.copy:
            return
        src = getattr(link.remote_attach, "source", None)
        offered = getattr(src, "outcomes", None)
        if not offered:
            return
        offered_names = {str(o) for o in offered}
        for o in self.plan.outcomes:
            sym = getattr(type(o.state()), "SYMBOL", None)
            if sym and sym not in offered_names:
                names = ", ".join(sorted(n.split(":")[1] for n in offered_names if ":" in n))
                raise UserError(
                    f"the peer does not support the {type(o.state()).NAME} outcome on "
                    f"{self.plan.address!r} (its source offers: {names})", Exit.REFUSED)

    @contextlib.contextmanager
    def _woken_at_deadline(self, link: ReceiverLink) -> Iterator[None]:
        """--duration: a wait on the link ends at the deadline, so that the receive loop
        looks at the time then (`get` calls its idle), not at the next message."""
        if self.deadline is None:
            yield
            return
        wake = asyncio.get_running_loop().call_at(self.deadline, link.changed.set)
        try:
            yield
        finally:
            wake.cancel()

    def _presettled_left(self, link: ReceiverLink) -> bool:
        """At the end of --duration: take back the credit and keep, of the messages already
        here, only the pre-settled ones, to be written (they exist nowhere else); the
        others are released, never seen (Part 3 §3.4.4: not delivered — a peer may count
        one merely left with the link as a failed delivery attempt). Whether any is
        left."""
        if not link.ended and link.credit:
            link.flow(0)
        queue = link.queue
        if any(not inc.settled for inc in queue):
            kept = []
            for inc in link.take(None):
                if inc.settled:
                    kept.append(inc)
                elif not link.ended:
                    link.settle(inc, _RELEASED)
            queue.extend(kept)
            if not link.ended:
                link.flush_settlements()
        return bool(queue)

    async def _receive(self, link: ReceiverLink, drain: bool) -> None:
        """Receive until the count, the timeout, the --duration or (`drain`) the end of
        what is there.

        With `plan.drain` on a peer whose drain is broken (`quirks`), the end is what the
        node held when the link started, or a quiet period (`QuietDrain`)."""
        plan = self.plan
        quiet = plan.drain and not drain
        remaining = None if plan.count is None else plan.count - self.s.written
        if remaining is not None and remaining <= 0:
            return
        quiet_drain = await QuietDrain.start(link, plan.timeout) if quiet else None

        def wanted(n: int) -> int:
            """At most `n`, and no more than --count still wants with the messages this
            link is to pass over if they come (`_to_pass_over`): a credit of what --count
            wants alone would pass over them a window at a time. No more than a drain
            that cannot drain still takes."""
            if quiet_drain is not None:
                n = quiet_drain.credit(n)
            if remaining is None:
                return n
            again = len(self.in_doubt) if self.in_doubt is not None else 0
            return min(n, remaining + self._to_pass_over() + again)

        window = self.credit
        credit = CreditWindow(link)

        def grant() -> None:
            want = wanted(window)
            if want:
                link.flow(want, drain=drain)
            credit.granted(want)
            if self.in_doubt is not None:
                self.in_doubt.granted()

        def grant_next() -> None:
            """`get`'s idle: the next window, once this one is used up (the messages taken
            with it dealt with). Topping up earlier would keep the pipe fuller, but RabbitMQ
            3.10 then overshoots the credit (its queue has already handed messages on under
            the old grant). While draining, a new flow starts the next drain."""
            nonlocal window
            if credit.used_up:
                window = self._regrown(window)
                grant()

        grant()
        i = self.s.received
        wait = min(plan.timeout or QUIET, QUIET) if quiet else plan.timeout
        if drain and wait is None:
            wait = DRAIN_BOUND  # (a sender that never answers a drain: not for ever)
        # (written messages' settlements go out before a wait for the output: held through
        # it, they would reach the peer only once the output takes more)
        write_many = _write_many(self.sink, link.flush_settlements)
        latency = self.s.latency
        # states made once; whether the delivery is held to be given back at the end
        outcomes = [(o.name, o.state(), self.hold_back and o.gives_back) for o in plan.outcomes]
        counts = self.s.outcomes
        simple = (len(outcomes) == 1 and not plan.copy and not plan.settle_second
                  and not outcomes[0][2] and not plan.txn_size and not plan.rate)
        only_name, only_state, _ = outcomes[0] if outcomes else ("", None, False)

        def idle() -> None:
            if self._duration_over():
                raise _DurationOver
            grant_next()

        while remaining is None or remaining > 0:
            if quiet_drain is not None and quiet_drain.over:
                self.s.drained = True
                return
            # (paced: over too when the next message's turn would come at the end or
            # later, as send's --duration 2 --rate 10 is 20 messages)
            if ((self._duration_over() or (plan.rate and self._duration_over(self.next_turn)))
                    and not self._presettled_left(link)):
                return
            if plan.txn_size and self.txns.txn_id is None:
                # Declared before a message is taken: from taking it to settling it in
                # the transaction there is no wait an interrupt could stop it at, written
                # and not settled.
                await self.txns.declare(link.client)
            try:
                inc = await link.get(wait, idle=idle)
            except _DurationOver:
                continue  # (its pre-settled messages first, if any came meanwhile)
            if inc is None:
                if quiet_drain is not None and quiet_drain.cut_short:
                    self.s.timed_out = True
                    self._warn(quiet_drain.warning())
                elif link.drained or quiet:
                    self.s.drained = True
                else:
                    self.s.timed_out = True
                    if drain and not plan.copy:  # (browse says it in its own words)
                        self.s.drain_unanswered = wait
                return
            # Everything the engine already has ready, in one go: written out and flushed
            # before any of it is settled.
            batch = [inc]
            if link.queue and not plan.rate:  # (paced: one at a time)
                limit = None if remaining is None else remaining - 1
                if plan.txn_size:
                    # no more than the open transaction takes: the discharge of a full
                    # one is awaited with nothing written and not settled
                    room = max(self.txns.room - 1, 0)
                    limit = room if limit is None else min(limit, room)
                batch += link.take(limit)
            if quiet_drain is not None:
                quiet_drain.taken(len(batch))
            if link.ended:
                # They came with the end of the link: pre-settled ones exist only here and
                # are written; unsettled ones cannot be settled any more and the peer
                # delivers them again, so writing them would only make duplicates.
                kept = [b for b in batch if b.settled]
                self.left_with_end += len(batch) - len(kept)
                batch = kept
                if not batch:
                    continue  # the next `get` raises the end
            if self._to_pass_over():
                batch = self._not_again(batch)
                if not batch:
                    continue
            self._say_passed_over()  # (where the output goes on)
            # the places in `batch` of messages that come again: written, not counted
            again = self._redelivered(batch)
            if plan.rate and not self.s.duration_over:
                self.taken = batch  # (a pre-settled one lost if the run stops now: counted)
                await self._pace(link)
                self.taken = []
            # send --timestamp's stamps: the latency runs to now, when the message is
            # handed to be written (one clock read for the run, only if one is stamped); a
            # redelivery's would be the drop's, not the path's
            stamps = [(j, ts) for j, inc in enumerate(batch)
                      if STAMP_NEEDLE in (p := inc.delivery.payload)
                      and (ts := stamp_of(p)) is not None and j not in again]
            arrived = time.time_ns() if stamps else 0
            failed: OutputError | WriteStopped | None = None
            try:
                await write_many(batch)
            except (OutputError, WriteStopped) as e:
                # Written part way (or stopped while the output took nothing): what was
                # written whole is settled below, then the run stops; the rest goes back to
                # the peer with the link, but for pre-settled messages, which are lost
                # (counted and said).
                failed = e
                if isinstance(e, WriteStopped) and e.cut:
                    self._warn(cut_short(batch[e.written]))
                self._lost_unwritten(batch[e.written:])
                batch = batch[:e.written]
                again = {j for j in again if j < e.written}
            for j, ts in stamps:  # of the messages written
                if j < len(batch):
                    latency.add_ns(arrived, ts)
            if self.s.sequence is not None:  # what the output holds: the messages written
                for inc in batch:
                    self.s.sequence.add(inc.payload)
            if self.shown_before is not None:
                self.shown_before.add(batch)
            k = len(batch)
            if simple:
                # The usual run (one outcome, no copy or mode second): counted and settled
                # as a whole, the same as one at a time below.
                ds = []
                for inc in batch:
                    d = inc.delivery
                    if d.presettled or d.sender_settled:
                        self.s.presettled += 1
                    else:
                        ds.append(d)
                new = k - len(again)
                self.s.received += new
                self.s.redelivered += k - new
                if remaining is not None:
                    remaining -= new
                if ds:
                    link.settle_many(ds, only_state)
                    counts[only_name] = counts.get(only_name, 0) + len(ds)
                    i += len(ds)
                    if self.in_doubt is not None:
                        self.in_doubt.settled(inc for inc in batch if not inc.settled)
                if failed is not None:
                    raise failed
                continue
            for j, inc in enumerate(batch):
                if j in again:
                    self.s.redelivered += 1
                else:
                    self.s.received += 1
                    if remaining is not None:
                        remaining -= 1
                if inc.settled:
                    self.s.presettled += 1
                elif plan.copy:
                    self._hold(inc)
                elif plan.txn_size:
                    name, state, _ = outcomes[i % len(outcomes)]
                    i += 1
                    tstate = await self.txns.state_for(link.client, inc, name, state)
                    self._settle(link, inc, tstate)
                    if self.txns.full and not isinstance(failed, WriteStopped):
                        # (stopped: the interrupt's discharge does it, bounded)
                        await self._discharge(link)
                else:
                    name, state, hold = outcomes[i % len(outcomes)]
                    i += 1
                    if hold:
                        self.given_back.append((inc, state, _identity(inc)))
                        inc.delivery.drop_payload()
                    else:
                        self._settle(link, inc, state)
                        if self.in_doubt is not None:
                            self.in_doubt.settled((inc,))
                    counts[name] = counts.get(name, 0) + 1
            if failed is not None:
                raise failed

    def _settle(self, link: ReceiverLink, inc: Incoming, state: Any) -> None:
        if self.plan.settle_second:
            link.client._engine_dispose(inc.delivery, state, False)
            link.client._schedule_flush()
            self.second_mode_waits.add(inc.delivery)
        else:
            link.settle(inc, state)

    def _give_back(self, link: ReceiverLink) -> None:
        """Settle what was held to give back (written and counted already)."""
        if not self.given_back:
            return
        if link.credit and not link.ended:
            link.flow(0)  # no credit left for the peer to send them straight back
        for inc, state, _ in self.given_back:
            self._settle(link, inc, state)
        self.given_back.clear()

    def _hold(self, inc: Incoming) -> None:
        """Copy mode: keep the delivery, to release at the end."""
        self.held.append(inc)
        if self.plan.check_copy:
            self.held_idents.append(_identity(inc))
        inc.delivery.drop_payload()

    def _not_again(self, batch: list[Incoming]) -> list[Incoming]:
        """`batch` without the messages that were written and now come again: those are
        held unwritten and released at the end. They went back with a lost link, or (copy
        mode) were shown before a reconnect, the new link starting again at the head of the
        node. A message is known by its bare message (`_identity`); one that went back
        and whose header says no link acquired it before (first-acquirer) is new, whatever
        its bytes."""
        keep = []
        shown_before = self.shown_before
        for inc in batch:
            if shown_before is not None and shown_before.passes_over(inc):
                if not inc.settled:
                    self._hold(inc)
                continue
            if not inc.settled and self.gone_back:
                ident = _identity(inc)
                if ident in self.gone_back and not _first_acquired(inc):
                    self.gone_back.take(ident)
                    self.given_back.append((inc, _RELEASED, ident))
                    inc.delivery.drop_payload()
                    self.s.seen_again += 1
                    continue
            keep.append(inc)
        return keep

    def _redelivered(self, batch: list[Incoming]) -> set[int]:
        """The places in `batch` of messages settled as a connection was lost, come again:
        written again, since the peer held them (nothing it holds is settled unwritten),
        but not counted as new ones (amqpcli/net/redelivery.py)."""
        in_doubt = self.in_doubt
        if in_doubt is None or not len(in_doubt):
            return set()
        return {j for j, inc in enumerate(batch) if in_doubt.redelivered(inc)}

    def _to_pass_over(self) -> int:
        """How many messages this link passes over if they come: given back before (a lost
        link, a discharge), or (copy mode) shown before a reconnect."""
        n = len(self.gone_back)
        if self.shown_before is not None:
            n += len(self.shown_before.to_pass)
        return n

    def _say_passed_over(self) -> None:
        """Say how many messages shown before a reconnect this link passed over."""
        notice = self.shown_before.notice() if self.shown_before is not None else None
        if notice is not None:
            self._warn(notice)

    async def _settle_second_mode(self, link: ReceiverLink) -> None:
        """Mode second: our outcomes hold once the sender has settled them."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.plan.timeout or 30.0)
        for d in self.second_mode_waits.deliveries:
            while not _peer_settled(d):
                await link.wait_changed(deadline, "the peer did not settle our outcomes (settle-mode second)")
        self.second_mode_waits.clear()

    async def _check_copy(self, client: Client, seen: int, at_count: bool = False) -> None:
        """A second copy link while the first holds its deliveries (see the module doc).

        The peer copied if the second link sees again the messages the first showed (a
        multiset of `_identity`); others it sees are not copies: messages added meanwhile,
        or (`at_count`: the first link stopped at --count, not at the end) the next
        ones of a peer that consumed. Those next ones may equal a message held, so with
        --count messages held twice (the same bare message) make the check impossible: it
        is then reported as not done."""
        listed = Identities()
        listed.add(self.held_idents)
        if at_count and len(listed.counts) < len(self.held_idents):
            self.s.copy_unchecked = "identical messages: cannot tell a copy from the next ones"
            self._warn("whether the peer copied or consumed was not checked: with "
                       "--count, identical messages cannot be told apart")
            return
        probe = await client.open_receiver(
            self.plan.address, source=source_for(self.plan), name=None,
        )
        want = seen
        drain = client.peer.drain_works
        if drain:
            wait = self.plan.timeout or DRAIN_BOUND
        else:
            # No more than the node holds now: what a producer adds meanwhile is not waited
            # for.
            holds = (await QuietDrain.start(probe, self.plan.timeout)).to_come
            if holds is not None:
                want = min(want, holds)
            wait = QUIET
        got: list[Incoming] = []
        credit = CreditWindow(probe)

        def ask() -> None:
            """For what is still to be seen: at first, and again when the credit is used
            up with fewer (a delivery aborted)."""
            n = want - len(got)
            probe.flow(n, drain=drain)
            credit.granted(n)

        def ask_again() -> None:
            if credit.used_up:
                ask()

        ask()
        slow = False  # the drain not answered in time: the second listing did not finish
        while len(got) < want:
            inc = await probe.get(wait, idle=ask_again)
            if inc is None:
                slow = drain and not probe.drained
                break
            got.append(inc)
        idents = [_identity(inc) for inc in got]
        released = c.Released()
        for inc in got:
            if not inc.settled:
                probe.settle(inc, released)
        await probe.close()
        copied = sum(listed.take(ident) for ident in idents)
        if copied < seen and slow and copied == len(idents):
            # everything it showed again was a copy; the rest did not come in time, which
            # says nothing of consuming (a peer slow to list a long queue)
            self.s.copy_unchecked = (f"a second browse saw {copied} of the {seen} messages "
                                     f"again before the peer stopped answering for {wait:g}s")
            self._warn(f"whether the peer copied or consumed was not checked: "
                       f"{self.s.copy_unchecked}")
        elif copied < seen:
            self.s.copy_consumed = seen - copied
            others = len(idents) - copied
            also = (f" (and {others} other{'' if others == 1 else 's'} it had not listed, "
                    f"which are not copies)" if others else "")
            self._warn(
                f"the peer accepted distribution-mode copy but a second browse saw "
                f"{copied} of the {seen} messages listed{also}: it delivered them as consumed, "
                f"not copied. They are released back to it now (their order and delivery "
                f"counts may change)."
            )
        else:
            self.s.copy_consumed = 0
