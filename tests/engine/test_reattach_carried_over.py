"""Deliveries a re-attach carries over (Part 2 §2.6.13): both sides' attaches list them
unsettled. On the session they were sent on they keep their delivery-ids, so a
disposition naming one settles it; an id no delivery had is still unknown."""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.engine import DeliverySettled, Violation
from tests.dissect.helpers import RECEIVER, SENDER, Script

from .harness import observe_script, of


def _suspended_and_reattached(server_map: dict[bytes, Any]) -> Script:
    """Two deliveries sent, the first accepted unsettled; the link detached with
    closed=false and attached again (credit granted again): the client's map lists both,
    the server's `server_map`."""
    s = Script().open().sender_link()
    s.transfer(0).transfer(1)
    s.dispose(0, c.Accepted(), settled=False)
    s.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s.c(c.Attach(name="sender", handle=0, role=SENDER, source=c.Source(address="client"),
                 target=c.Target(address="q1"), initial_delivery_count=2,
                 unsettled={b"t0": None, b"t1": None}))
    s.s(c.Attach(name="sender", handle=0, role=RECEIVER, source=c.Source(address="client"),
                 target=c.Target(address="q1"), unsettled=server_map))
    return s.s(c.Flow(next_incoming_id=2, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=0, delivery_count=2, link_credit=10))


def test_a_disposition_after_a_reattach_settles_what_both_maps_carried_over() -> None:
    s = _suspended_and_reattached({b"t0": c.Accepted(), b"t1": None})
    s.dispose(0, c.Accepted()).dispose(1, c.Released())
    s.dispose(7, c.Accepted())  # no delivery ever had id 7
    _obs, events = observe_script(s)
    assert [(v.kind, v.detail) for v in of(events, Violation)] == [
        ("unknown-delivery", "disposition for unknown delivery 7..7")]
    settled = [e.delivery for e in of(events, DeliverySettled)]
    assert [(d.delivery_id, d.outcome, d.settled_by) for d in settled] == [
        (0, "accepted", "server"), (1, "released", "server")]


def test_resumed_under_another_id_the_carried_id_is_let_go() -> None:
    """The sender resumes the carried-over delivery as delivery-id 2 (Part 3 §3.4.6): the
    receiver settles it by that id, and the session holds it under neither id after."""
    s = _suspended_and_reattached({b"t1": None})
    s.c(c.Transfer(handle=0, delivery_id=2, delivery_tag=b"t1", resume=True))
    s.dispose(2, c.Accepted())
    obs, events = observe_script(s)
    assert not of(events, Violation)
    (d,) = [e.delivery for e in of(events, DeliverySettled)]
    assert (d.delivery_id, d.outcome, d.resumed) == (2, "accepted", True)
    (session,) = obs.connection.sessions
    assert session.inflight["client"] == {}


def test_a_carried_over_delivery_settled_is_let_go_by_the_link() -> None:
    """The link keeps the deliveries it carried over (to tell a resend from a new
    delivery) only while they are unsettled: once settled, by the bulk path of a
    disposition range or one by one, the link holds them no more."""
    s = _suspended_and_reattached({b"t0": c.Accepted(), b"t1": None})
    s.dispose(0, c.Accepted()).dispose(1, c.Released())
    obs, _events = observe_script(s)
    (session,) = obs.connection.sessions
    (link,) = [lk for lk in session.links.values() if lk.name == "sender"]
    assert link.live == {}
    assert link.carried == {}
