"""Waiting, in TUI tests, for what the network brings: the app pulled from its source
until a condition holds (bounded: a hang guard, not a timed assertion)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TRIES = 1200  # pauses of 50 ms while waiting for the network (a minute and more on a
# loaded machine: RabbitMQ alone holds a refused login 3 s)


async def until(app: Any, pilot: Any, cond: Callable[[], bool]) -> None:
    for _ in range(TRIES):
        app.pull()
        if cond():
            return
        await pilot.pause(0.05)
    app.pull()
    assert cond()


def attached(app: Any, src: Any) -> Callable[[], bool]:
    """Our link is on screen and ours to act on: the tree shows it as soon as our attach
    is sent, the source has it once the peer answered (a key pressed in between is refused,
    which on a loaded machine made these tests fail now and then)."""
    return lambda: bool(app.conn_tree.link_keys) and src.link is not None


async def our_link_shown(app: Any, pilot: Any, src: Any) -> None:
    """Wait for our one link (see `attached`) and show it in the Link tab."""
    await until(app, pilot, attached(app, src))
    (key,) = app.conn_tree.link_keys
    assert app.select_link(key)
