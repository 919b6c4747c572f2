"""Composites: field types drive encoding, decoded bytes are kept until a field changes."""

from __future__ import annotations

import struct

from amqpcli.codec import (
    Array,
    Described,
    Long,
    Symbol,
    UInt,
    ULong,
    decode,
    encode,
)
from amqpcli.codec.composites import (
    Accepted,
    ApplicationProperties,
    Attach,
    Data,
    DeleteOnClose,
    Detach,
    Disposition,
    Error,
    Flow,
    Open,
    Received,
    Rejected,
    SaslInit,
    SaslMechanisms,
    Source,
    Transfer,
)


def test_plain_int_in_uint_field_encodes_as_uint() -> None:
    # handle uint 0 (0x43), delivery-id smalluint 7, tag vbin8, format uint0, settled true
    b = encode(Transfer(handle=0, delivery_id=7, delivery_tag=b"t", message_format=0, settled=True))
    assert b == bytes.fromhex("005314c00905435207a001744341")
    t = decode(b)[0]
    assert isinstance(t, Transfer)
    assert type(t.handle) is UInt and t.delivery_id == 7 and t.settled is True
    assert t.more is None and t.get("more") is False


def test_plain_str_in_symbol_field_and_multiple() -> None:
    b = encode(SaslMechanisms(sasl_server_mechanisms=["PLAIN", "ANONYMOUS"]))
    m = decode(b)[0]
    assert isinstance(m.sasl_server_mechanisms, Array)
    assert m.sasl_server_mechanisms == [Symbol("PLAIN"), Symbol("ANONYMOUS")]
    assert all(type(x) is Symbol for x in m.sasl_server_mechanisms)
    # a single value in a multiple field encodes as that value
    single = decode(encode(SaslMechanisms(sasl_server_mechanisms="PLAIN")))[0]
    assert single.sasl_server_mechanisms == Symbol("PLAIN")
    assert type(single.sasl_server_mechanisms) is Symbol
    assert single.as_list("sasl_server_mechanisms") == [Symbol("PLAIN")]
    assert m.as_list("sasl_server_mechanisms") == [Symbol("PLAIN"), Symbol("ANONYMOUS")]
    assert SaslMechanisms().as_list("sasl_server_mechanisms") == []
    assert type(decode(encode(SaslInit(mechanism="PLAIN")))[0].mechanism) is Symbol


def test_fields_keys_become_symbols_values_keep_types() -> None:
    o = decode(encode(Open(container_id="c", properties={"product": "x", "n": 1})))[0]
    assert list(o.properties) == [Symbol("product"), Symbol("n")]
    assert all(type(k) is Symbol for k in o.properties)
    assert o.properties[Symbol("n")] == 1 and type(o.properties[Symbol("n")]) is Long
    assert type(o.container_id) is str


def test_amqp_typed_value_keeps_its_own_type() -> None:
    # a ulong where the spec says uint: kept as the caller said
    t = decode(encode(Transfer(handle=ULong(5))))[0]
    assert type(t.handle) is ULong


def test_trailing_nulls_dropped_inner_nulls_kept() -> None:
    assert encode(Flow(incoming_window=1, next_outgoing_id=2, outgoing_window=3)) == bytes.fromhex(
        "005313c0080440520152025203"
    )
    assert encode(Accepted()) == bytes.fromhex("00532445")
    assert encode(DeleteOnClose()) == bytes.fromhex("00532b45")


def test_nested_composites_and_sections() -> None:
    d = Disposition(
        role=True,
        first=0,
        last=9,
        settled=True,
        state=Rejected(
            error=Error(condition="amqp:not-found", description="gone", info={"k": "v"})
        ),
    )
    got = decode(encode(d))[0]
    assert got.state.error.info == {Symbol("k"): "v"} and got.last == 9
    assert type(got.state.error.condition) is Symbol
    got.touch()
    assert decode(encode(got))[0] == got
    a = Attach(
        name="l", handle=0, role=False, source=Source(address="q", outcomes=["amqp:accepted:list"])
    )
    ga = decode(encode(a))[0]
    assert ga.source.outcomes == [Symbol("amqp:accepted:list")]
    assert isinstance(ga.source.outcomes, Array)
    assert encode(ApplicationProperties({"a": 1})) == bytes.fromhex("005374c10602a101615501")
    assert encode(Data(b"ab")) == bytes.fromhex("005375a0026162")
    assert decode(encode(Received(section_number=1, section_offset=2)))[0].section_offset == ULong(
        2
    )


def test_noncanonical_composite_reencodes_byte_for_byte_until_changed() -> None:
    # detach: list32, handle as a full uint, closed as 0x56 0x01 -- all legal, none smallest
    body = b"\x70\x00\x00\x00\x05\x56\x01"
    raw = (
        b"\x00\x80"
        + struct.pack(">Q", 0x16)
        + b"\xd0"
        + struct.pack(">II", len(body) + 4, 2)
        + body
    )
    d = decode(raw)[0]
    assert isinstance(d, Detach) and d.handle == 5 and d.closed is True
    assert encode(d) == raw
    d.closed = False  # assigning a field drops the original bytes
    assert encode(d) == bytes.fromhex("005316c00402520542")


def test_nested_change_is_seen_and_touch() -> None:
    src = encode(Source(address="q"))
    items = encode("l") + b"\x70\x00\x00\x00\x00" + b"\x41" + b"\x40\x40" + src
    raw = b"\x00\x53\x12\xd0" + struct.pack(">II", len(items) + 4, 6) + items
    got = decode(raw)[0]
    assert encode(got) == raw
    got.source.address = "other"
    out = decode(encode(got))[0]
    assert out.source.address == "other"
    # in-place change of a decoded map is not tracked until touch()
    op = Open(container_id="c", properties={"a": 1})
    opd = decode(encode(op))[0]
    opd.properties[Symbol("b")] = 2
    assert Symbol("b") not in decode(encode(opd))[0].properties
    opd.touch()
    assert decode(encode(opd))[0].properties[Symbol("b")] == 2


def test_unknown_descriptor_and_malformed_known_one() -> None:
    assert decode(b"\x00\x53\x99\x45")[0] == Described(ULong(0x99), [])
    # a known descriptor around a value of the wrong kind stays a Described
    d = decode(b"\x00\x53\x10\x41")[0]
    assert d == Described(ULong(0x10), True)
    assert encode(d) == b"\x00\x53\x10\x41"
    sym = decode(encode(Described(Symbol("amqp:accepted:list"), [])))[0]
    assert isinstance(sym, Accepted)


def test_repr_eq_and_fields() -> None:
    t = Transfer(handle=1, more=True)
    assert repr(t) == "Transfer(handle=1, more=True)"
    assert t == Transfer(handle=1, more=True) and t != Transfer(handle=2)
    assert t.fields()["delivery_id"] is None and next(iter(t.fields())) == "handle"
