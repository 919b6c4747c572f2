"""`amqp recv --drain` with outcomes that give messages back (release, modify without
undeliverable-here) ends after what the node held: the deliveries are held, written, and
given back at the end, so they cannot come straight back and be written again. Messages
that went back with a lost connection and come again are not written twice.

`--count` bounds every run here, so a receive that goes round the same messages stops
(with too many lines) instead of running on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from proton import Condition

from amqpcli.codec.composites import AmqpValue, Properties
from amqpcli.codec.message import Message
from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import ServePeers
from tests.peers import DirectSender, PeerThread
from tests.peers.direct import DirectSenderHandler

pytestmark = pytest.mark.integration


def _ids(out: str) -> Counter[str]:
    return Counter(m["properties"]["message-id"] for m in json_lines(out))


def _left(url: str) -> list[str]:
    """Take (accept) what the node holds: the message-ids, in order."""
    r = amqp("recv", url, "--drain", "--json", "--credit", "500")
    assert r.returncode == 0, r.stderr
    return [m["properties"]["message-id"] for m in json_lines(r.stdout)]


def test_release_drain_ends_after_what_rabbitmq_held(rabbitmq_url: str) -> None:
    # The messages of the report: the same bytes three times (no message-id).
    url = f"{rabbitmq_url}//queue/{queue_name('rel')}"
    assert amqp("send", url, "x", "-c", "3").returncode == 0
    r = amqp("recv", url, "--drain", "--outcome", "release", "--json", "--count", "10")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 3
    assert "received 3, release 3 " in r.stderr
    r = amqp("recv", url, "--drain", "--json", "--count", "10")
    assert len(json_lines(r.stdout)) == 3  # all given back


def test_release_drain_sees_past_the_credit_on_rabbitmq(rabbitmq_url: str) -> None:
    # RabbitMQ puts a released message back at the head: settled at once, the first window
    # would come back for ever and the rest never be seen.
    url = f"{rabbitmq_url}//queue/{queue_name('rel')}"
    assert amqp("send", url, "m", "-c", "250", "--message-id", "{n}").returncode == 0
    r = amqp("recv", url, "--drain", "--outcome", "release", "--json", "--credit", "100",
             "--count", "500")
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == Counter(str(n) for n in range(1, 251))
    assert "received 250, release 250 " in r.stderr
    assert _left(url) == [str(n) for n in range(1, 251)]  # in their order


def test_release_reject_pattern_on_rabbitmq(rabbitmq_url: str) -> None:
    url = f"{rabbitmq_url}//queue/{queue_name('rel')}"
    assert amqp("send", url, "m", "-c", "3", "--message-id", "{n}").returncode == 0
    r = amqp("recv", url, "--drain", "--outcome", "release,reject", "--json",
             "--count", "12")
    assert r.returncode == 0, r.stderr
    assert list(_ids(r.stdout)) == ["1", "2", "3"]
    assert "received 3, reject 1, release 2 " in r.stderr
    assert _left(url) == ["1", "3"]


@pytest.mark.parametrize("outcome", ["release", "modify:failed", "release,modify"])
def test_give_back_drain_on_serve_one_credit_at_a_time(serve: ServePeers, outcome: str) -> None:
    # serve answers drain; with credit 1 each new grant would fetch the message just given
    # back.
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "x", "-c", "3").returncode == 0
    r = amqp("recv", url, "--drain", "--outcome", outcome, "--credit", "1", "--json",
             "--count", "10")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 3
    assert "received 3," in r.stderr
    r = amqp("recv", url, "--drain", "--json", "--count", "10")
    assert len(json_lines(r.stdout)) == 3
    if outcome == "modify:failed":  # each given back once, as modified
        assert [m["header"]["delivery-count"] for m in json_lines(r.stdout)] == [1, 1, 1]


class _DropFirstConnection(DirectSenderHandler):
    """Sends the list from the start on every link; the first connection is closed with
    amqp:connection:forced when its link asks for more after `after` messages."""

    def __init__(self, messages: list[bytes], after: int) -> None:
        super().__init__(messages, None)
        self.after = after
        self.dropped = False

    def on_link_flow(self, event: Any) -> None:
        out = self._out.get(event.link)
        if (out is not None and not self.dropped and out.next >= self.after
                and event.link.credit > 0):
            self.dropped = True
            event.connection.condition = Condition("amqp:connection:forced", "going away")
            event.connection.close()
            return
        super().on_link_flow(event)


class _DropsFirstConnection(DirectSender):
    def __init__(self, messages: list[bytes], after: int) -> None:
        PeerThread.__init__(self, _DropFirstConnection(messages, after))


def test_given_back_with_a_lost_connection_not_written_twice(
    peers: Callable[[PeerThread], Any],
) -> None:
    # Three messages are written and held when the connection goes: they go back with it
    # and come first again on the next one, where they are not written a second time.
    raws = [Message(AmqpValue(f"m{i}"), properties=Properties(message_id=str(i))).encode()
            for i in range(1, 7)]
    snd = peers(_DropsFirstConnection(raws, after=3))
    r = amqp("recv", f"{snd.url}/src", "--drain", "--outcome", "release", "--credit", "1",
             "--reconnect", "3", "--json", "--count", "12")
    assert r.returncode == 0, r.stderr
    assert _ids(r.stdout) == Counter(str(i) for i in range(1, 7))
    summary = r.stderr.strip().splitlines()[-1]
    assert "received 6, release 6, seen again 3 (released, not written), 1 reconnect(s)" \
        in summary, r.stderr
    # The first connection's went back with it; the second's were released.
    outcomes = snd.wait_for_outcomes(6)
    assert sorted(o.index for o in outcomes) == [0, 1, 2, 3, 4, 5]
    assert {o.state.kind for o in outcomes} == {"released"}
