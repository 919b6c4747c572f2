"""A TLS handshake the peer does not finish within --connect-timeout says so ("TLS
handshake timed out", not a bare "timed out"), and is a timeout, which --reconnect tries
again as docs/send-recv.md says, not a TLS error, which it does not."""

from __future__ import annotations

from tests.net.clirun import amqp
from tests.net.tlspeer import Listener, one_line, until_closed


def test_a_tls_handshake_timeout_says_so_and_is_retried() -> None:
    with Listener(until_closed) as ln:  # takes the connection, never answers the hello
        r = amqp("send", f"amqps://127.0.0.1:{ln.port}/q", "x", "--connect-timeout", "0.3",
                 "--reconnect", "1")
        assert r.returncode == 3
        assert one_line(r.stderr) == (
            f"cannot connect to 127.0.0.1:{ln.port}: TLS handshake timed out after 0.3s")
        assert ln.accepted() == 2  # the first try and one more


def test_no_answer_to_the_tls_header_is_a_plain_timeout() -> None:
    # The AMQP TLS header (--tls-upgrade) comes before TLS: no answer to it is no TLS yet.
    with Listener(until_closed) as ln:
        r = amqp("send", f"amqp://127.0.0.1:{ln.port}/q", "x", "--tls-upgrade",
                 "--connect-timeout", "0.3", "--insecure")
        assert r.returncode == 3
        assert one_line(r.stderr) == f"cannot connect to 127.0.0.1:{ln.port}: timed out"
