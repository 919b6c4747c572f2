"""A capture replayed to its end: the source, or the app on it (what most TUI tests open)."""

from __future__ import annotations

from pathlib import Path

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource, load_capture


def replayed(path: Path) -> ReplaySource:
    """A replay source of the capture at `path`, every frame played."""
    src = ReplaySource(loaded=load_capture(path))
    assert src.controller is not None
    src.controller.seek(len(src.controller))
    return src


def replay_app(path: Path) -> AmqpTui:
    """The TUI on `replayed(path)`."""
    return AmqpTui(replayed(path))
