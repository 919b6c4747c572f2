"""`--open-hostname` (and a profile's `open_hostname`): the hostname our open carries, TLS
or not, apart from the TLS server name. RabbitMQ picks the vhost from it (`vhost:NAME`):
a vhost other than the default reached over plain amqp://, and one that does not exist."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from proton import Condition

from tests.net.clirun import amqp, json_lines, queue_name
from tests.peers import Broker, PeerThread
from tests.peers.net import PeerHandler
from tests.peers.tls import Certs
from tests.rabbitmqctl import own_vhost, rabbitmqctl

pytestmark = pytest.mark.integration


def _queues(vhost: str) -> dict[str, int]:
    """The queues of `vhost` on the test node and how many messages each holds."""
    listed = rabbitmqctl("list_queues", "-p", vhost, "--no-table-headers", "name", "messages")
    rows = (line.split("\t") for line in listed.splitlines() if line)
    return {name: int(count) for name, count in rows}


@pytest.fixture
def vhost(rabbitmq_url: str) -> Iterator[str]:
    """A vhost of this test's own on the test node."""
    yield from own_vhost("qa-vh")


def test_a_rabbitmq_vhost_over_plain_amqp(rabbitmq_url: str, vhost: str,
                                          tmp_path: Path) -> None:
    q = queue_name("vh")
    url = f"{rabbitmq_url}//queue/{q}"
    r = amqp("send", url, "in the vhost", "--open-hostname", f"vhost:{vhost}")
    assert r.returncode == 0, r.stderr
    # in that vhost's queue, not in the default vhost's (a queue of the name is not there)
    deadline = time.monotonic() + 30
    while _queues(vhost).get(q) != 1:
        assert time.monotonic() < deadline, _queues(vhost)
        time.sleep(0.2)
    assert q not in _queues("/")

    r = amqp("browse", url, "--open-hostname", f"vhost:{vhost}", "--json")
    assert r.returncode == 0, r.stderr
    assert [m["body"] for m in json_lines(r.stdout)] == [{"data": [{"binary-text": "in the vhost"}]}]

    # a profile's open_hostname does the same (its password by reference)
    parts = urlsplit(rabbitmq_url)
    config = tmp_path / "config.toml"
    config.write_text(f'[profiles.vh]\nurl = "amqp://{parts.username}@{parts.hostname}:'
                      f'{parts.port}"\npassword_env = "VH_PW"\n'
                      f'open_hostname = "vhost:{vhost}"\n')
    env = {"AMQP_CONFIG": str(config), "VH_PW": parts.password or ""}
    r = amqp("recv", f"@vh//queue/{q}", "-c", "1", "-t", "10", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert [m["body"] for m in json_lines(r.stdout)] == [{"data": [{"binary-text": "in the vhost"}]}]
    assert _queues(vhost)[q] == 0 and q not in _queues("/")


def test_a_vhost_that_does_not_exist_is_one_line(rabbitmq_url: str) -> None:
    # RabbitMQ 3.10 takes the open, then closes the connection at the attach:
    # amqp:unauthorized-access "Access for user 'guest' was refused: insufficient permissions"
    # ("insufficient permissions"): the error names the vhost the open asked for
    name = f"no-such-{uuid.uuid4().hex[:8]}"
    for args in (("send", f"{rabbitmq_url}//queue/{queue_name('vh')}", "x"),
                 ("recv", f"{rabbitmq_url}//queue/{queue_name('vh')}", "-t", "10"),
                 # (no hint about the dynamic reply node it was attaching: not its fault)
                 ("request", f"{rabbitmq_url}//queue/{queue_name('vh')}", "x", "-t", "10")):
        r = amqp(*args, "--open-hostname", f"vhost:{name}")
        assert r.returncode == 4, r.stderr  # the peer closed the connection with an error
        (line,) = r.stderr.splitlines()
        assert line.startswith("amqp: error: ") and "amqp:unauthorized-access" in line, line
        assert line.endswith(f' (the open named vhost "{name}": does it exist, and may this '
                             "user use it?)"), line
        assert "guest:guest" not in line and "Traceback" not in r.stderr


class _RefusesEveryAttach(PeerHandler):
    """Closes the connection at the first attach, as RabbitMQ does for a vhost that is
    not there."""

    def on_link_remote_open(self, event: Any) -> None:
        event.connection.condition = Condition("amqp:unauthorized-access", "not you")
        event.connection.close()


@pytest.mark.parametrize(("hostname", "hint"), [
    ("vhost:a\x1bb", (' (the open named vhost "a\\x1bb": does it exist, and may this user '
                     "use it?)")),
    ("a-host", ""),  # (no vhost named: no hint)
])
def test_only_a_vhost_refused_gets_the_hint(peers: Callable[..., Any], hostname: str,
                                           hint: str) -> None:
    peer = peers(PeerThread(_RefusesEveryAttach()))
    r = amqp("send", f"{peer.url}/q", "x", "--open-hostname", hostname)
    assert r.returncode == 4, r.stderr
    assert r.stderr.splitlines() == [("amqp: error: the peer closed the connection: "
                                     f"amqp:unauthorized-access: not you{hint}")]


def test_the_open_carries_it_plain_or_beside_the_tls_server_name(
        broker: Broker, tls_broker: Broker, tls_certs: Certs) -> None:
    r = amqp("send", f"{broker.url}/q", "x", "--open-hostname", "vhost:a")
    assert r.returncode == 0, r.stderr
    assert broker.connections()[-1].hostname == "vhost:a"
    # Without it, the host (or --server-name with TLS), as before.
    assert amqp("send", f"{broker.url}/q", "x").returncode == 0
    assert broker.connections()[-1].hostname == "127.0.0.1"

    # TLS: the certificate is checked for the host (SNI), the open says the vhost
    url = f"amqps://localhost:{tls_broker.port}/q"
    r = amqp("send", url, "x", "--ca-file", str(tls_certs.ca_cert),
             "--open-hostname", "vhost:b")
    assert r.returncode == 0, r.stderr
    assert tls_broker.connections()[-1].hostname == "vhost:b"


@pytest.mark.parametrize(("args", "needle"), [
    (("--open-hostname", ""), "--open-hostname needs a name"),
    (("--open-hostname", "\udcff"), "--open-hostname is not UTF-8"),
])
def test_bad_open_hostnames_are_usage_errors(args: tuple[str, ...], needle: str) -> None:
    r = amqp("send", "amqp://127.0.0.1:1/q", "x", *args)
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.splitlines()
    assert needle in line


def test_the_tui_proxy_forwards_the_applications_opens() -> None:
    r = amqp("tui", "--proxy", "5999", "amqp://127.0.0.1:1", "--open-hostname", "vhost:x")
    assert r.returncode == 2
    assert "--open-hostname goes with --recv or --send" in r.stderr
