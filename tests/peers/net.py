"""Sockets and threads for the proton peers: free ports and a container run in a thread.

A peer's state lives in its container thread. The test thread never touches it directly:
``PeerThread.call(fn)`` runs ``fn`` in the container thread and returns its result.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar

from proton import Condition, Handler, SSLDomain, Terminus
from proton.handlers import EndpointStateHandler, MessagingHandler
from proton.reactor import ApplicationEvent, Container, EventInjector

from tests.peers.sections import owned

T = TypeVar("T")

CALL_EVENT = "peer_call"
STOP_EVENT = "peer_stop"


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that was free when asked (the kernel's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def echo_source(link: Any) -> None:
    """Reply with the client's source. proton reads a source without an address as
    'unspecified' and would send null, which reads as a refusal: keep it a source."""
    link.source.copy(link.remote_source)
    if link.source.type == Terminus.UNSPECIFIED:
        link.source.type = Terminus.SOURCE


def echo_target(link: Any) -> None:
    """Reply with the client's target (coordinator targets included), never null."""
    link.target.copy(link.remote_target)
    if link.target.type == Terminus.UNSPECIFIED:
        link.target.type = Terminus.TARGET


def refuse(link: Any, condition: str, description: str) -> None:
    """Refuse an attach (Part 2 §2.6.3): reply with a null terminus on the side we would
    provide (source when we send, target when we receive), then detach with the error."""
    if link.is_sender:
        echo_target(link)
    else:
        echo_source(link)
    link.open()
    link.condition = Condition(condition, description)
    link.close()


class Timer(Handler):
    """A reactor timer's handler that runs one function (``container.schedule(s, Timer(f))``)."""

    def __init__(self, fn: Callable[[], None]) -> None:
        super().__init__()
        self.fn = fn

    def on_timer_task(self, _event: Any) -> None:
        self.fn()


@dataclass(frozen=True)
class ConnectionInfo:
    """A client connection as the peer saw its open."""

    container_id: str
    hostname: str | None
    user: str | None  # the SASL identity (anonymous, or the certificate's for EXTERNAL)
    mechanism: str | None
    max_frame_size: int
    idle_timeout: float  # seconds; 0 when none
    properties: dict[Any, Any] | None
    offered_capabilities: list[str]
    desired_capabilities: list[str]


def _symbols(value: Any) -> list[str]:
    return [str(v) for v in value] if value else []


def connection_info(conn: Any) -> ConnectionInfo:
    transport = conn.transport
    sasl = transport.sasl() if transport is not None else None
    props = conn.remote_properties
    return ConnectionInfo(
        container_id=str(conn.remote_container),
        hostname=conn.remote_hostname,
        user=transport.user if transport is not None else None,
        mechanism=sasl.mech if sasl is not None else None,
        max_frame_size=int(transport.remote_max_frame_size) if transport is not None else 0,
        idle_timeout=float(transport.remote_idle_timeout) if transport is not None else 0.0,
        properties=owned(dict(props)) if props else None,
        offered_capabilities=_symbols(conn.remote_offered_capabilities),
        desired_capabilities=_symbols(conn.remote_desired_capabilities),
    )


