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

`Identities`, the multiset, is also what `recv` keeps of the messages it gave back, to pass
over when they come again: how many are left to pass over widens the credit alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from amqpcli.net.client import Incoming

__all__ = ["Identities", "ShownBefore"]


class Identities:
    """Messages to pass over when they come again: a multiset of their identities, each
    passed over as many times as it was added, and how many are left in all (`len`: the
    credit asks for those on top of what --count still wants, or passing over them
    would take a round trip per window)."""

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()
        self.left = 0

    def __len__(self) -> int:
        return self.left

    def __contains__(self, ident: int) -> bool:
        return ident in self.counts

    def add(self, idents: Iterable[int]) -> None:
        for ident in idents:
            self.counts[ident] += 1
            self.left += 1

    def take(self, ident: int) -> bool:
        """Pass over one `ident`, if one is left: whether it was."""
        left = self.counts.get(ident, 0)
        if not left:
            return False
        if left == 1:
            del self.counts[ident]
        else:
            self.counts[ident] = left - 1
        self.left -= 1
        return True

    def copy(self) -> Identities:
        new = Identities()
        new.counts = self.counts.copy()
        new.left = self.left
        return new


class ShownBefore:
    def __init__(self, identity: Callable[[Incoming], int]) -> None:
        self.identity = identity
        self.shown = Identities()  # every message shown in the run
        self.to_pass = Identities()  # of those, what this link is still to pass over
        self.passed = 0  # passed over on this link since the last notice

    def new_link(self) -> None:
        """A new link starts at the head of the node: it passes over all that was shown."""
        self.to_pass = self.shown.copy()

    def add(self, shown: Iterable[Incoming]) -> None:
        """Messages written out."""
        self.shown.add(self.identity(inc) for inc in shown)

    def passes_over(self, inc: Incoming) -> bool:
        """Whether `inc` was shown before and this link has not passed over all of those
        yet; if so it counts as passed over."""
        if not self.to_pass or not self.to_pass.take(self.identity(inc)):
            return False
        self.passed += 1
        return True

    def notice(self) -> str | None:
        """What to say of the messages passed over since the last notice (None: none)."""
        n, self.passed = self.passed, 0
        if not n:
            return None
        return f"reconnected: skipped {n} message{'' if n == 1 else 's'} already shown"
