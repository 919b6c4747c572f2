"""`amqp request --size N`: each request's body is N bytes, as `amqp send --size N` makes
it (send's option, its checks and its bodies: one definition)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec.message import Message
from amqpcli.net.outgoing import sized_body
from tests.net.clirun import amqp, amqp_in_process
from tests.peers import PeerThread
from tests.peers.net import free_port
from tests.peers.responder import Responder


@pytest.mark.integration
def test_each_request_has_a_body_of_n_bytes(peers: Callable[[PeerThread], Any]) -> None:
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "--size", "100", "--count", "2")
    assert p.returncode == 0, p.stderr
    assert "requests sent 2, accepted 2, replies 2" in p.stderr
    p = amqp("request", f"{r.url}/service", "--size", "70", "-b", "value")
    assert p.returncode == 0, p.stderr
    bodies = [Message.decode(q.raw).value for q in r.requests()]
    assert bodies == [sized_body(100)] * 2 + [sized_body(70).decode()]


@pytest.mark.parametrize(("args", "said"), [
    (["hello", "--size", "3"], "--size makes the body: a BODY argument does not go with it"),
    (["a", "b", "--size", "3"], "--size makes the body: a BODY argument does not go with it"),
    (["--size", "3", "-f", "x.bin"], "--size makes the body: --file does not go with it"),
    (["--size", "3", "--lines"], "--size makes the body: --lines does not go with it"),
    (["--size", "3", "--json-body"], "--size makes the body: --json-body does not go with it"),
    (["--size", "3", "-b", "map"], ("--size makes a data body (or with --body-type value a "
                                    "string): not a map one")),
    (["--size", "-1"], "--size must be 0-268435456 bytes (256 MiB)"),
])
def test_usage_errors_are_sends(args: list[str], said: str) -> None:
    code, out, err = amqp_in_process("request", f"amqp://127.0.0.1:{free_port()}/service",
                                     *args)
    assert (code, out) == (2, ""), err
    assert f"amqp: error: {said}" in err
