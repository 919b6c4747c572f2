"""`--max-message-size N`: our receiving links say in their attach how large a message
they take. A peer that keeps to it gives larger ones to no one here (`amqp serve` leaves
them on the queue); one that sends a larger one anyway has the link ended with
amqp:link:message-size-exceeded (detached, not closed, for a durable subscription), the
message left unsettled with it (it delivers it again elsewhere), and the run says why."""

from __future__ import annotations

import pytest

from amqpcli.codec.message import Message
from amqpcli.engine import DeliverySettled, Event, LinkAttached, LinkDetached
from amqpcli.errors import Exit
from tests.net.clirun import amqp_in_process
from tests.net.onepeer import PeerConnection, engine_peer
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


def _peer(big: int, seen: dict[str, object]) -> int:
    """Sends a small message, then (once it is settled) one of `big` bytes whatever the
    receiver's max-message-size (in frames of at most 64 KiB, one write); records what it
    saw of our attach and detach."""

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            seen["max-message-size"] = e.link.attach[ep.remote].max_message_size
            seen["small"] = ep.send(e.link, Message(body="small").encode())
        elif isinstance(e, DeliverySettled) and e.delivery is seen.get("small"):
            seen["big"] = ep.send(e.delivery.link, Message(body="x" * big).encode())
        elif isinstance(e, DeliverySettled) and e.delivery is seen.get("big"):
            seen["big outcome"] = e.delivery.outcome
        elif isinstance(e, LinkDetached) and e.side == ep.remote:
            seen["closed"] = e.closed

    port, th = engine_peer(script)
    seen["thread"] = th
    return port


@pytest.mark.parametrize("big", [500, 300_000], ids=["one-frame", "many-frames"])
def test_a_larger_message_ends_the_link_and_is_not_settled(big: int) -> None:
    seen: dict[str, object] = {}
    port = _peer(big, seen)
    code, out, err = amqp_in_process("recv", f"amqp://127.0.0.1:{port}/q", "--max-message-size",
                                     "200", "--sasl-mechanism", "none", "-t", "5",
                                     "--bodies-only")
    seen["thread"].join(10)  # type: ignore[attr-defined]
    assert seen["max-message-size"] == 200
    assert out == "small\n"  # the message before it is written (and accepted)
    assert code == Exit.REFUSED, err
    assert "sent a message larger than our max-message-size (delivery 1 is " in err, err
    assert seen["big outcome"] == "abandoned"  # never accepted: the peer still has it
    assert seen["closed"] is True
    # (a message in many frames is given up at its first frame, not gathered to its end)
    size = int(err.split("delivery 1 is ")[1].split(" bytes")[0])
    assert 200 < size <= 65536


def test_a_durable_subscription_is_detached_not_closed() -> None:
    """Closing it would delete the subscription and every message it holds."""
    seen: dict[str, object] = {}
    port = _peer(500, seen)
    code, _, err = amqp_in_process("recv", f"amqp://127.0.0.1:{port}/q", "--max-message-size",
                                   "200", "--sasl-mechanism", "none", "-t", "5",
                                   "--subscription", "s1", "--container-id", "c1")
    seen["thread"].join(10)  # type: ignore[attr-defined]
    assert code == Exit.REFUSED, err
    assert seen["closed"] is False


def test_it_is_a_positive_number() -> None:
    code, _, err = amqp_in_process("recv", "amqp://127.0.0.1:1/q", "--max-message-size", "0")
    assert code == Exit.USAGE
    assert "--max-message-size must be between 1 and" in err


def test_not_offered_where_nothing_is_received() -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "x", "--max-message-size",
                                   "10")
    assert code == Exit.USAGE and "No such option: --max-message-size" in err
    code, _, err = amqp_in_process("tui", "amqp://127.0.0.1:1/q", "--send",
                                   "--max-message-size", "10")
    assert code == Exit.USAGE
    assert "--max-message-size goes with --recv: --send receives no messages" in err
