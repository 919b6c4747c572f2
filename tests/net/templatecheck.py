"""The pre-check of a run's message values (`MessageTemplate.check_run`), compared with
checking each message's values one by one."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.outgoing import MessageTemplate


def first_failing(t: MessageTemplate, last: int) -> int | None:
    """The first message number of 1 … last whose values fail, found one by one."""
    for n in range(1, last + 1):
        try:
            t.check_number(n)
        except UserError:
            return n
    return None


def template(*properties: str) -> MessageTemplate:
    """A run's template with these `--property` values."""
    from amqpcli.cli.send import build_template

    return build_template("data", {}, None, None, None, None, list(properties), [], [], [])


def assert_checked_as_made(option: str, last: int, first: int | None) -> None:
    """A run of `last` messages with property `option` fails its pre-check at message
    `first` (None: passes it), the first that fails one by one."""
    t = template(option)
    assert first_failing(t, last) == first
    if first is None:
        t.check_run(last)
        return
    with pytest.raises(UserError) as e:
        t.check_run(last)
    assert e.value.code == Exit.USAGE
    assert str(e.value).startswith(f"message {first}: --property 'k': "), e.value
