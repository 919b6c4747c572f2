"""The broker logic: a plain object driven by engine events, no sockets, no clock.

`Broker` holds the nodes (`store.Nodes`) and one `PeerConnection` per connection, each
wrapping a `PeerEndpoint`. Whoever runs the connections (the asyncio server in
`server.py`, a test, the TUI) feeds each connection's engine events to
`Broker.handle(conn, events)` and writes out what the endpoints then hold; `wake` is
called when a connection other than the one being handled got something to send
(a message for its receiver), so the runner can flush it.

Messages from senders wait for an outcome. `decide(incoming)` chooses it: the default
(`Policy`) follows the fault options (accept unless a `--reject/--release/--modify`
rule picks the message) and may ask for a delay; a decider that returns None leaves the
message pending until someone calls `Broker.settle_incoming(incoming, outcome)` — how an
interactive front end settles by hand.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import Described, Symbol
from amqpcli.engine import (
    ConnectionClosed,
    ConnectionOpened,
    CreditChanged,
    Delivery,
    DeliverySettled,
    DeliveryUpdated,
    Link,
    LinkAttached,
    LinkDetached,
    MessageReceived,
    SessionEnded,
    TransportClosed,
    Violation,
    outcome_of,
)
from amqpcli.engine.delivery import FINAL, Phase
from amqpcli.engine.endpoint import FrameTooLarge
from amqpcli.errors import cut_middle
from amqpcli.selector import Selector, SelectorError, compile_selector

from .endpoint import PeerEndpoint
from .faults import Faults
from .store import Entry, Nodes, Queue, is_topic

__all__ = ["Broker", "Decision", "Incoming", "PeerConnection", "Policy"]

_ACCEPTED = c.Accepted()
SELECTOR_SYMBOL = "apache.org:selector-filter:string"
SELECTOR_CODE = 0x0000468C00000004
DEFAULT_CREDIT = 500
LIFETIME_POLICY = Symbol("lifetime-policy")
# Part 3 §3.5.10-13, by descriptor code; delete-on-close is the default
_LIFETIMES = {
    0x2B: c.DeleteOnClose,
    0x2C: c.DeleteOnNoLinks,
    0x2D: c.DeleteOnNoMessages,
    0x2E: c.DeleteOnNoLinksOrMessages,
}
_LIFETIME_BY_NAME = {cls.NAME: cls for cls in _LIFETIMES.values()}


@dataclass
class Decision:
    """What to answer a sender: an outcome, after `delay` seconds."""

    outcome: Any
    delay: float = 0.0


@dataclass(eq=False)
class Incoming:
    """A message from a sender, waiting for its outcome."""

    conn: PeerConnection
    delivery: Delivery
    link: InLink
    number: int  # its number on the link, from 1
    address: str | None  # where it goes (the target, or `to` through the relay)
    txn_id: bytes | None
    settled: bool = False

    @property
    def payload(self) -> bytes:
        return bytes(self.delivery.payload)

    @property
    def message_format(self) -> int:
        return int(self.delivery.message_format or 0)


Decider = Callable[[Incoming], Decision | None]


class Policy:
    """The default decider: the fault options (accept when none applies)."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults

    def __call__(self, inc: Incoming) -> Decision:
        return Decision(self.faults.outcome_for(inc.number), self.faults.settle_delay)


@dataclass(eq=False)
class InLink:
    """A link on which a client sends to us."""

    link: Link
    address: str | None  # None: anonymous relay (route by the message's `to`)
    capabilities: Any = None
    coordinator: bool = False
    node: Queue | None = None  # the queue its address names (none: topic, relay)
    conn: PeerConnection | None = None
    count: int = 0  # messages received
    settled: int = 0  # outcomes given
    # the client broke the link's rules (a transfer beyond its credit, a message over its
    # max-message-size): the link is being closed, and what comes on it from that
    # transfer on is not taken
    refused: str | None = None


@dataclass(eq=False)
class OutLink:
    """A link on which we send to a client: a consumer of one queue."""

    conn: PeerConnection
    link: Link
    queue: Queue
    copy: bool
    selector: Selector | None
    key: tuple[str, str]  # (container-id, link name): who undeliverable-here excludes
    durable: bool = False  # a durable subscription: kept when detached, not closed
    cursor: int = 0  # copy: the last seq sent
    sent: int = 0
    presettled: bool = False
    # the receiver's max-message-size (Part 2 §2.7.3): larger messages are not for it
    limit: int | None = None
    last_available: int | None = None
    # the entries (by seq) the limit kept from it, logged once each
    too_large: set[int] = field(default_factory=set)

    def held(self) -> int:
        """What the node holds for this receiver now (its `available`)."""
        return self.queue.count_for(self.key, self.selector,
                                    self.cursor if self.copy else None, self.limit)


@dataclass(eq=False)
class Txn:
    txn_id: bytes
    conn: PeerConnection
    coordinator: Link
    # (address, capabilities, payload, message-format) of each message sent in it
    sends: list[tuple[str | None, Any, bytes, int]] = field(default_factory=list)
    outcomes: list[tuple[Entry, Any, tuple[str, str]]] = field(default_factory=list)
    # acquired in the transaction (Part 4 §4.4.3): any outcome for these waits for it
    acquired: dict[Delivery, tuple[Entry, OutLink]] = field(default_factory=dict)


