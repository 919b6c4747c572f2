"""Our delivery-tags are "1", "2", "3", ... one per delivery, in the order they are sent:
a message that does not fit in one frame (one `send_many` leaves to `send`, as
`amqp send` does) takes the next tag, not one past a tag another path took and dropped."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader

from .harness import Pair

FRAME = 512  # the peer's max-frame-size: a 2000-byte message takes several frames


def _sent_tags(p: Pair) -> list[bytes]:
    """The delivery-tag of each delivery the client sent (its first transfer's)."""
    reader = FrameReader()
    tags = []
    for side, data, _t in p.wire:
        if side != "client":
            continue
        for item in reader.feed(data):
            body = getattr(item, "body", None)
            if isinstance(body, c.Transfer) and body.delivery_tag is not None:
                tags.append(bytes(body.delivery_tag))
    return tags


@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("settled", [False, True])
def test_send_many_then_send_gives_consecutive_tags(lean: bool, settled: bool) -> None:
    p = Pair(client={"lean_events": lean}, peer={"max_frame_size": FRAME})
    link, _ = p.sender(credit=20)
    small, big = b"s" * 10, b"B" * 2000
    sent = 0
    for run in ([big], [small, big], [big, small], [small, small], [big]):
        while run:
            n, _ = p.client.send_many(link, run, settled=settled)
            if n < len(run):  # the first one left over goes on its own
                p.client.send(link, run[n], settled=settled)
                n += 1
            sent += n
            run = run[n:]
        p.pump()
    assert _sent_tags(p) == [str(i).encode() for i in range(1, sent + 1)]


def test_a_chosen_tag_is_skipped_by_the_numbering() -> None:
    p = Pair(peer={"max_frame_size": FRAME})
    link, _ = p.sender(credit=20)
    p.client.send(link, b"a")
    p.client.send(link, b"B" * 2000, tag=b"2")  # ours would have been "2"
    p.client.send(link, b"B" * 2000)
    p.client.send(link, b"c")
    p.pump()
    assert _sent_tags(p) == [b"1", b"2", b"3", b"4"]
