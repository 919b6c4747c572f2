"""Left pane: connections → sessions → links with live counters and warning marks."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from amqpcli.tui.adapter import SEP
from amqpcli.tui.messages import LinkSelected
from amqpcli.tui.view import ConnRow, LinkRow, SessionRow
from amqpcli.tui.widgets.safe import printable

WARN = "⚠"


def _rate(r: float) -> str:
    if r >= 1000:
        return f"{r / 1000:.1f}k/s"
    return f"{r:.0f}/s"


NAME_WIDTH = 22


def short(name: str, width: int = NAME_WIDTH) -> str:
    """Long link names (often a UUID and an address) cut in the middle: both ends tell."""
    if len(name) <= width:
        return name
    head = width // 3
    return name[:head] + "…" + name[len(name) - (width - head - 1) :]


def link_label(row: LinkRow) -> Text:
    t = Text()
    if row.warnings:
        t.append(f"{WARN} ", style="bold yellow")
    arrow = "→" if row.role == "sender" else "←"
    t.append(f"{arrow} {short(printable(row.name))}", style="bold" if row.ours else "")
    credit = "-" if row.credit is None else str(row.credit)
    t.append(f"  d:{row.deliveries} u:{row.unsettled} c:{credit} {_rate(row.rate)}", style="dim")
    return t


def session_label(row: SessionRow) -> Text:
    t = Text()
    if row.warnings:
        t.append(f"{WARN} ", style="bold yellow")
    t.append(printable(row.label))
    return t


def conn_label(row: ConnRow) -> Text:
    t = Text()
    if row.violations:
        t.append(f"✖{len(row.violations)} ", style="bold red")
    elif row.warnings:
        t.append(f"{WARN} ", style="bold yellow")
    t.append(printable(row.label), style="bold")
    return t


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

    # Keys of the links in tree order, for tests and for "next link" commands.
    @property
    def link_keys(self) -> list[str]:
        return [lk.key for c in self.conn_rows for s in c.sessions for lk in s.links]

    def update_rows(self, rows: list[ConnRow]) -> None:
        self.conn_rows = rows
        seen: set[str] = set()
        for c in rows:
            cn = self._node(self.root, c.key, "conn", conn_label(c))
            seen.add(c.key)
            for s in c.sessions:
                sn = self._node(cn, s.key, "session", session_label(s))
                seen.add(s.key)
                for lk in s.links:
                    self._node(sn, lk.key, "link", link_label(lk), leaf=True)
                    seen.add(lk.key)
        for key in [k for k in self._by_key if k not in seen]:
            node = self._by_key.pop(key)
            self._kind.pop(key, None)
            self._labels.pop(key, None)
            if node.tree is self and node.parent is not None and node in node.parent.children:
                node.remove()

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
