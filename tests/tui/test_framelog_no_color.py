"""With NO_COLOR set, Textual draws every line through its monochrome filter, which needs a
style on every segment: the frame log's lines (plain text between styled parts) died
there as soon as the Frames tab was drawn (`'NoneType' object has no attribute 'color'`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame
from amqpcli.tui.store import FrameStore
from amqpcli.tui.widgets.framelog import FrameLog


def _line(rec: Any) -> Text:
    """Plain text with one styled part, as most frame lines are, or plain text alone, as a
    protocol header's line is (Rich gives its segment no style at all)."""
    if rec.seq % 2:
        return Text(f"{rec.seq} -> AMQP 1.0 SASL protocol header (03 01 00 00)")
    text = Text(f"{rec.seq} ")
    text.append("flow", style="bold cyan")
    text.append(" next-incoming-id=1")
    return text


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield FrameLog(_line)


def test_frame_lines_are_drawn_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    store = FrameStore(limit=10)
    for i in range(5):
        body = c.Flow(next_incoming_id=i, incoming_window=1, next_outgoing_id=0,
                      outgoing_window=1)
        store.append(float(i), "c1", "client", Frame(0, 8, 2, 0, 0, b"", body, b""))

    async def run() -> None:
        app = _Host()
        async with app.run_test(size=(80, 12)) as pilot:
            log = app.query_one(FrameLog)
            log.attach(store)
            log.sync()
            await pilot.pause()
            await pilot.resize_terminal(81, 12)  # drawn again, through the filter
            await pilot.pause()
            for y, start in ((0, "0 flow next-incoming-id=1"), (1, "1 -> AMQP 1.0 SASL")):
                strip = log.render_line(y)
                assert strip.text.startswith(start)
                assert all(seg.style is not None for seg in strip)

    asyncio.run(run())
