"""How 0-10 items are written: one line, the tree of `amqp decode`, and JSON."""

from __future__ import annotations

import json

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Assembly,
    Command,
    Control,
    SequenceSet,
    StreamDecoder,
    Struct,
    TypedInt,
    encode_assembly,
)
from amqpcli.render.amqp010 import tree_010
from amqpcli.render.traffic import json_010, line_010
from tests.amqp010.samples import sample_map


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


def test_json_keeps_the_type_of_each_value_the_wire_typed() -> None:
    start = _items(Control.make("connection.start", mechanisms=["ANONYMOUS"]))[0]
    assert json_010(start)["fields"]["mechanisms"] == {"array": ["ANONYMOUS"], "type": "str16"}
    ok = _items(Control.make("connection.start-ok", client_properties=sample_map(1),
                             mechanism="ANONYMOUS", response=b"x", locale="en_US"))[0]
    props = json_010(ok)["fields"]["client-properties"]
    json.dumps(props)
    assert props["i64"] == {"int64": -(1 << 62) + 1}
    assert props["u8"] == {"uint8": 200} and props["i8"] == {"int8": -6}
    assert props["s8"] == {"str8": "kurz ü"} and props["s16"] == {"str16": "lang ü" * 3}
    assert props["vb16"] == {"vbin16": {"binary-text": "ab" * 10}}
    assert props["dt"] == {"datetime": 1_700_000_001}
    assert props["unknown-fixed"] == {"0x1f": {"binary": "AQI="}}
    assert props["nested"] == {"map": {"a": {"int64": 1},
                                       "l": {"list": [{"str16": "x"}, {"int32": 2}]}}}
    assert props["array"] == {"array": [1, 2], "type": "int32"}
    assert props["bool"] is False and props["void"] is None
    assert props["struct32"]["struct"] == "message.delivery-properties"


def test_json_of_a_header_map_keeps_its_types() -> None:
    props = Struct.make("message.message-properties",
                        application_headers={"seq": TypedInt(7, 0x31)})
    blob = PROTOCOL_HEADER + encode_assembly(Command.make("message.transfer", destination="d"),
                                             1, (props,), b"x")
    (item,) = [i for i in StreamDecoder().feed(blob) if isinstance(i, Assembly)]
    (header,) = json_010(item)["header"]
    assert header["fields"]["application-headers"] == {"seq": {"int64": 7}}


def _stream(*parts: bytes) -> list[Assembly]:
    return [i for i in StreamDecoder().feed(PROTOCOL_HEADER + b"".join(parts))
            if isinstance(i, Assembly)]


def test_text_views_show_values_not_python_reprs() -> None:
    start, result = _stream(
        encode_assembly(Control.make("connection.start", mechanisms=["PLAIN", "ANONYMOUS"])),
        encode_assembly(Command.make("execution.result", command_id=4, value=Struct.make(
            "queue.queue-query-result", queue="q")), 1))
    assert line_010(start) == "[0]  connection.start mechanisms=[PLAIN,ANONYMOUS]"
    assert line_010(result).endswith(
        "execution.result command-id=4 value=queue.queue-query-result{queue=q}")
    assert tree_010(start)[1] == '  mechanisms: ["PLAIN", "ANONYMOUS"]'
    assert tree_010(result)[2] == '  value: queue.queue-query-result {queue: "q"}'


def test_enum_fields_are_shown_by_their_spec_names() -> None:
    props = Struct.make("message.delivery-properties", priority=4)
    transfer, reject, flow = _stream(
        encode_assembly(Command.make("message.transfer", destination="d", accept_mode=1),
                        1, (props,), b"x"),
        encode_assembly(Command.make("message.reject", transfers=SequenceSet.of(0), code=512),
                        1),
        encode_assembly(Command.make("message.flow", destination="d", unit=1, value=5), 1))
    line = line_010(transfer)
    assert "accept-mode=none" in line and "delivery-properties{priority=medium}" in line
    assert line.endswith('| body b"x" (1 byte)')
    assert "code=512 (not a reject-code)" in line_010(reject)
    assert "unit=byte value=5" in line_010(flow)
    tree = tree_010(transfer)
    assert "  accept-mode: none" in tree and "    priority: medium" in tree
    assert tree[-1] == '  body: b"x"  (1 byte)'


