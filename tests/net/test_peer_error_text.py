"""A peer's error description is reported on one line and otherwise as the peer wrote it:
its line breaks, tabs and control characters escaped (`\\n`, `\\t`, `\\x1b`), a backslash
as `\\\\`, its spaces kept. recv collapsed every run of whitespace into one space (an
aligned table, a quoted value with two spaces came out changed); send and request put a
rejection's description into their summaries raw (a newline broke the summary, an ESC
reached the terminal). Every command words a peer's error the same way, with
`describe_error`."""

from __future__ import annotations

import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import Event, LinkAttached, MessageReceived
from amqpcli.errors import Exit
from amqpcli.net.client import describe_error
from tests.net.clirun import amqp
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

DESCRIPTION = "no such node:\n  name    | state\n  orders  |\tgone\r\nsee 'a  b' \x1b[31m C:\\q"
SHOWN = "no such node:\\n  name    | state\\n  orders  |\\tgone\\r\\nsee 'a  b' \\x1b[31m C:\\\\q"
ERROR = c.Error(condition=Symbol("amqp:internal-error"), description=DESCRIPTION)
SAID = f"amqp:internal-error: {SHOWN}"


def test_describe_error_keeps_the_text_and_escapes_what_would_break_the_line() -> None:
    assert describe_error(ERROR) == SAID
    assert describe_error(c.Error(condition=Symbol("amqp:x"))) == "amqp:x"
    assert describe_error(c.Error(condition=Symbol("amqp:x\n"), description="a  b")) == (
        "amqp:x\\n: a  b")
    assert describe_error(None) == "no error given"


def test_an_erlang_binary_of_text_is_shown_as_its_text() -> None:
    """RabbitMQ writes the reason an operator gave when closing a connection as an Erlang
    binary, its bytes as numbers: shown as the text Erlang would write for it."""
    operator = ("{shutdown,{connection_closing,{server_initiated_close,320,"
                "<<109,97,105,110,116,101,110,97,110,99,101>>}}}")
    said = describe_error(c.Error(condition=Symbol("amqp:internal-error"),
                                  description=operator))
    assert said == ('amqp:internal-error: {shutdown,{connection_closing,'
                    '{server_initiated_close,320,<<"maintenance">>}}}')

    def shown(description: str) -> str:
        return describe_error(c.Error(condition=Symbol("amqp:x"), description=description))

    assert shown("<<97,32,34,98,92>> and <<99>>") == 'amqp:x: <<"a \\"b\\\\">> and <<"c">>'
    assert shown("<<119,195,188>>") == 'amqp:x: <<"wü"/utf8>>'  # UTF-8 beyond ASCII
    # tabs and line breaks are text, escaped (an operator's reason "maint<TAB>enance  now")
    assert shown("<<109,97,105,110,116,9,101,110,32,32,110,111,119,10>>") == (
        'amqp:x: <<"maint\\ten  now\\n">>')
    # not printable text (another control character, bytes that are not UTF-8, not
    # bytes): as is
    for kept in ("<<97,27>>", "<<97,0>>", "<<255,1>>", "<<300>>", "<<>>", "<< 97 >>"):
        assert shown(kept) == f"amqp:x: {kept}"


def _peer(how: str) -> tuple[int, threading.Thread]:
    """Takes one connection (no SASL) and answers its links, then says ERROR: `close`
    closes the connection (and hangs up), `end` ends the session, `detach` detaches the
    link and `refuse` refuses it, once a link is attached; `reject` grants credit and
    rejects every message."""

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            if how == "refuse":
                ep.refuse_link(e.link, ERROR)
                return
            ep.accept_link(e.link)
            if e.link.sender != ep.local:
                ep.flow(e.link, 100)
            if how == "close":
                ep.close(ERROR)  # (and hangs up once it is written)
            elif how == "end":
                ep.end(e.link.session, ERROR)
            elif how == "detach":
                ep.detach(e.link, error=ERROR)
        elif isinstance(e, MessageReceived) and how == "reject":
            ep.reject(e.delivery, ERROR)

    return engine_peer(script, link_policy="manual")


def _run(how: str, *args: str) -> tuple[int, list[str]]:
    """`amqp ARGS` against `_peer(how)`: the exit code and the lines of its output,
    standard output's then standard error's."""
    port, th = _peer(how)
    r = amqp(args[0], f"amqp://127.0.0.1:{port}/q", *args[1:], "--sasl-mechanism", "none",
             "--connect-timeout", "30", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    out = r.stdout + r.stderr
    assert "\x1b" not in out and "\r" not in out and "\t" not in out
    return r.returncode, out.splitlines()


@pytest.mark.integration
@pytest.mark.parametrize(("how", "what"), [
    ("close", "the peer closed the connection"),
    ("end", "the peer ended the session"),
    ("detach", "the peer detached the link to 'q'"),
    ("refuse", "the peer refused the link to 'q'"),
])
def test_recv_reports_the_peers_error_as_the_peer_wrote_it(how: str, what: str) -> None:
    code, lines = _run(how, "recv", "-t", "30")
    assert code == Exit.REFUSED, lines
    assert lines[-1].startswith("amqp: error: the peer "), lines
    assert lines[-1].endswith(f"{what}: {SAID}"), lines


@pytest.mark.integration
def test_browse_reports_it_alike() -> None:
    code, lines = _run("detach", "browse", "-t", "30")
    assert code == Exit.REFUSED, lines
    assert lines[-1] == f"amqp: error: the peer detached the link to 'q': {SAID}", lines


@pytest.mark.integration
def test_a_rejection_is_one_line_of_the_send_summary() -> None:
    code, lines = _run("reject", "send", "hi", "--count", "2")
    assert code == Exit.REJECTED, lines
    said = [ln for ln in lines if ln.startswith("rejected ")]
    assert said == [f"rejected 2 (messages 1-2): {SAID}"], lines  # (the two alike: one line)


@pytest.mark.integration
def test_a_rejection_is_one_line_of_the_request_summary() -> None:
    code, lines = _run("reject", "request", "hi", "-t", "30")
    assert code == Exit.REJECTED, lines
    assert f"amqp: rejected: request 1: {SAID}" in lines, lines
