"""The selector language of `amqp serve` (unit: no network)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UByte
from amqpcli.selector import SelectorError, compile_selector, message_fields


def _fields(**props: Any) -> Any:
    return lambda name: props.get(name)


@pytest.mark.parametrize(
    ("text", "props", "expected"),
    [
        ("n = 3", {"n": 3}, True),
        ("n = 3", {"n": 4}, False),
        ("n <> 3", {"n": 4}, True),
        ("n > 2 AND n < 5", {"n": 4}, True),
        ("n > 2 and n < 5", {"n": 5}, False),
        ("n = 1 OR s = 'x'", {"n": 2, "s": "x"}, True),
        ("NOT n = 1", {"n": 2}, True),
        ("n BETWEEN 2 AND 4", {"n": 4}, True),
        ("n NOT BETWEEN 2 AND 4", {"n": 4}, False),
        ("s IN ('a', 'b')", {"s": "b"}, True),
        ("s NOT IN ('a', 'b')", {"s": "c"}, True),
        ("s LIKE 'ab%'", {"s": "abc"}, True),
        ("s LIKE 'a_c'", {"s": "abc"}, True),
        ("s LIKE 'a_c'", {"s": "abbc"}, False),
        ("s LIKE 'a\\_%' ESCAPE '\\'", {"s": "a_b"}, True),
        ("s LIKE 'a\\_%' ESCAPE '\\'", {"s": "ab"}, False),
        ("s NOT LIKE '%z'", {"s": "abc"}, True),
        ("s IS NULL", {}, True),
        ("s IS NOT NULL", {"s": "x"}, True),
        ("n * 2 + 1 = 7", {"n": 3}, True),
        ("n / 2 = 1", {"n": 3}, True),  # integer division
        ("-n = -3", {"n": 3}, True),
        ("f > 1.5", {"f": 2.0}, True),
        ("b = TRUE", {"b": True}, True),
        ("s = 'it''s'", {"s": "it's"}, True),
        ("(n = 1 OR n = 2) AND s = 'x'", {"n": 2, "s": "x"}, True),
    ],
)
def test_selector_evaluates(text: str, props: dict[str, Any], expected: bool) -> None:
    assert compile_selector(text).matches(_fields(**props)) is expected


def test_unknown_is_not_true_and_not_false() -> None:
    # SQL three-valued logic: a missing property makes both the test and its negation fail.
    sel, neg = compile_selector("n > 3"), compile_selector("NOT (n > 3)")
    assert not sel.matches(_fields()) and not neg.matches(_fields())
    # ... but OR with a true side is true, AND with a false side is false
    assert compile_selector("n > 3 OR m = 1").matches(_fields(m=1))
    assert not compile_selector("NOT (n > 3 AND m = 1)").matches(_fields())
    assert compile_selector("NOT (n > 3 AND m = 1)").matches(_fields(m=2))


def test_mixed_types_compare_false_as_jms_has_it() -> None:
    """JMS: a comparison of values of different types is false (not unknown): NOT of it
    is true, as `NOT IN` of them was already."""
    assert not compile_selector("n = '3'").matches(_fields(n=3))
    assert compile_selector("NOT (n = 'x')").matches(_fields(n=3))
    assert compile_selector("n NOT IN ('a')").matches(_fields(n=3))
    assert not compile_selector("b = 1").matches(_fields(b=True))
    assert compile_selector("NOT (b = 1)").matches(_fields(b=True))
    # unknown stays unknown: a missing value
    assert not compile_selector("NOT (m = 'x')").matches(_fields(n=3))


def test_strings_and_booleans_compare_only_for_equality() -> None:
    f = _fields(color="red", b=True)
    for text in ("color > 'c'", "color <= 'z'", "b > FALSE", "b >= TRUE"):
        assert not compile_selector(text).matches(f), text
        assert compile_selector(f"NOT ({text})").matches(f), text
    assert compile_selector("color = 'red' AND b = TRUE AND color <> 'blue'").matches(f)


def test_hex_literals() -> None:
    assert compile_selector("x = 0x10").matches(_fields(x=16))
    assert compile_selector("x = 0XfF").matches(_fields(x=255))


@pytest.mark.parametrize("text", ["n >>> 3", "n = ", "AND n = 1", "n BETWEEN 1", "s LIKE 3",
                                  "s IN ()", "(n = 1", "n = 1 1", "", "n ~ 2", "s NOT 1"])
def test_bad_syntax_raises(text: str) -> None:
    with pytest.raises(SelectorError):
        compile_selector(text)


@pytest.mark.parametrize(("text", "where", "found"), [
    # JMS: a selector is a conditional expression; ActiveMQ and Artemis refuse these too
    # ("Expression will not result in a boolean value"). They selected nothing.
    ("a + 1", 1, "'a + 1', an arithmetic expression"),
    ("'x'", 1, "\"'x'\", a string"),
    ("5", 1, "'5', a number"),
    ("-5", 1, "'-5', a number"),
    ("-a", 1, "'-a', an arithmetic expression"),
    ("(a * 2)", 1, "'(a * 2)', an arithmetic expression"),
    ("flag AND 1", 10, "'1', a number"),
    ("1 OR flag", 1, "'1', a number"),
    ("flag OR 'a' OR b", 9, "\"'a'\", a string"),
    ("NOT 'x'", 5, "\"'x'\", a string"),
    ("a AND NOT -b", 11, "'-b', an arithmetic expression"),
    ("flag AND (b - 1) AND c", 10, "'(b - 1)', an arithmetic expression"),
    ("(flag OR 2) = TRUE", 10, "'2', a number"),
    # a header or properties field that is never a boolean, by name
    ("JMSPriority", 1, "'JMSPriority', a field that is never a boolean"),
    ("n = 1 AND JMSType", 11, "'JMSType', a field that is never a boolean"),
    ("NOT properties.subject", 5, "'properties.subject', a field that is never a boolean"),
    ("header.ttl OR x", 1, "'header.ttl', a field that is never a boolean"),
])
def test_a_selector_that_is_no_condition_is_refused(text: str, where: int, found: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value).startswith(f"expected a condition at position {where}, found {found} "
                                   "(a condition is a comparison,"), str(e.value)
    assert "\n" not in str(e.value)


def test_an_identifier_may_hold_a_boolean() -> None:
    """A property may be a boolean: alone, or a side of AND, OR, NOT, it is a condition
    (true only when it holds true), as ActiveMQ and Artemis have it; so are TRUE, FALSE,
    NULL and the header's boolean fields."""
    f = _fields(flag=True, off=False, n=1, s="x", **{"header.durable": True})
    for text, expected in (("flag", True), ("off", False), ("NOT off", True), ("n", False),
                           ("s", False), ("missing", False), ("NOT missing", False),
                           ("flag AND n = 1", True), ("off OR n = 1", True), ("(flag)", True),
                           ("+flag", True), ("NOT NOT flag", True), ("TRUE", True),
                           ("FALSE", False), ("NULL", False), ("header.durable", True),
                           ("NOT n", False), ("priority", False),
                           ("(a + 1 > 2) OR flag", True), ("(n + 1) * 2 = 4", True)):
        assert compile_selector(text).matches(f) is expected, text


