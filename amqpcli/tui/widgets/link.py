"""Link tab: source and target as requested and granted, flow state, both unsettled maps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from amqpcli.render.traffic import UNKNOWN_TIME
from amqpcli.tui.messages import DeliverySelected
from amqpcli.tui.view import ConnDetail, LinkDetail, TerminusRow, UnsettledRow
from amqpcli.tui.widgets import quiet
from amqpcli.tui.widgets.safe import literal, printable

COLUMNS = ("id", "tag", "age", "sender state", "receiver state", "settled")

# The unsettled table fits its width: the id, the age and who settled keep their whole
# width; the tag and the states give way (cut with "…") down to these widths, and are
# shown whole in the delivery tab. Below that, the table scrolls sideways.
SHRINK_TO = {"tag": 6, "sender state": 8, "receiver state": 8}
SCROLLBAR = 2  # cells kept for the table's vertical scrollbar

TERMINI_SIDE_BY_SIDE = 100  # the panel's width from which source and target sit side by side


def terminus_table(title: str, rows: list[TerminusRow], field_width: int | None = None) -> Table:
    """Values fold onto more lines rather than being cut: this is where they are whole.
    `field_width` lines up the columns of the source's and the target's tables."""
    t = Table(title=title, title_justify="left", expand=True, box=None, pad_edge=False)
    t.add_column("field", style="dim", no_wrap=True, width=field_width)
    t.add_column("requested", overflow="fold", ratio=1)
    t.add_column("granted", overflow="fold", ratio=1)
    for r in rows:
        style = "bold yellow" if r.differs else ""
        t.add_row(literal(r.field), literal(r.requested, style), literal(r.granted, style))
    if not rows:
        t.add_row("-", "", "")
    return t


AGE_WIDTH = 6  # the age column's fixed width: every form of `_age` fits ("999ms", "119.9s")


def _age(s: float | None) -> str:
    """At most `AGE_WIDTH` characters, so the table never cuts an age into another unit
    (a cell keeps its column's width as the value changes); `-`: not known."""
    if s is None:
        return UNKNOWN_TIME
    if s < 0.9995:
        return f"{s * 1000:.0f}ms"
    if s < 119.95:
        return f"{s:.1f}s"
    if s < 119.5 * 60:
        return f"{s / 60:.0f}m"
    if s < 99.5 * 3600:
        return f"{s / 3600:.0f}h"
    return f"{min(s / 86400, 99999):.0f}d"


def _cell(value: object, style: str = "") -> Text:
    """A cell of one line: a value wider than its column ends in "…"."""
    t = literal(value, style)
    t.no_wrap = True
    t.overflow = "ellipsis"
    return t


def _settled(sender: bool, receiver: bool) -> Text:
    if sender and receiver:
        return Text("both", style="green")
    if sender or receiver:
        return Text("sender" if sender else "receiver", style="green")
    return Text("-", style="dim")


def unsettled_cells(r: UnsettledRow) -> tuple[object, ...]:
    return (
        _cell(r.delivery_id),
        _cell(r.tag),
        _age(r.age),
        _cell(r.sender_state),
        _cell(r.receiver_state),
        _settled(r.sender_settled, r.receiver_settled),
    )


def _cell_width(cell: object) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell_len(str(cell))


def needed_widths(cells: Iterable[tuple[object, ...]]) -> tuple[int, ...]:
    """What each column's header and values need."""
    need = [len(c) for c in COLUMNS]
    for row in cells:
        for i, cell in enumerate(row):
            need[i] = max(need[i], _cell_width(cell))
    need[COLUMNS.index("age")] = AGE_WIDTH
    return tuple(need)


def column_widths(cells: Iterable[tuple[object, ...]], width: int | None,
                  at_least: tuple[int, ...] = ()) -> tuple[int, ...]:
    """Each column's width: what its header and values need (and `at_least` that), or,
    when that is more than `width` cells (padding and scrollbar included), the shrinkable
    columns cut, the widest first, down to `SHRINK_TO`."""
    need = list(needed_widths(cells))
    for i, w in enumerate(at_least):
        need[i] = max(need[i], w)
    if width is None:
        return tuple(need)
    room = width - SCROLLBAR - 2 * len(COLUMNS)  # a cell of padding on either side
    excess = sum(need) - room
    floor = {i: SHRINK_TO[c] for i, c in enumerate(COLUMNS) if c in SHRINK_TO}
    while excess > 0:
        cut = [i for i in floor if need[i] > floor[i]]
        if not cut:
            break  # the table scrolls sideways
        i = max(cut, key=lambda j: need[j])
        # down to the next widest one (at least one cell), not past the floor nor the excess
        next_w = max([need[j] for j in cut if j != i], default=0)
        step = min(excess, need[i] - floor[i], max(1, need[i] - next_w))
        need[i] -= step
        excess -= step
    return tuple(need)


def _key(row_key: Any) -> str | None:
    """A highlighted row's delivery key; None for none (an arrow key in an empty table
    highlights row -1, whose key is None itself)."""
    value = getattr(row_key, "value", None)
    return None if value is None else str(value)


class UnsettledTable(DataTable[object]):
    """Rows keyed by delivery key, updated in place so the cursor stays on its delivery.
    Columns are sized to the table's width (`column_widths`): the table is built again
    when the widths change (a resize, a longer value). A column does not narrow as its
    widest value leaves (that would rebuild the table again and again while playing), only
    on a resize or another link."""

    def __init__(self, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kw)  # type: ignore[arg-type]
        self._cells: dict[str, tuple[object, ...]] = {}
        self._widths: tuple[int, ...] = ()
        self._needed: tuple[int, ...] = ()  # what the values shown so far needed

    def on_mount(self) -> None:
        self._rebuild([])

    def on_resize(self) -> None:
        self._needed = ()
        self._rebuild(self.keys)

    @property
    def keys(self) -> list[str]:
        return [str(rk.value) for rk in self.rows]

    def _fit(self) -> tuple[int, ...]:
        need = needed_widths(self._cells.values())
        if self._needed:
            need = tuple(max(a, b) for a, b in zip(need, self._needed))
        self._needed = need
        return column_widths((), self.size.width or None, need)

    def _rebuild(self, order: list[str], widths: tuple[int, ...] | None = None) -> None:
        widths = widths or self._fit()
        if widths == self._widths and order == self.keys:
            return
        cursor_key = self.cursor_key
        self._widths = widths
        self.clear(columns=True)
        for c, w in zip(COLUMNS, widths):
            self.add_column(Text(c, no_wrap=True, overflow="ellipsis"), key=c, width=w)
        for k in order:
            self.add_row(*self._cells[k], key=k)
        if cursor_key is not None and cursor_key in self._cells:
            self.move_cursor(row=self.get_row_index(cursor_key))

    def update_rows(self, rows: list[UnsettledRow]) -> None:
        want = {r.key: unsettled_cells(r) for r in rows}
        old_cells, self._cells = self._cells, want
        order = list(want)
        widths = self._fit()
        if widths != self._widths:
            self._rebuild(order, widths)
            return
        for key in [k for k in old_cells if k not in want]:
            self.remove_row(key)
        for key, cells in want.items():
            old = old_cells.get(key)
            if old is None:
                self.add_row(*cells, key=key)
            elif old != cells:
                for col, new, prev in zip(COLUMNS, cells, old):
                    if new != prev:  # the widths hold every value: no column widens
                        self.update_cell(key, col, new, update_width=False)
        if self.keys != order:
            # Rows are appended; rebuild only when that broke the maps' delivery-id order.
            self._rebuild(order, widths)

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
        self._needed = ()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = _key(event.row_key)
        self.post_message(DeliverySelected(key))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = _key(event.row_key)
        self.post_message(DeliverySelected(key, open=True))


def conn_view(conn: ConnDetail) -> Group:
    t = Table(expand=True, box=None, pad_edge=False, header_style="bold")
    t.add_column("", style="dim", no_wrap=True)
    t.add_column("client (connected)", overflow="fold")
    t.add_column("server", overflow="fold")
    for what, a, b in conn.fields:  # the peers chose most of these: shown literally
        t.add_row(literal(what), literal(a), literal(b))
    parts: list[Any] = [t, Text("")]
    head = Text(f"violations: {conn.violations_total}", style="bold red" if conn.violations_total else "bold")
    if conn.violations_total > len(conn.violations):
        head.append(f" (last {len(conn.violations)} shown)", style="dim")
    parts.append(head)
    parts.extend(literal(v) for v in conn.violations)
    if conn.after_gap_total:
        # as pcap-dump's after-gap notices: what the lost bytes could explain
        parts.append(Text(""))
        head = Text(f"after-gap notices: {conn.after_gap_total}", style="bold yellow")
        head.append(" (after bytes the capture lost, so not called violations)", style="dim")
        if conn.after_gap_total > len(conn.after_gap):
            head.append(f" (last {len(conn.after_gap)} shown)", style="dim")
        parts.append(head)
        parts.extend(literal(v) for v in conn.after_gap)
    return Group(*parts)


class Packed:
    """Items on as few lines as the width allows, a line breaking only between two items
    (a name and its value stay together)."""

    def __init__(self, items: list[Text], gap: int = 3) -> None:
        self.items = items
        self.gap = gap

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = Text()
        for item in self.items:
            if line.cell_len and line.cell_len + self.gap + item.cell_len > width:
                yield line
                line = Text()
            if line.cell_len:
                line.append(" " * self.gap)
            line.append_text(item)
        if line.cell_len:
            yield line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widths = [i.cell_len for i in self.items] or [0]
        return Measurement(max(widths), sum(widths) + self.gap * (len(widths) - 1))


def flow_view(flow: list[tuple[str, str]]) -> Packed:
    items = []
    for name, value in flow:
        t = Text(f"{name} ", style="dim")
        t.append(printable(value))
        items.append(t)
    return Packed(items)


class InfoBox(VerticalScroll):
    """The link's title, flow and termini, scrolled when they do not fit: a stop of Tab
    (to scroll with the keys) only then."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0


class LinkPanel(Vertical):
    """Shows one `LinkDetail`, or a connection's `ConnDetail` when the cursor is on a
    connection or session; a hint until then.

    The title, flow and termini (or the connection's facts) scroll in a box of their own
    above the unsettled table, so the table keeps its share of a short terminal."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.detail: LinkDetail | None = None
        self.conn: ConnDetail | None = None
        self._cap: int | None = None

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < TERMINI_SIDE_BY_SIDE, "-stacked")
        self._share()

    def _share(self) -> None:
        """The info box's height at most, for a link: half the panel, or what the unsettled
        table leaves when it needs less than the other half (a few rows, none)."""
        box = self.query_one(InfoBox)
        height = self.size.height
        if self.detail is None or not height:
            cap: int | None = None  # the stylesheet's
        else:
            table = self.query_one(UnsettledTable)
            title = self.query_one("#unsettled-title", Static)
            need = title.styles.margin.top + 2 + max(1, table.row_count)  # title, header, rows
            cap = max(height // 2, height - need)
        if self._cap != cap:
            self._cap = cap
            box.styles.max_height = cap

    def compose(self) -> ComposeResult:
        with InfoBox(id="link-info"):
            yield Static("Select a link in the tree.", id="link-title")
            yield Static("", id="link-flow")
            with Horizontal(id="link-termini"):
                yield Static("", id="link-source")
                yield Static("", id="link-target")
            yield Static("", id="conn-info")
        # In a box of its own: when its tab is hidden, the table's focus must not move to
        # a focusable sibling of its pane (the info box), which would show the pane again.
        with Vertical(id="unsettled-box"):
            yield Static("", id="unsettled-title")
            yield UnsettledTable(id="unsettled")

    def show(self, detail: LinkDetail | None, conn: ConnDetail | None = None) -> None:
        table = self.query_one(UnsettledTable)
        title_w = self.query_one("#link-title", Static)
        info = self.query_one("#conn-info", Static)
        self.set_class(detail is not None, "-link")
        self.set_class(detail is None and conn is not None, "-conn")
        self.conn = conn if detail is None else None
        if detail is None:
            if self.detail is not None:
                table.clear_rows()
            for wid in ("#link-flow", "#link-source", "#link-target", "#unsettled-title"):
                quiet.update(self.query_one(wid, Static), "")
            self.detail = None
            self._share()
            if conn is None:
                quiet.update(title_w, "Select a link in the tree.")
                return
            quiet.update(title_w, literal(conn.title, "bold"))
            key = (tuple(conn.fields), tuple(conn.violations), conn.violations_total,
                   tuple(conn.after_gap), conn.after_gap_total)
            quiet.update(info, conn_view(conn), key=key)
            return
        if self.detail is None or self.detail.key != detail.key:
            table.clear_rows()
        self.detail = detail
        title = literal(detail.title, "bold")
        for w in detail.warnings:
            title.append(f"  ⚠ {printable(w)}", style="bold yellow")
        quiet.update(title_w, title)
        quiet.update(self.query_one("#link-flow", Static), flow_view(detail.flow),
                     key="\0".join(f"{n} {v}" for n, v in detail.flow))
        # an AMQP 0-10 destination has no termini: none shown rather than empty tables
        self.query_one("#link-termini").display = detail.termini
        fw = max([len("field")] + [cell_len(printable(r.field)) for r in (*detail.source, *detail.target)])
        quiet.update(self.query_one("#link-source", Static), terminus_table("source", detail.source, fw),
                     key=("source", fw, tuple((r.field, r.requested, r.granted) for r in detail.source)))
        quiet.update(self.query_one("#link-target", Static), terminus_table("target", detail.target, fw),
                     key=("target", fw, tuple((r.field, r.requested, r.granted) for r in detail.target)))
        shown = len(detail.unsettled)
        more = f" (oldest {shown} shown)" if detail.unsettled_total > shown else ""
        quiet.update(self.query_one("#unsettled-title", Static),
                     Text(f"unsettled: {detail.unsettled_total}{more}", style="bold"))
        table.update_rows(detail.unsettled)
        self._share()
