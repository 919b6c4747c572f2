"""A resumed delivery (Part 2 §2.6.14): whether its payload starts again, and whether it
is resumed at all.

A link detached without closing keeps its unsettled deliveries; a later attachment of it
resumes them, each with a transfer that says `resume=true`. What the receiver's attach
says of the delivery decides what that transfer carries: nothing of it (no entry, or a
null state), and the sender sends it again from its start; a state, and the receiver
keeps what it had, the transfers carrying the rest. The model of a connection (its
delivery's bytes) and the frame view (the message a delivery's frames join into) both
decide here.

A delivery the receiver's attach does not list at all is not resumed: the receiver has
no record of it, and the sender sends the message again as a new delivery, with the same
delivery-tag and without `resume` (Part 3 §3.4.6, delivery-tags 1 and 5).
"""

from __future__ import annotations

from typing import Any


def restarts_on_resume(receiver_attach: Any, tag: bytes) -> bool:
    """Whether a delivery resumed (a transfer with `resume=true`) with delivery-tag `tag`
    is sent again from its start: the receiver's latest attach of the link (None: not
    seen) holds no state of it."""
    unsettled = getattr(receiver_attach, "unsettled", None)
    return not isinstance(unsettled, dict) or unsettled.get(tag) is None


def receiver_holds(receiver_attach: Any, tag: bytes) -> bool:
    """Whether the receiver's latest attach of a link (None: not seen) lists delivery-tag
    `tag` in its unsettled map, whatever the state: the receiver knows the delivery, so
    the sender must resume it; a tag it does not list is free to be sent again as a new
    delivery. A map the receiver marked incomplete (incomplete-unsettled, Part 2 §2.7.3)
    is no evidence that an unlisted tag is unknown to it: it may hold it."""
    if getattr(receiver_attach, "incomplete_unsettled", None) is True:
        return True
    unsettled = getattr(receiver_attach, "unsettled", None)
    return isinstance(unsettled, dict) and tag in unsettled
