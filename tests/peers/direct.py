"""Direct peers: a receiver that records every message it gets (raw bytes included) and
answers with the outcomes a test chooses, and a sender that offers a fixed list of messages
to every link that attaches and records the outcomes it sees."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from proton import Delivery, Link, Message

from tests.peers import outcomes as oc
from tests.peers import sections
from tests.peers.net import PeerHandler, PeerThread, echo_source, echo_target, refuse


@dataclass(frozen=True)
class LinkInfo:
    """A link as the client attached it."""

    name: str
    container_id: str
    source: str | None
    target: str | None
    snd_settle_mode: int  # Link.SND_UNSETTLED, SND_SETTLED, SND_MIXED
    rcv_settle_mode: int  # Link.RCV_FIRST, RCV_SECOND
    properties: dict[Any, Any] | None


def _link_info(link: Any) -> LinkInfo:
    props = link.remote_properties
    return LinkInfo(
        name=str(link.name),
        container_id=str(link.connection.remote_container),
        source=link.remote_source.address,
        target=link.remote_target.address,
        snd_settle_mode=int(link.remote_snd_settle_mode),
        rcv_settle_mode=int(link.remote_rcv_settle_mode),
        properties=sections.owned(dict(props)) if props else None,
    )


@dataclass(eq=False)
class Received:
    """One message as the receiver got it."""

    index: int  # arrival order over all links, from 0
    link: str
    tag: str
    raw: bytes  # the transfer payload, every section, exactly as sent
    presettled: bool  # the sender settled it in the transfer
    state: oc.Observed  # the state the transfer carried (e.g. transactional)
    outcome: oc.Outcome | None = None  # what the receiver answered (None: presettled)
    _message: Message | None = None

    @property
    def message(self) -> Message:
        """The decoded message, kept here: proton's binary values are views into it."""
        if self._message is None:
            self._message = sections.decode(self.raw)
        return self._message

    @property
    def bare(self) -> bytes:
        """The bare message bytes (properties, application-properties, body)."""
        return sections.bare(self.raw)


OutcomeRule = oc.Outcome | Callable[[Received], oc.Outcome]


class DirectReceiverHandler(PeerHandler):
    def __init__(
        self,
        outcome: OutcomeRule,
        credit: int,
        replenish: bool,
        rcv_settle_mode: int | None,
    ) -> None:
        super().__init__()
        self.outcome = outcome
        self.credit = credit
        self.replenish = replenish
        self.rcv_settle_mode = rcv_settle_mode
        self.received: list[Received] = []
        self.links: list[LinkInfo] = []
        self.open_links: list[Any] = []
        self.held: dict[int, Any] = {}  # index -> delivery waiting for decide()
        self._partial: dict[Any, bytearray] = {}

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        self.links.append(_link_info(link))
        if link.is_sender:
            refuse(link, "amqp:not-implemented", "this peer only receives")
            return
        echo_source(link)
        echo_target(link)
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = (
            link.remote_rcv_settle_mode if self.rcv_settle_mode is None else self.rcv_settle_mode
        )
        link.open()
        self.open_links.append(link)
        if self.credit:
            link.flow(self.credit)

    def on_link_remote_close(self, event: Any) -> None:
        if event.link in self.open_links:
            self.open_links.remove(event.link)

    def on_link_remote_detach(self, event: Any) -> None:
        self.on_link_remote_close(event)
        event.link.detach()

    def on_delivery(self, event: Any) -> None:
        dlv = event.delivery
        link = dlv.link
        if not link.is_receiver:
            return
        if not dlv.readable:
            # rcv-settle-mode second: the sender settled after our outcome; now we settle.
            if dlv.settled and dlv not in self.held.values():
                dlv.settle()
            return
        buf = self._partial.setdefault(dlv, bytearray())
        if dlv.aborted:
            self._partial.pop(dlv, None)
            link.advance()
            dlv.settle()
            return
        while chunk := link.recv(dlv.pending or 1):
            buf += chunk
        if dlv.partial:
            return
        raw = bytes(self._partial.pop(dlv))
        link.advance()
        rec = Received(
            index=len(self.received),
            link=str(link.name),
            tag=str(dlv.tag),
            raw=raw,
            presettled=bool(dlv.settled),
            state=oc.observed(dlv),
        )
        self.received.append(rec)
        if rec.presettled:
            dlv.settle()
        else:
            outcome = self.outcome(rec) if callable(self.outcome) else self.outcome
            rec.outcome = outcome
            if isinstance(outcome, oc.Hold):
                self.held[rec.index] = dlv
            else:
                oc.apply(dlv, outcome, settle=link.rcv_settle_mode == Link.RCV_FIRST)
        if self.replenish:
            link.flow(1)

    def decide(self, index: int, outcome: oc.Outcome) -> None:
        dlv = self.held.pop(index)
        self.received[index].outcome = outcome
        oc.apply(dlv, outcome, settle=dlv.link.rcv_settle_mode == Link.RCV_FIRST)

    def grant(self, credit: int) -> None:
        for link in self.open_links:
            link.flow(credit)


