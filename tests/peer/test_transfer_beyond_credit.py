"""A client that sends one transfer more than its credit (Part 2 §2.6.7) gets its link
closed with amqp:link:transfer-limit-exceeded; `amqp serve` says what became of every
message that came on the link, and keeps none that broke the rule.

Pre-settled transfers within the credit are kept (at most once: nothing to answer); the
one beyond it is not (it used to be stored all the same). Unsettled ones are not taken,
since the link was closed before their outcome could go out: the client never hears one,
so they are in doubt for it, and the log says so for each (it used to say nothing).

The client is the project's engine for the opening, then transfers written by hand in one
write, so the four arrive together, as a client that ignores credit sends them."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from amqpcli.engine import Endpoint, LinkDetached
from tests.net.clirun import amqp, queue_name

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
_HANG_GUARD = 20.0


def _send_four_with_credit_for_three(port: int, address: str, settled: bool) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD)
    try:
        ep = Endpoint("client", container_id="over-credit")
        ep.open()
        link = ep.attach_sender(ep.begin(), "snd", source=c.Source(),
                                target=c.Target(address=address))
        sock.sendall(ep.data_to_send())
        deadline = time.monotonic() + _HANG_GUARD
        while link.link_credit < 3:
            assert time.monotonic() < deadline, "no credit from the server"
            ep.receive_data(sock.recv(65536), time.time())
        assert link.link_credit == 3
        payload = Message(body="x").encode()
        sock.sendall(b"".join(
            encode_frame(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"t%d" % i,
                                    message_format=0, settled=settled), 0, payload=payload)
            for i in range(4)))
        detached: list[Any] = []
        while not detached:  # the server's answer: the link closed
            data = sock.recv(65536)
            assert data, "the server ended the connection instead"
            detached = [e for e in ep.receive_data(data, time.time())
                        if isinstance(e, LinkDetached)]
        assert str(detached[0].error.condition) == "amqp:link:transfer-limit-exceeded"
    finally:
        sock.close()


def _stored(url: str) -> int:
    run = amqp("browse", url, "--json")
    assert run.returncode == 0, run.stderr
    return len([json.loads(x) for x in run.stdout.splitlines() if x.strip()])


def test_presettled_within_credit_are_kept_the_one_beyond_is_not(serve: Serve) -> None:
    s = serve("--credit", "3")
    q = queue_name()
    _send_four_with_credit_for_three(s.port, q, settled=True)
    s.wait_log(r"message 4 not taken \(amqp:link:transfer-limit-exceeded: the link is "
               r"closed for it\)")
    assert _stored(f"{s.url}/{q}") == 3


def test_unsettled_ones_each_said_not_taken(serve: Serve) -> None:
    s = serve("--credit", "3")
    q = queue_name()
    _send_four_with_credit_for_three(s.port, q, settled=False)
    s.wait_log(r"message 4 not taken")
    for n in (1, 2, 3):
        s.wait_log(rf"'snd' -> '{q}': message {n} not taken \(its link was closed before "
                   r"it was settled\)")
    assert "accepted" not in s.log
    assert _stored(f"{s.url}/{q}") == 0
