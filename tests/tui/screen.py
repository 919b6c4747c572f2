"""What a headless app shows, as text: the compositor's whole screen, without its own
styling (so a control character left in it came from the strings shown)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console


def screen_text(app: Any) -> str:
    w, h = app.size
    con = Console(width=w, height=h, file=io.StringIO(), force_terminal=True,
                  color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    con.print(app.screen._compositor.render_update(full=True,
                                                   screen_stack=app._background_screens))
    return con.export_text(styles=False)
