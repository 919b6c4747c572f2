"""A described list with more items than its composite has fields (a newer peer's
fields, or damage): the tree shows them after the fields, as the JSON keeps them (its
`encoded` bytes). A masked SASL performative shows none: its items may hold the
secret; nor does the JSON keep bytes in which a SASL performative begins."""

from __future__ import annotations

import base64
import json

from amqpcli.codec import decode
from amqpcli.codec.composites import AmqpValue, Open, Properties, SaslInit
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.render.text import plain_lines, value_tree
from tests.net.clirun import amqp

REJECTED_AND_MORE = bytes.fromhex("005325c00604404040" "5405")  # rejected, 3 items more


def test_items_beyond_the_fields_are_shown() -> None:
    assert plain_lines(value_tree(decode(REJECTED_AND_MORE)[0])) == [
        "rejected  (0x25 = amqp:rejected:list)",
        "  [1]: null  (beyond its fields)",
        "  [2]: null  (beyond its fields)",
        "  [3]: 5  (int; beyond its fields)",
    ]


def test_none_of_a_masked_sasl_init() -> None:
    init = encode(SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0u\0pw"))
    # its two items, a null hostname, then one more item: the password again
    assert init[3] == 0xC0 and init[5] == 2
    more = (init[:3] + bytes([0xC0, init[4] + 8, 4]) + init[6:] + b"\x40"
            + b"\xa0\x05\0u\0pw")
    lines = plain_lines(value_tree(decode(more)[0]))
    assert not any("pw" in line for line in lines), lines
    shown = plain_lines(value_tree(decode(more)[0], show_secrets=True))
    assert any("pw" in line and "beyond its fields" in line for line in shown), shown


def _with_item(encoded: bytes, fields: int, item: bytes) -> bytes:
    """A described list8 composite's bytes with nulls up to its `fields`, then `item`."""
    assert encoded[3] == 0xC0
    pad = b"\x40" * (fields - encoded[5])
    return (encoded[:3] + bytes([0xC0, encoded[4] + len(pad) + len(item), fields + 1])
            + encoded[6:] + pad + item)


def test_json_keeps_no_bytes_of_a_sasl_init_beyond_the_fields() -> None:
    """The JSON keeps what the fields do not give back as bytes (`encoded`,
    `encoded-sections`): with a sasl-init among those items, the bytes would carry its
    password. They are withheld (`"redacted": true`) unless --show-secrets."""
    init = encode(SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0u\0Sekrit99"))
    frame = encode_frame(Open(container_id="c"))
    frame = frame[:8] + _with_item(encode(Open(container_id="c")), 10, init)
    frame = len(frame).to_bytes(4, "big") + frame[4:]
    message = (_with_item(encode(Properties(message_id="m")), 13, init)
               + encode(AmqpValue("x")))
    for what, data in (("frame", frame), ("message", message)):
        out = amqp("decode", "--json", data.hex()).stdout
        kept = b"".join(base64.b64decode(v) for line in out.splitlines()
                        for v in _base64_strings(json.loads(line)))
        assert b"Sekrit99" not in kept and '"redacted": true' in out, (what, out)
        shown = amqp("decode", "--json", "--show-secrets", data.hex()).stdout
        assert "redacted" not in shown, (what, shown)


def _base64_strings(obj: object) -> list[str]:
    """Every string in a JSON value that reads as base64 (the bytes kept)."""
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _base64_strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _base64_strings(v)]
    if isinstance(obj, str):
        try:
            base64.b64decode(obj, validate=True)
        except ValueError:  # (binascii.Error is one)
            return []
        return [obj]
    return []
