"""`amqp send`'s summary names the released messages (it gave only their count, so which
ones were not delivered was left to a receiver's `--verify-sequence`), and
`--on-release retry[:N]` sends a released message again after a pause that grows at each
retry (it went again at once: a peer releasing for want of a consumer got a tight loop):
its bookkeeping, and what the summary and the reports say of it. The pauses are timed by
a fake clock (`_Clock`) that the test moves on. The runs against `amqp serve --release`
are in tests/cli/test_send_released.py and tests/net/test_send_retry_pause.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.errors import Exit, UserError
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.reporting import Interval
from amqpcli.net.sending import (
    RELEASE_RETRIES,
    RETRY_WAIT_MAX,
    SendPlan,
    SendSummary,
    _Sender,
    parse_on_release,
    retry_wait,
    summary_exit,
    summary_text,
)


def test_released_messages_named_in_text_and_json() -> None:
    s = SendSummary(sent=10, messages=10, accepted=7, released=3, elapsed=1.0,
                    released_messages=[(3, "m3"), (6, b"\x06"), (9, None)])
    lines = summary_text(s).splitlines()
    assert lines[0].startswith("sent 10, accepted 7, released 3, in doubt 0 in ")
    assert lines[1] == ("released 3 (messages 3, 6, 9): not delivered: --on-release retry "
                        "sends such messages again")
    j = s.to_json()
    assert j["released-messages"] == [{"number": 3, "message-id": "m3"},
                                      {"number": 6, "message-id": "06"},
                                      {"number": 9, "message-id": None}]
    # without --on-release retry the JSON has no retry figures
    assert "retried" not in j and "retries" not in j and "retried-messages" not in j
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


def test_retried_messages_in_text_and_json() -> None:
    s = SendSummary(sent=13, messages=10, accepted=9, released=1, elapsed=1.0,
                    release_retries=1, released_messages=[(6, None)], retries=3,
                    retried_messages={3: ("m3", 1), 6: ("m6", 1), 9: ("m9", 1)})
    lines = summary_text(s).splitlines()
    assert lines[0].startswith("sent 13, accepted 9, released 1, in doubt 0, retried 3 in ")
    assert lines[1] == ("released 1 (message 6): not delivered: released on each try (the "
                        "first and 1 retry: --on-release retry:1), or the run ended before "
                        "the next")
    assert lines[2] == ("retried 3 (messages 3, 6, 9): released, then sent again (3 retries "
                        "in all)")
    j = s.to_json()
    assert (j["retried"], j["retries"], j["released"]) == (3, 3, 1)
    assert j["retried-messages"] == [{"number": n, "message-id": f"m{n}", "retries": 1}
                                     for n in (3, 6, 9)]
    assert summary_exit(s)[0] == Exit.REJECTED


def test_all_accepted_after_retries_is_exit_0() -> None:
    s = SendSummary(sent=14, messages=10, accepted=10, elapsed=1.0, release_retries=3,
                    retries=4, retried_messages={3: (None, 1), 6: (None, 2), 9: (None, 1)})
    assert summary_exit(s) == (Exit.OK, "")
    j = s.to_json()
    assert (j["retried"], j["retries"]) == (3, 4) and "released-messages" not in j
    assert "exit" not in j


def test_retries_are_no_messages_not_sent() -> None:
    # a run that failed after retries: those never sent are counted from the messages
    # sent once, not from the transfers (a retry is one more transfer of one message)
    s = SendSummary(sent=7, messages=5, expected=10, accepted=5, retries=2,
                    retried_messages={1: (None, 2)}, release_retries=3,
                    failure=UserError("lost", Exit.CONNECTION))
    assert s.sent_first == 5 and s.not_sent == 5


@pytest.mark.parametrize(("text", "retries"), [("fail", 0), ("retry", RELEASE_RETRIES),
                                               ("retry:1", 1), ("retry:25", 25)])
def test_parse_on_release(text: str, retries: int) -> None:
    assert parse_on_release(text) == retries


@pytest.mark.parametrize("bad", ["", "retry:", "retry:0", "retry:-1", "retry:x", "fail:1", "retry:101",
                                 "Retry", "retry:٣", "accept"])
def test_parse_on_release_errors(bad: str) -> None:
    with pytest.raises(UserError) as e:
        parse_on_release(bad)
    assert e.value.code == Exit.USAGE
    assert str(e.value) == ("--on-release: expected fail, retry or retry:N (N from 1 to 100), "
                            f"got {bad!r}")


def _message(n: int) -> OutgoingMessage:
    return OutgoingMessage(number=n, payload=b"x", message_id=f"m{n}")


class _Timer:
    def __init__(self, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.callback, self.args = callback, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Clock:
    """The pauses before retries, timed by the test: each one asked for is recorded
    (message number, seconds) and is over when `tick` says."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self.timers: list[_Timer] = []

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> _Timer:
        self.pauses.append((args[0], delay))
        self.timers.append(_Timer(callback, args))
        return self.timers[-1]

    def tick(self) -> None:
        """Every pause asked for so far is over."""
        timers, self.timers = self.timers, []
        for t in timers:
            if not t.cancelled:
                t.callback(*t.args)


