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

Every widget that shows such a string goes through `printable()` or `literal()`.
"""

from __future__ import annotations

import re

from rich.text import Text

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    short = _SHORT.get(ch)
    if short is not None:
        return short
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(value: object) -> str:
    """`value` as one line of text with every control character escaped."""
    s = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape, s)


def literal(value: object, style: str = "") -> Text:
    """`value` as `Text` that is never read as markup, its control characters escaped."""
    return Text(printable(value), style=style)
