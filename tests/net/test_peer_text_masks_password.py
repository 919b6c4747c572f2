"""A peer's text that repeats our password (a close description, a frame traced) shows it
masked, as the SASL frames are: the client registers its password as a secret."""

from __future__ import annotations

import io

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame
from amqpcli.codec.types import Symbol
from amqpcli.errors import mask_secrets, register_secret
from amqpcli.net.client import describe_error

SECRET = "Zq9Secret-peer-text"


def test_a_peer_error_quoting_the_password() -> None:
    register_secret(SECRET)
    err = c.Error(condition=Symbol("amqp:unauthorized-access"),
                  description=f"password {SECRET} expired ({SECRET.encode().hex()})")
    assert describe_error(err) == "amqp:unauthorized-access: password *** expired (***)"


def test_a_traced_frame_quoting_the_password() -> None:
    from amqpcli.cli.trace import frame_tracer

    register_secret(SECRET)
    out = io.StringIO()
    trace = frame_tracer(lambda: out)
    close = c.Close(error=c.Error(condition=Symbol("amqp:unauthorized-access"),
                                  description=f"bad password {SECRET}"))
    trace("c1", "<-", Frame(0, 40, 2, 0, 0, b"", close, b""), 0.0)
    assert SECRET not in out.getvalue() and "bad password ***" in out.getvalue()


def test_mask_secrets_leaves_other_text() -> None:
    register_secret(SECRET)
    assert mask_secrets("nothing secret here") == "nothing secret here"
    # a password this short would be found in any text: not masked there
    for short in ("1", "amqp", "guest"):
        register_secret(short)
    text = "guest at host:5671, 12 s, amqp:unauthorized-access"
    assert mask_secrets(text) == text
