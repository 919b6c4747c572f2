"""A frame-log filter over a long store scans a few milliseconds per refresh: setting it
returns without testing every frame (each frame is formatted to be tested), and the scan
completes over the next refreshes with every match in order."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame
from amqpcli.tui.store import FrameStore
from amqpcli.tui.widgets.framelog import FrameLog


def _store(n: int) -> FrameStore:
    st = FrameStore(limit=n)
    for i in range(n):
        body = c.Flow(next_incoming_id=i, incoming_window=1, next_outgoing_id=0,
                      outgoing_window=1)
        st.append(float(i), "c1", "client", Frame(0, 8, 2, 0, 0, b"", body, b""))
    return st


def _sevens(rec: Any) -> Text:
    """A frame's line: its number, and "seven" for every seventh (what the filters find)."""
    return Text(f"{rec.seq} flow {'seven' if rec.seq % 7 == 0 else ''}")


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield FrameLog(_sevens)


def test_a_filter_over_a_long_log_is_scanned_a_slice_at_a_time() -> None:
    store = _store(60_000)

    async def run() -> None:
        app = _Host()
        async with app.run_test(size=(100, 30)):
            log = app.query_one(FrameLog)
            log.attach(store)
            log.set_filter("seven")
            assert log.scanning  # not all 60,000 at once...
            # ...nor the 20,000 a refresh could test before (1-2 s of a frozen screen with
            # the real formatter): a few milliseconds' worth
            assert len(log.seqs) < 20_000 // 7
            for _ in range(10_000):
                if not log.scanning:
                    break
                log.sync()
            assert not log.scanning
            assert log.seqs == list(range(0, 60_000, 7))

    asyncio.run(run())


def test_a_filter_set_while_frozen_shows_the_frozen_frames_that_match() -> None:
    # the log went empty until unfrozen: the new filter's scan stopped where the view was
    store = _store(100)

    async def run() -> None:
        app = _Host()
        async with app.run_test(size=(100, 30)):
            log = app.query_one(FrameLog)
            log.attach(store)
            log.sync()
            log.set_frozen(True)
            for i in range(100, 150):  # frames keep arriving, not shown while frozen
                body = c.Flow(next_incoming_id=i, incoming_window=1, next_outgoing_id=0,
                              outgoing_window=1)
                store.append(float(i), "c1", "client", Frame(0, 8, 2, 0, 0, b"", body, b""))
            log.set_filter("seven")
            for _ in range(1000):
                if not log.scanning:
                    break
                log.sync()
            assert log.seqs == list(range(0, 100, 7))
            assert log.pending == 50
            log.set_frozen(False)
            for _ in range(1000):
                log.sync()
                if not log.scanning:
                    break
            assert log.seqs == list(range(0, 150, 7))

    asyncio.run(run())
