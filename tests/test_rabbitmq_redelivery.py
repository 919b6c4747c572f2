"""`amqp recv -c N --reconnect` against RabbitMQ, the connection lost mid-receive: what is
written out and what is counted (amqpcli/net/redelivery.py).

RabbitMQ gives every message it delivers a header, one sent with none included, and marks
each delivery after the first first-acquirer false (delivery-count stays absent): a
message whose acceptance was lost with the connection comes again so marked, and so does
every message it had sent on the lost link that we never settled, written or not.

The cuts are at protocol steps (tests/net/framecut.py), the same bytes on every run:
* the third disposition never reaches the node (--credit 1: one per message): the third
  message comes again, is written again and counted as redelivered;
* the fifth transfer never reaches us (--credit 4: the node sends it once it has our
  settlements of the first four and the flow after them): the messages it had sent under
  that credit come again marked, though never written. With messages alike (the same bare
  message) their identity cannot tell them from the four settled before: counted as
  redeliveries, recv took up to a window more than -c N."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.framecut import DISPOSITION, FrameCut
from tests.rabbitmqctl import rabbitmqctl

pytestmark = pytest.mark.integration

TRANSFER = 0x14
HEADER = ["--durable", "--priority", "5", "--ttl", "600000"]


@pytest.fixture(params=["classic", "quorum"])
def queue(request: pytest.FixtureRequest, rabbitmq_url: str) -> Iterator[str]:
    """A durable queue of the type asked for, declared on the node (an AMQP 1.0 attach
    cannot ask for a quorum queue): its address, /amq/queue/NAME. Deleted after."""
    name = f"redelivery-{request.param}-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("eval", f'rabbit_amqqueue:declare(rabbit_misc:r(<<"/">>, queue, <<"{name}">>), '
                f'true, false, [{{<<"x-queue-type">>, longstr, <<"{request.param}">>}}], '
                'none, <<"guest">>).')
    yield f"/amq/queue/{name}"
    rabbitmqctl("delete_queue", name)


def _cut(rabbitmq_url: str, **kwargs: Any) -> FrameCut:
    p = urlsplit(rabbitmq_url)
    return FrameCut(p.hostname or "127.0.0.1", p.port or 5672, **kwargs)


def _via(cut: FrameCut, rabbitmq_url: str, address: str) -> str:
    p = urlsplit(rabbitmq_url)
    return f"amqp://{p.username}:{p.password}@127.0.0.1:{cut.port}/{address}"


def _summary(stderr: str) -> dict[str, Any]:
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith('{"recv"')]
    return json.loads(line)["recv"]  # type: ignore[no-any-return]


def _left(rabbitmq_url: str, address: str) -> list[dict[str, Any]]:
    """What the queue still holds (taken off it)."""
    r = amqp("recv", f"{rabbitmq_url}/{address}", "--drain", "--json", "-q")
    assert r.returncode == 0, r.stderr
    return json_lines(r.stdout)


@pytest.mark.parametrize("header", [True, False], ids=["header", "no-header"])
def test_a_lost_acceptance_comes_again_marked_and_is_not_counted(
        rabbitmq_url: str, queue: str, header: bool) -> None:
    r = amqp("send", f"{rabbitmq_url}/{queue}", "x", "--count", "6", "--message-id", "{n}",
             *(HEADER if header else []), "-q")
    assert r.returncode == 0, r.stderr
    with _cut(rabbitmq_url, direction="up", nth=3, performative=DISPOSITION) as cut:
        r = amqp("recv", _via(cut, rabbitmq_url, queue), "--count", "5", "--credit", "1",
                 "--reconnect", "3", "--json", "--json-summary", "--timeout", "30")
    assert cut.cut.is_set()
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert [m["properties"]["message-id"] for m in out] == ["1", "2", "3", "3", "4", "5"]
    # the header RabbitMQ gives: the one sent (or durable false for none), first-acquirer
    # false on the one that came again only, no delivery-count
    sent = {"durable": True, "priority": 5, "ttl": 600000} if header else {"durable": False}
    assert [m["header"] for m in out] == [
        {**sent, "first-acquirer": again} for again in (True, True, True, False, True, True)]
    s = _summary(r.stderr)
    assert (s["received"], s.get("redelivered", 0), s["outcomes"], s["reconnects"]) == (
        5, 1, {"accept": 6}, 1), s
    assert [m["properties"]["message-id"] for m in _left(rabbitmq_url, queue)] == ["6"]


def test_messages_alike_sent_but_never_received_are_new(rabbitmq_url: str,
                                                       queue: str) -> None:
    # one bare message for all twelve; the number rides in a message annotation (not part
    # of the bare message, so not of its identity)
    r = amqp("send", f"{rabbitmq_url}/{queue}", "hello", "--count", "12",
             "-A", "x-opt-n:int={n}", "-q")
    assert r.returncode == 0, r.stderr
    with _cut(rabbitmq_url, direction="down", nth=5, performative=TRANSFER) as cut:
        r = amqp("recv", _via(cut, rabbitmq_url, queue), "--count", "8", "--credit", "4",
                 "--reconnect", "3", "--json", "--json-summary", "--timeout", "30")
    assert cut.cut.is_set()
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert [m["message-annotations"]["x-opt-n"]["int"] for m in out] == list(range(1, 9))
    # the fifth comes again marked (the sixth to eighth too, if the node had sent them)
    assert [m["header"]["first-acquirer"] for m in out][:5] == [True] * 4 + [False]
    s = _summary(r.stderr)
    assert (s["received"], s.get("redelivered", 0), s["outcomes"], s["reconnects"]) == (
        8, 0, {"accept": 8}, 1), s
    assert [m["message-annotations"]["x-opt-n"]["int"]
            for m in _left(rabbitmq_url, queue)] == list(range(9, 13))
