"""Whatever a side sends, the engine reports it and never raises."""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.codec import Described, ULong, encode
from amqpcli.codec.frames import FrameReader
from amqpcli.engine import Violation

from .harness import Pair, of

values = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 2**32 + 5), st.binary(max_size=4),
    st.text(max_size=4), st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=2),
)
performative = st.tuples(st.integers(0x10, 0x18), st.lists(values, max_size=11))


def _frame(code: int, fields: list[Any], channel: int, payload: bytes) -> bytes:
    body = encode(Described(ULong(code), fields))
    return struct.pack(">IBBH", 8 + len(body) + len(payload), 2, 0, channel) + body + payload


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["client", "server"]), performative,
                          st.integers(0, 2), st.binary(max_size=8)), max_size=25))
def test_observer_never_raises(frames: list[Any]) -> None:
    # a real start, so the random frames meet sessions, links and deliveries
    p = Pair()
    link, _ = p.sender(credit=5)
    p.client.send(link, b"x")
    p.pump()
    obs, _ = p.observe()
    for side, (code, fields), ch, payload in frames:
        for item in FrameReader().feed(_frame(code, fields, ch, payload)):
            obs.feed(side, item, 1.0)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(performative, st.integers(0, 2), st.binary(max_size=8)),
                max_size=15))
def test_endpoint_never_raises(frames: list[Any]) -> None:
    p = Pair()
    p.receiver(credit=5)
    for (code, fields), ch, payload in frames:
        p.inject_bytes("client", _frame(code, fields, ch, payload))
        p.pump()


def test_wrong_field_type_is_a_violation() -> None:
    p = Pair()
    p.receiver(credit=1)
    evs = p.inject_bytes("peer", _frame(0x15, [True, "not a number"], 0, b""))
    vs = of(evs, Violation)
    assert [(v.kind, v.side) for v in vs] == [("invalid-field", "client")]
    assert "disposition" in vs[0].detail


def test_an_attach_whose_echoed_fields_have_the_wrong_type_is_a_violation() -> None:
    # (found by the test above: the answer echoing the settle mode could not be encoded)
    p = Pair()
    p.receiver(credit=1)
    evs = p.inject_bytes("peer", _frame(0x12, [False, True, b"\x00", b""], 0, b""))
    p.pump()
    vs = of(evs, Violation)
    assert [(v.kind, v.side) for v in vs] == [("invalid-field", "client")]
    assert "attach" in vs[0].detail
