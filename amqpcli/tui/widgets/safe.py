"""Peer-controlled text, shown literally and harmlessly.

Container-ids, hostnames, link names, addresses, error descriptions and the like come from
a peer or a capture, which may put anything in them. Two things must never happen when
they are shown:

* they are read as markup: `[/bold]` in a container-id made Rich raise `MarkupError`
  and stopped the app; so every such string goes into a `rich.text.Text` (never parsed),
* their control characters reach the terminal: an ESC sequence would drive it (colours,
  the window title, the clipboard), a newline breaks a one-line row. So C0 and C1 control
  characters, DEL and the bidirectional overrides are shown as escapes (`\\n`,
  `\\x1b`, `\\u202e`), as the frame log shows them.

Every widget that shows such a string goes through `printable()` or `literal()`, which
escape it once: a row's text marked `Shown` (a value `format_value` quoted, escaping its
control characters already) is shown as it is, so every pane shows a value as the frame
log and `pcap-dump` show it.
"""

from __future__ import annotations

from rich.text import Text

from amqpcli.render.text import printable as _printable
from amqpcli.tui.view import Shown

__all__ = ["literal", "printable"]


def printable(value: object) -> str:
    """`value` with its control characters and backslashes escaped; as it is when it is
    `Shown` (escaped already)."""
    return value if isinstance(value, Shown) else _printable(value)


def literal(value: object, style: str = "") -> Text:
    """`value` as `Text` that is never read as markup, its control characters escaped."""
    return Text(printable(value), style=style)
