"""Updating a `Static` ten times a second without re-laying out the screen each time.

`Static.update` asks for a layout pass, which reflows the whole screen: too costly at the
refresh rate. Here an update is skipped when the content is the same as last time, and the
layout pass is asked for only when the text's length changed (and with it, maybe, the
number of lines it needs).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

_KEY = "_quiet_key"


def update(static: Static, content: Any, key: object = None) -> None:
    """Show `content`; `key` identifies it (default: the plain text of a `Text` or str)."""
    if key is None:
        key = content.plain if isinstance(content, Text) else content
    old = getattr(static, _KEY, None)
    if old == key and old is not None:
        return
    setattr(static, _KEY, key)
    size_may_change = (
        old is None
        or not isinstance(key, str)
        or not isinstance(old, str)
        or len(key) != len(old)
    )
    static.update(content, layout=size_may_change)
