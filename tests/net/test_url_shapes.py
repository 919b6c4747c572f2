"""URLs that urlsplit reads leniently or misleadingly: a password holding an unencoded
'/', '?' or '#' (its first part was quoted in the error as a bad port), stray text after a
bracketed host, an unclosed bracket, a scheme with one slash, an IPv6 zone."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import parse_url
from tests.net.clirun import amqp

SECRET = "Tr0ub4dor"


@pytest.mark.parametrize("url", [
    f"amqp://u:pa/{SECRET}@127.0.0.1/q",
    f"amqp://admin:{SECRET}/3@broker.example.com//queue/x",
    f"amqp://u:{SECRET}?x@h/q",
    f"amqp://u:{SECRET}#x@h/q",
    f"amqp://u:x/{SECRET}/y@h:5672/q",
])
def test_unencoded_slash_in_the_password_is_named_and_masked(url: str) -> None:
    with pytest.raises(UserError) as e:
        parse_url(url)
    text = str(e.value)
    assert e.value.code == Exit.USAGE
    assert SECRET not in text and "pa'" not in text, text
    assert "unencoded '/', '?' or '#'" in text and ":***@" in text, text


@pytest.mark.parametrize(("url", "why"), [
    ("amqp://u:p@[::1]x/q", "bad host '[::1]x'"),
    ("amqp://u:pa]ss@[::1/q", "bad host '[::1'"),
    ("amqp:/u:p@127.0.0.1/q", "write the scheme as amqp://"),
    ("AMQPS:/h/q", "write the scheme as amqp://"),
])
def test_malformed_authority_is_a_bad_url(url: str, why: str) -> None:
    with pytest.raises(UserError) as e:
        parse_url(url)
    assert e.value.code == Exit.USAGE and why in str(e.value), str(e.value)
    assert ":p@" not in str(e.value) and "pa]ss" not in str(e.value)


def test_ipv6_zone_is_percent_decoded() -> None:
    ep = parse_url("amqp://[fe80::1%25lo]:5673/q")
    assert (ep.host, ep.port, ep.address) == ("fe80::1%lo", 5673, "q")


@pytest.mark.parametrize(("url", "address"), [
    ("amqp://h//queue/a@b", "/queue/a@b"),  # an '@' in the address is not credentials
    ("amqp://u:p@h:5672//queue/a", "/queue/a"),
    ("amqp://[::1]:5672/q", "q"),
])
def test_usual_urls_still_parse(url: str, address: str) -> None:
    assert parse_url(url).address == address


@pytest.mark.parametrize("env", [False, True])
def test_the_command_never_prints_the_password(env: bool) -> None:
    url = f"amqp://admin:{SECRET}/3@127.0.0.1:1//queue/x"
    r = amqp("send", "hi", env={"AMQP_URL": url}) if env else amqp("send", url, "hi")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert SECRET not in r.stdout + r.stderr and "admin:***@" in r.stderr