def test_error_says_where() -> None:
    with pytest.raises(SelectorError, match="position 5"):
        compile_selector("n = )")


def test_message_fields_header_properties_and_jms_names() -> None:
    m = Message.decode(Message(
        b"x",
        header=c.Header(priority=UByte(7), durable=True),
        properties=c.Properties(message_id="id-1", subject="news", correlation_id=b"c1"),
        application_properties={"n": 5, "color": "red"},
    ).encode())
    f = message_fields(m)
    for text in ["JMSPriority = 7", "header.priority > 5", "JMSMessageID = 'id-1'",
                 "properties.message-id = 'id-1'", "JMSType = 'news'",
                 "JMSDeliveryMode = 'PERSISTENT'", "JMSCorrelationID = 'c1'",
                 "n = 5 AND color LIKE 'r%'", "properties.reply-to IS NULL"]:
        assert compile_selector(text).matches(f), text
    bare = message_fields(Message.decode(Message(b"x").encode()))
    assert compile_selector("JMSPriority = 4").matches(bare)  # the header's default
    assert compile_selector("JMSDeliveryMode = 'NON_PERSISTENT'").matches(bare)


def test_jms_expiration_of_a_message_without_expiry_is_zero() -> None:
    bare = message_fields(Message.decode(Message(b"x").encode()))
    assert compile_selector("JMSExpiration = 0").matches(bare)


def test_a_symbol_compares_as_its_text() -> None:
    """A symbol (content-type, a symbol application property) is text to a selector:
    Symbol's own equality keeps it apart from a str as a map key, which made `=` and `IN`
    false and `<>` true for every symbol."""
    f = message_fields(Message.decode(Message(
        b"x", properties=c.Properties(content_type=Symbol("text/plain")),
        application_properties={"s": Symbol("sym")}).encode()))
    for text, expected in (("s = 'sym'", True), ("s <> 'sym'", False), ("s IN ('sym')", True),
                           ("s LIKE 's_m'", True),
                           ("properties.content-type = 'text/plain'", True),
                           ("properties.content-type <> 'text/plain'", False)):
        assert compile_selector(text).matches(f) is expected, text