class PeerConnection:
    """One client connection: its endpoint and what the broker knows about its links."""

    def __init__(self, broker: Broker, endpoint: PeerEndpoint, name: str, peer: str) -> None:
        self.broker = broker
        self.endpoint = endpoint
        self.name = name
        self.peer = peer  # "host:port" of the client
        self.container_id = ""
        self.user: str | None = None
        self.in_links: dict[Link, InLink] = {}
        self.out_links: dict[Link, OutLink] = {}
        self.sent: dict[Delivery, tuple[Entry | None, OutLink]] = {}
        self.pending: dict[Delivery, Incoming] = {}
        self.delivered = 0  # deliveries both ways, for --close-after
        self.gone = False
        self.accepted: list[Delivery] = []  # accepted, disposition not yet written
        endpoint.on_credit = self._on_credit
        endpoint.after_credit = self._after_credit
        endpoint.available_for = self._available
        endpoint.before_write = self.flush_outcomes

    def flush_outcomes(self) -> None:
        """Write the accepted outcomes decided since the last write, ranges sharing a frame."""
        if self.accepted:
            ds, self.accepted = self.accepted, []
            if self.open:
                self.endpoint.dispose(ds, _ACCEPTED, settled=True)

    def __repr__(self) -> str:
        return f"<PeerConnection {self.name} {self.peer}>"

    @property
    def open(self) -> bool:
        ep = self.endpoint
        return not self.gone and ep.local not in ep.connection.close and not ep.failed

    def _on_credit(self, link: Link) -> None:
        out = self.out_links.get(link)
        if out is not None:
            self.broker._feed(out)

    def _available(self, link: Link) -> int | None:
        """What the node still holds for a receiver: the `available` of every flow the
        engine sends on the link (a drain's answer, an echo)."""
        out = self.out_links.get(link)
        if out is None:
            return None
        n = out.held()
        out.last_available = n
        return n

    def _after_credit(self, link: Link, ev: CreditChanged) -> None:
        """After a receiver's flow was handled: if what the node holds for it changed and
        no flow of the engine said so (a drain's answer, an echo, both carrying
        `available`), a flow says it. Not while a drain waits for deliveries held back by
        the session window: its answer will."""
        out = self.out_links.get(link)
        if out is None or link.state != "attached" or link.drain:
            return
        n = out.held()
        if n != out.last_available:
            out.last_available = n
            self.endpoint.flow(link, available=n)


