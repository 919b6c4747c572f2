"""`amqp serve` logs what it does about a client's faults: a protocol violation it answers
(here a link name attached twice on one session, which it answers by ending the
session with amqp:not-allowed), a delivery the client aborts, and one the client was
still sending when its connection went. Each was answered or dropped without a line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from tests.peer.rawclient import RawClient

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]


def _sender(name: str, handle: int) -> Any:
    return c.Attach(name=name, handle=handle, role=False, source=c.Source(),
                    target=c.Target(address="orders"), initial_delivery_count=0)


def _attached_with_credit(client: RawClient) -> None:
    """Attach sender link 'in' (handle 0) and wait for serve's credit."""
    client.write(_sender("in", 0))
    client.until(lambda: any(isinstance(b, c.Flow) and b.link_credit for b in client.got))


def _transfer(handle: int, more: bool, aborted: bool = False) -> Any:
    return c.Transfer(handle=handle, delivery_id=0, delivery_tag=b"t0", more=more,
                      aborted=aborted)


def test_a_violation_it_answers_is_logged(serve: Serve) -> None:
    s = serve()
    client = RawClient(s.port, max_frame_size=65536)
    client.write(_sender("in", 0))
    client.until(lambda: client.attach_of("in") is not None)
    client.write(_sender("in", 1))  # the name again, while it is attached
    client.until(lambda: any(isinstance(b, c.End) for b in client.got))
    client.close()
    line = s.wait_log(r"link-name-in-use")
    assert "client broke the protocol (link-name-in-use): link name 'in' is already " \
           "attached on this session" in line, s.log
    line = s.wait_log(r"ending a session")
    assert line.endswith("ending a session (amqp:not-allowed: link name 'in' is already "
                         "attached on this session)"), s.log


def test_an_aborted_delivery_is_logged(serve: Serve) -> None:
    s = serve()
    client = RawClient(s.port, max_frame_size=65536)
    _attached_with_credit(client)
    client.write(_transfer(0, more=True), payload=b"\x00Sw\xa1\x05hello")
    client.write(_transfer(0, more=False, aborted=True))
    line = s.wait_log(r"aborted")
    assert line.endswith("'in': the client aborted delivery 0 (10 bytes dropped)"), s.log
    client.close()


def test_a_delivery_cut_by_the_disconnection_is_logged(serve: Serve) -> None:
    s = serve()
    client = RawClient(s.port, max_frame_size=65536)
    _attached_with_credit(client)
    client.write(_transfer(0, more=True), payload=b"\x00Sw\xa1\x05hello")
    client.sock.close()
    line = s.wait_log(r"unfinished")
    assert line.endswith("'in': delivery 0 dropped unfinished (10 bytes came: transport "
                         "ended)"), s.log
