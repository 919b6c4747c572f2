"""Random sequences of legal operations keep the model's invariants."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.codec import composites as c
from amqpcli.engine import DeliverySettled, Violation
from amqpcli.engine.delivery import FINAL, Delivery, Phase, outcome_of

from .harness import Pair, of

STATES = [c.Accepted(), c.Released(), c.Rejected(), c.Modified(delivery_failed=True),
          c.Received(section_number=0, section_offset=0)]

op = st.one_of(
    st.tuples(st.just("credit"), st.sampled_from(["out", "in"]), st.integers(0, 4)),
    st.tuples(st.just("send"), st.sampled_from(["out", "in"]), st.integers(0, 1500),
              st.booleans()),
    st.tuples(st.just("dispose"), st.sampled_from(["out", "in"]), st.integers(0, 20),
              st.integers(0, len(STATES) - 1), st.booleans()),
    st.tuples(st.just("settle"), st.sampled_from(["out", "in"]), st.integers(0, 20)),
    st.tuples(st.just("drain"), st.sampled_from(["out", "in"])),
    st.tuples(st.just("abort"), st.sampled_from(["out", "in"]), st.integers(1, 1500)),
    st.tuples(st.just("echo"), st.sampled_from(["out", "in"]), st.booleans()),
    st.tuples(st.just("pump")),
)


def _links(p: Pair, out: Any, inn: Any) -> dict[str, tuple[Any, Any, Any, Any]]:
    """name -> (sending endpoint, its link, receiving endpoint, its link)."""
    return {"out": (p.client, out, p.peer, p.peer_link(out)),
            "in": (p.peer, p.peer_link(inn), p.client, inn)}


def _check(p: Pair, links: dict[str, Any], sent: list[Delivery]) -> None:
    for _snd, sl, _rcv, rl in links.values():
        for ln in (sl, rl):
            assert ln.link_credit >= 0
        # once quiet, both endpoints agree on both unsettled maps and on the credit
        for side in ("client", "server"):
            assert set(sl.unsettled[side]) == set(rl.unsettled[side])
        assert (sl.link_credit, sl.delivery_count) == (rl.link_credit, rl.delivery_count)
    for d in sent:
        ln = d.link
        assert (d.phase in FINAL or d.tag in ln.unsettled[d.sender]
                or d.tag in ln.unsettled[d.receiver] or d.phase == Phase.QUEUED
                or d in ln.live.values())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=40), st.booleans(), st.sampled_from([1, 2, 5, 2048]))
def test_random_operations_keep_invariants(ops: list[tuple[Any, ...]], small: bool,
                                           window: int) -> None:
    size = 512 if small else 65536
    p = Pair(client={"max_frame_size": size, "incoming_window": window},
             peer={"max_frame_size": size, "incoming_window": window})
    s = p.client.begin()
    out = p.client.attach_sender(s, "out", c.Source(), c.Target(address="q"),
                                 snd_settle_mode=2)
    inn = p.client.attach_receiver(s, "in", c.Source(address="q"), c.Target())
    p.pump()
    links = _links(p, out, inn)
    for _snd, _sl, rcv, rl in links.values():
        rcv.flow(rl, 3)
    sent: list[Delivery] = []
    for o in ops:
        kind = o[0]
        if kind == "pump":
            p.pump()
            _check(p, links, sent)
            continue
        snd, sl, rcv, rl = links[o[1]]
        if kind == "credit":
            rcv.flow(rl, o[2])
        elif kind == "drain":
            rcv.drain(rl)
        elif kind == "abort":
            d = snd.start_delivery(sl)
            snd.send_more(d, b"y" * o[2])
            snd.abort(d)
            sent.append(d)
        elif kind == "echo":
            ep, ln = (snd, sl) if o[2] else (rcv, rl)
            ep.flow(ln, ln.link_credit if ep is snd else ln.rcv_link_credit, echo=True)
        elif kind == "send":
            sent.append(snd.send(sl, b"x" * o[2], settled=o[3]))
        elif kind == "dispose":
            live = [d for d in rl.live.values() if d.phase == Phase.UNSETTLED]
            if live:
                d = live[o[2] % len(live)]
                state = STATES[o[3]]
                if outcome_of(d.receiver_state) is None or outcome_of(state) is None:
                    rcv.dispose(d, state, settled=o[4])
        elif kind == "settle":
            live = [d for d in sl.live.values() if d.phase == Phase.UNSETTLED]
            if live:
                snd.settle(live[o[2] % len(live)])
    p.pump()
    _check(p, links, sent)
    assert not of(p.client_events + p.peer_events, Violation)
    obs, events = p.observe()
    assert not of(events, Violation)
    for name, (_snd, sl, _rcv, _rl) in links.items():
        ol = next(ln for ss in obs.connection.sessions for ln in ss.links.values()
                  if ln.name == name)
        for side in ("client", "server"):
            assert set(ol.unsettled[side]) == set(sl.unsettled[side])
        assert (ol.link_credit, ol.delivery_count) == (sl.link_credit, sl.delivery_count)
    key = lambda e: (e.delivery.link.name, e.delivery.delivery_id, e.delivery.outcome,
                     e.delivery.settled_by, len(e.delivery.timeline))
    assert sorted(map(key, of(events, DeliverySettled))) == sorted(
        map(key, of(p.client_events, DeliverySettled)))