class Broker:
    def __init__(
        self,
        faults: Faults | None = None,
        *,
        decide: Decider | None = None,
        call_later: Callable[[float, Callable[[], None]], Any] | None = None,
        log: Callable[[str], None] | None = None,
        wake: Callable[[PeerConnection], None] | None = None,
    ) -> None:
        self.faults = faults or Faults()
        self.decide: Decider = decide or Policy(self.faults)
        self.call_later = call_later
        self.log = log or (lambda _text: None)
        self.wake = wake or (lambda _conn: None)
        self.nodes = Nodes()
        self.connections: list[PeerConnection] = []
        self.txns: dict[bytes, Txn] = {}
        self._txn_ids = itertools.count(1)
        self._handling: PeerConnection | None = None

    # --- connections -------------------------------------------------------------------

    def connect(self, endpoint: PeerEndpoint, name: str, peer: str = "") -> PeerConnection:
        conn = PeerConnection(self, endpoint, name, peer)
        self.connections.append(conn)
        return conn

    def handle(self, conn: PeerConnection, events: list[Any]) -> None:
        """Engine events of `conn` (any order the engine produced them in)."""
        outer = self._handling
        self._handling = conn
        try:
            for e in events:
                self._event(conn, e)
        finally:
            self._handling = outer

    def _touch(self, conn: PeerConnection) -> None:
        if conn is not self._handling and not conn.gone:
            self.wake(conn)

    def disconnect(self, conn: PeerConnection) -> None:
        """The transport is gone: whatever the connection held goes back to its queues."""
        if conn.gone:
            return
        conn.gone = True
        for out in list(conn.out_links.values()):
            self._drop_out_link(out, closed=False)
        for inl in list(conn.in_links.values()):
            self._unlink_in(inl)
        conn.in_links.clear()
        for d, (entry, out) in list(conn.sent.items()):
            if entry is not None and not out.copy:
                entry.queue.release(entry)
        conn.sent.clear()
        conn.pending.clear()
        for txn in [t for t in self.txns.values() if t.conn is conn]:
            self._end_txn(txn, commit=False)
        if conn in self.connections:
            self.connections.remove(conn)
        for q in list(self.nodes.queues.values()) + [
                q for subs in self.nodes.topics.values() for q in subs]:
            self._dispatch(q)

    # --- events ---------------------------------------------------------------------------

    def _event(self, conn: PeerConnection, e: Any) -> None:
        ep = conn.endpoint
        cls = e.__class__
        if cls is MessageReceived:
            self._on_message(conn, e.delivery)
        elif cls is DeliveryUpdated or cls is DeliverySettled:
            d = e.delivery
            if d.sender == ep.local and d in conn.sent:
                self._on_outcome(conn, d)
            elif d.sender == ep.remote and not d.payload_ready:  # a message never whole
                if cls is DeliveryUpdated and e.entry.kind == "abort":
                    self.log(f"{conn.name} {d.link.name!r}: the client aborted delivery "
                             f"{d.delivery_id} ({d.size} bytes dropped)")
                elif cls is DeliverySettled and d.timeline[-1].kind == "abandon":
                    self.log(f"{conn.name} {d.link.name!r}: delivery {d.delivery_id} dropped "
                             f"unfinished ({d.size} bytes came: {d.timeline[-1].detail})")
        elif cls is Violation:
            if e.side == ep.remote:  # (the endpoint answers it: close, end or detach)
                self.log(f"{conn.name} {e}")
                inl = conn.in_links.get(e.link) if e.scope == "link" else None
                if inl is not None and inl.refused is None and ep.local in e.link.detach:
                    # (the endpoint closed the link for it; a transfer that came before
                    # our attach answered is taken, as if sent with the attach)
                    inl.refused = str(e.condition)
        elif cls is SessionEnded:
            if e.side == ep.local and e.error is not None:
                self.log(f"{conn.name} ending a session" + _why(e.error))
        elif cls is LinkAttached:
            if e.side == ep.remote and e.link.initiator == ep.remote:
                self._on_attach(conn, e.link)
        elif cls is LinkDetached:
            if e.side == ep.remote:
                self._on_detach(conn, e.link, bool(e.closed), e.error)
        elif cls is ConnectionOpened:
            if e.side == ep.remote:
                conn.container_id = str(e.open.container_id)
                who = f" as {conn.user!r}" if conn.user else ""
                self.log(f"{conn.name} open from {conn.peer}{who} container-id "
                         f"{conn.container_id!r}")
        elif cls is ConnectionClosed:
            if e.side == ep.remote:
                self.log(f"{conn.name} closed by the client" + _why(e.error))
            elif e.error is not None:
                self.log(f"{conn.name} closing" + _why(e.error))
        elif cls is TransportClosed:
            if ep.cut_short is not None:  # the client went away mid-frame: no violation
                self.log(f"{conn.name} {ep.cut_short}")
            self.disconnect(conn)

    # --- attach ---------------------------------------------------------------------------

    def _on_attach(self, conn: PeerConnection, link: Link) -> None:
        if not conn.open:
            return  # our close went out (an attach in the same write as what ended it)
        ep = conn.endpoint
        req = link.attach[ep.remote]
        if link.session.attached_before(link, ep.remote):
            # The client attached the name again and has not detached the link we just
            # answered (it would have come with the attach): two links of one name
            # (Part 2 §2.6.1). A detach it sends later finds the session ended.
            text = f"link name {link.name!r} is already attached on this session"
            ep.end(link.session, c.Error(condition=Symbol("amqp:not-allowed"),
                                         description=text))
            return
        self._steal(conn, link)
        if link.sender == ep.remote:
            self._attach_in(conn, link, req)
        else:
            self._attach_out(conn, link, req)

    def _steal(self, conn: PeerConnection, link: Link) -> None:
        """A link is named uniquely between two containers (Part 2 §2.6.1): attached again
        from another connection, the new attach takes it over and the old one is detached
        with amqp:link:stolen (not closed: a durable subscription carries on)."""
        sends = link.sender == conn.endpoint.remote
        err = c.Error(condition=Symbol("amqp:link:stolen"),
                      description=f"link {link.name!r} attached again by {conn.name}")
        for other in self.connections:
            if other is conn or other.container_id != conn.container_id:
                continue
            links: dict[Link, Any] = other.in_links if sends else other.out_links
            for old in [x for x in links if str(x.name) == str(link.name)]:
                self._end_link(other, old, err, closed=False)
                self._on_detach(other, old, False, None)

    def _refuse(self, conn: PeerConnection, link: Link, condition: str, text: str) -> None:
        """Refuse the client's `link`, echoing its terminus if that fits its max-frame-size
        (which the client chose, as it chose its terminus), else with null termini. Not
        even that fits (a link name too long for it): FrameTooLarge, which closes the
        connection (`Server`)."""
        ep = conn.endpoint
        error = c.Error(condition=Symbol(condition), description=text)
        try:
            ep.refuse_link(link, error)
        except FrameTooLarge:
            ep.refuse_link(link, error, echo=False)
        self.log(f"{conn.name} refused link {link.name!r}: {condition}: {text}")

    def _accept(self, conn: PeerConnection, link: Link, **answer: Any) -> bool:
        """Answer the client's `link` with our attach (`answer`: see `accept_link`); if
        that does not fit the client's max-frame-size (it echoes the client's termini,
        which may hold more than the frame does), refuse the link with
        amqp:frame-size-too-small instead and say False: the caller undoes what it set
        up for the link."""
        try:
            conn.endpoint.accept_link(link, **answer)
        except FrameTooLarge as e:
            self._refuse(conn, link, "amqp:frame-size-too-small",
                         f"the attach answering it would be {e.size} bytes, over the "
                         f"client's max-frame-size {e.limit}")
            return False
        return True

    def _attach_in(self, conn: PeerConnection, link: Link, req: Any) -> None:
        ep = conn.endpoint
        tgt = req.target
        if isinstance(tgt, c.Coordinator):
            conn.in_links[link] = InLink(link, None, coordinator=True)
            if not self._accept(conn, link):
                del conn.in_links[link]
                return
            self.log(f"{conn.name} attach {link.name!r}: transaction coordinator")
            ep.flow(link, DEFAULT_CREDIT)
            return
        address = getattr(tgt, "address", None)
        address = str(address) if address is not None else None
        caps = getattr(tgt, "capabilities", None)
        if self.faults.refuses(address):
            self._refuse(conn, link, "amqp:not-found", f"no node {address!r} (--refuse)")
            return
        target = tgt
        node = None
        dynamic = ""
        if isinstance(tgt, c.Target) and tgt.dynamic:
            node = self.nodes.temporary(_lifetime(tgt.dynamic_node_properties),
                                        str(link.name))
            address = node.name
            target = c.Target(**tgt.fields())
            target.address = address
            target.dynamic_node_properties = _node_properties(node)
            dynamic = f" (dynamic, {node.lifetime})"
        elif address is not None and not is_topic(address, caps):
            node = self.nodes.queue(address)
            if node is None:
                self._refuse(conn, link, "amqp:not-found", f"no node {address!r}")
                return
        inl = InLink(link, address, caps, node=node, conn=conn)
        conn.in_links[link] = inl
        if node is not None:
            node.senders.append(inl)
            if dynamic:
                node.creator = inl
        if not self._accept(conn, link, target=target):
            del conn.in_links[link]
            self._unlink_in(inl)
            return
        where = repr(address) + dynamic if address is not None else "anonymous relay (by 'to')"
        self.log(f"{conn.name} attach {link.name!r}: client sends to {where}")
        credit = DEFAULT_CREDIT if self.faults.credit is None else self.faults.credit
        if credit:
            ep.flow(link, credit)

    def _attach_out(self, conn: PeerConnection, link: Link, req: Any) -> None:
        src = req.source
        if not isinstance(src, c.Source):
            self._refuse(conn, link, "amqp:invalid-field", "a receiving link needs a source")
            return
        address = str(src.address) if src.address is not None else None
        selector, filters, error = _selector(src.filter)
        if error is not None:
            self._refuse(conn, link, "amqp:invalid-field", error)
            return
        if self.faults.refuses(address):
            self._refuse(conn, link, "amqp:not-found", f"no node {address!r} (--refuse)")
            return
        key = (conn.container_id, str(link.name))
        granted = c.Source(**src.fields())
        granted.filter = filters or None
        copy = str(src.distribution_mode or "") == "copy"
        durable = resumed = False
        created: Queue | None = None  # a node this link's attach creates
        if src.dynamic:
            q = created = self.nodes.temporary(_lifetime(src.dynamic_node_properties),
                                               str(link.name))
            granted.address = q.name
            granted.dynamic_node_properties = _node_properties(q)
        elif address is None:
            self._refuse(conn, link, "amqp:invalid-field", "the source has no address")
            return
        elif is_topic(address, src.capabilities):
            durable = bool(src.durable) and str(src.expiry_policy or "") == "never"
            q, resumed = self.nodes.subscribe(address, key if durable else None)
            if not durable:
                q.lifetime = c.DeleteOnClose.NAME  # a subscription lives with its link
                created = q
        else:
            found = self.nodes.queue(address)
            if found is None:
                self._refuse(conn, link, "amqp:not-found", f"no node {address!r}")
                return
            q = found
        if copy:
            granted.distribution_mode = Symbol("copy")
        if link in conn.out_links:  # a second attach on the same link: start over
            self._drop_out_link(conn.out_links[link], closed=True)
        mms = req.get("max_message_size")
        out = OutLink(conn, link, q, copy, selector, key,
                      durable=durable, presettled=req.get("snd_settle_mode") == 1,
                      limit=int(mms) if mms else None)
        conn.out_links[link] = out
        q.consumers.append(out)
        if created is not None:
            q.creator = out
        # (Deliveries of an earlier attachment are not resumed: what they held was
        # released when it detached and is sent again.)
        answered = (self._accept(conn, link, source=granted, unsettled=None) if req.unsettled
                    else self._accept(conn, link, source=granted))
        if not answered:
            # (a durable subscription this attach made goes; one it resumed stays)
            self._drop_out_link(out, closed=not resumed)
            return
        mode = "copy" if copy else "move"
        extra = f", dynamic, {q.lifetime}" if src.dynamic else ""
        extra += f", selector {selector.text!r}" if selector else ""
        extra += f", max-message-size {out.limit}" if out.limit else ""
        if durable:
            extra += ", durable subscription " + ("resumed" if resumed else "created")
        self.log(f"{conn.name} attach {link.name!r}: client receives from "
                 f"{granted.address!r} ({mode}{extra})")
        # A flow the client sent with its attach was acted on by accept_link (PeerEndpoint).

    # --- detach ---------------------------------------------------------------------------

    def _on_detach(self, conn: PeerConnection, link: Link, closed: bool, error: Any) -> None:
        inl = conn.in_links.pop(link, None)
        if inl is not None:
            for d, inc in list(conn.pending.items()):
                if inc.link is inl:
                    del conn.pending[d]
            if inl.coordinator:
                for txn in [t for t in self.txns.values() if t.coordinator is link]:
                    self._end_txn(txn, commit=False)
            self._unlink_in(inl)
            self.log(f"{conn.name} detach {link.name!r}" + ("" if closed else " (kept)")
                     + _why(error))
            return
        out = conn.out_links.get(link)
        if out is not None:
            self._drop_out_link(out, closed)
            kept = " (subscription kept)" if out.durable and not closed else ""
            self.log(f"{conn.name} detach {link.name!r}{kept}" + _why(error))

    def _drop_out_link(self, out: OutLink, closed: bool) -> None:
        conn = out.conn
        conn.out_links.pop(out.link, None)
        q = out.queue
        if out in q.consumers:
            q.consumers.remove(out)
        for d, (entry, o) in list(conn.sent.items()):
            if o is out:
                del conn.sent[d]
                if entry is not None and not out.copy:
                    q.release(entry)
        if q.creator is out:
            q.creator = None
        if out.durable and closed:
            self.nodes.delete(q)
        else:
            self._dispatch(q)  # to the other consumers; and the node may have ended

    def _unlink_in(self, inl: InLink) -> None:
        """A sender's link to a queue is gone."""
        q = inl.node
        if q is None:
            return
        if inl in q.senders:
            q.senders.remove(inl)
        if q.creator is inl:
            q.creator = None
        self._expire(q)

    # --- node lifetimes (Part 3 §3.5.9-13) -------------------------------------------------

    def _expire(self, q: Queue) -> None:
        """Delete `q` if its lifetime policy says it has ended. Called whenever a link
        leaves a queue or messages leave it (through `_dispatch` and `_feed`)."""
        if q.lifetime is None or q.deleted:
            return
        links = bool(q.consumers or q.senders)
        ended = {
            c.DeleteOnClose.NAME: q.creator is None,
            c.DeleteOnNoLinks.NAME: not links,
            c.DeleteOnNoMessages.NAME: q.creator is None and not q.entries,
            c.DeleteOnNoLinksOrMessages.NAME: not links and not q.entries,
        }[q.lifetime]
        if not ended:
            return
        self.nodes.delete(q)
        if q.kind == "temporary":
            self.log(f"node {q.name!r} deleted ({q.lifetime})")
        # the links still attached to it have nothing left to send to or take from
        err = c.Error(condition=Symbol("amqp:resource-deleted"),
                      description=f"node {q.name!r} was deleted ({q.lifetime})")
        for out in list(q.consumers):
            q.consumers.remove(out)
            out.conn.out_links.pop(out.link, None)
            for d in [d for d, (_, o) in out.conn.sent.items() if o is out]:
                del out.conn.sent[d]
            self._end_link(out.conn, out.link, err)
        for inl in list(q.senders):
            q.senders.remove(inl)
            conn = inl.conn
            if conn is None:
                continue
            conn.in_links.pop(inl.link, None)
            for d in [d for d, inc in conn.pending.items() if inc.link is inl]:
                del conn.pending[d]
            self._end_link(conn, inl.link, err)

    def _end_link(self, conn: PeerConnection, link: Link, error: Any,
                  closed: bool = True) -> None:
        if conn.open and link.state == "attached":
            self.log(f"{conn.name} detaching {link.name!r}" + _why(error))
            conn.endpoint.detach(link, closed=closed, error=error)
            self._touch(conn)

    # --- sending to receivers ---------------------------------------------------------

    def _room(self, out: OutLink) -> int:
        link = out.link
        ep = out.conn.endpoint
        if not out.conn.open or link.state != "attached":
            return 0
        return link.link_credit - len(ep.outgoing(link))

    def _feed(self, out: OutLink) -> int:
        """Send `out` what it may have, up to its credit; returns how many."""
        n = 0
        q = out.queue
        while self._room(out) > 0:
            e = self._next(out)
            if e is None:
                break
            n += 1
            if self._send_one(out, e):
                break
        self._expire(q)
        return n

    def _next(self, out: OutLink) -> Entry | None:
        """The next entry `out` may have: a copy link's next one, or one to acquire."""
        q = out.queue
        if out.limit is None:
            if out.copy:
                return q.browse(out.cursor, out.selector)
            return q.take(out.key, out.selector)
        big: list[Entry] = []
        if out.copy:
            e = q.browse(out.cursor, out.selector, out.limit, big)
        else:
            e = q.take(out.key, out.selector, out.limit, big)
        for skipped in big:
            self._too_large(out, skipped)
        return e

    def _too_large(self, out: OutLink, e: Entry) -> None:
        """A message the receiver's max-message-size keeps from it (Part 2 §2.7.3: a
        larger one must not be sent to it; it would be amqp:link:message-size-exceeded).
        It stays in the queue for a receiver that can take it, and smaller ones behind it
        still go to this one. Logged once per message and link: a receiver that gets
        nothing while the queue holds something says why."""
        if e.seq in out.too_large:
            return
        out.too_large.add(e.seq)
        self.log(f"{out.conn.name} {out.link.name!r} <- {out.queue.name!r}: a message of "
                 f"{len(e.payload)} bytes is over the link's max-message-size {out.limit}: "
                 f"not sent to it, kept in the queue")

    def _dispatch(self, q: Queue) -> None:
        """Hand ready entries to the queue's consumers, taking turns."""
        while q.consumers and q.entries:
            progress = False
            consumers = q.consumers
            start = q.turn % len(consumers)
            for i in range(len(consumers)):
                out = consumers[(start + i) % len(consumers)]
                if self._room(out) <= 0:
                    continue
                e = self._next(out)
                if e is None:
                    continue
                self._send_one(out, e)
                q.turn = (start + i + 1) % max(1, len(q.consumers))
                progress = True
                break
            if not progress:
                break
        self._expire(q)

    def _send_one(self, out: OutLink, e: Entry) -> bool:
        """Send one entry; True when a delivery limit ended the link or connection."""
        ep = out.conn.endpoint
        q = out.queue
        # transactional acquisition (Part 4 §4.4.3): the receiver's credit names a txn
        txn = self.txns.get(out.link.txn_id) if out.link.txn_id is not None else None
        d = ep.send(out.link, e.payload, settled=out.presettled,
                    message_format=e.message_format,
                    txn_id=txn.txn_id if txn is not None else None)
        if txn is not None and not out.copy and not out.presettled:
            txn.acquired[d] = (e, out)
        if out.copy:
            out.cursor = e.seq
            if not out.presettled:
                out.conn.sent[d] = (None, out)
        elif out.presettled:
            q.remove(e)
        else:
            q.acquire(e)
            out.conn.sent[d] = (e, out)
        out.sent += 1
        out.conn.delivered += 1
        self._touch(out.conn)
        return self._limits(out.conn, out.link, out.sent)

    def _on_outcome(self, conn: PeerConnection, d: Delivery) -> None:
        """A receiver's disposition (or the delivery's end) for something we sent."""
        state = d.receiver_state
        outcome = outcome_of(state) if state is not None else None
        final = d.phase in FINAL
        if outcome is None and not final:
            return
        entry, out = conn.sent.pop(d)
        ep = conn.endpoint
        if not final and not d.sender_settled and conn.open and out.link.state == "attached":
            ep.settle(d, state)  # the receiver waits for us (rcv-settle-mode second)
            self._touch(conn)
        if outcome is None:
            outcome = c.Released() if d.phase == Phase.ABANDONED else c.Accepted()
        name = _outcome_name(outcome)
        if isinstance(state, c.TransactionalState):
            txn = self.txns.get(bytes(state.txn_id))
        else:  # a plain outcome for a message acquired in a transaction waits for it too
            txn = next((t for t in self.txns.values() if d in t.acquired), None)
        if txn is not None and entry is not None and not out.copy:
            txn.outcomes.append((entry, outcome, out.key))
            self.log(f"{conn.name} {out.link.name!r} <- {out.queue.name!r}: "
                     f"delivery {d.delivery_id} {name} in transaction {txn.txn_id!r}")
            return
        if d.phase != Phase.ABANDONED:
            self.log(f"{conn.name} {out.link.name!r} <- {out.queue.name!r}: "
                     f"delivery {d.delivery_id} {name}" + (" (copy)" if out.copy else ""))
        if entry is not None and not out.copy:
            self._apply(entry, outcome, out.key)  # (logged first: it may end the node)

    def _apply(self, entry: Entry, outcome: Any, key: tuple[str, str]) -> None:
        q = entry.queue
        if isinstance(outcome, (c.Accepted, c.Rejected)):
            q.remove(entry)
        elif isinstance(outcome, c.Modified):
            entry.modify(bool(outcome.delivery_failed), outcome.message_annotations)
            q.release(entry, key if outcome.undeliverable_here else None)
        else:
            q.release(entry)
        self._dispatch(q)

    # --- receiving from senders --------------------------------------------------------

    def _on_message(self, conn: PeerConnection, d: Delivery) -> None:
        inl = conn.in_links.get(d.link)
        if inl is None:
            return
        if inl.coordinator:
            self._on_txn_request(conn, d)
            self._replenish(conn, inl.link, DEFAULT_CREDIT)
            return
        inl.count += 1
        if inl.refused is not None:
            self.log(f"{conn.name} {inl.link.name!r} -> {inl.address!r}: message {inl.count} "
                     f"not taken ({inl.refused}: the link is closed for it)")
            return
        address = inl.address
        if address is None:
            to = _message_to(d)
            if to is None:
                why = ("anonymous relay: the message has no 'to' address" if d.message_format == 0
                       else f"anonymous relay: a message of format {d.message_format} has "
                            "no properties to read a 'to' address from")
                self._unroutable(conn, inl, d, why)
                return
            if not is_topic(to, inl.capabilities) and self.nodes.queue(to) is None:
                self._unroutable(conn, inl, d, f"anonymous relay: no node {to!r}")
                return
            address = to
        inc = Incoming(conn, d, inl, inl.count, address, d.txn_id)
        self._replenish(conn, inl.link)
        if d.presettled or d.sender_settled:
            self._store(inc)  # at most once: nothing to answer
            inl.settled += 1
            conn.delivered += 1
            self._limits(conn, inl.link, inl.settled)
            return
        conn.pending[d] = inc
        decision = self.decide(inc)
        if decision is None:
            return  # decided later, by hand
        if decision.delay > 0 and self.call_later is not None:
            self.call_later(decision.delay, lambda: self.settle_incoming(inc, decision.outcome))
        else:
            self.settle_incoming(inc, decision.outcome)

    def _unroutable(self, conn: PeerConnection, inl: InLink, d: Delivery, text: str) -> None:
        conn.endpoint.reject(d, c.Error(condition=Symbol("amqp:not-found"), description=text))
        self._touch(conn)
        self.log(f"{conn.name} {inl.link.name!r} -> None: message {inl.count} "
                 f"rejected (amqp:not-found: {text})")
        self._replenish(conn, inl.link)

    def _replenish(self, conn: PeerConnection, link: Link, window: int | None = None) -> None:
        """Top the sender's credit up to the window once half of it is used (`window`:
        the coordinator's, which --credit does not set)."""
        credit = window or (DEFAULT_CREDIT if self.faults.credit is None else self.faults.credit)
        if credit and conn.open and link.state == "attached" and link.link_credit <= credit // 2:
            conn.endpoint.flow(link, credit)

    @property
    def pending(self) -> list[Incoming]:
        """Messages from senders still waiting for an outcome."""
        return [i for conn in self.connections for i in conn.pending.values()]

    def settle_incoming(self, inc: Incoming, outcome: Any) -> None:
        """Answer a sender's message with `outcome` (an Accepted, Rejected, … composite)."""
        conn = inc.conn
        if inc.settled or conn.pending.pop(inc.delivery, None) is None:
            return
        inc.settled = True
        link = inc.link.link
        if not conn.open or link.state != "attached":
            # the link went before the outcome: the sender never hears, and nothing is
            # kept (the message is in doubt for it)
            self.log(f"{conn.name} {link.name!r} -> {inc.address!r}: message {inc.number} "
                     "not taken (its link was closed before it was settled)")
            return
        name = _outcome_name(outcome)
        if isinstance(outcome, c.Accepted):
            if inc.txn_id is not None:
                txn = self.txns.get(inc.txn_id)
                if txn is None:
                    outcome = c.Rejected(error=c.Error(
                        condition=Symbol("amqp:transaction:unknown-id"),
                        description=f"no transaction {inc.txn_id!r}"))
                    name = "rejected (unknown transaction)"
                else:
                    txn.sends.append((inc.address, inc.link.capabilities, inc.payload,
                                      inc.message_format))
                    name = f"accepted in transaction {inc.txn_id!r}"
            else:
                self._store(inc)
        if inc.txn_id is not None:
            conn.endpoint.dispose(inc.delivery, c.TransactionalState(
                txn_id=inc.txn_id, outcome=outcome), settled=True)
        elif isinstance(outcome, c.Accepted):
            conn.accepted.append(inc.delivery)  # written with the next batch of bytes
        else:
            conn.endpoint.dispose(inc.delivery, outcome, settled=True)
        self._touch(conn)
        self.log(f"{conn.name} {link.name!r} -> {inc.address!r}: message {inc.number} {name}")
        inc.link.settled += 1
        conn.delivered += 1
        self._limits(conn, link, inc.link.settled)

    def _store(self, inc: Incoming) -> None:
        self._put(inc.address, inc.link.capabilities, inc.payload, inc.message_format)

    def _put(self, address: str | None, caps: Any, payload: bytes, message_format: int) -> None:
        if address is None:
            return
        for q in self.nodes.destinations(address, caps):
            q.put(payload, message_format)
            self._dispatch(q)

    # --- --detach-after / --close-after ---------------------------------------------------

    def _limits(self, conn: PeerConnection, link: Link, on_link: int) -> bool:
        """Apply the delivery limits; True when the link or connection was ended."""
        f = self.faults
        ep = conn.endpoint
        if f.close_after is None and f.detach_after is None:
            return False
        conn.flush_outcomes()  # what was decided goes out before the link or connection ends
        if f.close_after is not None and conn.delivered >= f.close_after and conn.open:
            self.log(f"{conn.name} closing after {conn.delivered} deliveries (--close-after)")
            ep.close(c.Error(condition=Symbol("amqp:connection:forced"),
                             description=f"closed after {f.close_after} deliveries "
                                         f"(--close-after)"))
            self._touch(conn)
            return True
        if f.detach_after is not None and on_link >= f.detach_after and (
                link.state == "attached"):
            self.log(f"{conn.name} detaching {link.name!r} after {on_link} deliveries "
                     f"(--detach-after)")
            ep.detach(link, closed=True, error=c.Error(
                condition=Symbol("amqp:link:detach-forced"),
                description=f"detached after {f.detach_after} deliveries (--detach-after)"))
            self._touch(conn)
            return True
        return False

    # --- transactions ---------------------------------------------------------------------

    def _on_txn_request(self, conn: PeerConnection, d: Delivery) -> None:
        ep = conn.endpoint
        req = d.txn_request
        if isinstance(req, c.Declare):
            txn_id = f"txn-{next(self._txn_ids)}".encode()
            self.txns[txn_id] = Txn(txn_id, conn, d.link)
            ep.settle(d, c.Declared(txn_id=txn_id))
            self.log(f"{conn.name} declared transaction {txn_id!r}")
        elif isinstance(req, c.Discharge):
            txn_id = bytes(req.txn_id) if req.txn_id is not None else b""
            txn = self.txns.get(txn_id)
            if txn is None:
                ep.reject(d, c.Error(condition=Symbol("amqp:transaction:unknown-id"),
                                     description=f"no transaction {txn_id!r}"))
                self.log(f"{conn.name} discharge of unknown transaction {txn_id!r}")
                return
            commit = not req.fail
            self._end_txn(txn, commit)
            ep.accept(d)
        else:
            ep.reject(d, c.Error(condition=Symbol("amqp:decode-error"),
                                 description="a coordinator takes declare and discharge"))
        self._touch(conn)

    def _end_txn(self, txn: Txn, commit: bool) -> None:
        self.txns.pop(txn.txn_id, None)
        if commit:
            for address, caps, payload, message_format in txn.sends:
                self._put(address, caps, payload, message_format)
            for entry, outcome, key in txn.outcomes:
                self._apply(entry, outcome, key)
        else:
            for d, (entry, out) in txn.acquired.items():
                out.conn.sent.pop(d, None)  # its outcome, if any comes, no longer counts
                entry.queue.release(entry)
            for entry, _, _ in txn.outcomes:
                entry.queue.release(entry)
            for q in {e.queue for e, _ in txn.acquired.values()} | {
                    e.queue for e, _, _ in txn.outcomes}:
                self._dispatch(q)
        what = "committed" if commit else "rolled back"
        acquired = f", {len(txn.acquired)} acquired" if txn.acquired else ""
        self.log(f"{txn.conn.name} transaction {txn.txn_id!r} {what} "
                 f"({len(txn.sends)} sends, {len(txn.outcomes)} outcomes{acquired})")


