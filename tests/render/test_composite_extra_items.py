"""A described list with more items than its composite has fields (a newer peer's
fields, or damage): the tree shows them after the fields, as the JSON keeps them (its
`encoded` bytes). A masked SASL performative shows none: its items may hold the
secret."""

from __future__ import annotations

from amqpcli.codec import decode
from amqpcli.codec.composites import SaslInit
from amqpcli.codec.encode import encode
from amqpcli.codec.types import Symbol
from amqpcli.render.text import plain_lines, value_tree

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
