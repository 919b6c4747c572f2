"""Text that comes from the outside (a capture's names, addresses, SASL mechanisms and
close errors, a file's name) is shown as it is, in colour too: square brackets are not
markup (a name lost its `[eu-west]`, `[/]` stopped a view with a MarkupError), `:smile:`
is not an emoji code, and no control character reaches the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import Script, write

LINK = "n-orders[eu-west][/]:smile:[link=http://x]L[/link]"
ADDRESS = "a-orders[bold red]X[/bold red]"
SAFE_ERROR = "close \"amqp:c\\x1b[31mRED\" (\\x1b]0;title\\x07)"  # (quoted: not a plain name)
MECHANISM = "PLAIN\x1b[2J"


def _capture(path: Path) -> Path:
    s = Script()
    s.raw(C2S, encode_protocol_header("sasl"))
    s.raw(S2C, encode_protocol_header("sasl"))
    s.raw(S2C, encode_frame(c.SaslMechanisms(
        sasl_server_mechanisms=[Symbol(MECHANISM)]), type=1))
    s.raw(C2S, encode_frame(c.SaslInit(mechanism=Symbol(MECHANISM),
                                       initial_response=b"\0guest\0secret"), type=1))
    s.raw(S2C, encode_frame(c.SaslOutcome(code=0), type=1))
    s.open().sender_link(name=LINK, address=ADDRESS)
    s.transfer(0)
    s.dispose(0, c.Accepted())
    s.c(c.Close(error=c.Error(condition=Symbol("amqp:c\x1b[31mRED"),
                              description="\x1b]0;title\x07")))
    s.s(c.Close())
    return write(path, s)


@pytest.mark.parametrize("color", [True, False])
@pytest.mark.parametrize("view", ["--deliveries", "--links", "--connections", "--summary"])
def test_end_views_show_capture_text_as_it_is(tmp_path: Path, view: str,
                                               color: bool) -> None:
    cap = str(_capture(tmp_path / "hostile.pcapng"))
    code, out, err = run("pcap-dump", cap, view, *(["--color"] if color else []))
    assert code == 0, err
    if view in ("--links", "--summary"):
        assert LINK in out
    if view == "--links":
        assert ADDRESS in out
    if view == "--deliveries":
        assert "n-orders[eu-west]" in out  # (cut to the column's width)
    if view == "--connections":
        assert SAFE_ERROR in out and "\"PLAIN\\x1b[2J\"" in out
    # nothing of the capture's own escapes and no hyperlink reaches the terminal
    for raw in ("\x1b[31mRED", "\x1b]", "\x07", "\x1b[2J"):
        assert raw not in out
    assert "😄" not in out


TRICKY = "a\u2028b\u2029c\x85d\x9b[2Je\u202ef\u2066g"


def test_json_lines_stay_one_line_and_keep_terminal_controls_escaped(tmp_path: Path) -> None:
    """ensure_ascii=False keeps text readable, but a line separator, NEL or C1 control
    inside a value broke one record into several lines for line readers
    (`str.splitlines`, editors) and a C1 CSI reached the terminal; a lone surrogate
    (a `char` may be one) cannot be written as UTF-8 at all."""
    import json

    from amqpcli.codec.message import Message
    from amqpcli.render.jsonvalues import json_line, safe_json_text

    s = Script().open().sender_link(name=TRICKY, address="q")
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t", message_format=0),
        payload=Message(body=TRICKY).encode())
    s.dispose(0, c.Accepted()).close()
    code, out, err = run("pcap-dump", str(write(tmp_path / "t.pcapng", s)), "--json")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == out.count("\n")  # no record split by a separator
    records = [json.loads(ln) for ln in lines]
    assert any(TRICKY in json.dumps(r, ensure_ascii=False) for r in records)
    for ch in "\u2028\u2029\x85\x9b\u202e\u2066":
        assert ch not in out
    assert "é" in safe_json_text(json.dumps("é", ensure_ascii=False))  # readable text stays
    lone = json_line({"c": "x\udc80"})
    lone.encode("utf-8")
    assert json.loads(lone) == {"c": "x\udc80"}


def test_names_in_errors_and_notes_are_escaped(tmp_path: Path) -> None:
    """A file name or a filter value holds what the shell gave it: an escape sequence in
    one reached the terminal through the error line."""
    cap = str(_capture(tmp_path / "hostile.pcapng"))
    junk = tmp_path / "junk\x1b[2J.pcap"
    junk.write_text("not a capture\n")
    for args, code, said in [
        ([str(tmp_path / "nofile\x1b[31m.pcap")], 2, "nofile\\x1b[31m.pcap: no files match"),
        ([str(tmp_path / "nofile\x1b.pcap")], 2, "nofile\\x1b.pcap: no such file"),
        ([cap, "--tls-keylog", "keys\x1b.log"], 2, "keys\\x1b.log: no such key log file"),
        ([str(junk)], 8, "junk\\x1b[2J.pcap"),
        ([cap, "-a", "q\x1b[2J"], 0, "--address q\\x1b[2J matched no link"),
    ]:
        got, _, err = run("pcap-dump", *args)
        assert got == code and said in err and len(err.splitlines()) == 1, err
        assert "\x1b" not in err


@pytest.mark.parametrize("args", [
    ("decode", "--file", "no\x1b[2Jfile"),
    ("send", "amqp://127.0.0.1:1/q", "--from", "no\x1b[2Jfile"),
    ("pcap-dump", "no\x1b[2Jfile.pcap"),
])
def test_every_command_escapes_what_its_errors_echo(args: tuple[str, ...]) -> None:
    """Errors name files and values as given: escaped where every error is printed."""
    code, _, err = run(*args)
    assert code == 2, err
    assert "\x1b" not in err and "no\\x1b[2J" in err


def test_decode_in_colour_names_a_file_as_it_is(tmp_path: Path) -> None:
    """The coloured console took `:smile:` in a file name for an emoji code."""
    f = tmp_path / ":smile:[b].bin"
    f.write_bytes(b"\x00\x53\x77\xa1\x01x")
    code, out, err = run("decode", "--color", "--file", str(f))
    assert code == 0, err
    assert ":smile:[b].bin" in out and "😄" not in out
