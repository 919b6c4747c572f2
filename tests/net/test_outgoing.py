"""Messages built from options: sections, templates, bodies, line splitting."""

from __future__ import annotations

import io

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Int, Symbol, UByte
from amqpcli.net.outgoing import MessageTemplate, PerMessage, read_line_bodies, read_whole
from tests.net.templatecheck import assert_checked_as_made


def test_sections_in_spec_order_and_decodable() -> None:
    t = MessageTemplate(
        body_type="value",
        header={"durable": True, "priority": UByte(4)},
        delivery_annotations={Symbol("x-opt-d"): 1},
        message_annotations={Symbol("x-opt-m"): "m"},
        properties={"message_id": PerMessage("id-{n}", str), "subject": "s"},
        application_properties={"k": Int(5)},
        footer={Symbol("x-opt-f"): "f"},
    )
    out = t.encode(7, Int(42))
    m = Message.decode(out.payload)
    assert out.number == 7 and out.message_id == "id-7"
    assert m.properties.message_id == "id-7" and m.properties.subject == "s"
    assert m.header.durable is True and m.header.priority == 4
    assert m.application_properties.value == {"k": 5}
    assert m.message_annotations.value == {Symbol("x-opt-m"): "m"}
    assert m.delivery_annotations.value == {Symbol("x-opt-d"): 1}
    assert m.footer.value == {Symbol("x-opt-f"): "f"}
    assert m.body == c.AmqpValue(Int(42))
    # the same bytes as the codec's own Message model would write
    assert out.payload == m.encode()


def test_numbering_and_uuid_templates() -> None:
    t = MessageTemplate(properties={"message_id": PerMessage("{uuid}", str),
                                    "correlation_id": PerMessage("c-{n}", str)})
    a, b = t.encode(1, b"x"), t.encode(2, b"x")
    ma, mb = Message.decode(a.payload), Message.decode(b.payload)
    assert ma.properties.message_id != mb.properties.message_id
    # the in-doubt report names the id that was sent, not another fresh one
    assert (a.message_id, b.message_id) == (ma.properties.message_id, mb.properties.message_id)
    assert (ma.properties.correlation_id, mb.properties.correlation_id) == ("c-1", "c-2")


def test_body_types() -> None:
    assert Message.decode(MessageTemplate().encode(1, "text").payload).body == [c.Data(b"text")]
    seq = MessageTemplate(body_type="sequence").encode(1, [1, "a"])
    assert Message.decode(seq.payload).body == [c.AmqpSequence([1, "a"])]
    with pytest.raises(ValueError):
        MessageTemplate(body_type="nope")
    with pytest.raises(ValueError):
        MessageTemplate(properties={"no_such_field": 1})


def test_constant_parts_are_reused_but_bodies_are_not_confused() -> None:
    t = MessageTemplate()
    assert Message.decode(t.encode(1, b"a").payload).body == [c.Data(b"a")]
    assert Message.decode(t.encode(2, b"b").payload).body == [c.Data(b"b")]


def test_read_bodies() -> None:
    assert list(read_line_bodies(io.BytesIO(b"a\nb\r\n\nc"))) == [b"a", b"b", b"", b"c"]
    assert read_whole(io.BytesIO(b"a\nb\n")) == b"a\nb\n"


def test_typed_ids_made_per_message() -> None:
    # ulong:{n} and uuid:{uuid} were refused ('bad uuid value'): no way to a fresh typed id
    import uuid

    from amqpcli.cli.send import build_template
    from amqpcli.codec.types import ULong

    t = build_template("data", {"message_id": "uuid:{uuid}", "correlation_id": "ulong:{n}"},
                       None, None, None, None, [], [], [], [])
    got = [Message.decode(t.encode(n, b"x").payload).properties for n in (1, 2)]
    assert all(isinstance(p.message_id, uuid.UUID) for p in got)
    assert got[0].message_id != got[1].message_id
    assert [p.correlation_id for p in got] == [1, 2]
    assert all(isinstance(p.correlation_id, ULong) for p in got)
    assert t.encode(3, b"x").message_id != t.encode(3, b"x").message_id  # fresh each time


@pytest.mark.parametrize(("text", "why"), [
    ("uint:{n}", "an id of type uint is not allowed"), ("uuid:{n}", "bad uuid value '1'"),
    ("ulong:x{n}", "bad ulong value 'x1'")])
