"""The help screen: every key, by where it works, built from one table in `keys.py`."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from amqpcli.tui.keys import HELP

KEY_WIDTH = 12


def help_table() -> Group:
    """Each group's title on a line of its own (in the key column it was cut off), then its
    keys."""
    parts: list[RenderableType] = []
    for group, rows in HELP:
        parts.append(Text(""))
        parts.append(Text(group, style="bold"))
        t = Table(box=None, expand=True, show_header=False, pad_edge=False)
        t.add_column("key", style="bold cyan", no_wrap=True, width=KEY_WIDTH)
        t.add_column("what", ratio=1)
        for key, what in rows:
            t.add_row(key, what)
        parts.append(t)
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    """Esc or `?` closes it; `q` quits the app, as it does everywhere but in an input
    (the app's own `q` binding is not reached from a modal screen: it is repeated here)."""

    BINDINGS: ClassVar = [Binding("escape,question_mark", "dismiss", "Close"),
                          Binding("q", "app.quit", "Quit")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static("[bold]amqp tui — keys[/]   (Esc or ? closes, q quits)",
                         id="help-title")
            yield Static(help_table(), id="help-table")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
