"""The help screen: every key, by where it works, built from one table in `keys.py`."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from amqpcli.tui.keys import HELP


def help_table() -> Table:
    t = Table(box=None, expand=True, show_header=False, pad_edge=False)
    t.add_column("key", style="bold cyan", no_wrap=True, width=12)
    t.add_column("what")
    for group, rows in HELP:
        t.add_row("", "")
        t.add_row(f"[bold]{group}[/]", "")
        for key, what in rows:
            t.add_row(key, what)
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static("[bold]amqp tui — keys[/]   (Esc closes)", id="help-title")
            yield Static(help_table(), id="help-table")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
