"""Peer-controlled text reaches a terminal harmless: `printable` escapes control
characters, and backslashes so that the text reads back one way; the delivery lines of
`pcap-dump` pass link names and error descriptions through it (a capture's link name with
an ESC sequence drove the terminal). A quoted string escapes them the same way, with its
own quotes."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from amqpcli.render.text import printable


def test_control_characters_are_escaped() -> None:
    assert printable("odd\nname\x1b[31m\u202ex\x7f\t") == "odd\\nname\\x1b[31m\\u202ex\\x7f\\t"
    assert printable("plain é ✓") == "plain é ✓"


def test_a_backslash_is_escaped_so_no_text_reads_as_an_escape() -> None:
    # a symbol `a\x1b` (four characters) was shown as `a\x1b`, exactly as an ESC is
    assert printable("a\\x1b") == "a\\\\x1b"
    assert printable("a\\x1b") != printable("a\x1b") == "a\\x1b"
    assert printable("C:\\caps\\") == "C:\\\\caps\\\\"
    assert printable("a\\\x1b") == "a\\\\\\x1b"  # a backslash, then an ESC


def test_symbols_link_names_and_conditions_escape_a_backslash() -> None:
    from types import SimpleNamespace

    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import Frame
    from amqpcli.codec.types import Symbol, UInt
    from amqpcli.dissect.records import DeliveryRecord
    from amqpcli.render.deliveries import delivery_line
    from amqpcli.render.frameline import frame_line
    from amqpcli.render.text import format_scalar, format_value

    # (quoted too: a symbol that is not one plain name could read two ways)
    assert format_scalar(Symbol("a\\x1b")) == ('"a\\\\x1b"', "symbol")
    assert format_value([Symbol("a\\x1b"), Symbol("a\x1b")]) == '[:"a\\\\x1b", :"a\\x1b"]'
    err = c.Error(condition=Symbol("amqp:\\x1b"), description="d")
    line = frame_line(Frame(0, 0, 2, 0, 0, b"", c.Close(error=err), b""))  # type: ignore[arg-type]
    assert '"amqp:\\\\x1b" "d"' in line
    attach = c.Attach(name="n", handle=UInt(0), role=False,
                      source=c.Source(address="a", distribution_mode=Symbol("co\\py")))
    line = frame_line(Frame(0, 0, 2, 0, 0, b"", attach, b""))  # type: ignore[arg-type]
    assert "co\\\\py" in line
    rec = DeliveryRecord(SimpleNamespace(label="c1", timed=True), "amqp-1.0", "odd\\x1bname",  # type: ignore[arg-type]
                         "q", "client", 0, b"t", 3, 1, "accepted", c.Accepted(), "receiver",
                         False, False, 1.0, 1.5)
    assert "odd\\\\x1bname" in delivery_line(rec)


def test_delivery_lines_escape_link_names_and_error_descriptions() -> None:
    from types import SimpleNamespace

    from amqpcli.codec import composites as c
    from amqpcli.codec.types import Symbol
    from amqpcli.dissect.records import DeliveryRecord
    from amqpcli.render.deliveries import delivery_line

    conn = SimpleNamespace(label="c1", timed=True)
    state = c.Rejected(error=c.Error(condition=Symbol("amqp:x"), description="bad\x1b]0;t\x07"))
    rec = DeliveryRecord(conn, "amqp-1.0", "odd\nname\x1b[31m", "q", "client", 0,  # type: ignore[arg-type]
                         b"t", 3, 1, "rejected", state, "receiver", False, False, 1.0, 1.5)
    line = delivery_line(rec)
    assert "\x1b" not in line and "\n" not in line and "\x07" not in line
    assert "odd\\nname\\x1b" in line and "bad\\x1b]0;t\\x07" in line


_UNSAFE = ("\x1b", "\x07", "\x9b", "\u202e")


def _harmless(text: str) -> None:
    assert not any(ch in text for ch in _UNSAFE), repr(text)


def test_symbols_and_strings_in_messages_are_escaped() -> None:
    # symbols were printed raw (an annotation key could retitle the terminal) and strings
    # kept C1 controls and bidi overrides (JSON escapes only C0)
    from amqpcli.codec import composites as c
    from amqpcli.codec.message import Message
    from amqpcli.codec.types import Symbol
    from amqpcli.render.message import message_tree
    from amqpcli.render.text import plain_lines

    m = Message(
        properties=c.Properties(content_type=Symbol("a\x1bb"), subject="s\x9bx\u202e"),
        message_annotations=c.MessageAnnotations({Symbol("x-\x1b]0;PWN\x07"): Symbol("v\x1b")}),
        body=[c.AmqpValue(Symbol("a\x1bb"))],
    )
    text = "\n".join(plain_lines(message_tree(Message.decode(m.encode()))))
    _harmless(text)
    assert "x-\\x1b]0;PWN\\x07" in text and "a\\x1bb" in text and "s\\x9bx\\u202e" in text


def test_frame_lines_escape_symbols_conditions_and_descriptions() -> None:
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import Frame
    from amqpcli.codec.types import Symbol, UInt
    from amqpcli.render.frameline import frame_line

    def line(body: object, kind: int = 0) -> str:
        return frame_line(Frame(0, 0, 2, kind, 0, b"", body, b""))  # type: ignore[arg-type]

    err = c.Error(condition=Symbol("amqp:\x1b[31mx"), description="d\x1b]0;PWN\x07\u202e")
    lines = [
        line(c.Close(error=err)),
        line(c.Disposition(role=True, first=UInt(0), state=c.Rejected(error=err))),
        line(c.SaslMechanisms(sasl_server_mechanisms=[Symbol("PL\x1bAIN")]), 1),
        line(c.Attach(name="n\x9b2J", handle=UInt(0), role=False,
                      source=c.Source(address="a\u202e", distribution_mode=Symbol("co\x1bpy")))),
    ]
    for text in lines:
        _harmless(text)
    assert '"amqp:\\x1b[31mx" "d\\x1b]0;PWN\\x07\\u202e"' in lines[0]
    assert '"co\\x1bpy"' in lines[3] and "n\\x9b2J" in lines[3]


def test_decode_escapes_a_symbol_descriptor() -> None:
    # described by ESC[J: the descriptor was printed raw (headline and tree, --brief too)
    from tests.net.clirun import amqp_in_process

    for extra in ((), ("--brief",)):
        code, out, err = amqp_in_process("decode", "00a3031b5b4aa100", *extra)
        assert code == 0, err
        _harmless(out)
        assert 'described by "\\x1b[J"' in out, out


def test_summary_escapes_link_addresses(tmp_path: object) -> None:
    # --summary printed a link's address raw (--links and --connections escaped it)
    from pathlib import Path

    from amqpcli.codec import composites as c
    from tests.dissect.helpers import Script, write
    from tests.net.clirun import amqp_in_process

    s = Script().open().sender_link(address="ev\x1b[31mil\x07").transfer(0)
    cap = write(Path(str(tmp_path)) / "odd.pcapng", s.dispose(0, c.Accepted()).close())
    for view in ("--summary", "--links", "--connections"):
        code, out, err = amqp_in_process("pcap-dump", str(cap), view)
        assert code == 0, err
        _harmless(out)
    assert "ev\\x1b[31mil\\x07" in amqp_in_process("pcap-dump", str(cap), "--summary")[1]



# C0, DEL, C1, and the bidi and line-separator characters `printable` escapes
_ALL_UNSAFE = [chr(n) for n in (*range(0x20), *range(0x7F, 0xA0))] + [
    "\u200e", "\u200f", "\u2028", "\u2029", *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A))]


def test_strings_escape_control_characters_as_symbols_do() -> None:
    # strings went through JSON: ESC was \u001b in a string and \x1b in a symbol (a
    # symbol that is not one plain name is quoted as a string is)
    from amqpcli.codec.types import Symbol
    from amqpcli.render.text import format_scalar, format_value

    for ch in _ALL_UNSAFE:
        text = f"a{ch}b"
        assert format_scalar(text)[0] == format_scalar(Symbol(text))[0], repr(ch)
        assert format_scalar(text)[0] == f'"{printable(text)}"', repr(ch)
    assert format_scalar("a\x1b[31m")[0] == '"a\\x1b[31m"'
    assert format_value(["\x08\x0c\x7f", Symbol("\x08\x0c\x7f")]) == (
        '["\\x08\\x0c\\x7f", :"\\x08\\x0c\\x7f"]')
    # quotes and backslashes of the text stay escaped: "\\x1b" is not "\x1b"
    assert format_scalar("\\x1b")[0] == '"\\\\x1b"'
    assert format_scalar('say "hi"')[0] == '"say \\"hi\\""'


_ESCAPE = re.compile(r'\\(?:([nrt"\\])|x([0-9a-f]{2})|u([0-9a-f]{4}))|(\\)')


def _unescape(shown: str) -> str:
    """The text back from its shown form; each character has one spelling."""
    def one(m: re.Match[str]) -> str:
        short, x, u, stray = m.groups()
        assert stray is None, f"a lone backslash in {shown!r}"
        if short is not None:
            return {"n": "\n", "r": "\r", "t": "\t"}.get(short, short)
        if x is not None:
            assert x not in ("0a", "0d", "09"), shown
            return chr(int(x, 16))
        assert int(u, 16) >= 0x100, f"\\u{u} where \\x would do, in {shown!r}"
        return chr(int(u, 16))

    return _ESCAPE.sub(one, shown)


@settings(max_examples=300, deadline=None)
@example("a\x1b[31m\"\\x1b\u202e\x9b")
@given(st.text(st.sampled_from(_ALL_UNSAFE) | st.characters(max_codepoint=0x2100)))
def test_a_shown_string_is_harmless_and_reads_back(text: str) -> None:
    from amqpcli.render.text import format_scalar

    shown = format_scalar(text)[0]
    assert shown[0] == shown[-1] == '"'
    assert not any(ch in shown for ch in _ALL_UNSAFE), repr(shown)
    assert '"' not in shown[1:-1].replace('\\\\', "").replace('\\"', "")
    assert _unescape(shown[1:-1]) == text


def test_frame_line_error_description_escapes_its_quotes() -> None:
    # a description was put in quotes with its own quotes and backslashes left bare
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import Frame
    from amqpcli.codec.types import Symbol
    from amqpcli.render.frameline import frame_line

    err = c.Error(condition=Symbol("amqp:x"), description='say "hi" \\ \x1b')
    line = frame_line(Frame(0, 0, 2, 0, 0, b"", c.Close(error=err), b""))  # type: ignore[arg-type]
    assert 'amqp:x "say \\"hi\\" \\\\ \\x1b"' in line


@settings(max_examples=300, deadline=None)
@example("a\\x1b\x1b\\\\")
@given(st.text(st.sampled_from([*_ALL_UNSAFE, "\\", "x", "1", "b"])
               | st.characters(max_codepoint=0x2100)))
def test_printable_text_is_harmless_and_reads_back(text: str) -> None:
    shown = printable(text)
    assert not any(ch in shown for ch in _ALL_UNSAFE), repr(shown)
    assert _unescape(shown) == text


def test_a_symbol_that_could_read_two_ways_is_quoted() -> None:
    # `[:a b, :c]` was one symbol "a b" and another "c", or three; `mechanism=a b` too
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import Frame
    from amqpcli.codec.types import Symbol
    from amqpcli.render.frameline import frame_line
    from amqpcli.render.text import format_value

    assert format_value([Symbol("a b"), Symbol("c"), Symbol("a,b"), Symbol("")]) == (
        '[:"a b", :c, :"a,b", :""]')
    assert format_value([Symbol("amqp:accepted:list"), Symbol("x-opt-jms-dest")]) == (
        "[:amqp:accepted:list, :x-opt-jms-dest]")  # plain names stay bare
    init = c.SaslInit(mechanism=Symbol("PLAIN x"), initial_response=None)
    line = frame_line(Frame(0, 0, 2, 1, 0, b"", init, b""))  # type: ignore[arg-type]
    assert 'mechanism="PLAIN x"' in line


def test_the_summary_views_quote_symbols_as_the_frame_lines_do(tmp_path: Path) -> None:
    """--connections (SASL mechanisms, a close's condition), --deliveries and --messages
    (a rejection's condition) drew `PLAIN x` and `amqp:x y` bare, as two names."""
    from types import SimpleNamespace

    from amqpcli.codec import composites as c
    from amqpcli.codec.encode import encode
    from amqpcli.codec.frames import encode_frame, encode_protocol_header
    from amqpcli.codec.types import Symbol, UInt
    from amqpcli.proxy.record import Recorder
    from tests.net.clirun import amqp_in_process

    path = tmp_path / "sym.pcapng"
    rec = Recorder(str(path))
    conn = SimpleNamespace(serial=1, started=1000.0, client=("127.0.0.1", 40000),
                           upstream=("127.0.0.1", 5672))
    rec.open(conn)
    at = [1000.0]

    def send(side: str, data: bytes) -> None:
        at[0] += 0.001
        rec.data(conn, side, data, at[0])

    window = {"incoming_window": UInt(100), "outgoing_window": UInt(100)}
    send("client", encode_protocol_header("sasl"))
    send("server", encode_protocol_header("sasl") + encode_frame(c.SaslMechanisms(
        sasl_server_mechanisms=[Symbol("PLAIN x"), Symbol("ANONYMOUS")]), type=1))
    send("client", encode_frame(c.SaslInit(mechanism=Symbol("PLAIN x")), type=1))
    send("server", encode_frame(c.SaslOutcome(code=0), type=1))
    send("client", encode_protocol_header("amqp") + encode_frame(c.Open(container_id="a")))
    send("server", encode_protocol_header("amqp") + encode_frame(c.Open(container_id="b")))
    send("client", encode_frame(c.Begin(next_outgoing_id=UInt(0), **window)))
    send("server", encode_frame(c.Begin(remote_channel=0, next_outgoing_id=UInt(0), **window)))
    send("client", encode_frame(c.Attach(name="l", handle=UInt(0), role=True,
                                         source=c.Source(address="q"), target=c.Target())))
    send("server", encode_frame(c.Attach(name="l", handle=UInt(0), role=False,
                                         source=c.Source(address="q"), target=c.Target(),
                                         initial_delivery_count=UInt(0))))
    send("client", encode_frame(c.Flow(handle=UInt(0), delivery_count=UInt(0),
                                       link_credit=UInt(1), next_incoming_id=UInt(0),
                                       next_outgoing_id=UInt(0), **window)))
    send("server", encode_frame(c.Transfer(handle=UInt(0), delivery_id=UInt(0),
                                           delivery_tag=b"t", message_format=UInt(0)),
                                payload=encode(c.AmqpValue("x"))))
    send("client", encode_frame(c.Disposition(role=True, first=UInt(0), settled=True,
                                              state=c.Rejected(error=c.Error(
                                                  condition=Symbol("amqp:x y"))))))
    send("client", encode_frame(c.Close(error=c.Error(condition=Symbol("cc dd")))))
    send("server", encode_frame(c.Close()))
    rec.end(conn)
    rec.close()

    code, out, err = amqp_in_process("pcap-dump", str(path), "--connections")
    assert code == 0, err
    assert '    sasl: offered "PLAIN x" ANONYMOUS, chose "PLAIN x", outcome ok' in out
    assert 'close "cc dd";' in out
    for view in ("--deliveries", "--messages"):
        code, out, err = amqp_in_process("pcap-dump", str(path), view)
        assert code == 0 and 'rejected ("amqp:x y")' in out, (view, out, err)
    from amqpcli.codec.types import Described
    from amqpcli.render.text import format_value

    assert format_value(Described(Symbol("my desc"), "v")) == '@("my desc") "v"'
