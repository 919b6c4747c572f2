"""A transfer's line tells the AMQP message format (0 or left out) without a call per
frame, and judges the payload as `amqp_format` would."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.render import frameline

BAD = b"\x00\x53\x77\xff\x01"


def line(fmt: int | None) -> str:
    (frame,) = FrameReader().feed(encode_frame(c.Transfer(
        handle=0, delivery_id=0, delivery_tag=b"t", message_format=fmt, settled=True),
        0, payload=BAD))
    return frameline.frame_line(frame, say_invalid=True)


def test_no_call_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def called(_: object) -> bool:
        raise AssertionError("amqp_format called for a frame line")

    monkeypatch.setattr(frameline, "amqp_format", called, raising=False)
    assert "not a valid message" in line(0)
    assert "not a valid message" in line(None)
    assert "valid message" not in line(0x80013700)
