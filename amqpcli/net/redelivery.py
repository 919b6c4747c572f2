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

A message counts as one of those only when two things say so: its identity (the receive
loop's: its bare message, which a node may not change when it delivers it again) is one
left in doubt, and its header says it was delivered before (a delivery-count above 0, or
first-acquirer false given in its header: `amqp serve` clears a first-acquirer true on a
message that comes back, and gives a message sent with no header back with none). Identical messages (`send -c 1000 hello`) are
otherwise all new: the settlements usually did reach the peer, and those messages never
come again. A message whose header says neither (none at all included) is new. The
identities are kept until the new link has had as many deliveries as were left in doubt:
what the peer delivers again comes first, before the rest of the node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from amqpcli.net.browseresume import Identities
from amqpcli.net.client import Incoming

__all__ = ["InDoubtSettlements"]


class InDoubtSettlements:
    def __init__(self, identity: Callable[[Incoming], int],
                 delivered_before: Callable[[Incoming], bool]) -> None:
        self.identity = identity
        self.delivered_before = delivered_before
        self.before: list[int] = []  # settled between the last two grants of credit
        self.since: list[int] = []  # settled since the last grant
        self.again = Identities()  # left in doubt by lost connections: may come again
        self.to_see = 0  # deliveries of the new link before those are given up

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
        self.to_see = len(self.again)

    def __len__(self) -> int:
        """How many may still come again (a credit asks for them too)."""
        return len(self.again)

    def redelivered(self, inc: Incoming) -> bool:
        """Whether `inc` is one of those, come again (counted as passed, once)."""
        if inc.settled or not self.again:
            return False
        self.to_see -= 1
        ident = self.identity(inc)
        came_again = (ident in self.again and self.delivered_before(inc)
                      and self.again.take(ident))
        if self.to_see <= 0:
            self.again = Identities()  # (the rest was settled after all: it will not come)
        return came_again