def _sender(plan: SendPlan) -> tuple[_Sender, _Clock]:
    s = _Sender(ConnectionConfig(), plan)
    clock = _Clock()
    s.call_later = clock.call_later  # type: ignore[assignment]
    return s, clock


def test_the_pause_before_a_retry_doubles_up_to_its_most() -> None:
    assert [retry_wait(k) for k in range(1, 9)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    assert retry_wait(100) == RETRY_WAIT_MAX == 5.0


def test_a_release_is_queued_to_go_again_up_to_n_times() -> None:
    s, clock = _sender(SendPlan(address="q", release_retries=2))
    m = _message(3)
    for tries in (1, 2):
        s._count(m, c.Released())
        assert s.s.released == 0  # not an outcome yet
        # not queued at once: it pauses first, longer at each try
        assert not s.queue and list(s.pausing) == [3]
        assert clock.pauses[-1] == (3, retry_wait(tries))
        clock.tick()
        assert list(s.queue) == [(m, False)] and not s.pausing
        s.queue.clear()
        s._counted_sent(m, False)  # its retry went
        assert s.s.retries == tries and s.s.retried_messages == {3: ("m3", tries)}
        assert s.s.resent == 0  # (a retry is no resend after a reconnect)
    s._count(m, c.Released())  # the third release: the last try
    assert not s.queue and not s.pausing and len(clock.pauses) == 2
    assert s.s.released == 1 and s.s.released_messages == [(3, "m3")]


def test_a_pausing_retry_does_not_hold_up_the_messages_ready() -> None:
    s, clock = _sender(SendPlan(address="q", release_retries=3))
    s._count(_message(3), c.Released())
    s.queue.append((_message(4), True))  # (taken back after a reconnect: ready to go)
    assert [m.number for m, _ in s._take(10, iter([_message(5)]), 0.0)] == [4, 5]
    clock.tick()
    assert [m.number for m, _ in s._take(10, iter(()), 0.0)] == [3]


def test_without_retry_a_release_is_counted_at_once() -> None:
    s = _Sender(ConnectionConfig(), SendPlan(address="q"))
    s._count(_message(4), c.Released())
    assert not s.queue and s.s.released_messages == [(4, "m4")] and s.s.released == 1


def test_a_retry_the_run_ended_before_is_counted_released() -> None:
    # released, queued to go again, and the run ends first (the connection lost with no
    # reconnect left, Ctrl-C, a timeout): its release stands, it is in no other bucket
    s, clock = _sender(SendPlan(address="q", release_retries=3))
    s._count(_message(5), c.Released())  # (pausing before its retry: Ctrl-C then)
    s.unconfirmed[6] = (_message(6), None)  # sent, no outcome: in doubt
    assert s._left_unconfirmed(s._take_back())
    assert s.s.released == 1 and s.s.released_messages == [(5, "m5")]
    assert s.s.in_doubt == [(6, "m6")]
    assert not s.retrying and not s.pausing
    assert [t.cancelled for t in clock.timers] == [True]
    clock.tick()  # (a pause that ends after all the same: nothing more is queued)
    assert not s.queue


def test_a_retry_kept_across_a_reconnect_still_counts_as_a_retry() -> None:
    # the connection drops while a retry waits: taken back with the rest, it is still a
    # retry (not a resend) when it goes on the next connection
    s, _ = _sender(SendPlan(address="q", release_retries=3))
    m = _message(2)
    s._count(m, c.Released())
    back = s._take_back()
    assert back == [(m, False)] and not s.pausing
    s._counted_sent(m, False)
    assert (s.s.retries, s.s.resent) == (1, 0)


def _report(s: _Sender) -> tuple[dict[str, Any], str]:
    s.interval = Interval(0.0)
    return s._report(1.0)


def test_reports_show_the_retries_so_far() -> None:
    s, clock = _sender(SendPlan(address="q", release_retries=3))
    s.s.sent = s.s.accepted = 10
    obj, line = _report(s)
    assert line == "1.0s sent 10 (+10, 10/s) accepted 10 in flight 0"  # none yet: as before
    assert (obj["retries"], obj["retries-pausing"]) == (0, 0)
    s._count(_message(3), c.Released())
    s._count(_message(6), c.Released())
    obj, line = _report(s)
    assert line.endswith("in flight 0 retries 0 (2 pausing)")
    assert (obj["retries"], obj["retries-pausing"]) == (0, 2)
    clock.tick()
    s.queue.clear()
    s._counted_sent(_message(3), False)
    s._counted_sent(_message(6), False)
    s.s.sent += 2
    obj, line = _report(s)
    assert line.endswith("in flight 0 retries 2")
    assert (obj["retries"], obj["retries-pausing"]) == (2, 0)


def test_reports_without_retry_are_as_before() -> None:
    s = _Sender(ConnectionConfig(), SendPlan(address="q"))
    s.s.sent = s.s.accepted = 10
    obj, line = _report(s)
    assert line == "1.0s sent 10 (+10, 10/s) accepted 10 in flight 0"
    assert "retries" not in obj and "retries-pausing" not in obj