def test_identifiers_are_java_identifiers() -> None:
    """JMS identifiers are Java identifiers: a letter of any script, `$` or `_` (a
    currency symbol, connector punctuation) first, then those or digits and combining
    marks; `unexpected 'é'` refused `prénom` before."""
    f = _fields(**{"prénom": "x", "$total": 3, "_n": 1, "名前": "y", "Ωmega2": 2.5,
                   "naïve": True, "a.b": 4, "café_crème": "z"})
    for text, expected in (("prénom = 'x'", True), ("$total > 2", True), ("_n = 1", True),
                           ("名前 = 'y' AND prénom LIKE 'x%'", True), ("Ωmega2 = 2.5", True),
                           ("naïve", True), ("NOT naïve", False), ("a.b = 4", True),
                           ("café_crème IN ('z')", True), ("prénom IS NULL", False)):
        assert compile_selector(text).matches(f) is expected, text


@pytest.mark.parametrize(("text", "error"), [
    ("٣ = 3", "unexpected '٣' at position 1"),  # a digit does not begin a name
    ("a = ·", "unexpected '·' at position 5"),
    ("1é = 1", "expected AND, OR or the end at position 2, found 'é'"),
])
def test_what_is_no_identifier(text: str, error: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value) == error


def test_keywords_are_ascii() -> None:
    """A keyword is its ASCII letters in any case: a name whose upper case only looks
    like one (the dotless ı of `ın`) is a name."""
    props = {"ın": 1}
    assert compile_selector("ın = 1 Or x = 2").matches(props.get)


def _message(**props: Any) -> Any:
    return message_fields(Message.decode(Message(
        b"x", header=c.Header(priority=UByte(5), delivery_count=2, first_acquirer=True),
        properties=c.Properties(reply_to="r", group_id="g", reply_to_group_id="rg",
                                content_type=Symbol("text/plain")),
        application_properties=props).encode()))


def test_header_and_properties_fields_with_dashes() -> None:
    """AMQP field names hold dashes: each known one is a name whole (the longest there),
    and a `-` and a number after it is a minus, as after any other name:
    `header.priority-1` was one unknown name and selected nothing, while `weight-1` was
    arithmetic (a name after the dash is an error: see the unknown-field test)."""
    f = _message(weight=5, x=1)
    for text, expected in (("header.priority-1 > 3", True), ("header.priority-1 = 4", True),
                           ("header.priority - 1 = 4", True), ("weight-1 = 4", True),
                           ("header.priority - x = 4", True), ("header.priority*2 = 10", True),
                           ("header.delivery-count = 2", True),
                           ("header.delivery-count-1 = 1", True),
                           ("header.first-acquirer", True),
                           ("properties.reply-to = 'r'", True),
                           ("properties.reply-to-group-id = 'rg'", True),
                           ("properties.group-id = 'g'", True),
                           ("properties.content-type = 'text/plain'", True),
                           ("properties.message-id IS NULL", True),
                           ("properties.absolute-expiry-time IS NULL", True)):
        assert compile_selector(text).matches(f) is expected, text


@pytest.mark.parametrize(("text", "error"), [
    ("header.prio > 3", ("unknown header field 'header.prio' at position 1 (did you mean "
     "'header.priority'? header fields: durable, priority, ttl, first-acquirer, "
     "delivery-count)")),
    ("n = 1 OR header.Priority = 1", ("unknown header field 'header.Priority' at position 10"
     " (did you mean 'header.priority'?")),
    ("header.delivery-counts = 1", ("unknown header field 'header.delivery-counts' at "
     "position 1 (did you mean 'header.delivery-count'?")),
    ("properties.replyto IS NULL", ("unknown properties field 'properties.replyto' at "
     "position 1 (did you mean 'properties.reply-to'? properties fields: message-id, "
     "user-id, to, subject, reply-to, correlation-id, content-type, content-encoding, "
     "absolute-expiry-time, creation-time, group-id, group-sequence, reply-to-group-id)")),
    ("properties.zzz = 1", ("unknown properties field 'properties.zzz' at position 1 "
     "(properties fields: message-id,")),
    ("header. = 1", "unknown header field 'header.' at position 1 (header fields:"),
    ("header.priority.x = 1", "unknown header field 'header.priority.x' at position 1"),
    # A name glued by a dash to a known field was read as a subtraction of a property.
    ("properties.reply-to-grp IS NULL", ("unknown properties field 'properties.reply-to-grp'"
     " at position 1 (did you mean 'properties.reply-to-group-id'? for a subtraction write "
     "'properties.reply-to - grp'; properties fields: message-id,")),
    ("n = 1 AND header.ttl-x > 0", ("unknown header field 'header.ttl-x' at position 11 "
     "(did you mean 'header.ttl'? for a subtraction write 'header.ttl - x'; header fields:")),
])
def test_an_unknown_header_or_properties_field_is_an_error(text: str, error: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value).startswith(error), str(e.value)


