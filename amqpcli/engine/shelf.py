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
then says from which connection, and a `carried` step in its timeline marks where the
earlier connection's steps end), so a link carried on and never resumed is not counted
twice.

Which end is the link's latest is told by the attaches, not by the order the ends come
in: a connection that attached the link claims it (`claim`), and a connection whose
claim a later one took leaves nothing on the shelf when it ends (a half-open connection
whose end the capture shows only after the client attached the link elsewhere). A resume
on a connection that attached the link before the earlier one's end was seen is not
followed."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from amqpcli.engine.delivery import Delivery
    from amqpcli.engine.link import Link

__all__ = ["LinkShelf", "Shelved", "carried_step_detail", "shelf_key", "step_connections"]

# (sender's container-id, receiver's container-id, link name)
ShelfKey = tuple[str, str, str]


class Shelved:
    """What a link's end leaves for its next attachment: both ends' unsettled maps (by
    role, as the next connection may put the ends on other sides) and copies of its
    deliveries not yet final, as they were before the end abandoned them (the records
    made of the originals keep their own timelines)."""

    __slots__ = ("deliveries", "origin", "payload_bytes", "receiver_map", "sender_map")

    def __init__(self, link: Link, origin: str | None) -> None:
        self.origin = origin
        self.sender_map = dict(link.unsettled[link.sender])
        self.receiver_map = dict(link.unsettled[link.receiver])
        self.deliveries = [_copy(d, origin) for d in link.live.values()]
        self.payload_bytes = sum(len(x) for d in self.deliveries for x in d._chunks)


def _copy(d: Delivery, origin: str | None) -> Delivery:
    twin = copy.copy(d)
    twin.timeline = list(d.timeline)
    twin._chunks = list(d._chunks)
    twin.origin = origin if d.origin is None else d.origin  # (the first connection's)
    # (its next link and session are set when it is taken: until then it holds nothing
    # of the connection that ended, whose model may be let go)
    twin.link = twin.session = None  # type: ignore[assignment]
    return twin


class LinkShelf:
    """The shelved links of one capture, by `ShelfKey`. Bounded: past `max_links` links,
    `max_deliveries` deliveries or `max_bytes` bytes of their payloads held in all, the
    links shelved longest ago are let go (their deliveries were reported, abandoned, when
    their connections ended); a link larger than that alone is not shelved."""

    def __init__(self, max_links: int = 1_000, max_deliveries: int = 10_000,
                 max_bytes: int = 64 << 20) -> None:
        self.max_links = max_links
        self.max_deliveries = max_deliveries
        self.max_bytes = max_bytes
        self._links: OrderedDict[ShelfKey, Shelved] = OrderedDict()
        self._held = 0  # deliveries
        self._bytes = 0
        # the connection (its model) that attached each link last, while it lasts, and
        # the connections a later attach took a link from, until they end
        self._claims: dict[ShelfKey, Any] = {}
        self._superseded: set[tuple[ShelfKey, Any]] = set()

    def __len__(self) -> int:
        return len(self._links)

    def claim(self, key: ShelfKey, owner: Any) -> None:
        """`owner` (a connection) attached the link: its attachment is the latest."""
        earlier = self._claims.get(key)
        if earlier is not None and earlier is not owner:
            self._superseded.add((key, earlier))
        self._superseded.discard((key, owner))  # (attached again: the latest once more)
        self._claims[key] = owner

    def release(self, owner: Any, keys: Any) -> None:
        """`owner` is done with the links `keys` (they ended with it, or were closed)."""
        claims = self._claims
        for key in keys:
            if claims.get(key) is owner:
                del claims[key]
            self._superseded.discard((key, owner))

    def put(self, key: ShelfKey, link: Link, origin: str | None, owner: Any) -> None:
        """`owner` ended with `link` attached: shelved, unless a later connection has
        attached the link since (its state, not this one's, is the link's), or it is
        larger than the shelf."""
        if self._claims.get(key, owner) is not owner or (key, owner) in self._superseded:
            return
        self.take(key)  # (what an earlier end of the link left is older than this)
        if len(link.live) > self.max_deliveries:
            return
        shelved = Shelved(link, origin)
        if shelved.payload_bytes > self.max_bytes:
            return
        self._links[key] = shelved
        self._held += len(shelved.deliveries)
        self._bytes += shelved.payload_bytes
        while (len(self._links) > self.max_links or self._held > self.max_deliveries
               or self._bytes > self.max_bytes):
            _key, gone = self._links.popitem(last=False)
            self._held -= len(gone.deliveries)
            self._bytes -= gone.payload_bytes

    def take(self, key: ShelfKey) -> Shelved | None:
        shelved = self._links.pop(key, None)
        if shelved is not None:
            self._held -= len(shelved.deliveries)
            self._bytes -= shelved.payload_bytes
        return shelved


CARRIED_FROM = "carried over from "  # (the detail of a `carried` step, then its connection)


def carried_step_detail(origin: str | None) -> str:
    """The detail of the `carried` step a delivery taken off the shelf gets."""
    return CARRIED_FROM + (origin or "an earlier connection")


def step_connections(timeline: list[Any], here: str) -> list[str]:
    """The connection each step of a delivery's timeline came on: `here` for the steps
    from its last `carried` step on, the connection a `carried` step names for those
    before it (back to the one before), so that a frame number is read as its own
    connection's."""
    out = [here] * len(timeline)
    owner = here
    for i in range(len(timeline) - 1, -1, -1):
        e = timeline[i]
        out[i] = owner
        if e.kind == "carried":
            owner = e.detail.removeprefix(CARRIED_FROM)
    return out


def shelf_key(conn: Any, name: str, sender: str) -> ShelfKey | None:
    """The key of link `name` whose sender is side `sender` of connection `conn`, or None
    while either side's open (its container-id) is unknown."""
    a = conn.open.get(sender)
    b = conn.open.get(conn.other[sender])
    if a is None or b is None or a.container_id is None or b.container_id is None:
        return None
    return (str(a.container_id), str(b.container_id), name)
