"""The line of `pcap-dump` and the tree of `amqp decode` write a 0-10 value alike: a long
body says its size once, a sequence-set as ranges, a uuid as a uuid, booleans in words."""

from __future__ import annotations

import uuid

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Assembly,
    Command,
    Control,
    SequenceSet,
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


def test_sets_uuids_and_booleans_read_alike_in_both_views() -> None:
    # decode's tree gave {'sequence-set': [[0, 3]]} and {'uuid': '…abc'} (Python reprs of
    # their JSON); pcap-dump's line set-redelivered=True and redelivered=True
    completed = _one(Control.make("session.completed", commands=SequenceSet(((0, 3), (7, 7)))))
    assert "commands=0-3,7" in line_010(completed)
    assert "  commands: 0-3,7" in tree_010(completed)
    release = _one(Command.make("message.release", transfers=SequenceSet.of(102),
                                set_redelivered=True))
    assert "transfers=102 set-redelivered=true" in line_010(release)
    assert {"  transfers: 102", "  set-redelivered: true"} <= set(tree_010(release))
    transfer = _one(Command.make("message.transfer", destination="d"),
                    (Struct.make("message.delivery-properties", redelivered=True),
                     Struct.make("message.message-properties", message_id=uuid.UUID(int=0xabc))))
    line, tree = line_010(transfer), tree_010(transfer)
    assert "delivery-properties{redelivered=true}" in line
    assert "message-properties{message-id=00000000-0000-0000-0000-000000000abc}" in line
    assert "    redelivered: true" in tree
    assert "    message-id: 00000000-0000-0000-0000-000000000abc" in tree
