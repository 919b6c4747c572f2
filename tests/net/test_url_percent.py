"""Bad percent-encoding in a URL is a bad URL (it was kept as is, or decoded to U+FFFD)."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import parse_url
from tests.net.clirun import amqp


@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("amqp://h/bad%zzq", "bad percent-encoding in the address"),
        ("amqp://h/x%", "bad percent-encoding in the address"),
        ("amqp://h/%C3%28", "not UTF-8"),
        ("amqp://u%zz:pw@h/x", "bad percent-encoding in the user"),
        ("amqp://u:p%4@h/x", "bad percent-encoding in the password"),
    ],
)
def test_bad_percent_encoding_is_a_bad_url(url: str, what: str) -> None:
    with pytest.raises(UserError) as e:
        parse_url(url)
    assert e.value.code == Exit.USAGE and what in str(e.value)
    assert "p%4" not in str(e.value)  # the password stays hidden


def test_good_percent_encoding_still_decodes() -> None:
    assert parse_url("amqp://h/%25x%20%C3%A9").address == "%x é"


@pytest.mark.parametrize("path", ["bad%zzq", "%C3%28"])
def test_send_to_a_badly_encoded_address_is_a_usage_error(path: str) -> None:
    r = amqp("send", f"amqp://127.0.0.1:1/{path}", "x")  # refused before connecting
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "bad URL" in r.stderr, r.stderr
