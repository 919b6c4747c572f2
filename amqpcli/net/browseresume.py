"""A browse that resumes after a reconnect (`browse`, `recv --copy` with `--reconnect`).

A copy link reads a node without consuming it, so the link of the next connection starts
again at the head of the node. To go on where the lost one stopped, the messages shown
are remembered as a multiset of what each one is (the receive loop's identity: the bare
message, which a node may not change when it delivers a message again, while it may
change the header and annotations), and each new link passes over as many of each as
were shown: of two identical messages in the node, one shown, the second is still shown.
What others consumed meanwhile is simply not there; new messages are shown.

Memory: an entry per message shown (about 80 bytes), and while a new link passes over
them, up to one more each. Kept only when a reconnect can happen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from amqpcli.net.client import Incoming

__all__ = ["ShownBefore"]


class ShownBefore:
    def __init__(self, identity: Callable[[Incoming], int]) -> None:
        self.identity = identity
        self.shown: Counter[int] = Counter()  # every message shown in the run
        self.count = 0  # how many were shown
        self.to_pass: Counter[int] = Counter()  # of those, what this link is still to pass over
        self.left = 0  # how many that is
        self.passed = 0  # passed over on this link since the last notice

    def new_link(self) -> None:
        """A new link starts at the head of the node: it passes over all that was shown."""
        self.to_pass = self.shown.copy()
        self.left = self.count

    def add(self, shown: Iterable[Incoming]) -> None:
        """Messages written out."""
        for inc in shown:
            self.shown[self.identity(inc)] += 1
            self.count += 1

    def passes_over(self, inc: Incoming) -> bool:
        """Whether `inc` was shown before and this link has not passed over all of those
        yet; if so it counts as passed over."""
        if not self.to_pass:
            return False
        ident = self.identity(inc)
        left = self.to_pass.get(ident, 0)
        if not left:
            return False
        if left == 1:
            del self.to_pass[ident]
        else:
            self.to_pass[ident] = left - 1
        self.left -= 1
        self.passed += 1
        return True

    def notice(self) -> str | None:
        """What to say of the messages passed over since the last notice (None: none)."""
        n, self.passed = self.passed, 0
        if not n:
            return None
        return f"reconnected: skipped {n} message{'' if n == 1 else 's'} already shown"
