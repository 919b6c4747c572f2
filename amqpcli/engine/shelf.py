"""Link recovery across connections (Part 2 §2.6.13): a link is known by its name and the
container-ids of its two ends, not by the connection it was attached on. A connection
that ends with a link still attached (or suspended) leaves the link's unsettled state
with its ends, and a later connection between the same containers may attach the link
again and resume its deliveries there.

The observers of one capture share a `LinkShelf`: a connection's end puts such a link's
state on it (`Connection.shelve`); the next attach of that link, on another connection,
takes it (`Session` attach), so that its unsettled maps are reconciled against what the
capture saw, and a delivery resumed there (`resume=true`) goes on from the bytes and the
time of its first sending. On the first connection the delivery still ends, abandoned
(its connection closed): that record stands, as the capture may hold no more of it. A
delivery taken off the shelf is reported again only if a transfer resumes it (its record
then says from which connection), so a link carried on and never resumed is not counted
twice."""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from amqpcli.engine.delivery import Delivery
    from amqpcli.engine.link import Link

__all__ = ["LinkShelf", "Shelved"]

# (sender's container-id, receiver's container-id, link name)
ShelfKey = tuple[str, str, str]


class Shelved:
    """What a link's end leaves for its next attachment: its delivery-count, both ends'
    unsettled maps (by role, as the next connection may put the ends on other sides)
    and copies of its deliveries not yet final, as they were before the end abandoned
    them."""

    __slots__ = ("deliveries", "delivery_count", "origin", "receiver_map", "sender_map")

    def __init__(self, link: Link, origin: str | None) -> None:
        self.origin = origin
        self.delivery_count = link.delivery_count
        self.sender_map = dict(link.unsettled[link.sender])
        self.receiver_map = dict(link.unsettled[link.receiver])
        self.deliveries = [_copy(d, origin) for d in link.live.values()]


# how a step named with its connection ends (`_copy`)
_ON = re.compile(r"\(on [^()]*\)$")


def _copy(d: Delivery, origin: str | None) -> Delivery:
    twin = copy.copy(d)
    # its steps so far name their connection: their frame numbers are that connection's
    twin.timeline = [e if _ON.search(e.detail) else
                     e._replace(detail=f"{e.detail} (on {origin})".lstrip())
                     for e in d.timeline] if origin is not None else list(d.timeline)
    twin._chunks = list(d._chunks)
    twin.origin = origin if d.origin is None else d.origin  # (the first connection's)
    # (its next link and session are set when it is taken: until then it holds nothing
    # of the connection that ended, whose model may be let go)
    twin.link = twin.session = None  # type: ignore[assignment]
    return twin


class LinkShelf:
    """The shelved links of one capture, by `ShelfKey`. Bounded: past `max_links` links
    or `max_deliveries` deliveries held in all, the links shelved longest ago are let go
    (their deliveries were reported, abandoned, when their connections ended)."""

    def __init__(self, max_links: int = 1_000, max_deliveries: int = 10_000) -> None:
        self.max_links = max_links
        self.max_deliveries = max_deliveries
        self._links: OrderedDict[ShelfKey, Shelved] = OrderedDict()
        self._held = 0

    def __len__(self) -> int:
        return len(self._links)

    def put(self, key: ShelfKey, link: Link, origin: str | None) -> None:
        self.take(key)  # (a later end of the same link replaces what an earlier left)
        shelved = Shelved(link, origin)
        self._links[key] = shelved
        self._held += len(shelved.deliveries)
        while len(self._links) > 1 and (len(self._links) > self.max_links
                                        or self._held > self.max_deliveries):
            _key, gone = self._links.popitem(last=False)
            self._held -= len(gone.deliveries)

    def take(self, key: ShelfKey) -> Shelved | None:
        shelved = self._links.pop(key, None)
        if shelved is not None:
            self._held -= len(shelved.deliveries)
        return shelved


def shelf_key(conn: Any, name: str, sender: str) -> ShelfKey | None:
    """The key of link `name` whose sender is side `sender` of connection `conn`, or None
    while either side's open (its container-id) is unknown."""
    a = conn.open.get(sender)
    b = conn.open.get(conn.other[sender])
    if a is None or b is None or a.container_id is None or b.container_id is None:
        return None
    return (str(a.container_id), str(b.container_id), name)
