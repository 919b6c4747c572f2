"""Delivery tab: the selected delivery's timeline and its message, decoded or as hex."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from amqpcli.render.traffic import UNKNOWN_TIME
from amqpcli.tui.view import RAW_SHOWN, DeliveryDetail, TimelineRow
from amqpcli.tui.widgets import quiet
from amqpcli.tui.widgets.safe import literal, printable


def hex_lines(data: bytes, limit: int = RAW_SHOWN, size: int | None = None) -> Text:
    """`data`'s first `limit` bytes as hex lines; those left out of `size` (the whole
    message's, `data` being its start: by default its own length) are counted."""
    size = len(data) if size is None else size
    out = Text()
    view = data[:limit]
    for off in range(0, len(view), 16):
        chunk = view[off : off + 16]
        hx = " ".join(f"{b:02x}" for b in chunk)
        asc = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        out.append(f"{off:08x}  ", style="dim")
        out.append(f"{hx:<47}  ")
        out.append(f"{asc}\n", style="cyan")
    if size > len(view):
        out.append(f"… {size - len(view)} more bytes\n", style="dim")
    if not data:
        out.append("(no bytes)", style="dim")
    return out


def _delta(d: float | None) -> str:
    if d is None:
        return UNKNOWN_TIME
    if d < 0.001:
        return f"+{d * 1e6:.0f}µs"
    if d < 1:
        return f"+{d * 1000:.1f}ms"
    return f"+{d:.3f}s"


def timeline_table(rows: list[TimelineRow]) -> Table:
    t = Table(expand=True, box=None, pad_edge=False, header_style="bold")
    t.add_column("Δ", justify="right", no_wrap=True)
    t.add_column("side", no_wrap=True)
    t.add_column("event", no_wrap=True)
    t.add_column("detail")
    for r in rows:
        t.add_row(_delta(r.delta), literal(r.side), literal(r.what, "bold"), literal(r.detail))
    return t


class DeliveryPanel(VerticalScroll):
    raw: reactive[bool] = reactive(False)

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.detail: DeliveryDetail | None = None
        self._shown: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Static("Pick a delivery in the link's unsettled table (Enter).", id="delivery-title")
        yield Static("", id="delivery-timeline")
        yield Static("", id="delivery-message")

    def watch_raw(self, _: bool) -> None:
        self._shown = None
        if self.detail is not None:
            self.show(self.detail)

    def show(self, detail: DeliveryDetail | None, opened: str | None = None) -> None:
        """Show `detail`, the delivery `opened`; None: the model does not have it at this
        point (a replay before its first transfer, or older than the settled ones kept),
        and the last view of it stays, marked so."""
        if detail is None:
            last = self.detail
            if last is not None and last.key == opened and self._shown is not None \
                    and self._shown[-1] != "gone":
                self._shown = (*self._shown[:-1], "gone")
                title = literal(last.title, "bold")
                title.append("  not in the model at this point (not transferred yet, or "
                             "no longer kept)", style="bold yellow")
                quiet.update(self.query_one("#delivery-title", Static), title)
            return
        self.detail = detail
        key = (detail.key, len(detail.timeline), detail.summary, self.raw, "shown")
        if key == self._shown:
            return
        self._shown = key
        title = literal(detail.title, "bold")
        if detail.summary:
            title.append(f"  {printable(detail.summary)}")
        quiet.update(self.query_one("#delivery-title", Static), title)
        self.query_one("#delivery-timeline", Static).update(timeline_table(detail.timeline))
        body: RenderableType
        if self.raw:
            body = Group(Text(f"message bytes ({detail.size})", style="bold"),
                         hex_lines(detail.raw, size=detail.size))
        elif detail.message is None:
            body = Text("(no message bytes)", style="dim")
        else:
            body = detail.message
        self.query_one("#delivery-message", Static).update(body)
