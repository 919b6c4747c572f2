"""Frame-size limits of the endpoint roles (Part 2 §2.4.1, §2.7.1; Part 5 §5.3.1) and
framing errors before and after open.

Until the open frames are exchanged (SASL included) a frame may be at most 512 bytes
(MIN-MAX-FRAME-SIZE); from our open on, or from the peer's open on, at most our
max-frame-size. A header announcing more is refused from its 8 bytes: the endpoint keeps
nothing of the frame and reads nothing after it. A framing error closes the connection
with amqp:connection:framing-error once our open went out; before it the endpoint fails
(its transport closes the socket)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import (
    AMQP_HEADER,
    FRAME_TYPE_SASL,
    SASL_HEADER,
    Frame,
    FrameReader,
    encode_frame,
)
from amqpcli.engine import (
    ConnectionClosed,
    ConnectionOpened,
    Endpoint,
    MessageReceived,
    SaslConfig,
    Violation,
)
from amqpcli.engine.endpoint import FrameTooLarge

from .harness import Pair, of

_MB = b"x" * (1 << 20)


def _sent_frames(ep: Endpoint) -> list[Any]:
    return [i for i in FrameReader().feed(ep.data_to_send()) if isinstance(i, Frame)]


def _closes(data: bytes) -> list[Any]:
    return [f.body for f in FrameReader().feed(data)
            if isinstance(f, Frame) and isinstance(f.body, c.Close)]


def test_a_client_refuses_a_huge_sasl_frame_and_keeps_none_of_it() -> None:
    ep = Endpoint("client", sasl=SaslConfig())
    ep.open()
    ep.data_to_send()
    evs = ep.receive_data(SASL_HEADER + b"\x7f\xff\xff\xff\x02\x01\x00\x00", 1.0)
    vs = of(evs, Violation)
    assert [v.kind for v in vs] == ["frame-too-large"]
    assert "at most 512 (MIN-MAX-FRAME-SIZE" in vs[0].detail
    assert "found size 2147483647" in vs[0].detail
    assert ep.failed and ep.failure is not None and ep.failure.startswith("framing error: ")
    assert ep.data_to_send() == b""  # no close before our open
    for _ in range(8):
        assert ep.receive_data(_MB, 2.0) == []
    assert ep._reader.pending == 0


def test_a_client_closes_on_a_frame_over_its_max_frame_size_after_open() -> None:
    ep = Endpoint("client", max_frame_size=4096)
    ep.open()
    ep.data_to_send()
    ep.receive_data(AMQP_HEADER + encode_frame(c.Open(container_id="p")), 1.0)
    assert ep.is_open
    evs = ep.receive_data(b"\x00\x00\x10\x01\x02\x00\x00\x00", 2.0)  # 4097 announced
    assert [v.kind for v in of(evs, Violation)] == ["frame-too-large"]
    (close,) = _closes(ep.data_to_send())
    assert str(close.error.condition) == "amqp:connection:framing-error"
    assert "at most 4096 (max-frame-size)" in close.error.description
    assert ep.failed  # the peer's close could not be read after that header
    assert ep.receive_data(_MB, 3.0) == [] and ep._reader.pending == 0


def test_a_server_refuses_an_open_over_512() -> None:
    ep = Endpoint("peer")
    evs = ep.receive_data(AMQP_HEADER + encode_frame(c.Open(container_id="x" * 600)), 1.0)
    assert [v.kind for v in of(evs, Violation)] == ["frame-too-large"]
    assert not of(evs, ConnectionOpened)
    assert ep.data_to_send() == AMQP_HEADER  # our header, no open and no close
    assert ep.failed


def test_a_server_takes_larger_frames_pipelined_after_the_clients_open() -> None:
    ep = Endpoint("peer", max_frame_size=4096)
    begin = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1,
                                 properties={c.Symbol("p"): "x" * 1000}))
    assert 512 < len(begin) <= 4096
    evs = ep.receive_data(AMQP_HEADER + encode_frame(c.Open(container_id="c")) + begin, 1.0)
    assert not of(evs, Violation) and not ep.failed
    names = [f.body.NAME for f in _sent_frames(ep)]
    assert names == ["open", "begin"]


@pytest.mark.parametrize(("data", "said", "fatal"), [
    (b"\x00\x00\x00\x04\x02\x00\x00\x00", "a frame size of at least 8", True),
    (b"\xff\xff\xff\xff\x02\x00\x00\x00", "found size 4294967295", True),
    (b"\x00\x00\x00\x08\x01\x00\x00\x00", "found doff 1", False),
])
def test_framing_errors_before_and_after_open(data: bytes, said: str, fatal: bool) -> None:
    # before our open: no close can be sent; the endpoint fails
    ep = Endpoint("peer")
    ep.receive_data(AMQP_HEADER + data + AMQP_HEADER, 1.0)
    assert ep.failed and ep.failure is not None and said in ep.failure
    assert ep.data_to_send() == AMQP_HEADER
    # after it: close(framing-error); the endpoint fails at once when nothing more can be
    # read (the size is no use), else waits for the client's close
    p = Pair()
    p.inject_bytes("peer", data)
    (close,) = _closes(p.peer.data_to_send())
    assert str(close.error.condition) == "amqp:connection:framing-error"
    assert said in close.error.description
    assert p.peer.failed is fatal


def test_nothing_after_a_framing_error_before_open_is_read() -> None:
    ep = Endpoint("peer")
    evs = ep.receive_data(AMQP_HEADER + b"\x00\x00\x00\x08\x01\x00\x00\x00"
                          + encode_frame(c.Open(container_id="late")), 1.0)
    assert not of(evs, ConnectionOpened) and ep.failed
    assert ep.data_to_send() == AMQP_HEADER


def _sasl_init(body: bytes) -> bytes:
    return (8 + len(body)).to_bytes(4, "big") + b"\x02\x01\x00\x00" + body


@pytest.mark.parametrize(("body", "said"), [
    (b"\x00\x53\x41\x45", "no mechanism (a mandatory field)"),
    (b"\x00\x53\x41\xc0\x03\x01\x52\x07", "the mechanism is UInt, not a symbol"),
    (b"\x00\x53\x41\xc0\x0c\x02\xa3\x05PLAIN\xa1\x02xy", "the initial-response is str"),
    (b"\x00\x53\x41\xc0\x0b\x03\xa3\x05PLAIN\x40\x52\x01", "the hostname is UInt"),
])
def test_a_malformed_sasl_init_is_answered_with_sys_perm(body: bytes, said: str) -> None:
    ep = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS", "PLAIN")))
    ep.receive_data(SASL_HEADER + _sasl_init(body), 1.0)
    outcomes = [f.body for f in _sent_frames(ep) if isinstance(f.body, c.SaslOutcome)]
    assert len(outcomes) == 1 and int(outcomes[0].code) == 3  # sys-perm
    assert ep.failed and ep.failure is not None
    assert ep.failure.startswith(f"bad sasl-init: {said}")


def test_a_good_sasl_init_still_succeeds_and_a_refused_one_says_so() -> None:
    ok = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS",)))
    ok.receive_data(SASL_HEADER + encode_frame(
        c.SaslInit(mechanism=c.Symbol("ANONYMOUS"), initial_response=b"me",
                   hostname="h"), 0, b"", FRAME_TYPE_SASL), 1.0)
    assert not ok.failed and ok.failure is None
    # a string where the symbol belongs is read for its text
    text = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS",)))
    text.receive_data(SASL_HEADER + _sasl_init(b"\x00\x53\x41\xc0\x0c\x01\xa1\x09ANONYMOUS"),
                      1.0)
    assert not text.failed
    no = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS",)))
    no.receive_data(SASL_HEADER + encode_frame(
        c.SaslInit(mechanism=c.Symbol("EXTERNAL")), 0, b"", FRAME_TYPE_SASL), 1.0)
    assert no.failed and no.failure == "SASL EXTERNAL refused (sasl-outcome auth)"


def test_our_own_endpoints_still_talk_with_sasl_and_small_frames() -> None:
    p = Pair(client={"sasl": SaslConfig(username="u", password="p" * 300)},
             peer={"sasl": SaslConfig(), "max_frame_size": 512})
    assert p.client.is_open and p.peer.is_open
    assert not of(p.client_events + p.peer_events, Violation)
    assert not of(p.client_events + p.peer_events, ConnectionClosed)


def test_the_reader_switches_its_limit_at_the_open_frame() -> None:
    r = FrameReader(512)
    r.limit_after_open(4096)
    big = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1,
                               properties={c.Symbol("p"): "x" * 1000}))
    items = r.feed(AMQP_HEADER + encode_frame(c.Open(container_id="c")) + big)
    assert [getattr(i, "name", None) for i in items[1:]] == ["open", "begin"]
    (err,) = r.feed(b"\x00\x00\x10\x01\x02\x00\x00\x00")
    assert err.fatal and err.limit == 4096
    r2 = FrameReader(512)
    r2.limit_after_open(4096)
    (err2,) = r2.feed(big)  # no open before it
    assert err2.limit == 512 and "at most 512 (max-frame-size)" in str(err2)


@pytest.mark.parametrize(("data", "kind", "said"), [
    (AMQP_HEADER + encode_frame(c.Begin(next_outgoing_id=0, incoming_window=1,
                                        outgoing_window=1)) + encode_frame(c.Open(container_id="x")),
     "out-of-order", "protocol error: begin before open"),
    (AMQP_HEADER + encode_frame(c.Close()), "out-of-order", "protocol error: close in state"),
    (SASL_HEADER + b"\x00\x00\x00\x08\x02\x01\x00\x00", "framing-error",
     "framing error: an empty SASL frame"),
    (SASL_HEADER + encode_frame(c.SaslResponse(response=b""), 0, b"", FRAME_TYPE_SASL),
     "out-of-order", "protocol error: sasl-response without a sasl-challenge"),
], ids=["begin-then-open", "close", "empty-sasl-frame", "sasl-response"])
def test_a_server_fails_on_a_frame_out_of_turn_before_open(
        data: bytes, kind: str, said: str) -> None:
    ep = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS",)) if data[4] == 3 else None)
    evs = ep.receive_data(data, 1.0)
    assert kind in [v.kind for v in of(evs, Violation)]
    assert not of(evs, ConnectionOpened)  # (an open after the bad frame is not read)
    assert ep.failed and ep.failure is not None and ep.failure.startswith(said), ep.failure
    assert not [f for f in _sent_frames(ep) if f.type == 0]  # no open, no close


# Our frames fit the peer's max-frame-size: an error's description (free text, often
# quoting what the peer sent) is cut to fit ("…" at its end) rather than the error not
# sent; what else does not fit raises FrameTooLarge, sending nothing.

_LONG = "é" * 400  # 800 bytes: a frame of 512 cannot hold it


def _error_sent(p: Pair, what: str) -> Any:
    """The error of the frame `what` the peer sent to the client (its last one)."""
    frames = [f for side, data, _ in p.wire if side == "server"
              for f in FrameReader().feed(data) if isinstance(f, Frame)]
    assert all(f.size <= 512 for f in frames), frames
    body = [f.body for f in frames if f.body.NAME == what][-1]
    return body.state.error if what == "disposition" else body.error


@pytest.mark.parametrize("what", ["disposition", "detach", "end", "close"])
def test_an_error_description_too_long_for_the_peers_frames_is_cut(what: str) -> None:
    p = Pair(client={"max_frame_size": 512})
    link, plink = p.sender(credit=1)
    error = c.Error(condition=c.Symbol("amqp:not-found"), description=_LONG)
    if what == "disposition":
        p.client.send(link, b"m")
        p.pump()
        (d,) = [e.delivery for e in of(p.peer_events, MessageReceived)]
        p.peer.reject(d, error)
    elif what == "detach":
        p.peer.detach(plink, error=error)
    elif what == "end":
        p.peer.end(plink.session, error)
    else:
        p.peer.close(error)
    p.pump()
    sent = _error_sent(p, what)
    assert str(sent.condition) == "amqp:not-found"
    assert sent.description.endswith("…") and _LONG.startswith(sent.description[:-1])
    assert error.description == _LONG  # the caller's error is left as it was


def test_an_attach_too_large_raises_and_a_refusal_without_echo_fits() -> None:
    p = Pair(client={"max_frame_size": 512}, peer={"link_policy": "manual"})
    s = p.client.begin()
    p.pump()
    big = c.Target(address="q" + "x" * 600)
    link = p.client.attach_sender(s, "big", c.Source(address="src"), big)
    p.pump()
    plink = p.peer_link(link)
    with pytest.raises(FrameTooLarge, match=r"our attach would be \d+ bytes"):
        p.peer.accept_link(plink)
    assert p.peer.data_to_send() == b""  # nothing of it was sent
    p.peer.refuse_link(plink, c.Error(condition=c.Symbol("amqp:frame-size-too-small")),
                       echo=False)
    p.pump()
    answer = link.attach[p.client.remote]
    assert answer.source is None and answer.target is None
    assert str(link.detach[p.client.remote].error.condition) == "amqp:frame-size-too-small"