class PeerHandler(MessagingHandler):
    """Base for the peers' handlers: runs injected calls and shuts down cleanly.

    ``prefetch=0``: credit is always granted explicitly (proton's automatic prefetch can
    stall at credit 1). Only the endpoint handler of MessagingHandler is kept (it opens
    connections and sessions and answers closes); the message handlers are dropped, because
    the peers read each delivery's raw bytes and choose every outcome and settlement
    themselves. Subclasses handle ``on_link_remote_open`` (it runs before the endpoint
    handler, which then leaves the link alone), ``on_delivery`` and ``on_link_flow``.
    """

    def __init__(self) -> None:
        super().__init__(prefetch=0, auto_accept=False, auto_settle=False)
        children: Any = self.handlers
        self.handlers = [h for h in children if isinstance(h, EndpointStateHandler)]
        self.container: Container | None = None
        self.acceptor: Any = None
        self.max_frame_size: int | None = None  # None: proton's default (32768)
        self.idle_timeout: float | None = None  # seconds; None: none
        self.connections: list[Any] = []
        self.opened: list[ConnectionInfo] = []
        self.errors: list[str] = []

    def on_connection_bound(self, event: Any) -> None:
        # Before the open is written: our limits go out in it.
        if self.max_frame_size is not None:
            event.transport.max_frame_size = self.max_frame_size
        if self.idle_timeout is not None:
            event.transport.idle_timeout = self.idle_timeout

    def on_connection_remote_open(self, event: Any) -> None:
        # Accepted connections carry no container-id unless given one.
        if self.container is not None and not event.connection.container:
            event.connection.container = self.container.container_id
        self.opened.append(connection_info(event.connection))

    def on_connection_opened(self, event: Any) -> None:
        self.connections.append(event.connection)

    def on_transport_error(self, event: Any) -> None:
        cond = event.transport.condition
        if cond is not None:
            self.errors.append(f"{cond.name}: {cond.description}")

    def on_peer_call(self, event: Any) -> None:
        fn, box = event.subject
        try:
            box.put((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            box.put((False, exc))

    def on_peer_stop(self, event: Any) -> None:
        if self.acceptor is not None:
            self.acceptor.close()
        for conn in self.connections:
            if not conn.state & conn.LOCAL_CLOSED:
                conn.close()
        assert self.container is not None
        self.container.stop()


class PeerThread:
    """A proton ``Container`` listening on 127.0.0.1, run in a daemon thread."""

    def __init__(
        self,
        handler: PeerHandler,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        ssl_domain: SSLDomain | None = None,
        container_id: str | None = None,
        max_frame_size: int | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        """``max_frame_size`` and ``idle_timeout`` (seconds) go in the peer's open frame."""
        self.handler = handler
        handler.max_frame_size = max_frame_size
        handler.idle_timeout = idle_timeout
        self.host = host
        self.port = port or 0
        self.ssl_domain = ssl_domain
        self.container_id = container_id
        self._injector = EventInjector()
        self._thread: threading.Thread | None = None
        self._crash: BaseException | None = None

    @property
    def url(self) -> str:
        scheme = "amqps" if self.ssl_domain is not None else "amqp"
        return f"{scheme}://{self.host}:{self.port}"

    def start(self) -> Self:
        container = Container(self.handler)
        if self.container_id:
            container.container_id = self.container_id
        container.selectable(self._injector)
        self.handler.container = container
        # Bind before the thread starts, so the port accepts connections when start returns.
        for attempt in range(20):
            port = self.port or free_port(self.host)
            try:
                self.handler.acceptor = container.listen(
                    f"{self.host}:{port}", ssl_domain=self.ssl_domain
                )
            except OSError:
                if self.port or attempt == 19:
                    raise
                continue
            self.port = port
            break
        self._thread = threading.Thread(
            target=self._run, name=f"proton-peer-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self.handler.container is not None
        try:
            self.handler.container.run()
        except BaseException as exc:  # noqa: BLE001 - raised again by call() and stop()
            self._crash = exc

    def call(self, fn: Callable[[], T], timeout: float = 30) -> T:
        """Run ``fn()`` in the container thread; return its result or raise its exception."""
        self._check_alive()
        box: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._injector.trigger(ApplicationEvent(CALL_EVENT, subject=(fn, box)))
        try:
            ok, value = box.get(timeout=timeout)
        except queue.Empty:
            self._check_alive()
            raise TimeoutError(f"peer on port {self.port} did not answer within {timeout}s")
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def connections(self) -> list[ConnectionInfo]:
        """Every connection opened to this peer so far, in order."""
        return self.call(lambda: list(self.handler.opened))

    def transport_errors(self) -> list[str]:
        """Transport failures seen (TLS handshakes, SASL), as 'condition: description'."""
        return self.call(lambda: list(self.handler.errors))

    def wait_for(self, predicate: Callable[[], T | None], timeout: float = 30) -> T:
        """Poll ``predicate`` in the container thread until it returns something truthy;
        return that. ``TimeoutError`` if it never does (a hang guard, not a timing test)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.call(predicate, timeout)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"peer on port {self.port}: condition not met in {timeout}s")
            time.sleep(0.01)

    def _check_alive(self) -> None:
        if self._crash is not None:
            raise RuntimeError(f"peer on port {self.port} crashed: {self._crash!r}") from self._crash
        if self._thread is None or not self._thread.is_alive():
            raise RuntimeError(f"peer on port {self.port} is not running")

    def stop(self, timeout: float = 30) -> None:
        """Close the listener and every connection, then end the thread."""
        if self._thread is None:
            return
        if self._thread.is_alive():
            self._injector.trigger(ApplicationEvent(STOP_EVENT))
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise RuntimeError(f"peer on port {self.port} did not stop within {timeout}s")
        self._injector.close()
        if self._crash is not None:
            raise RuntimeError(f"peer on port {self.port} crashed: {self._crash!r}") from self._crash

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
