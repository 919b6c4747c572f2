"""Nodes leave the tree (an ended connection a live source lets go, `--keep-ended`; a step
back in a replay): the cursor stays on the node it was on, and when that node is the one
that went, the panels follow the node the cursor lands on. The Link tab used to keep the
gone link's key ("Select a link in the tree." under a highlighted link) until a key moved
the cursor."""

from __future__ import annotations

import asyncio

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.base import Source
from amqpcli.tui.view import ConnRow, LinkDetail, LinkRow, SessionRow, Snapshot


def _conn(n: int) -> ConnRow:
    key = f"c{n}"
    link = LinkRow(f"{key}|s0|l0", f"link-{n}", "sender", "0/0", 1, 0, 0, 0.0)
    return ConnRow(key, f"connection {n}", [SessionRow(f"{key}|s0", "session", [link])])


class Shrinking(Source):
    """Connections c1 to c4; `drop(n)` lets cN go."""

    kind = "live"
    title = "shrinking"

    def __init__(self) -> None:
        super().__init__()
        self.conns = [1, 2, 3, 4]

    def drop(self, n: int) -> None:
        self.conns.remove(n)

    def snapshot(self, link: str | None, delivery: str | None, now: float,
                 conn: str | None = None) -> Snapshot:
        shown = {f"c{n}" for n in self.conns}
        detail = None
        if link is not None and link.split("|", 1)[0] in shown:
            detail = LinkDetail(key=link, title=f"link {link}", source=[], target=[], flow=[],
                                unsettled=[], unsettled_total=0)
        return Snapshot([_conn(n) for n in self.conns], detail, None)


async def _select_then_drop(link: str, drop: int) -> tuple[str | None, str | None, str | None]:
    """Select `link`, let connection `drop` go: (the key under the cursor, the app's
    connection and link keys)."""
    src = Shrinking()
    app = AmqpTui(src)
    async with app.run_test(size=(140, 44)) as pilot:
        assert app.select_link(link)
        await pilot.pause()
        src.drop(drop)
        app.pull()
        await pilot.pause()
        node = app.conn_tree.cursor_node
        return (None if node is None else node.data), app.conn_key, app.link_key


def test_the_selected_connection_gone_the_panels_follow_the_cursor() -> None:
    under, conn, link = asyncio.run(_select_then_drop("c1|s0|l0", 1))
    assert under is not None and not under.startswith("c1")
    # what the app shows is what the cursor is on
    assert conn == under.split("|", 1)[0]
    assert link == (under if under.count("|") == 2 else None)


def test_a_connection_gone_above_the_cursor_leaves_it_where_it_was() -> None:
    assert asyncio.run(_select_then_drop("c3|s0|l0", 1)) == ("c3|s0|l0", "c3", "c3|s0|l0")
