"""Every renderer on hostile input: proton's fuzz corpora through decode, tree, line and JSON.

Whatever the bytes, rendering never raises, and every frame's JSON turns back into exactly
the bytes of that frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.cli.decode import decode_frames, decode_message, decode_values
from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
from amqpcli.render.frameline import item_line
from amqpcli.render.items import Item, item_bytes_from_json, item_to_json, item_tree
from amqpcli.render.text import plain_lines
from tests.paths import PROTON_VECTORS_DIR, require

FUZZ = require(PROTON_VECTORS_DIR / "fuzz")
FILES = sorted(p for p in FUZZ.rglob("*") if p.is_file())


def render_all(data: bytes, items: list[Item]) -> None:
    for it in items:
        plain_lines(item_tree(it))
        obj = json.loads(json.dumps(item_to_json(it, show_secrets=True)))
        if isinstance(it, Frame):
            assert item_bytes_from_json(obj) == data[it.offset : it.offset + it.size]
        elif not isinstance(it, FrameError):
            item_bytes_from_json(obj)
        if isinstance(it, (Frame, ProtocolHeader, FrameError)):
            item_line(it)


def test_corpora_present() -> None:
    assert len(FILES) > 800


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name[:10]}"
)
def test_decode_and_render_every_fuzz_input(path: Path) -> None:
    data = path.read_bytes()
    render_all(data, decode_frames(data, None)[0])
    render_all(data, decode_message(data))
    render_all(data, decode_values(data))
