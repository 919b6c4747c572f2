"""A client whose max-frame-size is too small for `amqp serve`'s answer to its attach.

Serve's attach echoes the client's terminus (its address, capabilities, filters): a
client may send an attach that fits serve's max-frame-size while the echo does not fit
its own (512 bytes at the least). Serve refuses such a link in a form that fits (an
attach with a null terminus, null both if the client's own does not fit either, then a
detach with amqp:frame-size-too-small), and
the connection and its other links go on; when not even that fits (the link's name is
too long for the client's frames), it closes the connection with
amqp:frame-size-too-small (Part 2 §2.8.15). An error's description, which may quote a
name the client chose, is cut to fit. It used to close with amqp:internal-error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.peer.rawclient import SMALLEST, RawClient

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
TOO_SMALL = "amqp:frame-size-too-small"


def _sender(name: str, handle: int, target: Any) -> Any:
    return c.Attach(name=name, handle=handle, role=False, source=c.Source(), target=target,
                    initial_delivery_count=0)


def _receiver(name: str, handle: int, source: Any) -> Any:
    return c.Attach(name=name, handle=handle, role=True, source=source, target=c.Target())


def _credit(handle: int, credit: int) -> Any:
    return c.Flow(incoming_window=2048, next_outgoing_id=0, outgoing_window=2048,
                  handle=handle, delivery_count=0, link_credit=credit)


_CAPS = [c.Symbol(f"capability-{i}") for i in range(60)]
# attaches that fit serve's frames but whose answer would not fit 512 bytes
_BIG = {
    "sender-address": _sender("big", 0, c.Target(address="q-" + "x" * 1500)),
    "sender-capabilities": _sender("big", 0, c.Target(address="orders", capabilities=_CAPS)),
    "receiver-capabilities": _receiver("big", 0, c.Source(address="orders",
                                                          capabilities=_CAPS)),
    "coordinator-capabilities": _sender("big", 0, c.Coordinator(capabilities=_CAPS)),
    # the client's own terminus, which a refusal echoes, does not fit either
    "receiver-both": c.Attach(name="big", handle=0, role=True,
                              source=c.Source(address="orders", capabilities=_CAPS),
                              target=c.Target(address="t-" + "x" * 1500)),
}


@pytest.mark.parametrize("kind", list(_BIG))
def test_an_attach_whose_answer_does_not_fit_is_refused_and_the_connection_goes_on(
        serve: Serve, kind: str) -> None:
    s = serve()
    client = RawClient(s.port)
    try:
        assert len(encode_frame(_BIG[kind])) > SMALLEST
        client.write(_BIG[kind])
        client.until(lambda: client.detach_of("big") is not None)
        ours = client.attach_of("big")
        # the terminus serve would have made is null (the client's own is echoed: it fits)
        assert ours is not None, client.got
        assert (ours.source if _BIG[kind].role else ours.target) is None, ours
        if kind == "receiver-both":
            assert ours.source is None and ours.target is None, ours
        detach = client.detach_of("big")
        assert detach is not None and detach.closed, client.got
        assert str(detach.error.condition) == TOO_SMALL
        assert "over the client's max-frame-size 512" in detach.error.description
        # the connection goes on: a message sent to a queue comes out of it again
        body = Message(body="still here").encode()
        client.write(_sender("in", 1, c.Target(address="orders")))

        def credit_for_in() -> bool:  # (a transfer before it would break the link's rules)
            a = client.attach_of("in")
            return a is not None and any(isinstance(b, c.Flow) and b.handle == a.handle
                                         for b in client.got)
        client.until(credit_for_in)
        client.write(c.Transfer(handle=1, delivery_id=0, delivery_tag=b"t0", settled=True),
                     _receiver("out", 2, c.Source(address="orders")), _credit(2, 10),
                     payload=body)
        client.until(lambda: any(isinstance(b, c.Transfer) for b in client.got))
        assert not any(isinstance(b, c.Close) for b in client.got), client.got
        transfer = next(f for f in client.frames if isinstance(f.body, c.Transfer))
        assert transfer.body.handle == client.attach_of("out").handle
        assert transfer.payload == body
        assert all(f.size <= SMALLEST for f in client.frames), client.frames
        client.close()
    finally:
        client.sock.close()
    line = s.wait_log(r"c1 refused link 'big'")
    assert f"{TOO_SMALL}: the attach answering it would be" in line, line
    assert "internal" not in s.log, s.log


def test_a_refused_durable_subscription_is_not_made_and_one_resumed_is_kept(
        serve: Serve) -> None:
    """A durable subscription the refused attach would have made is not made: the same
    link attached again (fitting this time) creates it. Refusing an attach that would
    resume one leaves it as it was: the next attach resumes it."""
    durable = {"durable": 2, "expiry_policy": c.Symbol("never")}
    big = c.Source(address="/topic/news", capabilities=_CAPS, **durable)
    small = c.Source(address="/topic/news", **durable)
    s = serve()
    client = RawClient(s.port)

    def refused() -> bool:
        ours = client.attach_of("sub")
        return ours is not None and ours.source is None and client.detach_of("sub") is not None

    def attached() -> bool:
        ours = client.attach_of("sub")
        return ours is not None and ours.source is not None

    try:
        client.write(_receiver("sub", 0, big))
        client.until(refused)
        assert str(client.detach_of("sub").error.condition) == TOO_SMALL
        client.write(c.Detach(handle=0, closed=True), _receiver("sub", 0, small))
        client.until(attached)  # created
        client.write(c.Detach(handle=0, closed=False))  # the subscription is kept
        client.until(lambda: client.detach_of("sub") is not None)
        client.write(_receiver("sub", 0, big))
        client.until(refused)
        assert str(client.detach_of("sub").error.condition) == TOO_SMALL
        client.write(c.Detach(handle=0, closed=True), _receiver("sub", 0, small))
        client.until(attached)  # resumed
        client.close()
    finally:
        client.sock.close()
    s.wait_log(r"c1 disconnected")
    made = [x for x in s.lines if "c1 attach 'sub'" in x]
    assert len(made) == 2, s.log
    assert "durable subscription created" in made[0], s.log
    assert "durable subscription resumed" in made[1], s.log


def test_an_attach_whose_name_does_not_fit_closes_the_connection(serve: Serve) -> None:
    """The link's name is in every answer to its attach: none fits."""
    s = serve()
    client = RawClient(s.port)
    try:
        client.write(_sender("n" * 600, 0, c.Target(address="orders")))
        client.until(lambda: False)
        closes = [b for b in client.got if isinstance(b, c.Close)]
        assert len(closes) == 1 and closes[0].error is not None, client.got
        assert str(closes[0].error.condition) == TOO_SMALL
        assert "our attach would be" in closes[0].error.description
        assert not any(isinstance(b, (c.Attach, c.Detach)) for b in client.got), client.got
        client.close()
    finally:
        client.sock.close()
    assert TOO_SMALL in s.wait_log(r"c1 closing \(")
    assert "internal" not in s.log, s.log


