"""The engine as the client drives it: a receiving link the client attaches.

Regression for the link model: when the side that attaches is the receiver, the link's
sender is the other side and its receiver the attaching side (both sides must differ).
"""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.engine import Endpoint, MessageReceived


def _pump(a: Endpoint, b: Endpoint) -> list[object]:
    events: list[object] = []
    t = 0.0
    for _ in range(100):
        x, y = a.data_to_send(), b.data_to_send()
        if not x and not y:
            return events + a.take_events()
        t += 0.001
        if x:
            b.receive_data(x, t)
        if y:
            events += a.receive_data(y, t)
    raise AssertionError("never quiet")


def test_client_attached_receiver_gets_a_message() -> None:
    client = Endpoint("client")
    peer = Endpoint("peer")  # the peer role accepts links
    client.open()
    _pump(client, peer)
    s = client.begin()
    _pump(client, peer)
    link = client.attach_receiver(s, "r", c.Source(address="q"), c.Target())
    _pump(client, peer)
    assert (link.sender, link.receiver) == ("server", "client")
    peer_link = next(iter(peer.connection.sessions[0].links.values()))
    client.flow(link, 5)
    _pump(client, peer)
    peer.send(peer_link, b"\x00Sw\xa1\x02hi", settled=False)
    events = _pump(client, peer)
    got = [e for e in events if isinstance(e, MessageReceived)]
    assert len(got) == 1 and got[0].delivery.payload == b"\x00Sw\xa1\x02hi"
