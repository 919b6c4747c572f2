"""`--host ''` names no host: a usage error (exit 2), as an empty --container-id or
--subscription is, not a connection failure ("cannot resolve host ''", exit 3). An empty
host in the URL stays the default one, 127.0.0.1. Nothing listens on port 1."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit
from tests.net.clirun import amqp

U = "amqp://127.0.0.1:1/q"


@pytest.mark.parametrize("args", [
    ("send", U, "hi"), ("recv", U, "-t", "1"), ("browse", U), ("request", U, "hi"),
])
def test_an_empty_host_option_is_a_usage_error(args: tuple[str, ...]) -> None:
    r = amqp(*args, "--host", "")
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == "amqp: error: --host needs a name or address\n"


@pytest.mark.parametrize("url", ["amqp:///q", "amqp://:1/q"])
def test_an_empty_host_in_the_url_is_the_default_one(url: str) -> None:
    r = amqp("send", url, "hi", "--port", "1")
    assert r.returncode == Exit.CONNECTION, r.stderr
    assert r.stderr == "amqp: error: cannot connect to 127.0.0.1:1: connection refused\n"


@pytest.mark.parametrize("url", [U, "amqps://127.0.0.1:1/q"])
def test_an_empty_server_name_is_a_usage_error(url: str) -> None:
    # (it fell back to the host without a word, the certificate checked for that name)
    r = amqp("send", url, "hi", "--server-name", "")
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == "amqp: error: --server-name needs a name\n"
