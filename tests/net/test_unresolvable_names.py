"""A host name Python refuses before any resolver sees it (a label over 63 characters, an
empty one: `a..b`, `.`) is a name that cannot be resolved, as one too long overall is: a
client says "cannot resolve host" (exit 3), `serve` "cannot listen on" (exit 3). Before,
the idna codec's UnicodeError in getaddrinfo was an internal error (exit 1). No resolver
is asked for these names, and nothing listens on port 1."""

from __future__ import annotations

import asyncio
import socket

import pytest

from amqpcli.cli.options import build_config
from amqpcli.errors import Exit, UserError
from amqpcli.net import connect
from tests.net.clirun import amqp

LONG_LABEL = "a" * 64
REFUSED = [LONG_LABEL, "a..b", ".", f"{LONG_LABEL}.example.com"]


@pytest.mark.parametrize("host", REFUSED)
def test_a_refused_name_is_one_that_does_not_resolve(host: str) -> None:
    assert connect.name_refused(host) is not None
    with pytest.raises(UserError) as ei:
        asyncio.run(connect.open_stream(build_config(f"amqp://{host}:1/q", connect_timeout=5)))
    assert ei.value.code == Exit.CONNECTION
    assert str(ei.value) == f"cannot connect to {host}:1: cannot resolve host {host!r}"
    assert not getattr(ei.value, "retryable", True)  # as any name that does not resolve


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "a.b.", "bücher.example",
                                  "a" * 63])
def test_names_python_takes(host: str) -> None:
    assert connect.name_refused(host) is None


@pytest.mark.parametrize("args", [
    ("send", f"amqp://{LONG_LABEL}:1/q", "hi"),
    ("send", "amqp://a..b:1/q", "hi"),
    ("send", "amqp://.:1/q", "hi"),
    ("send", "amqp://127.0.0.1:1/q", "hi", "--host", LONG_LABEL),
    ("recv", f"amqp://{LONG_LABEL}:1/q", "-t", "1"),
    ("browse", f"amqp://{LONG_LABEL}:1/q"),
    ("request", f"amqp://{LONG_LABEL}:1/q", "hi", "-t", "1"),
])
def test_clients_say_the_host_does_not_resolve(args: tuple[str, ...]) -> None:
    r = amqp(*args, "--connect-timeout", "5")
    assert r.returncode == Exit.CONNECTION, r.stderr
    host = LONG_LABEL if LONG_LABEL in " ".join(args) else args[1][len("amqp://"):-len(":1/q")]
    assert r.stderr == f"amqp: error: cannot connect to {host}:1: cannot resolve host {host!r}\n"


def test_a_very_long_name_is_cut_in_the_line() -> None:
    host = "h" * 1000
    r = amqp("send", f"amqp://{host}:1/q", "hi", "--connect-timeout", "5")
    assert r.returncode == Exit.CONNECTION, r.stderr
    line = r.stderr.strip()
    assert line.startswith("amqp: error: cannot connect to hhh") and line.endswith("hhh'")
    assert "characters)…" in line and ": cannot resolve host 'hhh" in line
    assert len(line) < 300, line


def test_a_tls_server_name_python_refuses_is_a_usage_error() -> None:
    """--server-name goes through the same codec once TLS starts: checked before."""
    r = amqp("send", "amqps://127.0.0.1:1/q", "hi", "--server-name", LONG_LABEL)
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == (f"amqp: error: --server-name {LONG_LABEL!r} is not a host name "
                        "(label too long)\n")


@pytest.mark.parametrize("host", [LONG_LABEL, "a..b"])
def test_serve_cannot_listen_on_a_refused_name(host: str) -> None:
    r = amqp("serve", "--listen", f"{host}:0", timeout=60)
    assert r.returncode == Exit.CONNECTION, r.stderr
    assert r.stderr.startswith(f"amqp: error: cannot listen on {host}:0: cannot resolve "
                               f"{host!r} ("), r.stderr
    assert "internal error" not in r.stderr


def test_the_peer_server_raises_the_resolvers_error() -> None:
    from amqpcli.peer import Broker, Faults, Server

    server = Server(("a..b", 0), Broker(Faults(), log=lambda _t: None))
    with pytest.raises(socket.gaierror):
        asyncio.run(server.start())


@pytest.mark.parametrize("host", [LONG_LABEL, "a..b"])
def test_proxy_cannot_listen_on_a_refused_name(host: str) -> None:
    """As serve: it was an internal error (exit 1)."""
    r = amqp("proxy", "--listen", f"{host}:0", "amqp://127.0.0.1:1", timeout=60)
    assert r.returncode == Exit.CONNECTION, r.stderr
    assert r.stderr.startswith(f"amqp: error: cannot listen on {host}:0: cannot resolve "
                               f"{host!r} ("), r.stderr


def test_a_very_long_listen_name_is_cut_in_the_line() -> None:
    host = ".".join(["b" * 60] * 5)
    r = amqp("serve", "--listen", f"{host}:0", timeout=60)
    assert r.returncode == Exit.CONNECTION, r.stderr
    assert host not in r.stderr and "…(" in r.stderr and len(r.stderr) < 400, r.stderr
