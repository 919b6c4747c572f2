"""--reconnect for the runs that go on after a lost connection (send, recv, browse): the
attempts left in a row, the pause before each, and what is said of them.

Each lost connection is one warning (stderr, and the JSON summary's "warnings"), with
why and which attempt of how many comes next:

    connection lost (the peer closed the connection: amqp:connection:forced: …); reconnecting (1 of 5)

and each attempt of that reconnect that fails and is tried again is one more, in the
same words:

    cannot connect to 127.0.0.1:5672: connection refused; reconnecting (2 of 5)

The tries of the run's first connect are not said: its last failure is the run's error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from amqpcli.errors import UserError
from amqpcli.net.client import Client, connect_retrying
from amqpcli.net.config import ConnectionConfig, ReconnectPolicy

__all__ = ["Reconnects"]


class Reconnects:
    def __init__(self, policy: ReconnectPolicy, warn: Callable[[str], None]) -> None:
        self.policy = policy
        self.warn = warn
        self.delays = policy.delays()  # the pause before each attempt left
        self.made = 0  # connections made again after a lost one
        self.lost = False  # a connection was lost, and none made since

    async def connect(self, cfg: ConnectionConfig, **hooks: Any) -> Client:
        """`connect_retrying` with the attempts left (`hooks`: its own)."""
        client = await connect_retrying(cfg, self.delays, self.warn,
                                        on_retry=self._try_failed, **hooks)
        if self.lost:
            self.made += 1
            self.lost = False
        return client

    def got_somewhere(self) -> None:
        """The connection got somewhere: the attempts and the backoff start over."""
        self.delays = self.policy.delays()

    def after_loss(self, error: UserError) -> float | None:
        """The pause before reconnecting after `error` ended the connection, said with
        its reason; None when no attempt is left (`error` is then the run's)."""
        if not self.delays:
            return None
        delay = self.delays.pop()
        self.lost = True
        self._say(f"connection lost ({error})")
        return delay

    def _try_failed(self, error: UserError) -> None:
        if self.lost:
            self._say(str(error))

    def _say(self, what: str) -> None:
        limit = self.policy.limit
        self.warn(f"{what}; reconnecting ({self.delays.taken} of {limit})")
