"""Peer-controlled text reaches a terminal harmless: `printable` escapes control
characters, and the delivery lines of `pcap-dump` pass link names and error descriptions
through it (a capture's link name with an ESC sequence drove the terminal)."""

from __future__ import annotations

from amqpcli.render.text import printable


def test_control_characters_are_escaped() -> None:
    assert printable("odd\nname\x1b[31m\u202ex\x7f\t") == "odd\\nname\\x1b[31m\\u202ex\\x7f\\t"
    assert printable("plain é ✓") == "plain é ✓"


def test_delivery_lines_escape_link_names_and_error_descriptions() -> None:
    from types import SimpleNamespace

    from amqpcli.codec import composites as c
    from amqpcli.codec.types import Symbol
    from amqpcli.dissect.records import DeliveryRecord
    from amqpcli.render.deliveries import delivery_line

    conn = SimpleNamespace(label="c1")
    state = c.Rejected(error=c.Error(condition=Symbol("amqp:x"), description="bad\x1b]0;t\x07"))
    rec = DeliveryRecord(conn, "amqp-1.0", "odd\nname\x1b[31m", "q", "client", 0,  # type: ignore[arg-type]
                         b"t", 3, 1, "rejected", state, "receiver", False, False, 1.0, 1.5)
    line = delivery_line(rec)
    assert "\x1b" not in line and "\n" not in line and "\x07" not in line
    assert "odd\\nname\\x1b" in line and "bad\\x1b]0;t\\x07" in line
