"""A request/response service, as proton's examples/python/server.py is: each request is
answered on its reply-to with its body upper-cased and the reply's correlation-id set.

Two ways to run it:

* ``Responder(**rules)`` listens, and is the whole other end: it takes the client's
  request links (any target address), and its reply links, whether on an address or on a
  dynamic node (it names one ``responder.tmp.N``); a reply goes on the reply link whose
  address is the request's reply-to.
* ``ResponderClient(url, address, **rules)`` connects to a broker (``amqp serve``), takes
  the requests from ``address`` and sends each reply through the anonymous relay to the
  request's reply-to, exactly as server.py does.

Rules, by request number (1 for the first to arrive): ``drop`` accepts the request and
never answers it; ``wrong`` answers with a correlation-id no request has; ``reject``
rejects the request (``amqp:precondition-failed``) and does not answer; ``unsettled``
answers the request and never settles it (no outcome ever comes); ``noise`` accepts the
request, never answers it, and from then on sends a reply with a correlation-id no
request has every ``NOISE_EVERY`` seconds to its reply-to, until the peer stops. ``correlate``:
the request field the reply's correlation-id copies, ``"correlation_id"`` (server.py) or
``"message_id"`` (the JMS convention). Credit for the client's request link (listening
mode): ``credit`` on its attach (100), and one more after each request; ``drain=n``
instead grants n with drain on the attach (proton's ``Receiver.drain(n)``: the client is
to send what it has and give the rest back) and no more, unless ``drain_each``: drain(1)
again after each request (a service that fetches one request at a time);
``request_flows()`` gives its credit and drain mode after each flow from the client.
``abort=n``: the first n reply deliveries are aborted part way (Part 2 §2.6.14: each sent
in part, then aborted once on the wire, where it took a credit), each reply then going
whole on a later delivery; ``aborted()`` counts them.
``requests()`` gives every request as proton read it (``Message``) with its raw bytes,
``replies()`` the bytes of every reply sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from proton import Endpoint, Link, Message, Terminus

from tests.peers import outcomes as oc
from tests.peers import sections
from tests.peers.net import PeerHandler, PeerThread, Timer, echo_source, echo_target

WRONG_ID = "no-such-request"
NOISE_EVERY = 0.2  # seconds between the unmatched replies of the `noise` rule


@dataclass(eq=False)
class Request:
    number: int  # from 1, in arrival order
    raw: bytes
    message: Message
    answered: bool = False


class ResponderHandler(PeerHandler):
    def __init__(self, correlate: str, drop: Collection[int], wrong: Collection[int],
                 reject: Collection[int], connect: tuple[str, str] | None = None,
                 unsettled: Collection[int] = (), noise: Collection[int] = (),
                 credit: int = 100, drain: int | None = None,
                 drain_each: bool = False, abort: int = 0) -> None:
        super().__init__()
        self.abort_left, self.aborted = abort, 0
        self.part: Any = None  # a reply delivery sent in part, until it is aborted
        self.credit, self.drain, self.drain_each = credit, drain, drain_each
        self.request_links: list[Any] = []  # the client's request links (our receivers)
        self.request_flows: list[tuple[int, bool]] = []  # (credit, draining) after each
        self.correlate = correlate
        self.drop, self.wrong, self.reject = set(drop), set(wrong), set(reject)
        self.never_settle, self.noise = set(unsettled), set(noise)
        self.connect = connect  # (url, address): run as a client of a broker
        self.requests: list[Request] = []
        self.reply_links: dict[str, Any] = {}  # address -> our sending link
        self.relay: Any = None  # client mode: the anonymous sender
        self.waiting: list[Message] = []  # replies with no link or credit yet
        self._partial: dict[Any, bytearray] = {}
        self._dynamic = itertools.count(1)
        self._tags = itertools.count(1)
        self.replies: list[bytes] = []  # each reply's bytes, as sent

    # --- client mode ----------------------------------------------------------------

    def on_start(self, event: Any) -> None:
        if self.connect is None:
            return
        url, address = self.connect
        conn = event.container.connect(url)
        receiver = event.container.create_receiver(conn, address)
        receiver.flow(100)
        self.relay = event.container.create_sender(conn, None)

    # --- listening mode ---------------------------------------------------------------

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        if link.is_sender:  # the client's reply link
            echo_target(link)
            if link.remote_source.dynamic:
                address = f"responder.tmp.{next(self._dynamic)}"
                link.source.type = Terminus.SOURCE
                link.source.address = address
                link.source.dynamic = True
            else:
                echo_source(link)
                address = link.remote_source.address
            self.reply_links[address] = link
            link.open()
        else:  # the client's request link
            echo_source(link)
            echo_target(link)
            link.open()
            self.request_links.append(link)
            if self.drain is not None:
                link.drain(self.drain)
            else:
                link.flow(self.credit)

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        if link.is_receiver:
            self.request_flows.append((link.credit, link.draining()))
        self._send_waiting()

    # --- requests -----------------------------------------------------------------------

    def on_delivery(self, event: Any) -> None:
        dlv = event.delivery
        link = dlv.link
        if not link.is_receiver:
            dlv.settle()  # our reply's outcome
            return
        buf = self._partial.setdefault(dlv, bytearray())
        while chunk := link.recv(dlv.pending or 1):
            buf += chunk
        if dlv.partial:
            return
        raw = bytes(self._partial.pop(dlv))
        link.advance()
        if self.drain_each:
            link.drain(1)
        elif self.drain is None:
            link.flow(1)
        req = Request(len(self.requests) + 1, raw, sections.decode(raw))
        self.requests.append(req)
        if req.number in self.reject:
            oc.apply(dlv, oc.Reject("amqp:precondition-failed", "told to reject it"))
            return
        msg = req.message
        if req.number not in self.never_settle:
            oc.apply(dlv, oc.Accept())
        if req.number in self.noise and msg.reply_to is not None:
            self._noise(msg.reply_to)
            return
        if req.number in self.drop:
            return
        corr = WRONG_ID if req.number in self.wrong else getattr(
            msg, "correlation_id" if self.correlate == "correlation_id" else "id")
        body = msg.body
        if isinstance(body, (str, bytes, memoryview)):
            body = (bytes(body) if isinstance(body, memoryview) else body).upper()
        self.waiting.append(Message(address=msg.reply_to, body=body,
                                    correlation_id=sections.owned(corr)))
        req.answered = True
        self._send_waiting()

    def _abort_once_sent(self) -> None:
        """Abort the part once it is framed (proton drops a delivery aborted before any of
        it went out, giving its credit back: then nothing would be aborted on the wire)."""
        assert self.container is not None
        if self.part.pending:
            self.container.schedule(0.01, Timer(self._abort_once_sent))
            return
        self.part.abort()
        self.part = None
        self.aborted += 1
        self._send_waiting()

    def _noise(self, address: str) -> None:
        """A reply that answers nothing, to `address`, now and every NOISE_EVERY seconds."""
        self.waiting.append(Message(address=address, body=b"noise", correlation_id=WRONG_ID))
        self._send_waiting()
        assert self.container is not None
        self.container.schedule(NOISE_EVERY, Timer(lambda: self._noise(address)))

    def _send_waiting(self) -> None:
        if self.part is not None:  # (the next delivery waits for its abort)
            return
        still = []
        for i, reply in enumerate(self.waiting):
            link = self.relay if self.relay is not None else self.reply_links.get(reply.address)
            if link is None or link.credit <= 0:
                still.append(reply)
                continue
            raw = bytes(reply.encode())
            dlv = link.delivery(str(next(self._tags)))
            if self.abort_left:
                self.abort_left -= 1
                link.send(raw[:5])
                self.part = dlv
                self.waiting = still + self.waiting[i:]
                self._abort_once_sent()
                return
            link.send(raw)
            link.advance()
            self.replies.append(raw)
        self.waiting = still


class _Rules:
    def requests(self: Any) -> list[Request]:
        return self.call(lambda: list(self.handler.requests))  # type: ignore[no-any-return]

    def replies(self: Any) -> list[bytes]:
        """Every reply sent so far, its bytes exactly."""
        return self.call(lambda: list(self.handler.replies))  # type: ignore[no-any-return]

    def aborted(self: Any) -> int:
        """The reply deliveries aborted so far (`abort`)."""
        return self.call(lambda: self.handler.aborted)  # type: ignore[no-any-return]

    def request_flows(self: Any) -> list[tuple[int, bool]]:
        """The request link's credit and drain mode after each flow from the client."""
        return self.call(lambda: list(self.handler.request_flows))  # type: ignore[no-any-return]

    def reply_addresses(self: Any) -> list[str]:
        """The addresses of the reply links the client attached (listening mode)."""
        return self.call(lambda: list(self.handler.reply_links))  # type: ignore[no-any-return]

    def wait_for_requests(self: Any, n: int, timeout: float = 30) -> list[Request]:
        return self.wait_for(  # type: ignore[no-any-return]
            lambda: list(self.handler.requests) if len(self.handler.requests) >= n else None,
            timeout)


