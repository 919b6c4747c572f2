"""`--idle-timeout S` on the client: the open advertises S/2 (AMQP 1.0 Part 2 §2.4.5),
the connection is lost only after S of silence. A peer silent for longer than advertised
but less than S breaks nothing (the advertised value is half the threshold) and is kept."""

from __future__ import annotations

from typing import Any

from amqpcli.codec.frames import encode_frame
from amqpcli.engine import Endpoint, Violation
from amqpcli.engine.sasl import SaslConfig
from amqpcli.errors import Exit
from amqpcli.net.client import LOCAL, REMOTE, Client
from amqpcli.net.config import ConnectionConfig


def _opened(idle_timeout: float) -> tuple[Client, Endpoint, float]:
    client = Client(ConnectionConfig(idle_timeout=idle_timeout))
    client.engine = client._engine_new()
    peer = Endpoint("peer", sasl=SaslConfig(), sides=(LOCAL, REMOTE))
    t = client.engine.now
    for _ in range(20):
        a, b = client.engine.data_to_send(), peer.data_to_send()
        if not a and not b:
            break
        peer.receive_data(a, t)
        client.engine.receive_data(b, t)
    assert client.engine.is_open
    return client, peer, t


def _feed(client: Client, events: list[Any]) -> None:
    for e in events:
        if isinstance(e, Violation):
            client._ev_violation(e)


def test_open_advertises_half_and_a_shorter_silence_is_kept() -> None:
    client, peer, t = _opened(4.0)
    assert peer.connection.open[LOCAL].idle_time_out == 2000
    # 3 s of silence: more than the 2 s advertised, less than --idle-timeout (the
    # threshold the 2 s stand for): nothing broken
    evs = client.engine.receive_data(encode_frame(None), t + 3.0)
    assert not [v for v in evs if isinstance(v, Violation)]
    _feed(client, evs)
    assert client.error is None and client.engine.is_open
    # the whole 4 s: lost
    _feed(client, client.engine.handle_timer(t + 7.0))
    assert client.error is not None and client.error.code == Exit.CONNECTION
    assert "went silent" in str(client.error)
