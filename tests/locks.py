"""A lock for tests of code that takes a lock: it says whether it is held."""

from __future__ import annotations

from typing import Self


class DepthLock:
    """A re-entrant stand-in for a lock that says whether it is held."""

    def __init__(self) -> None:
        self.depth = 0
        self.entered = 0

    def __enter__(self) -> Self:
        self.depth += 1
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
