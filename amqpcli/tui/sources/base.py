"""What every source gives the app: a lock, the engine model, the frame log, and actions.

A source feeds the engine from its own thread (a replay worker, the proxy's event loop, a
client connection) while holding `lock`; the app takes the same lock ten times a second to
copy what it shows into `view` rows. Actions a source cannot do raise `Unsupported`, which
the app turns into a notice.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from amqpcli.tui import adapter
from amqpcli.tui.adapter import RateMeter
from amqpcli.tui.store import FrameStore
from amqpcli.tui.view import Snapshot

if TYPE_CHECKING:
    from amqpcli.tui.app import AmqpTui
    from amqpcli.tui.widgets.framelog import FrameSeq


class Unsupported(Exception):
    """This source cannot do that (e.g. settle a delivery seen in a capture)."""


class Source:
    kind = "base"  # key group that works with this source: "replay", "client", "live"
    title = "amqp"

    def __init__(self, history: int = 200_000) -> None:
        self.lock = threading.RLock()
        self.store = FrameStore(limit=history)
        self.app: AmqpTui | None = None
        self.rates = RateMeter()

    @property
    def frames(self) -> FrameSeq:
        return self.store

    def start(self, app: AmqpTui) -> None:
        self.app = app

    def stop(self) -> None:
        pass

    def connections(self) -> list[tuple[str, Any]]:
        """(key, engine connection) pairs, called under `lock`."""
        return []

    def snapshot(self, link: str | None, delivery: str | None, now: float,
                 conn: str | None = None) -> Snapshot:
        with self.lock:
            return adapter.snapshot(
                self.connections(), link, delivery, now, self.rates, ours=self.kind == "client",
                conn=conn,
            )

    def status(self) -> str:
        return ""

    def now(self) -> float:
        """The time ages are measured against (capture time for a replay)."""
        import time

        return time.time()

    # -- actions on our own links ------------------------------------------------------------

    def grant_credit(self, link: str, n: int) -> None:
        raise Unsupported("granting credit needs our own receiving link (amqp tui URL --recv)")

    def drain(self, link: str) -> None:
        raise Unsupported("draining needs our own receiving link (amqp tui URL --recv)")

    def settle(self, delivery: str, outcome: str) -> None:
        raise Unsupported("settling needs our own receiving link (amqp tui URL --recv)")

    def send(self, link: str) -> None:
        raise Unsupported("sending needs our own sending link (amqp tui URL --send)")
