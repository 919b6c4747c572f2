"""`recv --duration S --reconnect N`: once the time is up, a lost connection ends the run
as the time does (the summary, exit 0), whether it was lost before the deadline (the
connection not made again by then) or after it; no connection is tried past it.

The scripted peer drops the connection at a step of the run, not after a time: at the
link's attach (before the deadline: the run has only begun), or when recv takes its
credit back (after it: recv does so at the deadline). recv asks for settle-mode second,
where a loss after the run was complete was the run's error (our outcomes hold only once
the peer settles them): with --reconnect, one just before the deadline was not."""

from __future__ import annotations

import threading

import pytest

from amqpcli.engine import CreditChanged, Event, LinkAttached
from tests.net.clirun import amqp
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration

# (with its backoff of 0.2 s doubling, the attempts go on for 6 s: past the deadline)
OPTIONS = ("--sasl-mechanism", "none", "--settle-mode", "second", "--duration", "2",
           "--reconnect", "5", "--json-summary")


def _peer(drop_at: str) -> tuple[int, threading.Thread, dict[str, bool]]:
    """One connection, dropped at the client's attach or when it takes its credit back
    (a flow of 0); then nothing listens on the port."""
    dropped = {"dropped": False}

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if e.side != ep.remote:  # type: ignore[attr-defined]
            return
        if ((drop_at == "attach" and isinstance(e, LinkAttached))
                or (drop_at == "credit back" and isinstance(e, CreditChanged)
                    and e.link is not None and e.link_credit == 0)):
            dropped["dropped"] = True
            peer.hang_up()

    port, th = engine_peer(script)
    return port, th, dropped


def _recv(drop_at: str) -> tuple[int, str]:
    port, th, dropped = _peer(drop_at)
    r = amqp("recv", f"amqp://127.0.0.1:{port}/q", *OPTIONS, timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert dropped["dropped"]
    assert "Traceback" not in r.stderr
    return r.returncode, r.stderr


def test_lost_before_the_deadline_and_not_made_again_by_then() -> None:
    code, err = _recv("attach")
    assert code == 0, err
    assert "amqp: warning: --duration ended before the connection was made again" in err
    assert '"duration-over": true' in err


def test_lost_after_the_deadline() -> None:
    code, err = _recv("credit back")
    assert code == 0, err
    assert "the --duration is over: not reconnecting" in err
    assert '"duration-over": true' in err
    assert "reconnecting (" not in err


def test_the_first_connection_not_made_by_the_deadline_is_an_error() -> None:
    """The attempts of the first connection end at the deadline too ("connecting
    included"): an error (nothing was received from the node), not the 5 attempts'
    pauses past it."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = amqp("recv", f"amqp://127.0.0.1:{port}/q", *OPTIONS)
    assert p.returncode == 3, p.stderr
    assert "no connection made within the --duration of 2s" in p.stderr, p.stderr
