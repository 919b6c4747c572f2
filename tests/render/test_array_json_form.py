"""An array in the form the encoder writes is written in JSON without `code`/`fmt`, as a
list or map in its smallest form is without `code`: they say only that a decoded array
used another form (`{"array": [1, 2], "type": "int"}` once came back from `recv --json`
with `"code": "0x54", "fmt": "0xe0"`, as if the encoder's own form were not its own; the
encoder now writes numbers in arrays at their full width, `0x71`, and a `0x54` array
another peer wrote says `"code": "0x54"`).
Either way the JSON encodes back to the bytes that were decoded."""

from __future__ import annotations

import uuid

import pytest

from amqpcli.codec.decode import decode
from amqpcli.codec.encode import array_form, encode
from amqpcli.codec.types import Array, Int, Long, Symbol, Timestamp, UInt, ULong
from amqpcli.render.jsonvalues import from_json, to_json

# Arrays in the encoder's form, each with another element constructor the same elements
# can be written with (None: none other).
_CASES = [
    (Array([Int(1), Int(2)], "int"), 0x54),
    (Array([Int(1), Int(2000)], "int"), None),
    (Array([Long(-5)], "long"), 0x55),
    (Array([UInt(0), UInt(0)], "uint"), 0x43),
    (Array([UInt(0), UInt(1)], "uint"), 0x52),
    (Array([UInt(300)], "uint"), None),
    (Array([ULong(7)], "ulong"), 0x53),
    (Array([], "int"), 0x54),
    (Array([Symbol("a"), Symbol("b")], "symbol"), 0xB3),
    (Array([b"x" * 300], "binary"), None),
    (Array([Int(i) for i in range(100)], "int"), None),  # 400 bytes: array32
    (Array([Timestamp(1)], "timestamp"), None),
    (Array([uuid.UUID(int=1)], "uuid"), None),
    (Array([Array([UInt(1)], "uint"), Array([UInt(2)] * 3, "uint")], "array"), 0xF0),
    (Array([Int(1)], "int", descriptor=Symbol("x:d")), 0x54),
]


def _json_of(b: bytes) -> dict[str, object]:
    decoded, _ = decode(b)
    j = to_json(decoded)
    assert encode(from_json(j)) == b  # whatever the form, the same bytes come back
    return j


@pytest.mark.parametrize(("a", "other"), _CASES, ids=lambda x: getattr(x, "type", None) or str(x))
def test_an_encoded_array_is_judged_as_decoded(a: Array, other: int | None) -> None:
    b = encode(a)
    decoded, _ = decode(b)
    assert array_form(decoded) == (decoded.code, decoded.fmt)
    j = _json_of(b)
    assert "code" not in j and "fmt" not in j, j
    # the same elements in another form keep it
    if decoded.fmt == 0xE0:
        j = _json_of(encode(Array(a, a.type, descriptor=a.descriptor, fmt=0xF0)))
        assert j["fmt"] == "0xf0", j
    if other is not None:
        j = _json_of(encode(Array(a, a.type, code=other, descriptor=a.descriptor)))
        assert j["code"] == f"0x{other:02x}", j
