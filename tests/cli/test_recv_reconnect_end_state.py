"""How a run with `--reconnect` ended is the last connection's: a drain the peer did not
answer in --timeout on one connection, then a drop, then a connection that drains the
node: the run ends drained (exit 0), not timed out.

The peer (proton) does not answer the drain on its first connection and answers our
detach there with a forced close (amqp:connection:forced, a drop to reconnect after);
from its second connection on it answers both. The drop comes after the timeout only
where the run still needs the peer then: browse's copy check, `--settle-mode second`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from proton import Condition

from tests.net.clirun import amqp, json_lines
from tests.peers.direct import DirectSenderHandler
from tests.peers.net import PeerThread

pytestmark = pytest.mark.integration

BODIES = [bytes.fromhex("005377a10161"), bytes.fromhex("005377a10162")]  # "a", "b"


class _SilentThenDropped(DirectSenderHandler):
    """On the first connection: the drain is never answered and our detach is answered
    with a forced close. Later connections: a plain DirectSender."""

    def _first(self, event: Any) -> bool:
        return bool(event.connection == self.connections[0])  # (proton wraps anew: not `is`)

    def on_link_flow(self, event: Any) -> None:
        self.answer_drain = not self._first(event)
        super().on_link_flow(event)

    def on_link_remote_close(self, event: Any) -> None:
        if not self._first(event):
            return
        event.connection.condition = Condition("amqp:connection:forced", "going away")
        event.connection.close()


@pytest.fixture
def peer(peers: Callable[..., Any]) -> PeerThread:
    return peers(PeerThread(_SilentThenDropped(BODIES, None)))  # type: ignore[no-any-return]


def test_browse_that_drains_after_a_timed_out_connection_is_whole(peer: PeerThread) -> None:
    r = amqp("browse", f"{peer.url}/x", "--timeout", "0.5", "--reconnect", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert len(peer.connections()) == 2
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == ["a", "b"]
    summary = json.loads(r.stderr.splitlines()[-1])["browse"]
    assert summary["reconnects"] == 1, summary
    assert "copy-not-checked" not in summary, summary  # the second connection's check ran
    assert summary["copy-consumed"] == 0, summary


def test_recv_that_drains_after_a_timed_out_connection_is_not_a_timeout(peer: PeerThread) -> None:
    # --count more than the node holds: a run that drained is 0, one that timed out 5.
    r = amqp("recv", f"{peer.url}/x", "--drain", "--count", "10", "--timeout", "0.5",
             "--settle-mode", "second", "--reconnect", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert len(peer.connections()) == 2
    # (this peer sends its messages again on every link, settled or not)
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == ["a", "b", "a", "b"]
    lost, summary = r.stderr.splitlines()
    assert lost == ("amqp: warning: connection lost (the peer closed the connection: "
                    "amqp:connection:forced: going away); reconnecting (1 of 2)")
    assert summary.startswith("amqp: received 4, accept 4, 1 reconnect(s) in "), r.stderr
