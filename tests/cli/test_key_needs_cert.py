"""`--key` without `--cert` is a usage error: the key alone sends no client certificate,
and the connection went on without one (a peer that asks for it then closed it after
the handshake, with no word of the ignored option)."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp, amqp_in_process
from tests.peers.tls import Certs

TLS = "amqps://127.0.0.1:1"  # nothing listens on port 1
ERROR = "amqp: error: --key needs --cert (the client certificate it goes with)\n"


@pytest.mark.parametrize("command", [
    ("send", f"{TLS}/q", "hi"), ("recv", f"{TLS}/q"), ("browse", f"{TLS}/q"),
], ids=lambda c: c[0])
def test_key_alone_is_a_usage_error(command: tuple[str, ...], tls_certs: Certs) -> None:
    code, out, err = amqp_in_process(*command, "--key", str(tls_certs.client_key))
    assert (code, out, err) == (2, "", ERROR)
    # with its certificate it is a client certificate like any other (and port 1 refuses)
    code, _, err = amqp_in_process(*command, "--key", str(tls_certs.client_key),
                                   "--cert", str(tls_certs.client_cert))
    assert code == 3, err


def test_proxy_key_alone(tls_certs: Certs) -> None:
    r = amqp("proxy", "127.0.0.1:0", TLS, "--key", str(tls_certs.client_key), timeout=60)
    assert (r.returncode, r.stderr) == (2, ERROR)
