"""SASL PLAIN passwords never shown unless asked: tree, one-line, JSON all go through redact()."""

from __future__ import annotations

import json

from amqpcli.codec.composites import SaslInit
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import item_to_json, item_tree
from amqpcli.render.redact import redact, redact_plain_response
from amqpcli.render.text import format_value, plain_lines, value_tree

PLAIN = SaslInit(
    mechanism=Symbol("PLAIN"), initial_response=b"admin\x00alice\x00s3cr3t-pw", hostname="h"
)


def test_redact_replaces_only_the_password() -> None:
    r = redact(PLAIN)
    assert r.initial_response == b"admin\x00alice\x00***"
    assert r.mechanism == Symbol("PLAIN") and r.hostname == "h"
    assert PLAIN.initial_response == b"admin\x00alice\x00s3cr3t-pw"  # the original is untouched
    assert redact(PLAIN, show_secrets=True) is PLAIN
    assert redact_plain_response(b"garbage") == b"***"


def test_other_mechanisms_and_values_pass_through() -> None:
    anon = SaslInit(mechanism=Symbol("ANONYMOUS"), initial_response=b"trace")
    assert redact(anon) is anon
    assert redact("s3cr3t-pw") == "s3cr3t-pw"
    lower = SaslInit(mechanism=Symbol("plain"), initial_response=b"\x00u\x00pw")
    assert redact(lower).initial_response == b"\x00u\x00***"


def test_every_renderer_hides_the_password() -> None:
    (frame,) = FrameReader().feed(encode_frame(PLAIN, type=1))
    texts = [
        frame_line(frame),
        "\n".join(plain_lines(item_tree(frame))),
        "\n".join(plain_lines(value_tree(PLAIN))),
        format_value(PLAIN),
        json.dumps(item_to_json(frame)),
    ]
    for text in texts:
        assert "s3cr3t" not in text and "czNjcjN0" not in text, text
        assert "alice" in text or "YWxpY2U" in text
    assert item_to_json(frame)["redacted"] is True
    shown = [
        frame_line(frame, show_secrets=True),
        "\n".join(plain_lines(item_tree(frame, show_secrets=True))),
        json.dumps(item_to_json(frame, show_secrets=True)),
    ]
    for text in shown[:2]:
        assert "s3cr3t-pw" in text
    assert "redacted" not in json.loads(shown[2])
