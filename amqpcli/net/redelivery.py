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
message that comes back, and gives a message sent with no header back with none).
Identical messages (`send -c 1000 hello`) are otherwise all new: the settlements usually
did reach the peer, and those messages never come again. A message whose header says
neither (none at all included) is new. The identities are kept until the new link has
had as many deliveries as were left in doubt: what the peer delivers again comes first,
before the rest of the node.

What RabbitMQ 3.10.8 does (observed, classic and quorum queues alike, AMQP 1.0 plugin;
tests/test_rabbitmq_redelivery.py): every message it delivers has a header, one sent with
none too (`durable` false, `first-acquirer` true; priority and ttl only as sent), and
every delivery after a message's first says first-acquirer false, whatever ended the
first: a lost connection before our disposition arrived (none sent, or sent and lost),
or a release. It never gives a delivery-count (released any number of times, it stays
absent), and offers no modified outcome. So a message whose acceptance was lost comes
again marked, and the rule above counts it. But so does every other delivery of the lost
link that we had not settled: those received and not written, and those it sent under the
credit left that the connection lost on the way, never received. Distinct messages are
told apart by their identity; messages alike are not: each would be taken for one we
wrote, and recv took up to a window more than -c N. So once messages alike were settled
(an identity twice in the two windows kept), the first deliveries of the new link that
look like redeliveries count as new, as many as the lost link may have left unwritten
(delivered and not settled, plus its credit left), and only those after them as
redeliveries: recv takes no more than N, and when the peer had sent fewer under that
credit (or never had our last flow, so a lost acceptance was all that came again), a
redelivery counts as new, the output holding a duplicate among the N (RabbitMQ gives
nothing that tells one from the other). (RabbitMQ 4's own AMQP 1.0 code, read but not
run here, sets first-acquirer the same way, from its redelivered flag.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from amqpcli.net.browseresume import Identities
from amqpcli.net.client import Incoming

__all__ = ["InDoubtSettlements"]


def _link_of(inc: Incoming) -> Any:
    """The engine link `inc` came on (None: not known)."""
    return getattr(getattr(inc, "delivery", None), "link", None)


def _repeats(before: list[int], since: list[int]) -> bool:
    """Some identity was settled twice in the two windows: the node holds messages alike."""
    n = len(before) + len(since)
    return n > 1 and len({*before, *since}) < n


class InDoubtSettlements:
    def __init__(self, identity: Callable[[Incoming], int],
                 delivered_before: Callable[[Incoming], bool]) -> None:
        self.identity = identity
        self.delivered_before = delivered_before
        self.before: list[int] = []  # settled between the last two grants of credit
        self.since: list[int] = []  # settled since the last grant
        self.again = Identities()  # left in doubt by lost connections: may come again
        self.to_see = 0  # deliveries of the new link before those are given up
        self.alike = False  # messages alike were settled: their identity tells them apart no more
        self.link: Any = None  # the engine link this connection's settlements were on
        self.settled_on_link = 0
        # After a loss, messages alike: how many deliveries the peer may give back that
        # were never written (received and not settled, or sent under credit left), and how
        # many of the new link's deliveries looked like redeliveries so far
        self.unwritten = 0
        self.looked_again = 0

    def settled(self, incomings: Iterable[Incoming]) -> None:
        """Messages written and settled on this connection."""
        incs = incomings if isinstance(incomings, (list, tuple)) else list(incomings)
        if not incs:
            return
        self.since.extend(map(self.identity, incs))
        link = _link_of(incs[-1])
        if link is not self.link:
            self.link, self.settled_on_link = link, 0
        self.settled_on_link += len(incs)

    def granted(self) -> None:
        """Credit granted: what was settled before the grant before is no longer in doubt."""
        if not self.alike:
            self.alike = _repeats(self.before, self.since)
        self.before, self.since = self.since, []

    def lost(self) -> None:
        """The connection was lost: what it settled last may come again."""
        if not self.alike:
            self.alike = _repeats(self.before, self.since)
        self.again.add(self.before)
        self.again.add(self.since)
        self.before, self.since = [], []
        link, self.link = self.link, None
        # what the links lost so far may have left unwritten: those of an earlier loss
        # not seen again yet (lost again before they came), and this link's own
        left = max(0, self.unwritten - self.looked_again)
        own = 0 if link is None else (
            max(0, int(link.deliveries) - self.settled_on_link) + int(link.link_credit))
        self.unwritten = max(left, own)
        self.settled_on_link = self.looked_again = 0
        self.to_see = len(self.again) + (self.unwritten if self.alike else 0)

    def __len__(self) -> int:
        """How many may still come again (a credit asks for them too)."""
        return len(self.again)

    def redelivered(self, inc: Incoming) -> bool:
        """Whether `inc` is one of those, come again (counted as passed, once)."""
        link = _link_of(inc)
        if link is not None and link is not self.link:
            # the link is known from its first delivery, not its first settlement: a loss
            # before anything was settled on it still counts what it had delivered
            self.link, self.settled_on_link = link, 0
        if inc.settled or not self.again:
            return False
        self.to_see -= 1
        ident = self.identity(inc)
        came_again = ident in self.again and self.delivered_before(inc)
        if came_again and self.alike:
            # as many as were never written may be those: the ones after them are not
            self.looked_again += 1
            came_again = self.looked_again > self.unwritten
        came_again = came_again and self.again.take(ident)
        if self.to_see <= 0:
            self.again = Identities()  # (the rest was settled after all: it will not come)
            self.unwritten = self.looked_again = 0  # (nor will the unwritten: all came)
        return came_again
