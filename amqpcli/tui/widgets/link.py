"""Link tab: source and target as requested and granted, flow state, both unsettled maps."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from amqpcli.tui.messages import DeliverySelected
from amqpcli.tui.view import ConnDetail, LinkDetail, TerminusRow, UnsettledRow
from amqpcli.tui.widgets import quiet
from amqpcli.tui.widgets.safe import literal, printable

COLUMNS = ("id", "tag", "age", "sender state", "receiver state", "snd settled", "rcv settled")


def terminus_table(title: str, rows: list[TerminusRow]) -> Table:
    t = Table(title=title, title_justify="left", expand=True, box=None, pad_edge=False)
    t.add_column("field", style="dim", no_wrap=True)
    t.add_column("requested")
    t.add_column("granted")
    for r in rows:
        style = "bold yellow" if r.differs else ""
        t.add_row(literal(r.field), literal(r.requested, style), literal(r.granted, style))
    if not rows:
        t.add_row("-", "", "")
    return t


AGE_WIDTH = 6  # the age column's fixed width: every form of `_age` fits ("999ms", "119.9s")


def _age(s: float) -> str:
    """At most `AGE_WIDTH` characters, so the table never cuts an age into another unit
    (a cell keeps its column's width as the value changes)."""
    if s < 0.9995:
        return f"{s * 1000:.0f}ms"
    if s < 119.95:
        return f"{s:.1f}s"
    if s < 119.5 * 60:
        return f"{s / 60:.0f}m"
    if s < 99.5 * 3600:
        return f"{s / 3600:.0f}h"
    return f"{min(s / 86400, 99999):.0f}d"


def _flag(b: bool) -> Text:
    return Text("yes", style="green") if b else Text("no", style="dim")


def unsettled_cells(r: UnsettledRow) -> tuple[object, ...]:
    return (
        literal(r.delivery_id),
        literal(r.tag),
        _age(r.age),
        literal(r.sender_state),
        literal(r.receiver_state),
        _flag(r.sender_settled),
        _flag(r.receiver_settled),
    )


class UnsettledTable(DataTable[object]):
    """Rows keyed by delivery key, updated in place so the cursor stays on its delivery."""

    def __init__(self, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kw)  # type: ignore[arg-type]
        self._cells: dict[str, tuple[object, ...]] = {}

    def on_mount(self) -> None:
        for c in COLUMNS:
            self.add_column(c, key=c, width=AGE_WIDTH if c == "age" else None)

    @property
    def keys(self) -> list[str]:
        return [str(rk.value) for rk in self.rows]

    def update_rows(self, rows: list[UnsettledRow]) -> None:
        want = {r.key: r for r in rows}
        for key in [k for k in self._cells if k not in want]:
            self.remove_row(key)
            del self._cells[key]
        for r in rows:
            cells = unsettled_cells(r)
            old = self._cells.get(r.key)
            if old is None:
                self.add_row(*cells, key=r.key)
            elif old != cells:
                for col, new, prev in zip(COLUMNS, cells, old):
                    if new != prev:
                        # The age column is wide enough for every age; the others (states
                        # that change now and then) widen for their new value.
                        self.update_cell(r.key, col, new, update_width=col != "age")
            self._cells[r.key] = cells
        order = [r.key for r in rows]
        if self.keys != order:
            # Rows are appended; rebuild only when that broke the maps' delivery-id order.
            cursor_key = self.cursor_key
            self.clear()
            for k in order:
                self.add_row(*self._cells[k], key=k)
            if cursor_key is not None and cursor_key in self._cells:
                self.move_cursor(row=self.get_row_index(cursor_key))

    @property
    def cursor_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            rk, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - the cursor is outside the rows right after a clear
            return None
        return None if rk.value is None else str(rk.value)

    def clear_rows(self) -> None:
        self.clear()
        self._cells.clear()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = event.row_key.value
        self.post_message(DeliverySelected(None if key is None else str(key)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event.row_key.value
        self.post_message(DeliverySelected(None if key is None else str(key), open=True))


def conn_view(conn: ConnDetail) -> Group:
    t = Table(expand=True, box=None, pad_edge=False, header_style="bold")
    t.add_column("", style="dim", no_wrap=True)
    t.add_column("client (connected)")
    t.add_column("server")
    for what, a, b in conn.fields:  # the peers chose most of these: shown literally
        t.add_row(literal(what), literal(a), literal(b))
    parts: list[Any] = [t, Text("")]
    head = Text(f"violations: {conn.violations_total}", style="bold red" if conn.violations_total else "bold")
    if conn.violations_total > len(conn.violations):
        head.append(f" (last {len(conn.violations)} shown)", style="dim")
    parts.append(head)
    parts.extend(literal(v) for v in conn.violations)
    return Group(*parts)


class LinkPanel(Vertical):
    """Shows one `LinkDetail`, or a connection's `ConnDetail` when the cursor is on a
    connection or session; a hint until then."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.detail: LinkDetail | None = None
        self.conn: ConnDetail | None = None

    def compose(self) -> ComposeResult:
        yield Static("Select a link in the tree.", id="link-title")
        yield Static("", id="link-flow")
        with Horizontal(id="link-termini"):
            yield Static("", id="link-source")
            yield Static("", id="link-target")
        yield Static("", id="unsettled-title")
        yield UnsettledTable(id="unsettled")
        yield Static("", id="conn-info")

    def show(self, detail: LinkDetail | None, conn: ConnDetail | None = None) -> None:
        table = self.query_one(UnsettledTable)
        title_w = self.query_one("#link-title", Static)
        info = self.query_one("#conn-info", Static)
        table.display = detail is not None
        info.display = detail is None and conn is not None
        self.conn = conn if detail is None else None
        if detail is None:
            if self.detail is not None:
                table.clear_rows()
            for wid in ("#link-flow", "#link-source", "#link-target", "#unsettled-title"):
                quiet.update(self.query_one(wid, Static), "")
            self.detail = None
            if conn is None:
                quiet.update(title_w, "Select a link in the tree.")
                return
            quiet.update(title_w, literal(conn.title, "bold"))
            key = (tuple(conn.fields), tuple(conn.violations), conn.violations_total)
            quiet.update(info, conn_view(conn), key=key)
            return
        if self.detail is None or self.detail.key != detail.key:
            table.clear_rows()
        self.detail = detail
        title = literal(detail.title, "bold")
        for w in detail.warnings:
            title.append(f"  ⚠ {printable(w)}", style="bold yellow")
        quiet.update(title_w, title)
        flow = Text()
        for name, value in detail.flow:
            flow.append(f"{name} ", style="dim")
            flow.append(f"{printable(value)}   ")
        quiet.update(self.query_one("#link-flow", Static), flow)
        quiet.update(self.query_one("#link-source", Static), terminus_table("source", detail.source),
                     key=("source", tuple((r.field, r.requested, r.granted) for r in detail.source)))
        quiet.update(self.query_one("#link-target", Static), terminus_table("target", detail.target),
                     key=("target", tuple((r.field, r.requested, r.granted) for r in detail.target)))
        shown = len(detail.unsettled)
        more = f" (oldest {shown} shown)" if detail.unsettled_total > shown else ""
        quiet.update(self.query_one("#unsettled-title", Static),
                     Text(f"unsettled: {detail.unsettled_total}{more}", style="bold"))
        table.update_rows(detail.unsettled)
