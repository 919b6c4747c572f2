"""A refused `recv --dynamic` link is named as such, `the link to a dynamic node`: it was
called 'the coordinator' when the peer ended the session (as RabbitMQ does for "Dynamic
sources not supported") and 'None' when the peer attached a null source and detached."""

from __future__ import annotations

import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import Event, LinkAttached
from tests.net.clirun import amqp
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration

_ERROR = c.Error(condition=Symbol("amqp:not-implemented"),
                 description="Dynamic sources not supported")


def _refusing_peer(how: str) -> tuple[int, threading.Thread]:
    """Takes one connection (no SASL) and refuses its first link: by ending the session
    (`end`) or by attaching a null terminus and detaching (`detach`)."""

    def script(peer: PeerConnection, e: Event) -> None:
        if isinstance(e, LinkAttached) and e.side == peer.ep.remote:
            if how == "end":
                peer.ep.end(e.link.session, error=_ERROR)
            else:
                peer.ep.refuse_link(e.link, _ERROR)

    return engine_peer(script, link_policy="manual")


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