def test_typed_templates_that_make_no_id_are_usage_errors(text: str, why: str) -> None:
    from amqpcli.cli.send import build_template
    from amqpcli.errors import Exit, UserError

    with pytest.raises(UserError) as e:
        build_template("data", {"message_id": text}, None, None, None, None, [], [], [], [])
    assert e.value.code == Exit.USAGE and why in str(e.value)


def test_a_string_id_with_a_colon_still_takes_n() -> None:
    from amqpcli.cli.send import build_template

    t = build_template("data", {"message_id": "order:{n}"}, None, None, None, None, [], [], [], [])
    assert Message.decode(t.encode(7, b"x").payload).properties.message_id == "order:7"


def test_expand_placeholders_and_escapes() -> None:
    from amqpcli.net.outgoing import expand, has_placeholder

    assert expand("a-{n}-{n}", 7) == "a-7-7" and expand("{{n}}:{n}:{{uuid}}", 7) == "{n}:7:{uuid}"
    one, two = expand("{uuid} {uuid}", 1).split()  # each its own
    assert one != two and len(one) == 36
    # an unknown placeholder is refused before (check_placeholders) and left as it is;
    # doubled braces around one are its text; other braces are text
    assert expand("{x} {N} {{x}} {} {1}", 1) == "{x} {N} {x} {} {1}"
    assert has_placeholder("a{n}") and not has_placeholder("a{{n}} {x}")


@pytest.mark.parametrize(("option", "last", "first"), [
    ("k:byte={n}", 300, 128),
    ("k:byte=-{n}", 300, 129),  # shrinks as n grows
    ("k:byte=1{n}", 300, 28),  # 11 … 19, then 110 … 199: 128 at 28
    ("k:char={n}", 300, 10),  # two characters from 10 on
    ("k:short={n}0", 20000, 3277),  # past 999: the first of 1000 … 9999 passes, the last not
    ("k:short=-{n}0", 20000, 3277),
    ("k:short=1{n}", 20000, 10000),  # 19999 passes, 110000 not
    ("k:ushort=0x{n}", 20000, 10000),  # 0x9999 passes, 0x10000 not
    ("k:int=0o{n}", 20000, 8),  # no digit 8 in octal
    ("k:bool={n}", 20000, 2),
    ("k:double=1e{n}", 20000, 309),
    ("k:double=-1e-{n}", 20000, None),  # (to 0, never past the range)
    ("k:float=-{n}e37", 20000, 35),  # the encoder's range (float32), not the parser's
    ("k:binary=hex:0{n}", 20000, 10),  # an odd number of hex digits
    ("k:long={n}", 20000, None),
])
def test_a_run_is_checked_up_front_and_the_first_failing_message_named(
        option: str, last: int, first: int | None) -> None:
    assert_checked_as_made(option, last, first)


def test_the_first_failing_message_of_a_long_run_is_found_cheaply() -> None:
    from amqpcli.cli.send import build_template
    from amqpcli.errors import UserError
    from amqpcli.net.outgoing import check_numbers

    checked: list[int] = []
    t = build_template("data", {}, None, None, None, None, ["k:int={n}000"], [], [], [])

    def check(n: int) -> None:
        checked.append(n)
        t.check_number(n)

    with pytest.raises(UserError, match=r"^message 2147484: --property 'k': bad int value "
                                        r"'2147484000'"):
        check_numbers(check, 10**12)
    assert len(checked) < 1100
    t.check_number(2147483)  # (the one before passes)


def test_an_error_names_the_message_only_of_a_value_made_for_each() -> None:
    from amqpcli.codec.types import Char
    from amqpcli.errors import UserError

    # made for each message: the message it was made for, the first one's too
    with pytest.raises(UserError, match=r"^message 1: --property 'k': '11' is not one "):
        MessageTemplate(application_properties={"k": PerMessage("{n}{n}", Char)})
    t = MessageTemplate(application_properties={"k": PerMessage("{n}", Char)})
    with pytest.raises(UserError, match=r"^message 10: --property 'k': '10' is not one "):
        t.check_run(10)
    # the same in every message: the option alone
    with pytest.raises(UserError, match=r"^--property 'k': 'ab' is not one character"):
        MessageTemplate(application_properties={"k": Char("ab")})
