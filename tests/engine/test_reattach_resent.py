"""A delivery a re-attach carries over that the receiver's attach does not list: the
receiver has no record of it, so the sender sends the message again as a new delivery
with the same delivery-tag and without `resume` (Part 3 §3.4.6, delivery-tags 1 and 5:
its transfers "MUST NOT have the resume flag set"). That is no reuse of a tag still in
use: the carried-over delivery ends, in doubt (abandoned, saying under which delivery-id
it was sent again), and the resend is a delivery of its own."""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.engine import DeliverySettled, Violation
from amqpcli.engine.delivery import Delivery
from tests.dissect.helpers import RECEIVER, SENDER, Script

from .harness import observe_script, of


def reattached(server_map: dict[bytes, Any] | None, *, handle: int = 0,
               incomplete: bool | None = None) -> Script:
    """Deliveries t0 and t1 sent unsettled; the link detached with closed=false and
    attached again (under `handle`, credit granted again): the client's map lists both,
    the server's is `server_map` (`incomplete`: its incomplete-unsettled)."""
    s = Script().open().sender_link()
    s.transfer(0).transfer(1)
    s.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s.c(c.Attach(name="sender", handle=handle, role=SENDER, source=c.Source(address="client"),
                 target=c.Target(address="q1"), initial_delivery_count=2,
                 unsettled={b"t0": None, b"t1": None}))
    s.s(c.Attach(name="sender", handle=handle, role=RECEIVER,
                 source=c.Source(address="client"), target=c.Target(address="q1"),
                 unsettled=server_map, incomplete_unsettled=incomplete))
    return s.s(c.Flow(next_incoming_id=2, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=handle, delivery_count=2, link_credit=10))


def _settled(events: list[Any]) -> list[Delivery]:
    return [e.delivery for e in of(events, DeliverySettled)]


def test_a_resend_of_what_the_receiver_does_not_know_is_a_new_delivery() -> None:
    s = reattached({b"t0": None})  # the server has no record of t1
    s.transfer(2, "again", tag=b"t1")  # sent again: a new delivery-id, no resume
    s.dispose(2, c.Accepted())
    obs, events = observe_script(s)
    assert not of(events, Violation)
    old, new = _settled(events)
    # the first sending: the receiver forgot it, so what became of it is not known
    assert (old.delivery_id, old.tag, old.outcome, old.resumed) == (1, b"t1", "abandoned", False)
    assert [(e.kind, e.side, e.detail) for e in old.timeline] == [
        ("transfer", "client", ""),
        ("abandon", "client", ("sent again as delivery-id 2 (the receiver's re-attach"
                              " did not hold it)"))]
    # the resend is a delivery of its own, from its first transfer
    assert (new.delivery_id, new.tag, new.outcome, new.resumed, new.frames) == (
        2, b"t1", "accepted", False, 1)
    assert [e.kind for e in new.timeline] == ["transfer", "disposition"]
    (link,) = [ln for sess in obs.connection.sessions for ln in sess.links.values()]
    assert (link.deliveries, link.abandoned_count, link.settled_count) == (3, 1, 1)
    assert b"t1" not in link.unsettled["client"] and b"t1" not in link.unsettled["server"]


def test_a_resend_under_a_new_handle_and_a_receiver_without_a_map() -> None:
    """The receiver's attach carries no map at all (it keeps no state of deliveries):
    both carried-over deliveries may be sent again."""
    s = reattached(None, handle=3)
    s.transfer(2, tag=b"t0", handle=3).transfer(3, tag=b"t1", handle=3)
    s.dispose(2, c.Accepted(), last=3)
    _obs, events = observe_script(s)
    assert not of(events, Violation)
    assert [(d.delivery_id, d.tag, d.outcome) for d in _settled(events)] == [
        (0, b"t0", "abandoned"), (1, b"t1", "abandoned"),
        (2, b"t0", "accepted"), (3, b"t1", "accepted")]


def test_a_tag_the_receiver_still_holds_is_in_use() -> None:
    """The receiver's map lists t1 (null state): it knows the delivery, so the sender
    must resume it (`resume=true`, Part 3 §3.4.6, delivery-tag 4); a plain resend of the
    tag still reuses it."""
    s = reattached({b"t0": None, b"t1": None})
    s.transfer(2, tag=b"t1")
    _obs, events = observe_script(s)
    assert [(v.kind, v.detail) for v in of(events, Violation)] == [
        ("delivery-id-in-use", "delivery-tag b't1' is still unsettled on 'sender'")]


def test_a_tag_missing_from_a_map_marked_incomplete_is_still_in_use() -> None:
    """The receiver's map is marked incomplete (incomplete-unsettled, Part 2 §2.7.3): a
    tag it does not list may still be known to it, so a plain resend reuses it."""
    s = reattached({b"t0": None}, incomplete=True)
    s.transfer(2, tag=b"t1")
    _obs, events = observe_script(s)
    assert [(v.kind, v.detail) for v in of(events, Violation)] == [
        ("delivery-id-in-use", "delivery-tag b't1' is still unsettled on 'sender'")]


def test_a_tag_sent_on_the_new_attachment_is_in_use() -> None:
    """Sent again once on the new attachment, the tag belongs to that delivery, which is
    unsettled: a second resend reuses it."""
    s = reattached({})
    s.transfer(2, tag=b"t1").transfer(3, tag=b"t1")
    _obs, events = observe_script(s)
    assert [(v.kind, v.detail) for v in of(events, Violation)] == [
        ("delivery-id-in-use", "delivery-tag b't1' is still unsettled on 'sender'")]


def test_a_resumed_delivery_sent_again_without_resume_is_in_use() -> None:
    """Resumed on the new attachment (`resume=true`), the delivery is the attachment's
    own: a plain transfer of its tag after that reuses it."""
    s = reattached({})
    s.c(c.Transfer(handle=0, delivery_id=2, delivery_tag=b"t1", resume=True, more=False))
    s.transfer(3, tag=b"t1")
    _obs, events = observe_script(s)
    assert [v.kind for v in of(events, Violation)] == ["delivery-id-in-use"]