# --- helpers ----------------------------------------------------------------------------

def _selector(filters: Any) -> tuple[Selector | None, dict[Any, Any], str | None]:
    """(selector, the filters in force, error): the selector filter under any key."""
    if not isinstance(filters, dict):
        return None, {}, None
    for k, v in filters.items():
        if isinstance(v, Described) and (str(v.descriptor) == SELECTOR_SYMBOL or (
                isinstance(v.descriptor, int) and int(v.descriptor) == SELECTOR_CODE)):
            if not isinstance(v.value, str):
                return None, {}, "the selector filter's value must be a string"
            try:
                return compile_selector(v.value), {k: v}, None
            except SelectorError as e:
                return None, {}, f"bad selector {cut_middle(repr(v.value))}: {e}"
    return None, {}, None


def _lifetime(properties: Any) -> str:
    """The lifetime-policy name asked for in dynamic-node-properties (delete-on-close when
    none or one we do not know)."""
    policy = properties.get(LIFETIME_POLICY) if isinstance(properties, dict) else None
    name = getattr(policy, "NAME", None)
    if isinstance(policy, Described) and isinstance(policy.descriptor, int):
        cls = _LIFETIMES.get(int(policy.descriptor))
        name = cls.NAME if cls is not None else None
    return name if name in _LIFETIME_BY_NAME else c.DeleteOnClose.NAME


