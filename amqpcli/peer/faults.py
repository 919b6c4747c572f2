"""Fault injection: which messages from senders get which outcome, and when.

A rule picks messages by their number on the link (1 for the first message a sender
link delivers):

* a share, `0.1`: each message with that probability (seeded, so a run can be repeated);
* `every:N`: messages N, 2N, 3N, …;
* `first:N`: messages 1 to N;  `after:N`: every message after the N-th;
* `at:2,5,9`: those messages;  `all`, `none`.

`Faults.outcome_for(number)` checks the reject, release and modify rules in that order;
the first that picks the message decides its outcome, otherwise it is accepted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.errors import Exit, UserError

__all__ = ["Faults", "Rule", "parse_rule"]


@dataclass(frozen=True)
class Rule:
    """One `RATE|PATTERN` option, parsed."""

    text: str
    kind: str  # share, every, first, after, at, all, none
    share: float = 0.0
    n: int = 0
    numbers: frozenset[int] = frozenset()

    def picks(self, number: int, rng: random.Random) -> bool:
        k = self.kind
        if k == "share":
            return rng.random() < self.share
        if k == "every":
            return number % self.n == 0
        if k == "first":
            return number <= self.n
        if k == "after":
            return number > self.n
        if k == "at":
            return number in self.numbers
        return k == "all"


def parse_rule(text: str, option: str) -> Rule:
    """`0.1`, `every:3`, `first:2`, `after:5`, `at:1,4`, `all` or `none`."""
    t = text.strip().lower()
    bad = UserError(f"{option}: expected a share (0.1), every:N, first:N, after:N, at:N,M…, "
                    f"all or none, got {text!r}", Exit.USAGE)
    if t in ("all", "none"):
        return Rule(text, t)
    kind, sep, arg = t.partition(":")
    if not sep:
        try:
            share = float(t)
        except ValueError:
            raise bad from None
        if not 0.0 <= share <= 1.0:
            raise UserError(f"{option}: a share is between 0 and 1, got {text!r}", Exit.USAGE)
        return Rule(text, "share", share=share)
    try:
        if kind == "at":
            parts = arg.split(",")
            if not all(x.strip() for x in parts):  # `at:1,,2`, `at:1,`: a number left out
                raise ValueError
            nums = frozenset(int(x) for x in parts)
            if min(nums) < 1:
                raise ValueError
            return Rule(text, "at", numbers=nums)
        if kind in ("every", "first", "after"):
            n = int(arg)
            if n < (1 if kind == "every" else 0):
                raise ValueError
            return Rule(text, kind, n=n)
    except ValueError:
        raise bad from None
    raise bad


def _error(option: str, rule: Rule) -> c.Error:
    return c.Error(condition=Symbol("amqp:precondition-failed"),
                   description=f"rejected by amqp serve --{option} {rule.text}")


def check_rules(rules: list[tuple[str, Rule | None]]) -> None:
    """Rules are tried in the order given (reject, release, modify): one after an `all`
    could never pick a message, which is surely not what was meant."""
    taken = None
    for option, rule in rules:
        if rule is None or rule.kind == "none":
            continue
        if taken is not None:
            raise UserError(f"{option} {rule.text} would never apply: {taken} answers every "
                            "message first", Exit.USAGE)
        if rule.kind == "all":
            taken = f"{option} all"


@dataclass
class Faults:
    """Every fault `amqp serve` can inject (see docs/serve.md)."""

    reject: Rule | None = None
    release: Rule | None = None
    modify: Rule | None = None
    settle_delay: float = 0.0  # seconds before a sender hears its outcome
    credit: int | None = None  # credit window for senders (None: the default window)
    detach_after: int | None = None  # deliveries per link
    close_after: int | None = None  # deliveries per connection
    refuse: list[str] = field(default_factory=list)  # address globs
    seed: int | None = None
    _rng: random.Random = field(default_factory=random.Random, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def outcome_for(self, number: int) -> object:
        """The outcome for the `number`-th message a sender link delivered."""
        if self.reject is not None and self.reject.picks(number, self._rng):
            return c.Rejected(error=_error("reject", self.reject))
        if self.release is not None and self.release.picks(number, self._rng):
            return c.Released()
        if self.modify is not None and self.modify.picks(number, self._rng):
            return c.Modified(delivery_failed=True)
        return c.Accepted()

    def refuses(self, address: str | None) -> bool:
        from fnmatch import fnmatchcase

        return address is not None and any(fnmatchcase(address, g) for g in self.refuse)

    @property
    def active(self) -> list[str]:
        """The faults in force, as option text (for the startup line)."""
        out = []
        for name in ("reject", "release", "modify"):
            r = getattr(self, name)
            if r is not None and r.kind != "none":
                out.append(f"--{name} {r.text}")
        if self.settle_delay:
            out.append(f"--settle-delay {self.settle_delay * 1000:g}")
        if self.credit is not None:
            out.append(f"--credit {self.credit}")
        if self.detach_after is not None:
            out.append(f"--detach-after {self.detach_after}")
        if self.close_after is not None:
            out.append(f"--close-after {self.close_after}")
        out += [f"--refuse {g}" for g in self.refuse]
        return out
