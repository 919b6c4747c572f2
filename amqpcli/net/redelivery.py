"""`recv --reconnect`: the messages a lost connection leaves in doubt, known when they come
again.

A message is written out, then settled; a connection lost between the two, or before our
settlement reached the peer, leaves the peer holding it, and it delivers it again on the
next connection. Written once already, it is written again (at least once: it is the
peer's, and a message is never settled unwritten), but it is no new message: --count N
counts N distinct ones, and the summary counts the redeliveries apart.

Which settlements may not have reached the peer: those sent since the flow before last.
The receive loop grants credit only once the window before is used up (`CreditWindow`),
and its settlements go out before each flow: a delivery under the last flow's credit says
the peer had the flow, so every settlement sent before it. What was settled since the
grant before that is in doubt; older settlements are not. So at most two windows of
identities are kept, and only when a reconnect can happen.

A message is known by its identity (the receive loop's: its bare message, which a node
may not change when it delivers it again). One whose header says no link acquired it
before (first-acquirer, no delivery-count) is a new message, whatever its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from amqpcli.net.browseresume import Identities
from amqpcli.net.client import Incoming

__all__ = ["InDoubtSettlements"]


class InDoubtSettlements:
    def __init__(self, identity: Callable[[Incoming], int],
                 first_acquired: Callable[[Incoming], bool]) -> None:
        self.identity = identity
        self.first_acquired = first_acquired
        self.before: list[int] = []  # settled between the last two grants of credit
        self.since: list[int] = []  # settled since the last grant
        self.again = Identities()  # left in doubt by lost connections: may come again

    def settled(self, incomings: Iterable[Incoming]) -> None:
        """Messages written and settled on this connection."""
        self.since.extend(self.identity(inc) for inc in incomings)

    def granted(self) -> None:
        """Credit granted: what was settled before the grant before is no longer in doubt."""
        self.before, self.since = self.since, []

    def lost(self) -> None:
        """The connection was lost: what it settled last may come again."""
        self.again.add(self.before)
        self.again.add(self.since)
        self.before, self.since = [], []

    def __len__(self) -> int:
        """How many may still come again (a credit asks for them too)."""
        return len(self.again)

    def redelivered(self, inc: Incoming) -> bool:
        """Whether `inc` is one of those, come again (counted as passed, once)."""
        if inc.settled or not self.again:
            return False
        ident = self.identity(inc)
        return ident in self.again and not self.first_acquired(inc) and self.again.take(ident)