def _node_properties(q: Queue) -> dict[Any, Any]:
    """The dynamic node's actual properties, for the attach reply (Part 3 §3.5.3-4)."""
    assert q.lifetime is not None
    return {LIFETIME_POLICY: _LIFETIME_BY_NAME[q.lifetime]()}


def _message_to(d: Delivery) -> str | None:
    """The message's properties.to, where the relay sends it: only a message of the AMQP
    format (0) has one; a vendor's bytes are not read as an AMQP message (they may decode
    as one)."""
    if d.message_format != 0:
        return None
    try:
        props = d.message().properties
    except ValueError:
        return None
    to = props.to if props is not None else None
    return str(to) if to is not None else None


def _outcome_name(outcome: Any) -> str:
    if isinstance(outcome, c.Rejected) and outcome.error is not None:
        return f"rejected ({outcome.error.condition})"
    if isinstance(outcome, c.Modified):
        flags = [n for n, v in (("delivery-failed", outcome.delivery_failed),
                                ("undeliverable-here", outcome.undeliverable_here)) if v]
        return "modified" + (f" ({', '.join(flags)})" if flags else "")
    return str(getattr(outcome, "NAME", type(outcome).__name__))


def _why(error: Any) -> str:
    if error is None:
        return ""
    desc = f": {error.description}" if error.description else ""
    return f" ({error.condition}{desc})"

