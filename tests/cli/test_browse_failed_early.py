"""`amqp browse` that fails before its link is attached prints only the error, as send
and recv do: no "0 messages seen … before the error" for a node it never reached. Once
attached, the summary says what was seen before the error."""

from __future__ import annotations

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers
from tests.peers.net import free_port


def test_no_connection_prints_only_the_error() -> None:
    port = free_port()  # nothing listens there
    r = amqp("browse", f"amqp://127.0.0.1:{port}/q")
    assert r.returncode == 3
    assert r.stderr == f"amqp: error: cannot connect to 127.0.0.1:{port}: connection refused\n"


def test_refused_link_prints_only_the_error(serve: ServePeers) -> None:
    url = serve("--refuse", "q*")
    r = amqp("browse", f"{url}/q1")
    assert r.returncode == 4
    assert r.stderr.startswith("amqp: error: the peer refused the link to 'q1': amqp:not-found")
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_an_error_after_the_attach_keeps_the_summary(serve: ServePeers) -> None:
    url = serve("--detach-after", "2")
    r = amqp("send", f"{url}/q", "m", "--count", "3", "--reconnect", "3")
    assert r.returncode == 0, r.stderr
    r = amqp("browse", f"{url}/q")
    assert r.returncode != 0
    assert "seen on 'q' before the error (the node may hold more)" in r.stderr
    assert r.stderr.splitlines()[-1].startswith("amqp: error: the peer detached the link")


def test_json_summary_is_kept(serve: ServePeers) -> None:
    port = free_port()
    r = amqp("browse", f"amqp://127.0.0.1:{port}/q", "--json")
    assert r.returncode == 3
    assert '"error": "cannot connect to' in r.stderr.splitlines()[0]


def test_a_refused_link_ends_with_our_close(serve: ServePeers) -> None:
    """recv and browse close the connection the peer refused their link on, as send
    does: our close, not a dropped socket (a proton peer logs "connection aborted")."""
    url = serve("--refuse", "q*")
    for command in ("recv", "browse"):
        r = amqp(command, f"{url}/q1", "--trace")
        assert r.returncode == 4, r.stderr
        frames = [line.split("]", 1)[-1].split()[0] for line in r.stderr.splitlines()
                  if " c1 -> [" in line]
        assert frames[-2:] == ["detach", "close"] or frames[-2:] == ["end", "close"], (
            command, r.stderr)
