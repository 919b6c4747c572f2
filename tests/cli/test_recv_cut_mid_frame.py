"""`amqp recv` and `amqp browse` with `--reconnect` when the connection is cut in the middle
of a frame from the peer (a broker crashing, a load balancer closing it, during a large
transfer): the stream ended inside a frame whose start is sound, which is a lost
connection, retried, not the peer breaking the protocol (was, with a FIN: `error: the peer
at ... broke the protocol: at offset N: expected a frame of 65536 bytes, found end of input
after M bytes`, exit 3, no retry).

The cut is `CutProxy` forwarding 100,000 bytes from `amqp serve` (its 65,536-byte frames
of 150 KB messages) and then ending both streams with a FIN, or resetting them."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.cutproxy import CutProxy
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration

BODY = b"x" * 150_000  # three frames of serve's max-frame-size
INSIDE_SECOND_FRAME = 100_000  # bytes from the peer: the handshake, one frame, part of one
ENDED = {"fin": "connection closed by peer", "rst": "connection reset by peer"}


@pytest.mark.parametrize("how", ["fin", "rst"])
@pytest.mark.parametrize("command", ["recv", "browse"])
def test_a_cut_inside_a_frame_is_a_lost_connection(serve: ServePeers, command: str,
                                                  how: str) -> None:
    url = serve("-q")
    r = amqp("send", f"{url}/q", "--count", "3", "--message-id", "{n}", input=BODY)
    assert r.returncode == 0, r.stderr
    port = int(url.rsplit(":", 1)[1])
    with CutProxy("127.0.0.1", port, cuts=[INSIDE_SECOND_FRAME], direction="down",
                  fin=how == "fin") as proxy:
        r = amqp(command, f"amqp://127.0.0.1:{proxy.port}/q", "--reconnect", "3",
                 "-c", "3", "-t", "5", "--json")
    assert proxy.cut_count == 1
    assert r.returncode == 0, r.stderr
    assert "broke the protocol" not in r.stderr
    assert (f"amqp: warning: connection lost (cannot keep the connection to 127.0.0.1:{proxy.port}: "
            f"{ENDED[how]}); reconnecting (1 of 3)") in r.stderr.splitlines(), r.stderr
    messages = json_lines(r.stdout)
    assert [m["properties"]["message-id"] for m in messages] == ["1", "2", "3"]
    assert all(m["body"] == {"data": [{"binary-text": BODY.decode()}]} for m in messages)
