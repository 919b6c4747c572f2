"""The Delivery tab of a large message: while its transfers are still coming it says so
(what came does not decode yet) and shows the first bytes only; once whole, it is decoded
and drawn once, not at every refresh (each refresh joined and decoded the whole payload
again: a 150 MB message took gigabytes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.tui import adapter
from amqpcli.tui.view import RAW_SHOWN
from tests.dissect.helpers import Script, write
from tests.tui.replaying import replayed

LINK = "c1|s0.0|client|sender"
KEY = f"{LINK}|{b't0'.hex()}"
PIECE = 60_000


def _capture(path: Path, pieces: int, whole: bool) -> Path:
    """One message in `pieces` transfer frames (the last missing unless `whole`)."""
    payload = Message(body=b"x" * (PIECE * pieces)).encode()
    parts = [payload[i:i + PIECE] for i in range(0, len(payload), PIECE)]
    s = Script().open().sender_link()
    for i, part in enumerate(parts if whole else parts[:-1]):
        last = i == len(parts) - 1
        s.c(c.Transfer(handle=0, delivery_id=0 if i == 0 else None,
                       delivery_tag=b"t0" if i == 0 else None,
                       message_format=0 if i == 0 else None, more=not last), payload=part)
    if whole:
        s.dispose(0, c.Accepted())
    return write(path, s)


def _detail(src: Any) -> Any:
    return src.snapshot(LINK, KEY, src.now()).delivery


def test_a_message_still_arriving_is_not_decoded(tmp_path: Path) -> None:
    src = replayed(_capture(tmp_path / "arriving.pcapng", 8, whole=False))
    src.controller.seek(len(src.controller) - 2)  # (at the end, the capture's end gave it up)
    d = _detail(src)
    assert d.summary.startswith("[transferring]"), d.summary
    assert str(d.message).startswith("(the message is arriving: ")
    assert len(d.raw) == RAW_SHOWN and d.size > 6 * PIECE


def test_a_whole_message_is_drawn_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[int] = []
    real = adapter.message_view

    def counted(payload: bytes) -> Any:
        drawn.append(len(payload))
        return real(payload)

    monkeypatch.setattr(adapter, "message_view", counted)
    src = replayed(_capture(tmp_path / "whole.pcapng", 8, whole=True))
    details = [_detail(src) for _ in range(5)]
    assert len(drawn) == 1 and drawn[0] == details[0].size
    assert all(d.message is details[0].message for d in details)
    assert len(details[0].raw) == RAW_SHOWN