def test_numbers_are_java_literals() -> None:
    """`D`, `d`, `F`, `f` make an approximate number (a double), `L`, `l` an exact one, as
    in Java: `2D` was read as the integer 2, so `weight / 2D` divided as integers."""
    f = _fields(weight=5, big=2**40, half=0.5)
    for text, expected in (("weight / 2D = 2.5", True), ("weight / 2d = 2.5", True),
                           ("weight / 2F = 2.5", True), ("weight / 2f = 2.5", True),
                           ("weight / 2 = 2", True), ("weight / 2L = 2", True),
                           ("weight / 2l = 2.5", False), ("weight / 2.0 = 2.5", True),
                           ("weight = 5D", True), ("weight = 5L", True),
                           ("half = .5d", True), ("half = 5e-1F", True),
                           ("weight = 5.D", True), ("big = 1099511627776L", True),
                           ("weight = 0x5L", True), ("weight IN (4L, 5D)", True),
                           ("-weight / 2D = -2.5", True), ("weight / -2 = -2", True)):
        assert compile_selector(text).matches(f) is expected, text


def test_an_integer_with_a_leading_zero_is_octal() -> None:
    """As in Java and the brokers' selector grammars: `010` is 8 (it was read as 10); a
    decimal point, an exponent or `D`/`F` make a decimal double whatever its zeros."""
    f = _fields(eight=8, ten=10, zero=0)
    for text, expected in (("eight = 010", True), ("ten = 010", False),
                           ("eight = 010L", True), ("eight = 0010", True),
                           ("zero = 00", True), ("zero = 0", True),
                           ("ten = 010D", True), ("ten = 010.0", True),
                           ("ten = 010e0", True), ("eight IN (07, 010)", True)):
        assert compile_selector(text).matches(f) is expected, text


@pytest.mark.parametrize(("text", "error"), [
    ("n = 09", ("not a number: '09' at position 5 (an integer that starts with 0 is octal, "
     "as in Java: digits 0 to 7)")),
    ("n = 018L", "not a number: '018L' at position 5 (an integer that starts with 0"),
])
def test_an_octal_integer_holds_digits_0_to_7(text: str, error: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value).startswith(error), str(e.value)


@pytest.mark.parametrize(("text", "error"), [
    ("n = 2.5L", ("not a number: '2.5L' at position 5 (L ends an integer, without a decimal "
     "point or an exponent)")),
    ("n = 1e3l", "not a number: '1e3l' at position 5 (l ends an integer,"),
])
def test_l_after_an_approximate_number_is_an_error(text: str, error: str) -> None:
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value).startswith(error), str(e.value)


@pytest.mark.parametrize(("text", "found"), [
    ("+5", "'+5', a number"),
    ("+'x'", "\"+'x'\", a string"),
    ("+(a + 1)", "'+(a + 1)', an arithmetic expression"),
    ("+-flag", "'+-flag', an arithmetic expression"),
    ("-+flag", "'-+flag', an arithmetic expression"),
    ("+JMSPriority", "'+JMSPriority', a field that is never a boolean"),
])
def test_a_unary_plus_changes_nothing(text: str, found: str) -> None:
    """ActiveMQ, Artemis and Qpid Broker-J parse `+x` as `x` (no operation: a property
    stays a property, which may hold a boolean), so `+flag` is a condition (see
    test_an_identifier_may_hold_a_boolean) as `flag` is; `-flag` negates (arithmetic) and
    is not. What follows a plus is judged as it would be alone."""
    with pytest.raises(SelectorError) as e:
        compile_selector(text)
    assert str(e.value).startswith(f"expected a condition at position 1, found {found} ("), (
        str(e.value))
    assert compile_selector("+n = 3 AND +flag").matches(_fields(n=3, flag=True))


def test_a_long_token_is_quoted_cut_in_the_middle() -> None:
    """An error quotes what it stopped at on one line, however long (its start, its end
    and how much was left out)."""
    with pytest.raises(SelectorError) as e:
        compile_selector("'" + "x" * 300 + "' + 1")
    assert str(e.value).startswith("expected a condition at position 1, found \"'" + "x" * 48
                                   + "…(208 characters)…" + "x" * 44 + "' + 1\", an arithmetic")
