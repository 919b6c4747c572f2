"""Snapshots (SVG) of the main screens, from a replay of a made-up conversation.

Regenerate after a deliberate change of the layout: `pytest tests/tui/test_snapshots.py
--snapshot-update`, then look at the SVGs in `tests/tui/__snapshots__/`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.tui.synth import write_conversation
from amqpcli.tui.widgets.framelog import FrameLog
from amqpcli.tui.widgets.link import UnsettledTable
from tests.tui.replaying import replay_app

SIZE = (130, 40)
ORDERS = "c1|s0.0|client|orders-sender"


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "synth.pcapng"
    write_conversation(path, 60, batch=20)
    return path


async def _on_orders(pilot: Any) -> None:
    app = pilot.app
    app.select_link(ORDERS)
    await pilot.pause()


def test_link_tab(snap_compare: Any, capture: Path) -> None:
    assert snap_compare(replay_app(capture), terminal_size=SIZE, run_before=_on_orders)


def test_delivery_tab(snap_compare: Any, capture: Path) -> None:
    async def open_delivery(pilot: Any) -> None:
        await _on_orders(pilot)
        pilot.app.query_one(UnsettledTable).focus()
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(replay_app(capture), terminal_size=SIZE, run_before=open_delivery)


def test_frames_tab(snap_compare: Any, capture: Path) -> None:
    async def frames_at_end(pilot: Any) -> None:
        await pilot.press("3")
        log = pilot.app.query_one(FrameLog)
        log.focus()
        await pilot.pause()
        log.action_bottom()
        await pilot.pause()

    assert snap_compare(replay_app(capture), terminal_size=SIZE, run_before=frames_at_end)


def test_help_screen(snap_compare: Any, capture: Path) -> None:
    assert snap_compare(replay_app(capture), terminal_size=SIZE, press=["question_mark"])
