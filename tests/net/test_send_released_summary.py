"""`amqp send`'s summary names the released messages: it gave only their count, so which
ones were not delivered was left to a receiver's `--verify-sequence`. The runs against
`amqp serve --release` are in tests/cli/test_send_released.py."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.errors import Exit
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.sending import SendPlan, SendSummary, _Sender, summary_exit, summary_text


def test_released_messages_named_in_text_and_json() -> None:
    s = SendSummary(sent=10, messages=10, accepted=7, released=3, elapsed=1.0,
                    released_messages=[(3, "m3"), (6, b"\x06"), (9, None)])
    lines = summary_text(s).splitlines()
    assert lines[0].startswith("sent 10, accepted 7, released 3, in doubt 0 in ")
    assert lines[1] == ("released 3 (messages 3, 6, 9): not delivered: the peer may take "
                        "such messages if sent again")
    j = s.to_json()
    assert j["released-messages"] == [{"number": 3, "message-id": "m3"},
                                      {"number": 6, "message-id": "06"},
                                      {"number": 9, "message-id": None}]
    assert summary_exit(s)[0] == Exit.REJECTED


def test_released_numbers_as_runs() -> None:
    s = SendSummary(sent=6, messages=6, released=5, elapsed=1.0,
                    released_messages=[(1, None), (2, None), (3, None), (4, None), (6, None)])
    assert "\nreleased 5 (messages 1-4, 6): not delivered" in summary_text(s)


def test_a_hundred_thousand_releases_are_one_short_line() -> None:
    # every other message released: 100,000 runs of one number each
    released = [(n, f"id-{n}") for n in range(1, 200_001, 2)]
    s = SendSummary(sent=200_000, messages=200_000, accepted=100_000, released=100_000,
                    elapsed=1.0, released_messages=released)
    lines = summary_text(s).splitlines()
    assert len(lines) == 2 and len(lines[1]) < 200, lines[1][:300]
    assert lines[1].startswith("released 100000 (messages 1, 3, 5, 7, 9, …): not delivered")
    # the JSON keeps every one, as it does the messages in doubt
    assert len(s.to_json()["released-messages"]) == 100_000


def _message(n: int) -> OutgoingMessage:
    return OutgoingMessage(number=n, payload=b"x", message_id=f"m{n}")


def test_without_retry_a_release_is_counted_at_once() -> None:
    s = _Sender(ConnectionConfig(), SendPlan(address="q"))
    s._count(_message(4), c.Released())
    assert not s.queue and s.s.released_messages == [(4, "m4")] and s.s.released == 1
