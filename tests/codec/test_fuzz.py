"""Proton's message-decode fuzz corpus: every input ends quickly in values or a DecodeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import DecodeError, decode_all, encode
from amqpcli.codec.message import Message
from tests.paths import PROTON_VECTORS_DIR, require

CORPUS = require(PROTON_VECTORS_DIR / "fuzz" / "fuzz-message-decode")
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file())
SECTIONS = (
    "header",
    "delivery_annotations",
    "message_annotations",
    "properties",
    "application_properties",
    "body",
    "footer",
)


def test_corpus_is_there() -> None:
    assert len(FILES) >= 300


@pytest.mark.timeout(5)
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name[:12]}/{p.name[:12]}")
def test_message_decode_ends_cleanly(path: Path) -> None:
    data = path.read_bytes()
    try:
        m = Message.decode(data)
        for name in SECTIONS:
            getattr(m, name)
        repr(m)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)
        assert "\n" not in str(e)
        return
    # what decoded re-encodes to the bytes it came from
    assert m.encode() == data


@pytest.mark.timeout(5)
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name[:12]}/{p.name[:12]}")
def test_value_decode_ends_cleanly(path: Path) -> None:
    data = path.read_bytes()
    try:
        values = decode_all(data)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)
        return
    for v in values:
        encode(v)
