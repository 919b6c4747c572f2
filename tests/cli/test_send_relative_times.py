"""Times relative to now wherever a timestamp is typed on the command line: `now+60s`,
`now-5m` (ms, s, m, h), in the time properties, typed values (`timestamp:now+5m`) and
annotations (`x-opt-scheduled-enqueue-time`)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from amqpcli.cli.options import parse_value, typed_value
from amqpcli.cli.send import build_template
from amqpcli.codec.types import Timestamp
from amqpcli.errors import UserError

# --- times relative to now --------------------------------------------------------------

@pytest.mark.parametrize(("text", "offset"), [
    ("now", 0), ("now+60s", 60_000), ("now-5m", -300_000), ("now+250ms", 250),
    ("now+2h", 7_200_000), ("now+1.5s", 1_500),
])
def test_a_timestamp_relative_to_now(text: str, offset: int) -> None:
    before = int(time.time() * 1000)
    value = typed_value("timestamp", text, "--x")
    after = int(time.time() * 1000)
    assert type(value) is Timestamp
    assert before + offset <= value <= after + offset


def test_a_typed_value_takes_a_relative_timestamp() -> None:
    before = int(time.time() * 1000)
    value = parse_value("timestamp:now+5m", "body")
    assert type(value) is Timestamp and value >= before + 300_000


@pytest.mark.parametrize("text", ["now+60", "now+", "now + 5s", "now+5d", "now+-5s", "later+5s"])
def test_a_malformed_relative_time_is_refused_saying_what_is_taken(text: str) -> None:
    with pytest.raises(UserError, match=r"now\+DURATION / now-DURATION \(now\+60s"):
        typed_value("timestamp", text, "--absolute-expiry-time")


def test_a_relative_time_past_the_range_of_a_timestamp_is_refused() -> None:
    with pytest.raises(UserError, match="out of range for timestamp"):
        typed_value("timestamp", "now+999999999999999h", "--x")


def test_the_properties_take_relative_times_of_each_message(monkeypatch: Any) -> None:
    """A time of the clock is each message's own: an expiry a minute ahead is a minute
    ahead of the message it is in, however long the run."""
    clock = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    template = build_template("data", {"absolute_expiry_time": "now+60s",
                                       "creation_time": "now-1s"},
                              None, None, None, None, [], [], [], [])
    expiry, created = (template.properties[k] for k in ("absolute_expiry_time",
                                                        "creation_time"))
    assert (expiry.value(1), created.value(1)) == (1_000_060_000, 999_999_000)
    clock[0] += 3600  # (a long run: message 2 an hour later)
    assert (expiry.value(2), created.value(2)) == (1_000_060_000 + 3_600_000,
                                                   999_999_000 + 3_600_000)
