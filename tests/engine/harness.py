"""Two endpoints wired together in memory, with a fake clock and a record of the wire.

`Pair.pump()` moves bytes both ways until neither side has anything to say. Every chunk
is recorded as (sender side, bytes, time) so an `Observer` can be fed the same
conversation afterwards.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.engine import Endpoint, Event, Link, Observer, Session
from amqpcli.engine.sasl import SaslConfig
from tests.dissect.helpers import C2S, Script


class Pair:
    def __init__(self, *, client: dict[str, Any] | None = None,
                 peer: dict[str, Any] | None = None, open: bool = True) -> None:
        self.t = 0.0
        self.client = Endpoint("client", **(client or {}))
        self.peer = Endpoint("peer", **(peer or {}))
        self.wire: list[tuple[str, bytes, float]] = []
        self.client_events: list[Event] = []
        self.peer_events: list[Event] = []
        if open:
            self.client.open()
            self.pump()

    # --- clock and transport ------------------------------------------------------------

    def tick(self, dt: float = 0.001) -> float:
        self.t = round(self.t + dt, 6)
        self.client.set_time(self.t)
        self.peer.set_time(self.t)
        return self.t

    def pump(self, limit: int = 1000) -> list[Event]:
        """Exchange bytes until quiet; returns the events of both sides (client first)."""
        out: list[Event] = []
        for _ in range(limit):
            a = self.client.data_to_send()
            b = self.peer.data_to_send()
            if not a and not b:
                out += self._take_local()
                return out
            self.tick()
            if a:
                self.wire.append(("client", a, self.t))
                ev = self.peer.receive_data(a, self.t)
                self.peer_events += ev
                out += ev
            if b:
                self.wire.append(("server", b, self.t))
                ev = self.client.receive_data(b, self.t)
                self.client_events += ev
                out += ev
        raise AssertionError("the endpoints never went quiet")

    def _take_local(self) -> list[Event]:
        a = self.client.take_events()
        b = self.peer.take_events()
        self.client_events += a
        self.peer_events += b
        return a + b

    def inject(self, to: str, body: Any, channel: int = 0, payload: bytes = b"") -> list[Event]:
        """Deliver a crafted frame to one endpoint, bypassing the other's engine."""
        raw = encode_frame(body, channel, payload)
        return self.inject_bytes(to, raw)

    def inject_bytes(self, to: str, raw: bytes) -> list[Event]:
        self.tick()
        if to == "peer":
            self.wire.append(("client", raw, self.t))
            ev = self.peer.receive_data(raw, self.t)
            self.peer_events += ev
        else:
            self.wire.append(("server", raw, self.t))
            ev = self.client.receive_data(raw, self.t)
            self.client_events += ev
        return ev

    # --- shortcuts ----------------------------------------------------------------------

    def peer_session(self, client_session: Session) -> Session:
        """The peer's model of a session the client began."""
        return self.peer.connection.channels["client"][client_session.channel["client"]]

    def peer_link(self, client_link: Link) -> Link:
        s = self.peer_session(client_link.session)
        return s.handles["client"][client_link.handle["client"]]

    def sender(self, name: str = "out", address: str = "q", credit: int = 0,
               session: Session | None = None, **kw: Any) -> tuple[Link, Link]:
        """A client sender and the peer's end of it, with `credit` granted."""
        s = session or self.client.begin()
        link = self.client.attach_sender(s, name, c.Source(address="src"),
                                         c.Target(address=address), **kw)
        self.pump()
        plink = self.peer_link(link)
        if credit:
            self.peer.flow(plink, credit)
            self.pump()
        return link, plink

    def receiver(self, name: str = "in", address: str = "q", credit: int = 0,
                 session: Session | None = None, **kw: Any) -> tuple[Link, Link]:
        """A client receiver and the peer's end of it."""
        s = session or self.client.begin()
        link = self.client.attach_receiver(s, name, c.Source(address=address),
                                           c.Target(address="dst"), **kw)
        self.pump()
        plink = self.peer_link(link)
        if credit:
            self.client.flow(link, credit)
            self.pump()
        return link, plink

    def observe(self) -> tuple[Observer, list[Event]]:
        """Replay the recorded wire into a fresh observer."""
        obs = Observer()
        events: list[Event] = []
        for side, data, t in self.wire:
            events += obs.feed_bytes(side, data, t)
        return obs, events


def observe_script(s: Script) -> tuple[Observer, list[Any]]:
    """An observer fed a scripted conversation (`tests.dissect.helpers.Script`), and the
    events it gave."""
    obs = Observer()
    events: list[Any] = []
    for direction, data, t in s.steps:
        events += obs.feed_bytes("client" if direction == C2S else "server", data, t)
    return obs, events


def plain(user: str = "guest", password: str = "secret") -> SaslConfig:
    return SaslConfig(username=user, password=password)


def of(events: list[Event], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]
