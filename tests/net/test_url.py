"""URL parsing, the address rule, option precedence and password secrecy."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import Endpoint, parse_url, resolve_endpoint


@pytest.mark.parametrize(
    ("url", "host", "port", "tls", "address"),
    [
        ("amqp://example.com", "example.com", 5672, False, None),
        ("amqp://example.com/", "example.com", 5672, False, None),
        ("amqps://example.com", "example.com", 5671, True, None),
        ("amqp://h:1234/orders", "h", 1234, False, "orders"),
        ("amqp://h//queue/orders", "h", 5672, False, "/queue/orders"),
        ("amqp://h/%2Fqueue%2Forders", "h", 5672, False, "/queue/orders"),
        ("amqp://h/a%20b/c", "h", 5672, False, "a b/c"),
        ("amqp://[::1]:5673/x", "::1", 5673, False, "x"),
        ("localhost:5673/x", "localhost", 5673, False, "x"),
        ("AMQPS://h:99//exchange/amq.topic/k", "h", 99, True, "/exchange/amq.topic/k"),
    ],
)
def test_parse_url(url: str, host: str, port: int, tls: bool, address: str | None) -> None:
    ep = parse_url(url)
    assert (ep.host, ep.port, ep.tls, ep.address) == (host, port, tls, address)


def test_credentials_are_percent_decoded() -> None:
    ep = parse_url("amqp://us%40er:p%3Aw%40d@h/x")
    assert ep.user == "us@er"
    assert ep.password == "p:w@d"


@pytest.mark.parametrize(
    "url", ["http://h/x", "amqp://h:99999/x", "amqp://h/x?y=1", "amqp://h/x#frag", "amqp://h:abc"]
)
def test_bad_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UserError) as ei:
        parse_url(url)
    assert ei.value.code == Exit.USAGE


def test_bad_url_error_does_not_show_the_password() -> None:
    with pytest.raises(UserError) as ei:
        parse_url("http://user:hunter2@h/x")
    assert "hunter2" not in str(ei.value)
    assert "user:***@h" in str(ei.value)


def test_password_never_in_repr_or_str() -> None:
    ep = parse_url("amqp://guest:hunter2@h:5672//queue/q")
    for text in (repr(ep), str(ep), ep.url(), f"{ep}", repr([ep])):
        assert "hunter2" not in text
    assert ep.url() == "amqp://guest:***@h:5672//queue/q"
    assert ep.url(show_secrets=True) == "amqp://guest:hunter2@h:5672//queue/q"


def test_url_round_trips_the_address() -> None:
    for url in ("amqp://h:5672//queue/q", "amqps://u@h:5671/plain", "amqp://h:5672/a%20b"):
        assert parse_url(parse_url(url).url()) == parse_url(url)


def test_options_win_over_url_and_env() -> None:
    env = {"AMQP_URL": "amqp://envuser:envpw@envhost:1/envaddr", "AMQP_PASSWORD": "fromenv"}
    ep = resolve_endpoint(None, env=env)
    assert (ep.host, ep.port, ep.user, ep.password, ep.address) == (
        "envhost", 1, "envuser", "envpw", "envaddr")
    ep = resolve_endpoint("amqp://u@h/x", env=env)
    assert ep.password == "fromenv"  # URL without a password: AMQP_PASSWORD fills it
    ep = resolve_endpoint(
        "amqp://u:pw@h:2/x", host="o", port=3, user="v", password="q", address="/queue/y", env=env
    )
    assert (ep.host, ep.port, ep.user, ep.password, ep.address) == ("o", 3, "v", "q", "/queue/y")


def test_address_option_is_verbatim() -> None:
    ep = resolve_endpoint("amqp://h/ignored", address="%2Fnot-decoded", env={})
    assert ep.address == "%2Fnot-decoded"


def test_defaults_without_url() -> None:
    assert resolve_endpoint(None, env={}) == Endpoint()


def test_password_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "pw"
    f.write_text("s3cret\nignored\n")
    ep = resolve_endpoint("amqp://u@h", password_file=str(f), env={"AMQP_PASSWORD": "no"})
    assert ep.password == "s3cret"
    with pytest.raises(UserError):
        resolve_endpoint("amqp://u@h", password_file=str(tmp_path / "missing"), env={})
    with pytest.raises(UserError):
        resolve_endpoint("amqp://u@h", password="a", password_file=str(f), env={})