class DirectReceiver(PeerThread):
    """Accepts sender links on any address and records each message.

    ``outcome``: an outcome for every message, or a function ``Received -> Outcome``;
    ``Hold()`` leaves a delivery unsettled until ``decide(index, outcome)``.
    ``credit``: credit granted on attach; ``replenish``: grant one more per message (off:
    the test grants with ``grant(n)``). ``rcv_settle_mode``: ``Link.RCV_FIRST`` or
    ``Link.RCV_SECOND`` (default: what the client asks for).
    """

    handler: DirectReceiverHandler

    def __init__(
        self,
        *,
        outcome: OutcomeRule | None = None,
        credit: int = 10,
        replenish: bool = True,
        rcv_settle_mode: int | None = None,
        **kwargs: Any,
    ) -> None:
        handler = DirectReceiverHandler(outcome or oc.Accept(), credit, replenish, rcv_settle_mode)
        super().__init__(handler, **kwargs)

    def messages(self) -> list[Received]:
        return self.call(lambda: list(self.handler.received))

    def wait_for_messages(self, n: int, timeout: float = 30) -> list[Received]:
        """Wait until at least ``n`` messages arrived; return all of them."""
        return self.wait_for(
            lambda: list(self.handler.received) if len(self.handler.received) >= n else None,
            timeout,
        )

    def links(self) -> list[LinkInfo]:
        return self.call(lambda: list(self.handler.links))

    def grant(self, credit: int) -> None:
        """Grant ``credit`` more on every open link."""
        self.call(lambda: self.handler.grant(credit))

    def decide(self, index: int, outcome: oc.Outcome) -> None:
        """Send the outcome for a held message."""
        self.call(lambda: self.handler.decide(index, outcome))


@dataclass(frozen=True)
class SentOutcome:
    index: int  # position in the sender's message list
    link: str
    tag: str
    state: oc.Observed


@dataclass(eq=False)
class _OutLink:
    link: Any
    number: int = 0  # 0 for the first link attached, 1 for the second…
    next: int = 0
    by_tag: dict[str, int] = field(default_factory=dict)


class DirectSenderHandler(PeerHandler):
    def __init__(self, messages: Sequence[Message | bytes], presettle: bool | None,
                 answer_drain: bool | int = True, shown: Sequence[int | None] = ()) -> None:
        super().__init__()
        self.payloads = [m if isinstance(m, bytes) else bytes(m.encode()) for m in messages]
        self.presettle = presettle
        self.answer_drain = answer_drain
        self.shown = shown
        self.outcomes: list[SentOutcome] = []
        self.links: list[LinkInfo] = []
        self._out: dict[Any, _OutLink] = {}
        self._tags = itertools.count(1)

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        self.links.append(_link_info(link))
        if link.is_receiver:
            refuse(link, "amqp:not-implemented", "this peer only sends")
            return
        echo_source(link)
        echo_target(link)
        if self.presettle is None:
            link.snd_settle_mode = link.remote_snd_settle_mode
        else:
            link.snd_settle_mode = Link.SND_SETTLED if self.presettle else Link.SND_UNSETTLED
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        link.open()
        self._out[link] = _OutLink(link, number=len(self._out))

    def on_link_flow(self, event: Any) -> None:
        out = self._out.get(event.link)
        if out is None:
            return
        link = out.link
        limit = self.shown[out.number] if out.number < len(self.shown) else None
        end = len(self.payloads) if limit is None else min(limit, len(self.payloads))
        while link.credit > 0 and out.next < end:
            tag = str(next(self._tags))
            dlv = link.delivery(tag)
            link.send(self.payloads[out.next])
            link.advance()
            out.by_tag[tag] = out.next
            out.next += 1
            if link.snd_settle_mode == Link.SND_SETTLED:
                dlv.settle()
        answer = (self.answer_drain if isinstance(self.answer_drain, bool)
                  else out.number < self.answer_drain)
        if link.drain_mode and link.credit > 0 and answer:
            link.drained()

    def on_delivery(self, event: Any) -> None:
        dlv = event.delivery
        out = self._out.get(dlv.link)
        if out is None or not dlv.updated:
            return
        tag = str(dlv.tag)
        state = oc.observed(dlv)
        self.outcomes.append(SentOutcome(out.by_tag.get(tag, -1), str(dlv.link.name), tag, state))
        if dlv.settled or dlv.remote_state in (
            Delivery.ACCEPTED,
            Delivery.REJECTED,
            Delivery.RELEASED,
            Delivery.MODIFIED,
        ):
            dlv.settle()

    def on_link_remote_detach(self, event: Any) -> None:
        event.link.detach()


class DirectSender(PeerThread):
    """Sends ``messages`` (proton ``Message`` or pre-encoded bytes), in order, on every link
    a client attaches to receive, as its credit allows; records each outcome it sees.
    ``presettle``: True sends settled, False unsettled, None (default) as the client asks.
    ``answer_drain=False``: a drain is never answered (the credit left stays open); a number
    N: only the first N links' drains are. ``shown=[None, 3]``: the first link gets every
    message, the second only the first 3 (a peer slow to list them)."""

    handler: DirectSenderHandler

    def __init__(
        self,
        messages: Sequence[Message | bytes],
        *,
        presettle: bool | None = None,
        answer_drain: bool | int = True,
        shown: Sequence[int | None] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(DirectSenderHandler(messages, presettle, answer_drain, shown), **kwargs)

    def outcomes(self) -> list[SentOutcome]:
        return self.call(lambda: list(self.handler.outcomes))

    def wait_for_outcomes(self, n: int, timeout: float = 30) -> list[SentOutcome]:
        return self.wait_for(
            lambda: list(self.handler.outcomes) if len(self.handler.outcomes) >= n else None,
            timeout,
        )

    def links(self) -> list[LinkInfo]:
        return self.call(lambda: list(self.handler.links))
