"""How the TUI words states: a session or link that a connection's close (or a session's
end) took without an end or detach of its own says so (they read `[ended]` and
`[detached]`, as if those frames had been seen; a 0-10 session stayed `[attached]` under
a `[closed]` connection); a proxied connection that closed says `closed` once (it read
`[closed, closed]`); a TCP flow that is not AMQP is not a notice (`flow … speaks unknown:
not shown`), as pcap-dump says nothing of it."""

from __future__ import annotations

from pathlib import Path

from amqpcli.tui import adapter
from tests.paths import REPO_ROOT
from tests.tui.replaying import replayed

SERVE_SESSION = REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"


def _titles(src: object) -> dict[str, str]:
    snap = src.snapshot(None, None, src.now())  # type: ignore[attr-defined]
    out = {}
    for c in snap.tree:
        out[c.key] = c.label
        for s in c.sessions:
            out[s.key] = s.label
            for lk in s.links:
                detail = src.snapshot(lk.key, None, src.now()).link  # type: ignore[attr-defined]
                out[lk.key] = detail.title
    return out


def test_closed_with_the_connection() -> None:
    # c1: the client detaches nothing, ends nothing: it closes the connection
    titles = _titles(replayed(SERVE_SESSION))
    assert titles["c1"].startswith("c1 [closed] ")
    assert titles["c1|s0.0"] == "session ch 0/0 [closed with the connection]"
    assert "   [closed with the connection]   " in titles["c1|s0.0|client|amqp-sender-1"]
    # c2's receiver was detached by a detach frame: that stays "detached"
    assert "   [detached]   " in titles["c2|s0.0|server|amqp-receiver-1"]


def test_a_proxied_connection_that_closed_says_it_once() -> None:
    src = replayed(SERVE_SESSION)
    cw = dict(src.connections())["c1"]
    cw.ended = "closed"  # as the proxy source marks a connection whose TCP closed
    assert adapter.conn_state(cw) == "closed"
    assert _titles(src)["c1"].startswith("c1 [closed] ")
    cw.ended = "reset by the broker"  # a transport that ended otherwise is still said
    assert adapter.conn_state(cw) == "closed, reset by the broker"


def test_amqp010_sessions_close_with_their_connection(testdata: Path) -> None:
    src = replayed(testdata / "captures" / "amqp010-qpid-python-echo.pcapng")
    assert src.loaded is not None
    assert not [n for n in src.loaded.notes if "speaks unknown" in n or "not shown" in n]
    titles = _titles(src)
    assert titles["c1"].startswith("c1 [closed] AMQP 0-10 ")
    sessions = [v for k, v in titles.items() if k.count("|") == 1]
    # lab-idle detached itself; lab-session was open when the connection closed
    assert sessions == ["session lab-session ch 1 [closed with the connection]",
                        "session lab-idle ch 2 [detached]"]


def test_an_encrypted_connection_is_said_so(tmp_path: Path) -> None:
    from amqpcli.tui.sources.replay import load_capture, no_amqp
    from tests.dissect.helpers import C2S, Script, write

    hello = bytes.fromhex("160301002a010000260303") + bytes(32) + bytes.fromhex("0002002f0100")
    loaded = load_capture(write(tmp_path / "tls.pcapng", Script().raw(C2S, hello), port=5671))
    assert loaded.records == []
    note = ("c1 (10.0.0.1:40000 -> 10.0.0.2:5671) is TLS, encrypted: not shown "
            "(amqp pcap-dump --tls-keylog FILE decrypts it)")
    assert loaded.notes == [note]
    assert no_amqp(loaded) == "no AMQP traffic in this capture (1 encrypted connection)"
