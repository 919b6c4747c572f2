"""A peer's close that carries an error counts even when it crosses ours: a pre-settled
send to a peer that closes with `amqp:connection:forced` exited 0 with no word when the
two closes crossed (their close then read as the answer to ours), 4 otherwise. The peer
here answers our close with a close carrying an error, which is what the client sees when
the closes cross, every time."""

from __future__ import annotations

import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.engine import ConnectionClosed, Event, LinkAttached, MessageReceived
from amqpcli.errors import Exit
from tests.net.clirun import amqp, json_lines
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def _peer(condition: str) -> tuple[int, threading.Thread]:
    """Takes one connection (no SASL), grants credit, accepts what it gets, and answers
    the client's close with a close carrying `condition`."""

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            ep.accept_link(e.link)
            ep.flow(e.link, 100)
        elif isinstance(e, MessageReceived) and not e.delivery.presettled:
            ep.accept(e.delivery)
        elif isinstance(e, ConnectionClosed) and e.side == ep.remote:
            # instead of the engine's plain answer (and whatever came before it)
            err = c.Error(condition=Symbol(condition), description="going away")
            peer.write(encode_frame(c.Close(error=err)))
            peer.hang_up()

    return engine_peer(script, link_policy="manual")


@pytest.mark.parametrize("condition", ["amqp:connection:forced", "amqp:internal-error"])
def test_presettled_send_reports_the_close_error(condition: str) -> None:
    port, th = _peer(condition)
    r = amqp("send", f"amqp://127.0.0.1:{port}/q", "hi", "--count", "20", "--presettled",
             "--sasl-mechanism", "none", "--connect-timeout", "30", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == Exit.REFUSED, r.stderr
    assert f"the peer closed the connection: {condition}" in r.stderr


def test_unsettled_send_with_every_outcome_heard_warns() -> None:
    """Every outcome was heard before the close: the end is a warning (docs/send-recv.md),
    the exit the outcomes' own."""
    port, th = _peer("amqp:connection:forced")
    r = amqp("send", f"amqp://127.0.0.1:{port}/q", "hi", "--count", "5", "--json",
             "--sasl-mechanism", "none", "--connect-timeout", "30", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == Exit.OK, r.stderr
    summary = json_lines(r.stdout)[-1]
    assert any("after the last outcome: the peer closed the connection: "
               "amqp:connection:forced" in w for w in summary.get("warnings", [])), r.stdout
