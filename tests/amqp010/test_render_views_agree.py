"""The line of `pcap-dump` and the tree of `amqp decode` write a 0-10 value alike: a long
body says its size once, a sequence-set as ranges, a uuid as a uuid, booleans in words."""

from __future__ import annotations

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Assembly,
    Command,
    Control,
    StreamDecoder,
    Struct,
    encode_assembly,
)
from amqpcli.render.amqp010 import tree_010
from amqpcli.render.traffic import line_010


def _one(method: Control | Command, header: tuple[Struct, ...] = (),
         body: bytes | None = None) -> Assembly:
    data = PROTOCOL_HEADER + encode_assembly(method, 1, header, body)
    (item,) = [i for i in StreamDecoder().feed(data) if isinstance(i, Assembly)]
    return item


def test_a_long_body_says_its_size_once() -> None:
    # was `body b"BBBB…"…(700 bytes) (700 bytes)` and `0x0001…(1024 bytes)  (1024 bytes)`
    text = _one(Command.make("message.transfer", destination="d"), body=b"B" * 700)
    line = line_010(text)
    assert line.endswith('| body b"' + "B" * 60 + '"… (700 bytes)')
    assert line.count("700 bytes") == 1
    binary = _one(Command.make("message.transfer", destination="d"), body=bytes(range(256)) * 4)
    (body,) = [x for x in tree_010(binary) if x.startswith("  body:")]
    assert body == "  body: 0x" + bytes(range(60)).hex() + "…  (1024 bytes)"
    assert line_010(binary).endswith("… (1024 bytes)")
    # a body within the cut-off is whole, with no mark
    short = _one(Command.make("message.transfer", destination="d"), body=b"B" * 60)
    assert line_010(short).endswith('"' + "B" * 60 + '" (60 bytes)')
    assert tree_010(short)[-1] == '  body: b"' + "B" * 60 + '"  (60 bytes)'
