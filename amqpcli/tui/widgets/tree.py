"""Left pane: connections → sessions → links with live counters and warning marks."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from amqpcli.tui.adapter import SEP
from amqpcli.tui.messages import LinkSelected
from amqpcli.tui.view import ConnRow, LinkRow, SessionRow
from amqpcli.tui.widgets.safe import printable

WARN = "⚠"


def _rate(r: float | None) -> str:
    if r is None:  # a connection without times has no rate to tell
        return "-/s"
    if r >= 1000:
        return f"{r / 1000:.1f}k/s"
    return f"{r:.0f}/s"


NAME_WIDTH = 22  # a link name's room before the tree knows its width
MIN_NAME = 8  # never less than this for a link name: its ends still tell it apart


def _head(s: str, cells: int) -> str:
    out, used = [], 0
    for ch in s:
        w = cell_len(ch)
        if used + w > cells:
            break
        out.append(ch)
        used += w
    return "".join(out)


def short(name: str, width: int = NAME_WIDTH) -> str:
    """Long link names (often a UUID and an address) cut in the middle: both ends tell.
    The result takes at most `width` cells."""
    width = max(width, 1)
    if cell_len(name) <= width:
        return name
    head = width // 3
    tail = _head(name[::-1], width - head - 1)[::-1]
    return _head(name, head) + "…" + tail


def fit(text: Text, width: int | None) -> Text:
    """`text` cut to `width` cells with "…" at the end (None: the width is not known yet)."""
    if width is None or text.cell_len <= width:
        return text
    text.truncate(max(width, 1), overflow="ellipsis")
    return text


def link_label(row: LinkRow, width: int | None = None) -> Text:
    """The link's row. With a `width`, the name is cut in the middle to leave room for the
    counters: it gives way first, down to `MIN_NAME` cells; then the rate goes; then the
    name is cut below `MIN_NAME`. `d:`, `u:` and `c:` always stay (cut only when the row
    has no room for them at all)."""
    head = f"{WARN} " if row.warnings else ""
    arrow = "→" if row.role == "sender" else "←"
    name = printable(row.name)
    credit = "-" if row.credit is None else str(row.credit)
    counters = f"  d:{row.deliveries} u:{row.unsettled} c:{credit}"
    tails = [f"{counters} {_rate(row.rate)}", counters]
    tail, room = tails[0], NAME_WIDTH
    if width is not None:
        for tail in tails:
            room = width - cell_len(head) - 2 - cell_len(tail)
            if room >= min(cell_len(name), MIN_NAME):
                break
        room = max(1, room)
    t = Text()
    if head:
        t.append(head, style="bold yellow")
    t.append(f"{arrow} {short(name, room)}", style="bold" if row.ours else "")
    t.append(tail, style="dim")
    return fit(t, width)


def session_label(row: SessionRow, width: int | None = None) -> Text:
    t = Text()
    if row.warnings:
        t.append(f"{WARN} ", style="bold yellow")
    t.append(printable(row.label))
    return fit(t, width)


def conn_label(row: ConnRow, width: int | None = None) -> Text:
    t = Text()
    if row.violations:
        t.append(f"✖{len(row.violations)} ", style="bold red")
    elif row.warnings:
        t.append(f"{WARN} ", style="bold yellow")
    t.append(printable(row.label), style="bold")
    return fit(t, width)


class ConnectionTree(Tree[str]):
    """Updated in place from `ConnRow`s: nodes are kept by key so the cursor never jumps."""

    def __init__(self, **kw: object) -> None:
        super().__init__("connections", **kw)  # type: ignore[arg-type]
        self.show_root = False
        self.guide_depth = 2
        self._by_key: dict[str, TreeNode[str]] = {}
        self._kind: dict[str, str] = {}
        self._labels: dict[str, str] = {}
        self.conn_rows: list[ConnRow] = []
        # The cursor's key when its node went with every other (a replay gone back before
        # its first connection): the cursor goes back to it when it comes back.
        self._kept: str | None = None

    # Keys of the links in tree order, for tests and for "next link" commands.
    @property
    def link_keys(self) -> list[str]:
        return [lk.key for c in self.conn_rows for s in c.sessions for lk in s.links]

    def _room(self, depth: int, expandable: bool) -> int | None:
        """Cells left for a label at `depth` (0: a connection) after the guides and the
        expand icon, a column kept for the scrollbar; None before the first layout."""
        width = self.size.width
        if width <= 0:
            return None
        return max(1, width - 1 - depth * self.guide_depth - (2 if expandable else 0))

    def update_rows(self, rows: list[ConnRow]) -> None:
        self.conn_rows = rows
        before = self.cursor_node
        seen: set[str] = set()
        conn_room, session_room, link_room = self._room(0, True), self._room(1, True), self._room(2, False)
        for c in rows:
            cn = self._node(self.root, c.key, "conn", conn_label(c, conn_room))
            seen.add(c.key)
            for s in c.sessions:
                sn = self._node(cn, s.key, "session", session_label(s, session_room))
                seen.add(s.key)
                for lk in s.links:
                    self._node(sn, lk.key, "link", link_label(lk, link_room), leaf=True)
                    seen.add(lk.key)
        gone = [k for k in self._by_key if k not in seen]
        for key in gone:
            node = self._by_key.pop(key)
            self._kind.pop(key, None)
            self._labels.pop(key, None)
            if node.tree is self and node.parent is not None and node in node.parent.children:
                node.remove()
        if gone:  # (once laid out again: until then the cursor's node is the old line's)
            self.call_after_refresh(self._keep_cursor, before)
        elif self._kept is not None and self._kept in self._by_key:
            self.call_after_refresh(self._restore_cursor)

    def _keep_cursor(self, before: TreeNode[str] | None) -> None:
        """Nodes went (a step back in a replay, an ended connection a live source let go).
        The cursor stays on a node that is still there (the tree keeps it); when its own
        node went, the selection is the node it lands on (the panels follow it), not the
        one that is gone, which no highlight event says. With no node left (a replay gone
        back before the first connection) the selection stays, for when it comes back."""
        if before is not None and self._by_key.get(before.data or "") is before:
            return
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self._selected(node.data))
        elif node is None and not self._by_key and before is not None:
            self._kept = before.data

    def _restore_cursor(self) -> None:
        """The kept selection's node is back: the cursor goes on it (the panels show it
        already), unless the user has put the cursor somewhere since."""
        key, self._kept = self._kept, None
        node = self._by_key.get(key or "")
        if node is not None and self.cursor_node is None:
            self.move_cursor(node)

    def _node(
        self, parent: TreeNode[str], key: str, kind: str, label: Text, leaf: bool = False
    ) -> TreeNode[str]:
        node = self._by_key.get(key)
        plain = label.markup
        if node is None:
            if leaf:
                node = parent.add_leaf(label, data=key)
            else:
                node = parent.add(label, data=key, expand=True)
            self._by_key[key] = node
            self._kind[key] = kind
        elif self._labels.get(key) != plain:
            node.set_label(label)
        self._labels[key] = plain
        return node

    def on_resize(self) -> None:
        # Labels are cut to the pane's width: cut them again for the new one.
        self.update_rows(self.conn_rows)

    def kind_of(self, key: str | None) -> str | None:
        return None if key is None else self._kind.get(key)

    def select_key(self, key: str) -> bool:
        node = self._by_key.get(key)
        if node is None:
            return False
        self.move_cursor(node)
        # Nodes added in this same turn have no line yet: move again once laid out.
        self.call_after_refresh(self.move_cursor, node)
        self.post_message(self._selected(key))
        return True

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        event.stop()
        if event.node is not self.cursor_node:
            return  # a highlight that the cursor has already moved past
        key = event.node.data
        self.post_message(self._selected(key))

    def _selected(self, key: str | None) -> LinkSelected:
        kind = self._kind.get(key or "")
        conn = None if key is None else key.split(SEP, 1)[0]
        return LinkSelected(key if kind == "link" else None, conn)
