"""How 0-10 items are written: one line, the tree of `amqp decode`, and JSON."""

from __future__ import annotations

from amqpcli.amqp010 import PROTOCOL_HEADER, Assembly, Control, StreamDecoder, encode_assembly
from amqpcli.render.traffic import json_010


def _items(*methods: Control) -> list[Assembly]:
    data = PROTOCOL_HEADER + b"".join(encode_assembly(m) for m in methods)
    return [i for i in StreamDecoder().feed(data) if isinstance(i, Assembly)]


def _start_ok(mechanism: str, response: bytes) -> Assembly:
    return _items(Control.make("connection.start-ok", mechanism=mechanism, response=response,
                               locale="en_US"))[0]


def test_a_masked_sasl_response_is_flagged_in_json() -> None:
    item = _start_ok("PLAIN", b"\x00alice\x00secretpw")
    assert json_010(item)["redacted"] is True
    shown = json_010(item, show_secrets=True)
    assert "redacted" not in shown
    assert "redacted" not in json_010(_start_ok("ANONYMOUS", b"guest@vm"))
