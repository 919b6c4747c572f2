"""How Ctrl-C ends `amqp pcap-dump` (`Stopping`): a live capture is ended gently first,
and the reading stops at once only when there is nothing to end or on a second signal."""

from __future__ import annotations

import signal

import pytest

from amqpcli.cli.pcap_dump import Out, Stopping


def _stopping(ended: list[bool], answer: bool | None) -> Stopping:
    stop = Stopping(Out(False, True))
    if answer is not None:
        def end() -> bool:
            ended.append(True)
            return answer
        stop.capturing(end)
    return stop


def test_first_signal_ends_a_live_capture_and_the_reading_goes_on() -> None:
    ended: list[bool] = []
    stop = _stopping(ended, True)
    with stop:
        stop._on_signal(signal.SIGINT, None)  # in a wait: no KeyboardInterrupt
    assert ended == [True] and stop.interrupted and not stop.stopped[0]
    with pytest.raises(KeyboardInterrupt), stop:
        stop._on_signal(signal.SIGINT, None)  # the second: at once
    assert ended == [True] and stop.stopped[0]


def test_nothing_to_end_stops_the_reading_at_once() -> None:
    for answer in (None, False):  # no live capture; its process not started yet
        ended: list[bool] = []
        stop = _stopping(ended, answer)
        with pytest.raises(KeyboardInterrupt), stop:
            stop._on_signal(signal.SIGTERM, None)
        assert stop.interrupted and stop.stopped[0]
        stop._on_signal(signal.SIGINT, None)  # ignored: the end is on its way
        assert len(ended) == (0 if answer is None else 1)