def test_an_error_quoting_a_long_address_is_cut_to_fit(serve: Serve) -> None:
    """A refusal's description names the address the client asked for: too long for the
    client's frames, it is cut ("…" at its end), not left out of the answer."""
    s = serve()
    client = RawClient(s.port)
    try:
        address = "amqp-serve.tmp.gone-" + "x" * 1500  # no such node
        client.write(_receiver("gone", 0, c.Source(address=address)))
        client.until(lambda: client.detach_of("gone") is not None)
        error = client.detach_of("gone").error
        assert str(error.condition) == "amqp:not-found", error
        assert error.description.startswith("no node 'amqp-serve.tmp.gone-xxx")
        assert error.description.endswith("…"), error
        assert all(f.size <= SMALLEST for f in client.frames), client.frames
        client.close()
    finally:
        client.sock.close()
    assert address in s.wait_log(r"c1 refused link 'gone': amqp:not-found")  # the log has it all


def test_an_end_quoting_a_long_link_name_is_cut_to_fit(serve: Serve) -> None:
    """A link name attached twice on a session ends it, the error naming the link: a
    name that fits an attach of the client's frames, but not with the error's words."""
    name = "n" * 420
    s = serve()
    client = RawClient(s.port)
    try:
        client.write(_sender(name, 0, c.Target(address="orders")))
        client.until(lambda: client.attach_of(name) is not None)
        client.write(_sender(name, 1, c.Target(address="orders")))
        client.until(lambda: any(isinstance(b, c.End) for b in client.got))
        end = next(b for b in client.got if isinstance(b, c.End))
        assert str(end.error.condition) == "amqp:not-allowed", end
        assert end.error.description.startswith("link name 'nnn")
        assert end.error.description.endswith("…"), end
        assert all(f.size <= SMALLEST for f in client.frames), client.frames
        client.close()
    finally:
        client.sock.close()
    assert "internal" not in s.log, s.log
