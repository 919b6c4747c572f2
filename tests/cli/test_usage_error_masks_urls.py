"""A usage error repeats what was typed; a URL in it (given where a number, a file or no
argument was expected) shows its password masked, as every other error does."""

from __future__ import annotations

import pytest

from amqpcli.net.url import mask_urls
from tests.net.clirun import amqp

URL = "amqp://u:Zq9Secret@127.0.0.1:1/q"


@pytest.mark.parametrize("args", [
    ["recv", "-c", URL],
    ["send", "-c", URL, "hi"],
    ["recv", "amqp://127.0.0.1:1/q", URL],
    ["browse", "amqp://127.0.0.1:1/q", URL],
    ["pcap-dump", URL],
    ["tui", "--pcap", URL],
    ["decode", "-f", URL],
], ids=["count", "send-count", "extra-recv", "extra-browse", "capture", "tui-capture",
        "decode-file"])
def test_the_password_is_masked(args: list[str]) -> None:
    r = amqp(*args)
    assert r.returncode == 2, r.stderr
    assert "Zq9Secret" not in r.stderr and "u:***@" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_mask_urls() -> None:
    assert mask_urls("x amqp://u:p@h/q y") == "x amqp://u:***@h/q y"
    assert mask_urls("failover:(amqp://a:b@h1,amqps://c:d@h2)") == (
        "failover:(amqp://a:***@h1,amqps://c:***@h2)")
    assert mask_urls("amqp:/u:pw@h: no such file") == "amqp:/u:***@h: no such file"
    assert mask_urls("amqp://h/q and no password") == "amqp://h/q and no password"


@pytest.mark.parametrize("password", ["p(a)ss99", "it'sSecret", "a b)c'd9"])
def test_a_password_with_quotes_or_brackets_is_masked(password: str) -> None:
    """Such characters end a URL where a pattern looks for one: the password typed on the
    command line is a registered secret, masked wherever an error quotes it."""
    r = amqp("recv", "--count", f"amqp://u:{password}@127.0.0.1:1/q")
    assert r.returncode == 2, r.stderr
    assert password not in r.stderr, r.stderr
