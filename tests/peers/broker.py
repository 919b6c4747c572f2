"""A small AMQP 1.0 broker for tests, on python-qpid-proton.

Queues are created on demand by address; ``/topic/NAME`` and ``topic://NAME`` (or the
``topic`` capability) are topics. Receivers consume (distribution-mode move) or browse
(copy), optionally with a JMS selector. Dynamic sources and targets get temporary queues.
A receiver on a topic whose source has durability unsettled-state (or configuration) and
expiry-policy never is a durable subscription, named by container-id and link name: it
outlives a detach and is removed by a detach with closed=true. A coordinator target gives
local transactions. Storage is in ``queues``, selectors in ``selector``, transactions in
``transactions``; this module is the protocol side.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from proton import Condition, Delivery, Described, Link, Terminus, symbol

from tests.peers import outcomes as oc
from tests.peers.net import PeerHandler, PeerThread, Timer, echo_source, echo_target, refuse
from tests.peers.queues import Consumer, Entry, Queue, Registry, is_topic
from tests.peers.sections import DECODE_ERRORS, decode
from tests.peers.selector import SelectorError, parse
from tests.peers.transactions import Coordinator, Transaction, settle_entry

SELECTOR_DESCRIPTORS = {"apache.org:selector-filter:string", 0x0000468C00000004}
DECLARE = {"amqp:declare:list", 0x31}
DISCHARGE = {"amqp:discharge:list", 0x32}


def _descriptor_key(desc: Any) -> Any:
    return str(desc) if isinstance(desc, str) else int(desc)


def data_object(data: Any) -> Any:
    """The value held by a proton ``Data`` (a terminus's filter or capabilities), or None."""
    if data is None:
        return None
    data.rewind()
    if data.next() is None:
        return None
    return data.get_object()


def _capabilities(terminus: Terminus) -> list[str]:
    caps = data_object(terminus.capabilities)
    if caps is None:
        return []
    if isinstance(caps, str):
        return [str(caps)]
    return [str(c) for c in caps]


@dataclass(eq=False)
class OutLink:
    """A link on which the broker sends: the client receives from ``queue``."""

    link: Any
    queue: Queue
    consumer: Consumer
    temporary: bool  # the queue goes when the link goes
    durable: bool  # a durable subscription: kept on detach, removed on close
    unsettled: dict[str, Entry] = field(default_factory=dict)
    served: int = 0  # when it last got a message, for taking turns


@dataclass(eq=False)
class InLink:
    """A link on which the broker receives: the client sends to ``address``."""

    link: Any
    address: str | None  # None: anonymous relay, each message goes to its ``to``
    capabilities: list[str]
    coordinator: bool = False
    temporary: Queue | None = None
    partial: bytearray = field(default_factory=bytearray)


class BrokerHandler(PeerHandler):
    def __init__(self, credit_window: int = 100, discharge_delay: float = 0.0) -> None:
        super().__init__()
        self.credit_window = credit_window
        self.discharge_delay = discharge_delay  # seconds before a discharge is acted on
        self.discharges = 0  # discharge requests received
        self.registry = Registry()
        self.coordinator = Coordinator()
        self.out_links: dict[Any, OutLink] = {}
        self.in_links: dict[Any, InLink] = {}
        self.refused: list[tuple[str, str]] = []  # (link name, error condition)
        self._tags = itertools.count(1)
        self._turns = itertools.count(1)
        self._consumer_ids = itertools.count(1)

    # --- connections --------------------------------------------------------------------

    def on_connection_remote_open(self, event: Any) -> None:
        # Runs before the endpoint handler opens the connection, so the open carries these.
        super().on_connection_remote_open(event)
        event.connection.offered_capabilities = [symbol("ANONYMOUS-RELAY")]

    def on_connection_remote_close(self, event: Any) -> None:
        self._forget_connection(event.connection)

    def on_transport_closed(self, event: Any) -> None:
        if event.connection is not None:
            self._forget_connection(event.connection)

    def _forget_connection(self, conn: Any) -> None:
        # Links the client never closed end as if detached: durable subscriptions stay.
        for link in [k for k in self.out_links if k.connection == conn]:
            self._link_gone(link, closed=False)
        for link in [k for k in self.in_links if k.connection == conn]:
            self._link_gone(link, closed=False)

    # --- attach -------------------------------------------------------------------------

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        if link.is_sender:
            self._attach_out(link)
        else:
            self._attach_in(link)

    def _refuse(self, link: Any, name: str, description: str) -> None:
        refuse(link, name, description)
        self.refused.append((link.name, name))

    def _attach_out(self, link: Any) -> None:
        src = link.remote_source
        caps = _capabilities(src)
        selector = None
        accepted_filters: dict[Any, Any] = {}
        filters = data_object(src.filter)
        for key, value in (filters or {}).items():
            if isinstance(value, Described) and (
                _descriptor_key(value.descriptor) in SELECTOR_DESCRIPTORS
            ):
                try:
                    selector = parse(str(value.value))
                except SelectorError as exc:
                    self._refuse(link, "amqp:invalid-field", f"invalid selector: {exc}")
                    return
                accepted_filters[key] = value
        if src.dynamic:
            queue = self.registry.temporary()
            temporary, durable = True, False
        elif not src.address:
            self._refuse(link, "amqp:invalid-field", "a source address or dynamic is required")
            return
        elif is_topic(src.address, caps):
            durable = (
                src.durability != Terminus.NONDURABLE
                and src.expiry_policy == Terminus.EXPIRE_NEVER
            )
            key = (str(link.connection.remote_container), str(link.name)) if durable else None
            queue = self.registry.subscribe(src.address, key)
            temporary = not durable
        else:
            queue = self.registry.queue(src.address)
            temporary = durable = False
        browse = src.distribution_mode == Terminus.DIST_MODE_COPY
        link.source.copy(src)
        if src.dynamic:
            link.source.address = queue.name
        link.source.distribution_mode = (
            Terminus.DIST_MODE_COPY if browse else Terminus.DIST_MODE_MOVE
        )
        # Echo only the filters in force, so the client can see what was applied.
        link.source.filter.clear()
        if accepted_filters:
            link.source.filter.put_object(accepted_filters)
        echo_target(link)
        link.open()
        consumer = Consumer(id=next(self._consumer_ids), browse=browse, selector=selector)
        self.out_links[link] = OutLink(link, queue, consumer, temporary, durable)
        self._dispatch(queue)

    def _attach_in(self, link: Any) -> None:
        tgt = link.remote_target
        echo_source(link)
        echo_target(link)
        record = InLink(link, tgt.address, _capabilities(tgt))
        if tgt.type == Terminus.COORDINATOR:
            record.coordinator = True
        elif tgt.dynamic:
            record.temporary = self.registry.temporary()
            record.address = record.temporary.name
            link.target.address = record.address
        link.open()
        self.in_links[link] = record
        link.flow(self.credit_window)

    # --- detach -------------------------------------------------------------------------

    def on_link_remote_close(self, event: Any) -> None:
        self._link_gone(event.link, closed=True)

    def on_link_remote_detach(self, event: Any) -> None:
        self._link_gone(event.link, closed=False)
        event.link.detach()

    def _link_gone(self, link: Any, closed: bool) -> None:
        out = self.out_links.pop(link, None)
        if out is not None:
            out.queue.release_all(out.consumer.id)
            if out.temporary or (out.durable and closed):
                self.registry.delete(out.queue)
            else:
                self._dispatch(out.queue)
            return
        rec = self.in_links.pop(link, None)
        if rec is None:
            return
        if rec.coordinator:
            for q in self.coordinator.abandon(link):
                self._dispatch(q)
        if rec.temporary is not None:
            self.registry.delete(rec.temporary)

    # --- flow and sending ---------------------------------------------------------------

    def on_link_flow(self, event: Any) -> None:
        out = self.out_links.get(event.link)
        if out is not None:
            self._dispatch(out.queue)

    def _consumers(self, queue: Queue) -> list[OutLink]:
        """The queue's receivers, the one served longest ago first."""
        return sorted(
            (o for o in self.out_links.values() if o.queue is queue), key=lambda o: o.served
        )

    def _dispatch(self, queue: Queue) -> None:
        """Hand out available messages to the queue's receivers with credit, one at a time
        in turn, then answer drains that could not be filled."""
        outs = self._consumers(queue)
        progress = True
        while progress:
            progress = False
            for out in outs:
                if out.link.credit <= 0 or out.link.state & Link.LOCAL_CLOSED:
                    continue
                entry = queue.next_for(out.consumer)
                if entry is None:
                    continue
                self._send(out, entry)
                progress = True
        for out in outs:
            if out.link.drain_mode and out.link.credit > 0:
                out.link.drained()

    def _send(self, out: OutLink, entry: Entry) -> None:
        link = out.link
        tag = str(next(self._tags))
        dlv = link.delivery(tag)
        link.send(entry.outgoing())
        link.advance()
        out.served = next(self._turns)
        out.queue.take(entry, out.consumer)
        if link.snd_settle_mode == Link.SND_SETTLED:
            dlv.settle()
            if not out.consumer.browse:
                out.queue.remove(entry)  # at most once: gone when sent
        else:
            out.unsettled[tag] = entry

    # --- deliveries ---------------------------------------------------------------------

    def on_delivery(self, event: Any) -> None:
        dlv = event.delivery
        if dlv.link.is_receiver:
            self._incoming(dlv)
        else:
            self._outcome(dlv)

    def _incoming(self, dlv: Delivery) -> None:
        link = dlv.link
        rec = self.in_links.get(link)
        if rec is None:
            return
        if dlv.readable:
            if dlv.aborted:
                rec.partial.clear()
                link.advance()
                dlv.settle()
                return
            while True:
                chunk = link.recv(dlv.pending or 1)
                if not chunk:
                    break
                rec.partial += chunk
            if dlv.partial:
                return
            raw = bytes(rec.partial)
            rec.partial.clear()
            link.advance()
            self._top_up(link)
            if rec.coordinator:
                self._control(rec, dlv, raw)
            else:
                self._publish(rec, dlv, raw)
        elif dlv.settled:
            dlv.settle()  # rcv-settle-mode second: the client settled after our outcome

    def _top_up(self, link: Any) -> None:
        if link.credit < self.credit_window // 2:
            link.flow(self.credit_window - link.credit)

    def _finish(self, dlv: Delivery, state: int) -> None:
        """Send our state for an incoming delivery and settle as the settle mode says."""
        if dlv.settled:
            dlv.settle()
            return
        dlv.update(state)
        if dlv.link.rcv_settle_mode != Link.RCV_SECOND:
            dlv.settle()

    def _reject(self, dlv: Delivery, name: str, description: str) -> None:
        dlv.local.condition = Condition(name, description)
        self._finish(dlv, Delivery.REJECTED)

    def _publish(self, rec: InLink, dlv: Delivery, raw: bytes) -> None:
        txn: Transaction | None = None
        if dlv.remote_state == oc.TRANSACTIONAL_STATE:
            data: Any = dlv.remote.data or [b""]
            txn_id = bytes(data[0])
            txn = self.coordinator.get(txn_id)
            if txn is None:
                self._reject(dlv, "amqp:transaction:unknown-id", f"no transaction {txn_id!r}")
                return
        address = rec.address
        if address is None:
            try:
                address = decode(raw).address
            except DECODE_ERRORS as exc:
                self._reject(dlv, "amqp:decode-error", str(exc))
                return
            if not address:
                self._reject(dlv, "amqp:not-found", "anonymous relay needs the message's 'to'")
                return
        queues = self.registry.route(address, rec.capabilities)
        if txn is not None:
            txn.sends.append((queues, raw))
            state: Any = oc.transactional(txn.id, oc.Accept())
            dlv.local.data = state
            self._finish(dlv, oc.TRANSACTIONAL_STATE)
            return
        for q in queues:
            q.put(raw)
        self._finish(dlv, Delivery.ACCEPTED)
        for q in queues:
            self._dispatch(q)

    def _control(self, rec: InLink, dlv: Delivery, raw: bytes) -> None:
        try:
            msg = decode(raw)  # keep it alive: proton's binary values are views into it
            body = msg.body
        except DECODE_ERRORS as exc:
            self._reject(dlv, "amqp:decode-error", str(exc))
            return
        kind = _descriptor_key(body.descriptor) if isinstance(body, Described) else None
        value: Any = body.value if isinstance(body, Described) else None
        fields = list(value or []) if isinstance(value, list) else []
        if kind in DECLARE:
            txn = self.coordinator.declare(rec.link)
            declared: Any = [txn.id]
            dlv.local.data = declared
            self._finish(dlv, oc.DECLARED)
        elif kind in DISCHARGE:
            self.discharges += 1
            fields += [None, None]
            # (copied now: proton's binary values are views into a message not kept)
            txn_id, fail = bytes(fields[0] or b""), bool(fields[1])
            if self.discharge_delay and self.container is not None:
                self.container.schedule(self.discharge_delay, Timer(
                    lambda: self._discharge(dlv, txn_id, fail)))
            else:
                self._discharge(dlv, txn_id, fail)
        else:
            self._reject(dlv, "amqp:not-implemented", "coordinator takes declare and discharge")

    def _discharge(self, dlv: Delivery, txn_id: bytes, fail: bool) -> None:
        if dlv.link not in self.in_links or dlv.settled:
            return  # (a delayed discharge whose link went meanwhile: abandoned, rolled back)
        found = self.coordinator.get(txn_id)
        if found is None:
            self._reject(dlv, "amqp:transaction:unknown-id", "unknown transaction")
            return
        touched = self.coordinator.discharge(found, fail=fail)
        self._finish(dlv, Delivery.ACCEPTED)
        for q in touched:
            if q.name in self.registry.queues:
                self._dispatch(q)

    def _outcome(self, dlv: Delivery) -> None:
        """The client's outcome for a message we sent it."""
        out = self.out_links.get(dlv.link)
        entry = out.unsettled.get(dlv.tag) if out is not None else None
        if out is None or entry is None:
            if dlv.settled:
                dlv.settle()
            return
        state = dlv.remote_state
        outcome: oc.Outcome | None
        if state == oc.TRANSACTIONAL_STATE:
            data = dlv.remote.data or []
            txn = self.coordinator.get(bytes(data[0])) if data else None
            outcome = oc.from_described(data[1]) if len(data) > 1 else None
            if txn is not None and outcome is not None and not out.consumer.browse:
                del out.unsettled[dlv.tag]
                self.coordinator.hold(txn, out.queue, entry, outcome)
                dlv.local.data = data
                dlv.update(oc.TRANSACTIONAL_STATE)
                dlv.settle()
            return
        if state == Delivery.ACCEPTED:
            outcome = oc.Accept()
        elif state == Delivery.REJECTED:
            outcome = oc.Reject()
        elif state == Delivery.RELEASED:
            outcome = oc.Release()
        elif state == Delivery.MODIFIED:
            remote = dlv.remote
            ann = remote.annotations
            outcome = oc.Modify(
                bool(remote.failed),
                bool(remote.undeliverable),
                {str(k): v for k, v in ann.items()} if ann else None,
            )
        elif dlv.settled:
            outcome = oc.Accept()  # settled without an outcome: taken as accepted
        else:
            return  # received{} or nothing yet
        del out.unsettled[dlv.tag]
        if not out.consumer.browse:
            settle_entry(out.queue, entry, outcome, out.consumer.id)
        if state:
            dlv.update(state)
        dlv.settle()
        self._dispatch(out.queue)


class Broker(PeerThread):
    """A running broker; every method that reads state runs in the broker's thread."""

    handler: BrokerHandler

    def __init__(self, *, credit_window: int = 100, discharge_delay: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(BrokerHandler(credit_window, discharge_delay), **kwargs)

    def queue_bodies(self, name: str) -> list[Any]:
        """Bodies of the messages in queue ``name`` (acquired ones included), in order."""
        def read() -> list[Any]:
            q = self.handler.registry.queues.get(name)
            return q.bodies() if q is not None else []

        return self.call(read)

    def queue_names(self) -> list[str]:
        return self.call(lambda: sorted(self.handler.registry.queues))

    def put(self, address: str, *messages: Any) -> None:
        """Store messages (proton ``Message`` or encoded bytes) as if a client sent them."""
        raws = [m if isinstance(m, bytes) else bytes(m.encode()) for m in messages]

        def store() -> None:
            for raw in raws:
                for q in self.handler.registry.route(address):
                    q.put(raw)
                    self.handler._dispatch(q)

        self.call(store)

    def refused(self) -> list[tuple[str, str]]:
        return self.call(lambda: list(self.handler.refused))

    def transactions(self) -> dict[str, int]:
        """Counts: open, committed, rolled_back."""
        c = self.handler.coordinator
        return self.call(
            lambda: {"open": len(c.open), "committed": c.committed, "rolled_back": c.rolled_back}
        )

    def discharges(self) -> int:
        """Discharge requests received, answered or not (see ``discharge_delay``)."""
        return self.call(lambda: self.handler.discharges)
