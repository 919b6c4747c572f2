"""Everything the engine reports, as small dataclasses.

Every event carries `time` (the timestamp of the frame, or of the timer, that caused it)
and, where a side acted, `side` (the name of the side that sent the frame: "client" /
"server" by default). Model objects (`Session`, `Link`, `Delivery`) are passed by
reference: they keep changing after the event, so a consumer that wants a snapshot must
copy what it needs when it receives the event.

The set is deliberately small; `docs/engine.md` lists when each is emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .connection import Connection
    from .delivery import Delivery, TimelineEntry
    from .link import Link
    from .session import Session


class Event:
    """Base class of every engine event (for isinstance checks)."""

    __slots__ = ()


# --- protocol headers and SASL -------------------------------------------------------


@dataclass(slots=True)
class ProtocolHeaderSeen(Event):
    side: str
    protocol: str  # "amqp", "sasl", "tls" or "other"
    version: tuple[int, int, int]
    time: float


@dataclass(slots=True)
class SaslMechanismsOffered(Event):
    side: str
    mechanisms: tuple[str, ...]
    time: float


@dataclass(slots=True)
class SaslMechanismChosen(Event):
    side: str
    mechanism: str
    hostname: str | None
    time: float


@dataclass(slots=True)
class SaslOutcome(Event):
    side: str  # the side that sent the outcome (the server)
    code: int  # 0 ok, 1 auth, 2 sys, 3 sys-perm, 4 sys-temp
    mechanism: str | None
    time: float

    @property
    def ok(self) -> bool:
        return self.code == 0


# --- connection, session, link -------------------------------------------------------


@dataclass(slots=True)
class ConnectionOpened(Event):
    connection: Connection
    side: str
    open: Any  # the Open performative
    time: float


@dataclass(slots=True)
class ConnectionClosed(Event):
    connection: Connection
    side: str
    error: Any  # codec Error or None
    time: float


@dataclass(slots=True)
class TransportClosed(Event):
    """The byte stream from `side` ended. `clean`: both sides had sent their close.

    Deliveries still unsettled then are abandoned (in doubt) and handed out as
    `DeliverySettled` with outcome "abandoned"."""

    connection: Connection
    side: str
    clean: bool
    time: float


@dataclass(slots=True)
class SessionBegun(Event):
    session: Session
    side: str
    time: float


@dataclass(slots=True)
class SessionEnded(Event):
    session: Session
    side: str
    error: Any
    time: float


@dataclass(slots=True)
class LinkAttached(Event):
    link: Link
    side: str
    time: float


@dataclass(slots=True)
class LinkDetached(Event):
    link: Link
    side: str
    closed: bool
    error: Any
    time: float


@dataclass(slots=True)
class LinkRefused(Event):
    """The responder attached with a null terminus and detached (Part 2 §2.6.3)."""

    link: Link
    side: str  # the side that refused
    error: Any
    time: float


@dataclass(slots=True, frozen=True)
class Difference:
    """One field the responder granted differently from what was requested."""

    field: str  # "source.filter", "source.durable", "rcv-settle-mode", ...
    requested: Any
    granted: Any
    note: str  # a short human explanation ("filter dropped: selector", ...)


@dataclass(slots=True)
class TerminusMismatch(Event):
    link: Link
    side: str  # the responder
    differences: tuple[Difference, ...]
    time: float


@dataclass(slots=True)
class UnsettledReconciled(Event):
    """A re-attach: how the side's `unsettled` map (none counts as empty) compares with
    the deliveries the model holds unsettled for that side. Emitted when the side attaches
    again a link resumed here (`Link.reattached`), or when its attach carries a non-empty
    map (resuming an attachment the model did not see); never for a first attach."""

    link: Link
    side: str
    only_in_model: tuple[bytes, ...]
    only_in_attach: tuple[bytes, ...]
    state_differs: tuple[bytes, ...]
    time: float


@dataclass(slots=True)
class CreditChanged(Event):
    """A flow frame (link-level when `link` is set, else session-level)."""

    session: Session
    link: Link | None
    side: str
    link_credit: int | None  # the sender's view of the credit after the flow
    delivery_count: int | None
    available: int | None
    drain: bool
    echo: bool
    time: float


# --- deliveries ----------------------------------------------------------------------


@dataclass(slots=True)
class DeliveryStarted(Event):
    delivery: Delivery
    side: str  # the sender
    time: float


@dataclass(slots=True)
class DeliveryUpdated(Event):
    delivery: Delivery
    entry: TimelineEntry  # the step that was just appended to the timeline
    time: float


@dataclass(slots=True)
class DeliverySettled(Event):
    """The delivery left the live maps; its timeline is final."""

    delivery: Delivery
    time: float


@dataclass(slots=True)
class DeliveriesSettled(Event):
    """Lean endpoints (`Endpoint(lean_events=True)`): one disposition from the peer
    settled these deliveries of ours with one outcome — in place of a DeliverySettled
    for each."""

    deliveries: list[Delivery]
    time: float


@dataclass(slots=True)
class MessageReceived(Event):
    """Endpoint roles only: a complete message arrived on one of our receiving links."""

    delivery: Delivery
    time: float

    @property
    def message(self) -> Any:
        return self.delivery.message()


@dataclass(slots=True)
class TransactionDeclared(Event):
    txn_id: bytes
    delivery: Delivery
    time: float


@dataclass(slots=True)
class TransactionDischarged(Event):
    txn_id: bytes
    fail: bool
    outcome: str  # "committed", "rolled-back" or "failed: <condition>"
    delivery: Delivery
    time: float


# --- liveness and errors -------------------------------------------------------------


@dataclass(slots=True)
class Heartbeat(Event):
    side: str
    time: float


@dataclass(slots=True)
class Violation(Event):
    """A side broke the protocol. Never raised: reported, and answered by endpoints.

    `kind` is one of `KINDS`; `scope` and `condition` say how an endpoint answers it
    (close the connection, end the session, detach the link, or nothing).
    """

    kind: str
    side: str
    detail: str
    frame_no: int
    time: float
    session: Session | None = field(default=None, repr=False)
    link: Link | None = field(default=None, repr=False)

    @property
    def scope(self) -> str | None:
        return KINDS[self.kind][0]

    @property
    def condition(self) -> str | None:
        return KINDS[self.kind][1]

    def __str__(self) -> str:
        return f"frame {self.frame_no}: {self.side} broke the protocol ({self.kind}): {self.detail}"


# kind -> (what an endpoint ends in answer, the error condition it uses). Part 2 §2.8.15-18.
KINDS: dict[str, tuple[str | None, str | None]] = {
    "framing-error": ("connection", "amqp:connection:framing-error"),
    "frame-too-large": ("connection", "amqp:connection:framing-error"),
    "out-of-order": ("connection", "amqp:illegal-state"),
    "frame-after-close": (None, None),
    "missing-field": ("connection", "amqp:invalid-field"),
    "invalid-field": ("connection", "amqp:invalid-field"),
    "unknown-channel": ("connection", "amqp:invalid-field"),
    "channel-in-use": ("connection", "amqp:invalid-field"),
    "channel-max-exceeded": ("connection", "amqp:connection:framing-error"),
    "idle-timeout": ("connection", "amqp:resource-limit-exceeded"),
    "unknown-handle": ("session", "amqp:session:unattached-handle"),
    "handle-in-use": ("session", "amqp:session:handle-in-use"),
    # a second link of the same name and direction (§2.6.1 has no condition of its own
    # for it): amqp:not-allowed (§2.8.15), a frame used against the spec's semantics
    "link-name-in-use": ("session", "amqp:not-allowed"),
    # §2.7.2 (begin, handle-max): "A peer that receives a handle outside the supported
    # range MUST close the connection with the framing-error error-code."
    "handle-max-exceeded": ("connection", "amqp:connection:framing-error"),
    "transfer-beyond-window": ("session", "amqp:session:window-violation"),
    "delivery-id-in-use": ("session", "amqp:session:errant-link"),
    "transfer-mismatch": ("session", "amqp:session:errant-link"),
    "transfer-beyond-credit": ("link", "amqp:link:transfer-limit-exceeded"),
    "message-size-exceeded": ("link", "amqp:link:message-size-exceeded"),
    "wrong-role": ("link", "amqp:invalid-field"),
    "unknown-delivery": (None, None),
    "already-settled": (None, None),
    "conflicting-outcome": (None, None),
    "outcome-changed": (None, None),
    "settle-mode": (None, None),
    "early-settle": (None, None),
}
