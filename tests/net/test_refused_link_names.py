"""A refused `recv --dynamic` link is named as such, `the link to a dynamic node`: it was
called 'the coordinator' when the peer ended the session (as RabbitMQ does for "Dynamic
sources not supported") and 'None' when the peer attached a null source and detached."""

from __future__ import annotations

import socket
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import Endpoint, LinkAttached
from tests.net.clirun import amqp
from tests.net.onepeer import HANG_GUARD, one_connection

pytestmark = pytest.mark.integration

_ERROR = c.Error(condition=Symbol("amqp:not-implemented"),
                 description="Dynamic sources not supported")


def _refusing_peer(how: str) -> tuple[int, threading.Thread]:
    """Takes one connection (no SASL) and refuses its first link: by ending the session
    (`end`) or by attaching a null terminus and detaching (`detach`)."""

    def serve(conn: socket.socket) -> None:
        ep = Endpoint("peer", link_policy="manual")
        t = 0.0
        while data := conn.recv(65536):
            t += 0.001
            for e in ep.receive_data(data, t):
                if isinstance(e, LinkAttached) and e.side == ep.remote:
                    if how == "end":
                        ep.end(e.link.session, error=_ERROR)
                    else:
                        ep.refuse_link(e.link, _ERROR)
            out = ep.data_to_send()
            if out:
                conn.sendall(out)

    return one_connection(serve)


@pytest.mark.parametrize("how", ["end", "detach"])
def test_a_refused_dynamic_link_is_named_so(how: str) -> None:
    port, th = _refusing_peer(how)
    r = amqp("recv", f"amqp://127.0.0.1:{port}", "--dynamic", "--sasl-mechanism", "none",
             "-t", "30", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 4, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the link to a dynamic node: " in lines[0], r.stderr
    assert "Dynamic sources not supported" in lines[0]
    assert "coordinator" not in r.stderr and "None" not in r.stderr
