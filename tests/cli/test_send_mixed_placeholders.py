"""A value with both `{n}` and `{n%K}` in it (`-P 'k:short={n%4}{n}'`) is checked before
the run as it will be made, every placeholder expanded. It was checked as one with `{n}`
alone: the first and the last number of each stretch of as many digits, which holds only
when the rest of the text is the same across the stretch, and `{n%K}` changes it. So
`{n%4}{n}` for 3000 messages passed (01000 and 03000 fit a short) and message 2771
(32771) failed mid-run, after 2770 messages had gone. Now the numbers of each remainder
modulo K are checked as a stretch of their own."""

from __future__ import annotations

import pytest

from amqpcli.errors import UserError
from tests.net.clirun import amqp
from tests.net.templatecheck import assert_checked_as_made, template

NOWHERE = "amqp://127.0.0.1:1/q"  # (usage errors are said before any connect)


@pytest.mark.parametrize(("option", "last", "first"), [
    ("k:short={n%4}{n}", 3000, 2771),  # 3{n} past 32767 from 2768 on: the first n%4 = 3
    ("k:short={n%4}{n}", 2770, None),
    ("k:ushort={n%7}{n}", 20000, 5536),  # (the check of {n} alone named 10000)
    ("k:short={n}{n%4}", 4000, 3277),  # 32770 … 32773 at 3277 (its n%4: 1)
    ("k:short={n%2}{n%3}{n}", 3000, 1001),  # period 6: an odd n of 4 digits, 1?{n}
    ("k:int={n%1009}{n}00", 20000, 10000),  # a period past the one checked by remainders
    ("k:string=a{n}-{n%3}", 20000, None),
])
def test_a_mixed_value_is_checked_as_it_will_be_made(option: str, last: int,
                                                       first: int | None) -> None:
    assert_checked_as_made(option, last, first)


def test_the_first_failing_message_of_a_long_mixed_run() -> None:
    # a long: {n%1000} then 16 digits of n past its range at n%1000 = 923 first
    with pytest.raises(UserError, match=r"^message 1000000000000923: --property 'k': bad "
                                        r"long value '9231000000000000923'"):
        template("k:long={n%1000}{n}").check_run(10**18)


def test_refused_before_connecting() -> None:
    r = amqp("send", NOWHERE, "x", "-c", "3000", "-P", "k:short={n%4}{n}")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("amqp: error: message 2771: --property 'k': bad short value '32771': "
                        "out of range for short (-32768 to 32767)\n")


def test_a_mixed_body_refused_before_connecting() -> None:
    r = amqp("send", NOWHERE, "--expand", "-b", "value", "short:{n%4}{n}", "-c", "3000")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith("amqp: error: message 2771: body: "), r.stderr
