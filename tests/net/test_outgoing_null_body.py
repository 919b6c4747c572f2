"""`--body-type value` with a null value: one amqp-value section holding null, not an
empty message (the template's body cache took None for "nothing encoded yet")."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.net.outgoing import MessageTemplate
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers


def test_value_body_null_is_an_amqp_value_section() -> None:
    t = MessageTemplate(body_type="value")
    out = t.encode(1, None)
    assert out.payload == b"\x00\x53\x77\x40"  # amqp-value holding null
    assert t.encode(2, None).payload == out.payload  # the cached bytes, still a section
    body = Message.decode(out.payload).body
    assert isinstance(body, c.AmqpValue) and body.value is None


@pytest.mark.integration
def test_value_body_null_arrives_as_an_amqp_value(serve: ServePeers) -> None:
    url = serve()
    r = amqp("send", f"{url}/nl2", "--body-type", "value", "--json-body", "null")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{url}/nl2", "-t", "2", "-c", "1", "--json", "-q")
    assert r.returncode == 0, r.stderr
    (m,) = json_lines(r.stdout)
    assert m["body"] == {"value": None}, m
