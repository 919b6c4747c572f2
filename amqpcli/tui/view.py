"""What the widgets show: plain rows built from the engine's model at each refresh.

Widgets never read the engine's objects directly; `amqpcli.tui.adapter` turns the model into
these rows under the source's lock, and the widgets render them on the UI thread. So a
widget can be tested with hand-made rows, and a change in the engine touches one module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RAW_SHOWN = 64 * 1024  # message bytes the hex view shows; the rest is counted


class Shown(str):
    """Text made printable already: a value quoted as the frame lines quote it
    (`format_value`: `"evil\\x1b"`), or a line built of such values and escaped names.
    The widgets show it as it is; escaping it again would double its backslashes
    (`\\x1b` shown as `\\\\x1b`). Every other string of a row is the peer's raw text,
    escaped once by the widget that shows it."""

    __slots__ = ()


def shown(text: str) -> Shown:
    """`text`, already printable, marked so; a character that is not printable (a part
    left raw by mistake) is still escaped, the whole line then (never shown raw)."""
    from amqpcli.render.types import one_line

    return Shown(one_line(text))


@dataclass(slots=True)
class LinkRow:
    key: str
    name: str
    role: str  # "sender" / "receiver" (from the side that attached first)
    handle: str  # "h0/h1": both sides' handles
    deliveries: int
    unsettled: int
    credit: int | None
    rate: float | None  # deliveries per second over the last seconds (None: no times)
    warnings: list[str] = field(default_factory=list)
    ours: bool = False  # a link of our own connection (keys act on it)


@dataclass(slots=True)
class SessionRow:
    key: str
    label: str
    links: list[LinkRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ConnRow:
    key: str
    label: str
    sessions: list[SessionRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)


@dataclass(slots=True)
class TerminusRow:
    """One field of a source or target, as the link's attacher asked and as the peer answered."""

    field: str
    requested: str
    granted: str

    @property
    def differs(self) -> bool:
        return self.requested != self.granted


@dataclass(slots=True)
class UnsettledRow:
    key: str  # delivery key, for opening it
    delivery_id: str
    tag: str
    age: float | None  # seconds since the first transfer (None: unknown, no times)
    sender_state: str
    receiver_state: str
    sender_settled: bool
    receiver_settled: bool


@dataclass(slots=True)
class LinkDetail:
    key: str
    title: str
    source: list[TerminusRow]
    target: list[TerminusRow]
    flow: list[tuple[str, str]]  # (name, value): credit, delivery-count, available, drain, modes
    unsettled: list[UnsettledRow]
    unsettled_total: int  # the table may show fewer
    warnings: list[str] = field(default_factory=list)
    ours: bool = False
    role: str = ""
    termini: bool = True  # False: the protocol has none (an AMQP 0-10 destination)


@dataclass(slots=True)
class TimelineRow:
    # None: unknown, the connection's input has no times (a proton frame trace)
    time: float | None  # absolute
    delta: float | None  # since the previous row
    side: str
    what: str  # "transfer", "disposition", "settle", "abort", …
    detail: str


@dataclass(slots=True)
class DeliveryDetail:
    key: str
    title: str
    timeline: list[TimelineRow]
    message: Any  # a rich renderable of every section, or None
    raw: bytes  # the message bytes as transferred: the first RAW_SHOWN of them
    summary: str = ""
    size: int = 0  # the message bytes there are (`raw` may be only their start)


@dataclass(slots=True)
class ConnDetail:
    key: str
    title: str
    fields: list[tuple[str, str, str]]  # (what, client side, server side)
    violations: list[str]  # newest last
    violations_total: int
    # findings after bytes the capture lost that those bytes could explain: notices, not
    # violations (as pcap-dump's `after-gap` notices); newest last
    after_gap: list[str] = field(default_factory=list)
    after_gap_total: int = 0


@dataclass(slots=True)
class Snapshot:
    """Everything one refresh needs, taken under the source's lock."""

    tree: list[ConnRow]
    link: LinkDetail | None
    delivery: DeliveryDetail | None
    status: str = ""
    conn: ConnDetail | None = None