def test_a_map_of_one_entry_says_entry() -> None:
    props = Struct.make("message.message-properties", application_headers={"a": 1})
    (transfer,) = _stream(encode_assembly(Command.make("message.transfer", destination="d"),
                                          1, (props,)))
    assert "    application-headers:  (map, 1 entry)" in tree_010(transfer)


def test_the_tree_quotes_strings_as_1_0_strings_are_quoted() -> None:
    # a string with an ESC was shown as 'a\x1b' (a Python repr) and one with a backslash
    # as "a\x1b": the same text but for the quotes
    (esc, backslash, empty) = _items(
        *(Command.make("message.transfer", destination=d) for d in ("a\x1b", "a\\x1b", "")))
    assert "  destination: \"a\\x1b\"" in tree_010(esc)
    assert "  destination: \"a\\\\x1b\"" in tree_010(backslash)
    assert "  destination: \"\"" in tree_010(empty)


def test_peer_strings_in_a_line_are_quoted_with_controls_escaped() -> None:
    """A destination is the peer's text: an escape sequence in it reached the terminal."""
    plain, hostile, spaced, long = _stream(*(
        encode_assembly(Command.make("message.transfer", destination=d), 1)
        for d in ("orders", "q\x1b[31mred", 'say "hi" \\o/', "x" * 50)))
    assert "destination=orders " in line_010(plain) + " "
    assert 'destination="q\\x1b[31mred"' in line_010(hostile)
    assert "\x1b" not in line_010(hostile)
    assert 'destination="say \\"hi\\" \\\\o/"' in line_010(spaced)
    assert f'destination="{"x" * 40}"…' in line_010(long)


def test_header_map_keys_in_a_line_are_escaped() -> None:
    props = Struct.make("message.message-properties", application_headers={"k\x1b[2J": 1})
    (transfer,) = _stream(encode_assembly(Command.make("message.transfer", destination="d"),
                                          1, (props,)))
    line = line_010(transfer)
    assert "k\\x1b[2J=1" in line and "\x1b" not in line


def test_header_map_keys_in_the_tree_are_escaped() -> None:
    """A key is the peer's text: in the tree it drove the terminal and forged lines (the
    line view escaped it), and one that is not UTF-8 printed as a lone surrogate."""
    props = Struct.make("message.message-properties", application_headers={
        "k\x1b[31mRED\nfake line": {"in\x1b": 1}, "\udcc7": 2})
    (transfer,) = _stream(encode_assembly(Command.make("message.transfer", destination="d"),
                                          1, (props,)))
    tree = "\n".join(tree_010(transfer))
    assert "k\\x1b[31mRED\\nfake line: {in\\x1b: " in tree, tree
    assert "\\udcc7: 2" in tree
    assert "\x1b" not in tree and "fake line" not in tree.replace("\\nfake line", "")
    assert "\udcc7" not in tree


def test_a_maps_entries_say_their_types_and_are_written_in_words() -> None:
    """A 0-10 map entry carries its type on the wire: the tree says it (a datetime was
    `1700000000`, as an int64; a double `1.5`), a datetime reads as a time, and true,
    false, void and nested maps are written in words, not as Python's True, None, {...}."""
    from amqpcli.amqp010.values import Datetime

    props = Struct.make("message.message-properties", application_headers={
        "n": 1, "t": Datetime(1700000000), "f": 1.5, "b": True, "v": None,
        "m": {"x": 1, "q": {"z": "s"}}, "l": [1, "a"]})
    (transfer,) = _stream(encode_assembly(Command.make("message.transfer", destination="d"),
                                          1, (props,)))
    tree = tree_010(transfer)
    at = tree.index("    application-headers:  (map, 7 entries)")
    assert tree[at + 1:at + 8] == [
        "      n: 1  (int64)",
        "      t: 2023-11-14T22:13:20Z (1700000000)  (datetime)",
        "      f: 1.5  (double)",
        "      b: true",
        "      v: void",
        '      m: {x: int64:1, q: {z: str16:"s"}}  (map)',
        '      l: [int64:1, str16:"a"]  (list)',
    ]
