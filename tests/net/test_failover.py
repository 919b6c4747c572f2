"""Failover lists: ``URL,URL…`` or ``failover:(URL,URL…)`` — parsed into one endpoint
with alternates sharing scheme, credentials and address; each connect goes round the
hosts (from the one after the host last connected to); against `amqp serve` peers and
RabbitMQ."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.client import connect_retrying
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.url import _redact, parse_url, parse_urls, resolve_endpoint
from tests.net.clirun import amqp, queue_name
from tests.net.servepeer import ServePeers


def _closed_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "amqp://u:pw@a:5672,amqp://b:5673/orders",
    "failover:(amqp://u:pw@a:5672,amqp://b:5673/orders)",
    " FAILOVER:( amqp://u:pw@a:5672 , AMQP://b:5673/orders ) ",
])
def test_a_list_is_one_endpoint_with_alternates(text: str) -> None:
    ep = parse_urls(text)
    hosts = ep.hosts()
    assert [(h.host, h.port) for h in hosts] == [("a", 5672), ("b", 5673)]
    # one set of credentials and one address, whichever URL gave them
    assert {(h.user, h.password, h.address, h.tls) for h in hosts} == {
        ("u", "pw", "orders", False)}
    assert all(not h.alternates for h in hosts)
    assert parse_urls(ep.url(show_secrets=True)) == ep  # the URL back reads the same
    assert "pw" not in ep.url() and "pw" not in repr(ep)


def test_a_comma_in_an_address_is_not_a_list() -> None:
    ep = parse_urls("amqp://h/orders,eu")
    assert ep.address == "orders,eu" and not ep.alternates


@pytest.mark.parametrize(("text", "says"), [
    ("amqp://a,amqps://b", "mixes amqp:// and amqps://"),
    ("amqp://u:p@a,amqp://v:p@b", "different credentials"),
    ("amqp://a/x,amqp://b/y", "different addresses"),
    ("failover:amqp://a", "failover:(amqp://HOST1,amqp://HOST2)"),
    ("failover:(amqp://a,amqp://b", "without its ')'"),
    ("failover:(amqp://a,amqp://b)?failover.maxReconnectAttempts=3", "are not read"),
    ("failover:()", "names no host"),
    ("amqp://a,amqp://b:99999", "bad port"),
    # an empty host ($HOST2 unset) would send the list's credentials to 127.0.0.1
    ("amqp://u:pw@h1,amqp:///q", "every URL of a failover list names its host"),
    ("failover:(amqp://u:pw@h1,amqp://)", "every URL of a failover list names its host"),
    ("amqp://h1,ftp://h2/q", "a failover list starts every URL with its scheme"),
    ("amqp://h:15799,h2:15701/q", "a failover list starts every URL with its scheme"),
])
def test_bad_lists_are_usage_errors(text: str, says: str) -> None:
    with pytest.raises(UserError) as e:
        parse_urls(text)
    assert e.value.code == Exit.USAGE
    assert says in str(e.value)


def test_errors_mask_every_password_of_a_list() -> None:
    with pytest.raises(UserError) as e:
        parse_urls("amqp://u:secret1@a,amqps://u:secret1@b")
    assert "secret1" not in str(e.value)
    assert _redact("amqp://u:s1@a,amqp://v:s2@b") == "amqp://u:***@a,amqp://v:***@b"


@pytest.mark.parametrize(("text", "secret"), [
    # a ')' in the password and the list's own ')' forgotten: what follows it is no option
    ("failover:(amqp://u:Pa)ss@h1,amqp://h2/q", "ss@"),
    # an unencoded ',amqp://' in the password cuts the URL there
    ("amqp://u:zq9,amqp://ss@h1/q", "zq9"),
])
def test_a_password_cut_by_the_list_syntax_is_not_shown(text: str, secret: str) -> None:
    with pytest.raises(UserError) as e:
        parse_urls(text)
    assert e.value.code == Exit.USAGE
    assert secret not in str(e.value), str(e.value)


def test_an_option_for_all_hosts_settles_what_the_urls_disagree_on() -> None:
    ep = resolve_endpoint("amqp://a/x,amqp://b/y", address="z", env={})
    assert {h.address for h in ep.hosts()} == {"z"}
    ep = resolve_endpoint("amqp://u:p@a,amqp://v:q@b", user="me", password="pw", env={})
    assert {(h.user, h.password) for h in ep.hosts()} == {("me", "pw")}
    with pytest.raises(UserError, match="--user with --password"):
        resolve_endpoint("amqp://u:p@a,amqp://v:q@b", user="me", env={})


def test_a_failure_no_pause_cures_names_the_hosts_passed_over_too() -> None:
    dead = _closed_port()
    r = amqp("send", f"amqp://127.0.0.1:{dead},amqp://nonexistent.invalid/q", "x")
    assert r.returncode == Exit.CONNECTION, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert f"127.0.0.1:{dead}: connection refused; nonexistent.invalid:5672: cannot " \
        "resolve host" in line


def test_request_says_where_it_failed_over(serve: ServePeers) -> None:
    live = parse_url(serve())
    dead = _closed_port()
    r = amqp("request", f"amqp://127.0.0.1:{dead},{live.url()}/svc", "x", "--timeout", "1",
             "--json")
    said = f"failover: connected to 127.0.0.1:{live.port} (passed over 127.0.0.1:{dead}: " \
        "connection refused)"
    lines = r.stderr.splitlines()
    assert lines.count(f"amqp: warning: {said}") == 1
    summary = json.loads(next(x for x in lines if x.startswith('{"request"')))
    assert summary["request"]["warnings"] == [said]


def test_one_url_places_refuse_a_list() -> None:
    with pytest.raises(UserError, match="failover list"):
        parse_url("amqp://a,amqp://b")


def test_options_apply_to_every_host_and_host_or_port_refused() -> None:
    ep = resolve_endpoint("amqp://a,amqp://b", user="me", password="pw", address="q", env={})
    assert [(h.host, h.user, h.password, h.address) for h in ep.hosts()] == [
        ("a", "me", "pw", "q"), ("b", "me", "pw", "q")]
    for opts in ({"host": "c"}, {"port": 1234}):
        with pytest.raises(UserError, match="does not go with a failover list"):
            resolve_endpoint("amqp://a,amqp://b", env={}, **opts)  # type: ignore[arg-type]


# --- connecting ------------------------------------------------------------------------


def test_connect_goes_round_the_hosts(serve: ServePeers) -> None:
    live = parse_url(serve())
    dead = _closed_port()
    cfg = ConnectionConfig(endpoint=parse_urls(f"amqp://127.0.0.1:{dead},{live.url()}"),
                           connect_timeout=5)

    warnings: list[str] = []

    async def run() -> list[int]:
        ports = []
        for _ in range(3):
            client = await connect_retrying(cfg, None, warnings.append)
            ports.append(client.cfg.endpoint.port)
            await client.close()
        return ports

    # each connect starts after the host last connected to: the dead one is tried and
    # passed over each time, and the client's own config names the host it reached
    assert asyncio.run(run()) == [live.port] * 3
    said = (f"failover: connected to 127.0.0.1:{live.port} (passed over "
            f"127.0.0.1:{dead}: connection refused)")
    assert warnings == [said] * 3


def test_the_first_host_reached_at_once_says_nothing(serve: ServePeers) -> None:
    live = parse_url(serve())
    cfg = ConnectionConfig(endpoint=parse_urls(f"{live.url()},amqp://127.0.0.1:{_closed_port()}"))
    warnings: list[str] = []

    async def run() -> None:
        client = await connect_retrying(cfg, None, warnings.append)
        await client.close()

    asyncio.run(run())
    assert warnings == []


def test_no_host_reached_names_each_one() -> None:
    a, b = _closed_port(), _closed_port()
    r = amqp("send", f"amqp://127.0.0.1:{a},amqp://127.0.0.1:{b}/q", "x")
    assert r.returncode == Exit.CONNECTION, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("amqp: error: cannot connect to any of 2 hosts: ")
    assert f"127.0.0.1:{a}: connection refused" in line
    assert f"127.0.0.1:{b}: connection refused" in line
    assert "Traceback" not in r.stderr


def test_send_fails_over_when_the_first_host_drops(serve: ServePeers) -> None:
    """The first broker closes the connection (amqp:connection:forced) after 3 messages;
    the reconnect goes to the next host of the list, where the rest arrive."""
    first = serve("--close-after", "3")
    second = serve()
    q = queue_name()
    r = amqp("send", f"{first},{second}/{q}", "m{n}", "--expand", "--count", "10",
             "--reconnect", "2", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["accepted"] >= 10 and summary["reconnects"] == 1
    lost = ("connection lost (the peer closed the connection: amqp:connection:forced: "
            "closed after 3 deliveries (--close-after)); reconnecting (1 of 2)")
    assert summary["warnings"] == [lost, f"failover: connected to {second.rpartition('/')[2]}"]
    # (the first one's messages cannot be read back: it closes any connection after 3)
    rr = amqp("recv", f"{second}/{q}", "--drain", "--bodies-only", "-t", "5")
    assert rr.returncode == 0, rr.stderr
    bodies = set(rr.stdout.split())
    # what the first did not confirm went to the second (one in doubt may be on both)
    assert {f"m{n}" for n in range(4, 11)} <= bodies <= {f"m{n}" for n in range(1, 11)}


def test_rabbitmq_behind_a_dead_host(rabbitmq_url: str, rabbitmq_queue: str) -> None:
    """A real broker as the second host: the credentials of the first URL go to it."""
    hostport = rabbitmq_url.rpartition("@")[2]
    dead = _closed_port()
    url = f"failover:(amqp://guest:guest@127.0.0.1:{dead},amqp://{hostport})"
    r = amqp("send", url, "--address", rabbitmq_queue, "hello", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 1
    r = amqp("recv", url, "--address", rabbitmq_queue, "--count", "1", "--bodies-only",
             "-t", "10")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "hello"


def test_a_profile_holds_a_failover_list(serve: ServePeers, tmp_path: Path) -> None:
    live = serve()
    dead = _closed_port()
    conf = tmp_path / "config.toml"
    conf.write_text(f'[profiles.pair]\nurl = "amqp://127.0.0.1:{dead},{live}"\n')
    env = {"AMQP_CONFIG": str(conf)}
    q = queue_name()
    r = amqp("send", f"@pair/{q}", "via-profile", env=env)
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{live}/{q}", "--count", "1", "--bodies-only", "-t", "5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "via-profile"
