"""How a receiver grants credit: a window at a time, used up when every delivery it let
come has come (`CreditWindow`), and the end of a drain on a peer that cannot drain,
inferred rather than said (`QuietDrain`)."""

from __future__ import annotations

import asyncio

from amqpcli.errors import Exit, UserError
from amqpcli.net.client import ReceiverLink

__all__ = ["DRAIN_BOUND", "QUIET", "CreditWindow", "QuietDrain"]

QUIET = 1.0  # seconds without a message that end a drain on peers that cannot drain
# seconds after which such a drain asks for no more messages when neither --timeout nor the
# peer says otherwise (see QuietDrain); and how long a drain's answer is waited for
DRAIN_BOUND = 10.0
_NO_ANSWER = "no flow saying how many messages the node holds"


class QuietDrain:
    """A drain on a peer that cannot drain (RabbitMQ before 4.0, see amqpcli/net/quirks.py):
    where it ends is inferred, not said by the peer.

    The node says how many messages it holds in the flow that answers ours (`available`;
    RabbitMQ answers every flow with its queue's length): `start` asks with a flow granting
    no credit, before any is granted. That many is what the drain takes, and no more credit
    than what is still to come is granted, so messages a producer adds meanwhile are not
    waited for. Should fewer come (another consumer took some), the quiet period (`QUIET`
    without a message) ends it. An answer of 0 says nothing: a RabbitMQ stream answers
    with how many messages it sends under the credit, none for a flow granting none. When
    no answer says how many, the quiet period alone ends the drain, and after `bound`
    seconds no more credit is asked for, so that a node that never falls quiet still ends
    it (`cut_short`: it may hold more)."""

    def __init__(self, to_come: int | None, bound: float, now: float) -> None:
        self.to_come = to_come  # None: not known
        self.bound = bound
        self.ask_until = now + bound
        self.cut_short = False  # credit was refused at the bound

    @classmethod
    async def start(cls, link: ReceiverLink, timeout: float | None) -> QuietDrain:
        """Ask how many messages the node holds (a flow granting nothing), waiting for the
        answer no longer than the quiet period."""
        loop = asyncio.get_running_loop()
        link.flow(0)
        deadline = loop.time() + min(timeout or QUIET, QUIET)
        while link.available is None:
            try:
                await link.wait_changed(deadline, _NO_ANSWER)
            except UserError as e:
                if e.code != Exit.TIMEOUT or str(e) != _NO_ANSWER:
                    raise
                break
        return cls(link.available or None, timeout or DRAIN_BOUND, loop.time())

    @property
    def over(self) -> bool:
        """All that the node held has come."""
        return self.to_come is not None and self.to_come <= 0

    def taken(self, n: int) -> None:
        if self.to_come is not None:
            self.to_come -= n

    def credit(self, n: int) -> int:
        """At most `n`: no more than is still to come, none once the bound has passed."""
        if self.to_come is not None:
            return max(0, min(n, self.to_come))
        if asyncio.get_running_loop().time() >= self.ask_until:
            self.cut_short = True
            return 0
        return n

    def warning(self) -> str:
        return (f"messages kept coming, and the peer can neither drain nor said how "
                f"many it held: the drain asked for no more after {self.bound:g}s "
                "(--timeout); the node may hold more")


class CreditWindow:
    """The credit last granted on a link, and whether it is used up: every delivery it let
    come has come and been handed out. The deliveries are the engine's count (Part 2
    §2.6.7: each takes a credit), not the messages handed out: one the sender aborted
    (§2.6.14: its part dropped, never handed out) uses its credit up as a message does,
    while a drain the sender answers by moving the delivery-count on without sending does
    not use the window up (that drain is over)."""

    def __init__(self, link: ReceiverLink) -> None:
        self.link = link
        self.size = 0
        self.start = link.deliveries

    def granted(self, n: int) -> None:
        self.size = n
        self.start = self.link.deliveries

    @property
    def used_up(self) -> bool:
        link = self.link
        return (self.size > 0 and link.deliveries - self.start >= self.size
                and not link.incoming and not link.queue)
