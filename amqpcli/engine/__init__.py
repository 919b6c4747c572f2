"""The sans-IO AMQP 1.0 engine: connection → sessions → links → deliveries, with events.

Theory of operation
-------------------

The engine never touches a socket or a clock. It is fed what one side of a connection
put on the wire, with a timestamp and the name of that side, and keeps one model of the
whole conversation: what *both* sides said and what follows from it. Every input
returns a list of events (`events.py`), small dataclasses that say what happened, to
whom, at what time.

There is one model (`Connection`) and three ways to use it:

* **observer** (`Observer`): sees both directions (a capture, a proxy). Each frame is
  fed with the side that sent it; the observer never produces frames.
* **client** and **peer** (`Endpoint`): we are one of the two sides. Every frame we
  send goes through the same model as a frame from our side, every frame we receive as
  a frame from the other side, so an endpoint and an observer of the same bytes build
  the same picture. The endpoint adds what a participant must do: answer headers, SASL,
  open/begin/attach/detach/end/close, echo and drain flows, heartbeats, and protocol
  violations; split outgoing transfers to the peer's max-frame-size; queue sends until
  there is credit and session window.

The model is four state machines, one file each, their transitions in tables:

* `connection.py` — per side: start → (sasl → sasl-done) → header → opened → closed;
  frames are dispatched on the performative's class.
* `session.py` — per side: unmapped → begun → ended; channel mapping, transfer windows
  (Part 2 §2.5.6), handles, delivery-ids, dispositions over ranges.
* `link.py` — per side: detached → attached → detached; credit by the formulas of
  §2.6.7, both sides' unsettled maps, requested vs granted termini.
* `delivery.py` — queued → transferring → unsettled → (wait-receiver) → settled, or
  aborted / abandoned; every step recorded in the delivery's timeline.

Sequence numbers (delivery-id, delivery-count, transfer-id) use RFC 1982 arithmetic
(`serial.py`). A side that breaks the protocol produces a `Violation` event naming the
kind, the side, the frame number and what was wrong; the model carries on as best it
can. Endpoints answer violations by the peer as the spec says (close the connection,
end the session or detach the link with the named error condition).

Deliveries leave the live maps as soon as they are final and are handed out in a
`DeliverySettled` event with their whole timeline; the model keeps counters only, so
long captures cost memory in proportion to what is unsettled, not to what was sent.
When a byte stream ends without the closes (`TransportClosed`), what was still unsettled
is abandoned: its outcome is in doubt. An observer made with `midstream=True` takes a
capture that starts after the connection was set up.

Time: every input carries its timestamp (seconds, any epoch). Endpoints expose timers as
a deadline: call `handle_timer(now)` when `next_timer()` says so; it sends heartbeats
at half the peer's idle-timeout and closes with `amqp:resource-limit-exceeded` when the
peer has been silent longer than ours.

See docs/engine.md for the event list and how to drive each role.
"""

from __future__ import annotations

from . import serial
from .connection import CONNECTION_TRANSITIONS, Connection
from .delivery import Delivery, Phase, TimelineEntry, outcome_of, state_name
from .endpoint import Endpoint, EngineUsageError
from .events import (
    KINDS,
    ConnectionClosed,
    ConnectionOpened,
    CreditChanged,
    DeliveriesSettled,
    DeliverySettled,
    DeliveryStarted,
    DeliveryUpdated,
    Difference,
    Event,
    Heartbeat,
    LinkAttached,
    LinkDetached,
    LinkRefused,
    MessageReceived,
    ProtocolHeaderSeen,
    SaslMechanismChosen,
    SaslMechanismsOffered,
    SaslOutcome,
    SessionBegun,
    SessionEnded,
    TerminusMismatch,
    TransactionDeclared,
    TransactionDischarged,
    TransportClosed,
    UnsettledReconciled,
    Violation,
)
from .link import Link
from .observer import Observer
from .sasl import SaslConfig
from .session import Session

__all__ = [
    "CONNECTION_TRANSITIONS",
    "KINDS",
    "Connection",
    "ConnectionClosed",
    "ConnectionOpened",
    "CreditChanged",
    "DeliveriesSettled",
    "Delivery",
    "DeliverySettled",
    "DeliveryStarted",
    "DeliveryUpdated",
    "Difference",
    "Endpoint",
    "EngineUsageError",
    "Event",
    "Heartbeat",
    "Link",
    "LinkAttached",
    "LinkDetached",
    "LinkRefused",
    "MessageReceived",
    "Observer",
    "Phase",
    "ProtocolHeaderSeen",
    "SaslConfig",
    "SaslMechanismChosen",
    "SaslMechanismsOffered",
    "SaslOutcome",
    "Session",
    "SessionBegun",
    "SessionEnded",
    "TerminusMismatch",
    "TimelineEntry",
    "TransactionDeclared",
    "TransactionDischarged",
    "TransportClosed",
    "UnsettledReconciled",
    "Violation",
    "outcome_of",
    "serial",
    "state_name",
]