class Responder(_Rules, PeerThread):
    """Listens on 127.0.0.1 and answers requests (see the module doc)."""

    handler: ResponderHandler

    def __init__(self, *, correlate: str = "correlation_id", drop: Collection[int] = (),
                 wrong: Collection[int] = (), reject: Collection[int] = (),
                 unsettled: Collection[int] = (), noise: Collection[int] = (),
                 credit: int = 100, drain: int | None = None, drain_each: bool = False,
                 abort: int = 0, **kwargs: Any) -> None:
        super().__init__(ResponderHandler(correlate, drop, wrong, reject,
                                          unsettled=unsettled, noise=noise, credit=credit,
                                          drain=drain, drain_each=drain_each, abort=abort),
                         **kwargs)


class ResponderClient(_Rules, PeerThread):
    """Connects to `url` and answers the requests on `address` (see the module doc)."""

    handler: ResponderHandler

    def __init__(self, url: str, address: str, *, correlate: str = "correlation_id",
                 drop: Collection[int] = (), wrong: Collection[int] = (),
                 reject: Collection[int] = ()) -> None:
        super().__init__(ResponderHandler(correlate, drop, wrong, reject, (url, address)))

    def start(self) -> ResponderClient:
        import threading

        from proton.reactor import Container

        container = Container(self.handler)
        container.selectable(self._injector)
        self.handler.container = container
        self._thread = threading.Thread(target=self._run, name="proton-responder", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 30) -> None:
        """Close the connection and wait for the broker's close before the thread ends
        (a connection dropped without one keeps `amqp serve` waiting when it stops)."""
        if self._thread is not None and self._thread.is_alive() and self._crash is None:
            conns = self.call(lambda: list(self.handler.connections))
            self.call(lambda: [c.close() for c in conns])
            self.wait_for(lambda: all(c.state & Endpoint.REMOTE_CLOSED for c in conns), timeout)
        super().stop(timeout)

    def wait_attached(self, timeout: float = 30) -> None:
        """Until its links to the broker are open (requests sent before would find no
        consumer)."""
        self.wait_for(lambda: self.handler.relay is not None and self.handler.relay.state
                      & Link.REMOTE_ACTIVE, timeout)
