"""What the runs that send on a link of their own (`amqp send`, `amqp request`) share: how
they tell the engine they have messages for the link, so that a peer's drain waits for
them (`Offering`), and how they close a connection they failed on (`close_failed`).

Drain (Part 2 §2.6.7): the sender uses up the credit "after sending all available
messages". The engine answers a drain on its own once nothing is queued there; a run that
sends as credit comes says through `Endpoint.offering_for` that more is to come, and the
drain waits for it (docs/engine.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amqpcli.aio import wait_within
from amqpcli.errors import UserError
from amqpcli.net.client import Client, ConnectionLost, SenderLink

if TYPE_CHECKING:
    from amqpcli.engine.endpoint import Endpoint
    from amqpcli.engine.link import Link
    from amqpcli.net.sending import PulledInThread

__all__ = ["Offering", "close_failed"]


class Offering:
    """Whether a run has messages for its sender link, as the engine asks it
    (`Endpoint.offering_for`): while it has, a drain from the peer waits for them (the
    transfers that use the credit up answer it); once it has none (its input over, or
    waiting for more), the drain is answered (`Endpoint.drained`) and the credit left
    unused goes back. Messages the run holds back itself (a window, a rate, a
    concurrency) are its own: the drain waits for them."""

    def __init__(self) -> None:
        self.more = True

    def on_engine(self, engine: Endpoint) -> None:
        """`Client.connect`'s `on_engine` hook: set before any byte moves (a peer may write
        its attach and its drain together)."""
        self.more = True
        engine.offering_for = self._offering

    def _offering(self, link: Link) -> bool:
        # (a transaction coordinator's declares and discharges go only as the run needs them)
        return self.more and not link.coordinator

    def offer(self, more: bool, sender: SenderLink | None) -> None:
        """Say whether the run has messages for `sender`'s link. When it has none, a drain
        the peer asked for is answered now."""
        if self.more and not more and sender is not None:
            sender.client._engine_drained(sender.link)  # (stamped now: --trace's time)
            sender.client.transport.flush()
        self.more = more

    async def wait_input(self, pulled: PulledInThread, sender: SenderLink | None,
                         timeout: float | None = None) -> None:
        """Wait, without holding up the event loop, until the input read in a thread has a
        message or its end, for at most `timeout` seconds (None: no limit). Nothing is
        offered while it waits: the run has nothing to send until the input has more."""
        if not pulled.available():
            self.offer(False, sender)
        if timeout is None:
            await pulled.ready()
        elif timeout > 0:
            try:
                await wait_within(pulled.ready(), timeout)
            except TimeoutError:
                pass
        self.offer(True, sender)  # a message, or the input's end (the run then says so)


async def close_failed(client: Client) -> bool:
    """Close a connection the run failed on as a finished run closes it: our close, the
    peer's awaited for a bounded time (`Client.close`), rather than a dropped socket (a
    proton peer logs 'connection aborted'). One already gone is only let go. True when the
    peer answered the close (it had everything sent before it)."""
    try:
        return await client.close()
    except (ConnectionLost, UserError, OSError):
        await client.abort()
        return False
