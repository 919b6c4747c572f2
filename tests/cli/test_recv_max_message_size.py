"""`--max-message-size N`: our receiving links say in their attach how large a message
they take. A peer that keeps to it gives larger ones to no one here (`amqp serve` leaves
them on the queue); one that sends a larger one anyway has the link ended with
amqp:link:message-size-exceeded, the message left unsettled with it (it delivers it again
elsewhere), and the run says why."""

from __future__ import annotations

import socket

import pytest

from amqpcli.codec.message import Message
from amqpcli.engine import DeliverySettled, Endpoint, LinkAttached
from amqpcli.errors import Exit
from tests.net.clirun import amqp_in_process
from tests.net.onepeer import one_connection
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def test_a_peer_keeping_to_it_leaves_larger_messages_where_they_are(
        serve: ServePeers) -> None:
    url = serve("-q")
    for body in ("small", "x" * 500, "small2"):
        assert amqp_in_process("send", f"{url}/mms", body, "-q")[0] == 0
    code, out, err = amqp_in_process("recv", f"{url}/mms", "--max-message-size", "200",
                                     "-t", "0.5", "--bodies-only")
    assert (code, out) == (0, "small\nsmall2\n"), err
    code, out, err = amqp_in_process("recv", f"{url}/mms", "-t", "0.5", "--bodies-only")
    assert out == "x" * 500 + "\n", err


def test_a_larger_message_ends_the_link_and_is_not_settled() -> None:
    seen: dict[str, object] = {}

    def peer(conn: socket.socket) -> None:
        """Sends a small message, then (once it is settled) one over the limit."""
        ep = Endpoint("peer")
        t = 0.0
        while data := conn.recv(65536):
            t += 0.001
            for e in ep.receive_data(data, t):
                if isinstance(e, LinkAttached) and e.side == ep.remote:
                    seen["max-message-size"] = e.link.attach[ep.remote].max_message_size
                    seen["small"] = ep.send(e.link, Message(body="small").encode())
                elif isinstance(e, DeliverySettled) and e.delivery is seen.get("small"):
                    seen["big"] = ep.send(e.delivery.link, Message(body="x" * 500).encode())
                elif isinstance(e, DeliverySettled) and e.delivery is seen.get("big"):
                    seen["big outcome"] = e.delivery.outcome
            out = ep.data_to_send()
            if out:
                conn.sendall(out)

    port, th = one_connection(peer)
    code, out, err = amqp_in_process("recv", f"amqp://127.0.0.1:{port}/q", "--max-message-size",
                                     "200", "--sasl-mechanism", "none", "-t", "5",
                                     "--bodies-only")
    th.join(10)
    assert seen["max-message-size"] == 200
    assert out == "small\n"  # the message before it is written (and accepted)
    assert code == Exit.REFUSED, err
    assert "sent a message larger than --max-message-size" in err, err
    assert seen["big outcome"] == "abandoned"  # never accepted: the peer still has it


def test_it_is_a_positive_number() -> None:
    code, _, err = amqp_in_process("recv", "amqp://127.0.0.1:1/q", "--max-message-size", "0")
    assert code == Exit.USAGE
    assert "--max-message-size must be between 1 and" in err
