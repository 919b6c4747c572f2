"""URLs that connected somewhere unintended or failed in Python's words: a host with a
space, a password with no user (dropped for ANONYMOUS), credentials with no host (sent to
127.0.0.1), and bad ports or brackets (`Port could not be cast to integer value as '-1'`,
`Invalid IPv6 URL`). Each is a bad URL in the project's words, the password masked."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import parse_url
from tests.net.clirun import amqp

SECRET = "Tr0ub4dor"

_PYTHONS_WORDS = ("could not be cast", "Invalid IPv6", "out of range 0-65535",
                  "does not appear to be", "NFKC")


def _bad_url(url: str) -> str:
    with pytest.raises(UserError) as e:
        parse_url(url)
    text = str(e.value)
    assert e.value.code == Exit.USAGE and text.startswith("bad URL "), text
    assert SECRET not in text, text
    assert not any(w in text for w in _PYTHONS_WORDS), text
    return text


@pytest.mark.parametrize(("url", "why"), [
    (f"amqp://u:{SECRET}@h:-1/q", "bad port '-1' (1-65535)"),
    ("amqp://h:70000/q", "bad port '70000' (1-65535)"),
    ("amqp://h:0/q", "bad port '0' (1-65535)"),
    ("amqp://h:x/q", "bad port 'x'"),
    ("amqp://[::1/q", "bad host '[::1'"),
    ("amqp://h]/q", "bad host 'h]'"),
    (f"amqp://u:{SECRET}@[zz]/q", "bad host '[zz]'"),
    (f"amqp://u:{SECRET}[x@h/q", "holds an unencoded '[' or ']'"),
])
def test_ports_and_brackets_are_said_in_our_words(url: str, why: str) -> None:
    assert why in _bad_url(url)


@pytest.mark.parametrize("url", ["amqp://h q/q", "amqp://h%20q/q", "amqp://h\t/q",
                                 f"amqp://u:{SECRET}@h%00x/q"])
def test_a_host_with_spaces_or_controls_is_a_bad_url(url: str) -> None:
    assert "bad host" in _bad_url(url)


@pytest.mark.parametrize("url", ["amqp://h/a\tb", f"amqp://u:{SECRET}\n@h/q"])
def test_a_tab_or_line_break_is_not_dropped(url: str) -> None:
    # urlsplit drops them: the address was 'ab'
    assert "a tab or line break" in _bad_url(url)


@pytest.mark.parametrize("url", ["amqp://h/q?x=1", "amqp://h/q#f", "amqp://h/tq?",
                                 "amqp://h/tq#", "amqp://h?", "amqp://h/q?#"])
def test_a_query_or_fragment_even_empty_is_not_dropped(url: str) -> None:
    # urlsplit drops an empty one: `amqp://h/tq?` sent to 'tq'
    assert "'?' and '#' are not allowed" in _bad_url(url)


def test_a_password_needs_a_user() -> None:
    text = _bad_url(f"amqp://:{SECRET}@h/q")
    assert "a password needs a user" in text and "amqp://:***@h/q" in text


@pytest.mark.parametrize("url", [f"amqp://u:{SECRET}@/q", f"amqp://u:{SECRET}@:5673/q",
                                 "amqp://u@/q"])
def test_credentials_need_a_host(url: str) -> None:
    assert "credentials but no host" in _bad_url(url)
    # without credentials an empty host is still the default one
    ep = parse_url("amqp:///q")
    assert (ep.host, ep.port, ep.address) == ("127.0.0.1", 5672, "q")
    assert parse_url("amqp://:5673/q").port == 5673


def test_the_command_says_it_in_one_line_without_the_password() -> None:
    r = amqp("send", f"amqp://:{SECRET}@127.0.0.1:1/q", "x")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert SECRET not in r.stdout + r.stderr and "a password needs a user" in r.stderr


def test_a_long_url_is_quoted_cut_in_the_middle() -> None:
    """An error quotes a URL of any length on one line: its start and end, and how much
    was left out between them (the bad part is named on its own); the password masked
    before the cut."""
    url = f"amqp://u:{SECRET}@h:99999/" + "q" * 300 + "/end"
    text = _bad_url(url)
    assert text == ("bad URL 'amqp://u:***@h:99999/qqqqqqqqqqqqqqqqqqqqqqqqqqqq…(227 "
                    "characters)…qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq/end': bad port "
                    "'99999' (1-65535)")
    short = _bad_url("amqp://h:99999/" + "q" * 80)
    assert "…" not in short and "q" * 80 in short
