"""A receiver's source filters (Part 3 §3.5.8, its filter-set) in the attach's frame line:
each `filter.KEY=KIND(VALUE)`, after the address, distribution mode and capabilities —
a JMS selector, the legacy exchange bindings, no-local, an unknown kind by its
descriptor, a value that is not described, a null value (not applied); peer text quoted
safely, a long one cut. The fast path and the general code draw the same."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Array, Described, Symbol, UInt, ULong
from amqpcli.render.frameline import _field, _fields, frame_line

SELECTOR = "apache.org:selector-filter:string"
SELECTOR_CODE = ULong(0x0000468C00000004)


def _line(source: Any, *, role: bool = True) -> str:
    """The frame line of an attach with `source`, read back from its encoding (the
    values as a capture's decoder gives them)."""
    attach = c.Attach(name="r", handle=UInt(0), role=role, source=source, target=None)
    reader = FrameReader()
    reader.feed(encode_protocol_header("amqp"))
    (frame,) = reader.feed(encode_frame(attach))
    line = frame_line(frame)
    # the general loop (a frame whose drawer failed) says the same
    parts: list[str] = []
    _fields(frame.body, parts)
    assert line.endswith(" ".join(parts))
    assert _field(frame.body, "source") in parts
    return line


def _source(filters: dict[Any, Any], **kw: Any) -> c.Source:
    return c.Source(address="sel", filter=filters, **kw)


def test_proton_selector_beside_copy_mode() -> None:
    line = _line(_source({Symbol("selector"): Described(
        SELECTOR_CODE, "color = 'red' AND n > 4")}, distribution_mode=Symbol("copy")))
    assert line.endswith(
        """ source=("sel" copy filter.selector=selector("color = 'red' AND n > 4"))""")


def test_recv_selector_by_symbol_and_capabilities() -> None:
    line = _line(_source({Symbol("jms-selector"): Described(Symbol(SELECTOR), "n > 3")},
                         capabilities=Array([Symbol("queue")], "symbol")))
    assert line.endswith(' source=("sel" caps=queue filter.jms-selector=selector("n > 3"))')


@pytest.mark.parametrize(("key", "value", "text"), [
    ("subject", Described(ULong(0x0000468C00000000), "orders.eu"),
     'filter.subject=direct-binding("orders.eu")'),
    ("topic", Described(Symbol("apache.org:legacy-amqp-topic-binding:string"), "news.#"),
     'filter.topic=topic-binding("news.#")'),
    ("headers", Described(ULong(0x0000468C00000002), {"x-match": "all", "colour": "red"}),
     'filter.headers=headers-binding({"x-match": "all", "colour": "red"})'),
    ("no-local", Described(Symbol("apache.org:no-local-filter:list"), []),
     "filter.no-local=no-local"),
    ("no-local", Described(ULong(0x0000468C00000003), "NoLocalFilter{}"),
     'filter.no-local=no-local("NoLocalFilter{}")'),
    ("xq", Described(ULong(0x0000468C00000005), "/a"), 'filter.xq=xquery("/a")'),
    ("mine", Described(Symbol("com.example:my-filter"), UInt(5)),
     "filter.mine=com.example:my-filter(uint:5)"),
    ("coded", Described(ULong(0x1234), "x"), 'filter.coded=0x1234("x")'),
    ("odd kind", Described(Symbol("two words"), "x"), 'filter."odd kind"="two words"("x")'),
    ("bare", "not described", 'filter.bare="not described"'),
    ("skipped", None, "filter.skipped=not-applied"),
])
def test_each_filter_kind(key: str, value: Any, text: str) -> None:
    line = _line(_source({Symbol(key): value}))
    assert line.endswith(f' source=("sel" {text})')


def test_several_filters_in_their_order() -> None:
    line = _line(_source({
        Symbol("jms-selector"): Described(SELECTOR_CODE, "a = 1"),
        Symbol("no-local"): Described(ULong(0x0000468C00000003), []),
        Symbol("k"): Described(ULong(0x0000468C00000000), "rk"),
    }))
    assert line.endswith(' source=("sel" filter.jms-selector=selector("a = 1")'
                         ' filter.no-local=no-local filter.k=direct-binding("rk"))')


def test_an_empty_filter_map_is_no_filter_and_a_sender_answer_draws_it_too() -> None:
    assert _line(_source({})).endswith(' source="sel"')
    line = _line(_source({Symbol("selector"): Described(SELECTOR_CODE, "a = 1")}), role=False)
    assert ' role=sender source=("sel" filter.selector=selector("a = 1"))' in line


def test_hostile_selector_text_is_quoted() -> None:
    hostile = "a = 'x'\nb\r\x1b[31mred\x1b[0m \u202e\"q\" \\ \x00"
    line = _line(_source({Symbol("sel\x1bx"): Described(SELECTOR_CODE, hostile)}))
    assert line.isprintable() and "\x1b" not in line and "\n" not in line
    assert line.endswith(
        ' filter."sel\\x1bx"=selector("a = \'x\'\\nb\\r\\x1b[31mred\\x1b[0m \\u202e\\"q\\" '
        '\\\\ \\x00"))')


def test_hostile_text_in_a_headers_map_and_an_unknown_descriptor() -> None:
    line = _line(_source({
        Symbol("h"): Described(ULong(0x0000468C00000002), {"k\n": "v\x1b"}),
        Symbol("u"): Described(Symbol("x\x1by"), "z"),
    }))
    assert line.isprintable()
    assert 'filter.h=headers-binding({"k\\n": "v\\x1b"})' in line
    assert 'filter.u="x\\x1by"("z")' in line


def test_a_long_selector_is_cut_saying_its_length() -> None:
    text = "colour = 'red' AND " * 10 + "n > 4"  # 195 characters
    line = _line(_source({Symbol("selector"): Described(SELECTOR_CODE, text)}))
    assert line.endswith(f'filter.selector=selector("{text[:60]}"…({len(text)} chars)))')


def test_a_long_map_is_cut() -> None:
    headers = {f"key-{i}": f"value-{i}" for i in range(20)}
    line = _line(_source({Symbol("h"): Described(ULong(0x0000468C00000002), headers)}))
    drawn = line.split("filter.h=headers-binding(", 1)[1]
    assert drawn.endswith("…))") and len(drawn) == 71 + len("…))")  # its 71, then ours
    assert drawn.startswith('{"key-0": "value-0", "key-1": "value-1"')
