"""The frame reader on hostile input: random bytes and proton's connection-driver corpus.

Whatever arrives, the reader ends in items and FrameErrors, never another exception, and it
consumes the whole input.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.codec.composites import Open, Transfer
from amqpcli.codec.frames import (
    AMQP_HEADER,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
    encode_frame,
)
from amqpcli.codec.types import UInt
from tests.paths import PROTON_VECTORS_DIR, require

FUZZ_DIR = PROTON_VECTORS_DIR / "fuzz" / "fuzz-connection-driver"
FUZZ_FILES = sorted(p for p in require(FUZZ_DIR).rglob("*") if p.is_file())


def _read(data: bytes, chunk: int) -> list[object]:
    r = FrameReader(max_frame_size=None)
    items: list[object] = []
    for i in range(0, len(data), chunk):
        items += r.feed(data[i : i + chunk])
    items += r.close()
    for it in items:
        assert isinstance(it, (Frame, FrameError, ProtocolHeader))
    consumed = r.offset + r.opaque_bytes
    assert r.pending == 0 and consumed == len(data)
    return items


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=1, max_value=64))
def test_random_bytes_end_in_items(data: bytes, chunk: int) -> None:
    _read(data, chunk)


_VALID = (
    AMQP_HEADER
    + encode_frame(Open(container_id="c"))
    + encode_frame(
        Transfer(handle=UInt(0), delivery_id=UInt(1), delivery_tag=b"t"),
        payload=b"\x00\x53\x77\x40",
    )
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_VALID) - 1), st.integers(0, 255)), max_size=6))
def test_mutated_valid_stream_end_in_items(flips: list[tuple[int, int]]) -> None:
    data = bytearray(_VALID)
    for pos, value in flips:
        data[pos] = value
    _read(bytes(data), 7)


def test_corpus_is_present() -> None:
    assert len(FUZZ_FILES) > 100


@pytest.mark.timeout(5)
@pytest.mark.parametrize("path", FUZZ_FILES, ids=lambda p: f"{p.parent.name}/{p.name[:12]}")
def test_proton_connection_driver_corpus(path: Path) -> None:
    data = path.read_bytes()
    whole = _read(data, len(data) or 1)
    assert _read(data, 1000) == whole
