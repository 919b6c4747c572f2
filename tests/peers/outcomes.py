"""Delivery outcomes as small values: what a peer decides, and what it saw the other side
decide. ``apply`` writes one to a proton delivery; ``observed`` reads the remote state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from proton import Condition, Delivery, Described, symbol, ulong

from tests.peers.sections import owned

DECLARED = 0x33
TRANSACTIONAL_STATE = 0x34


@dataclass(frozen=True)
class Accept:
    pass


@dataclass(frozen=True)
class Reject:
    condition: str = "amqp:internal-error"
    description: str | None = None
    info: dict[str, Any] | None = None


@dataclass(frozen=True)
class Release:
    pass


@dataclass(frozen=True)
class Modify:
    failed: bool = False
    undeliverable: bool = False
    annotations: dict[str, Any] | None = None


@dataclass(frozen=True)
class Hold:
    """No outcome yet: the delivery stays unsettled until the test decides."""


Outcome = Accept | Reject | Release | Modify | Hold


@dataclass(frozen=True)
class Observed:
    """A remote delivery state as it arrived: ``kind`` is accepted, rejected, released,
    modified, received, transactional, declared, or none; the rest is what it carried."""

    kind: str
    settled: bool
    condition: tuple[str, str | None] | None = None
    failed: bool = False
    undeliverable: bool = False
    annotations: dict[Any, Any] | None = None
    data: list[Any] = field(default_factory=list)


_KINDS = {
    0: "none",
    Delivery.RECEIVED: "received",
    Delivery.ACCEPTED: "accepted",
    Delivery.REJECTED: "rejected",
    Delivery.RELEASED: "released",
    Delivery.MODIFIED: "modified",
    DECLARED: "declared",
    TRANSACTIONAL_STATE: "transactional",
}


def observed(delivery: Delivery) -> Observed:
    remote = delivery.remote
    state = delivery.remote_state
    kind = _KINDS.get(state, f"0x{int(state):x}")
    cond = remote.condition
    return Observed(
        kind=kind,
        settled=bool(delivery.settled),
        condition=(str(cond.name), cond.description) if cond is not None else None,
        failed=bool(remote.failed) if state == Delivery.MODIFIED else False,
        undeliverable=bool(remote.undeliverable) if state == Delivery.MODIFIED else False,
        annotations=(
            owned(dict(remote.annotations))
            if state == Delivery.MODIFIED and remote.annotations
            else None
        ),
        data=owned(list(remote.data or [])) if state not in _BASIC else [],
    )


_BASIC = {
    Delivery.RECEIVED,
    Delivery.ACCEPTED,
    Delivery.REJECTED,
    Delivery.RELEASED,
    Delivery.MODIFIED,
}


def apply(delivery: Delivery, outcome: Outcome, settle: bool = True) -> None:
    """Send ``outcome`` for ``delivery`` (and settle it, unless told not to)."""
    if isinstance(outcome, Hold):
        return
    local = delivery.local
    if isinstance(outcome, Accept):
        state = Delivery.ACCEPTED
    elif isinstance(outcome, Reject):
        info: Any = outcome.info
        local.condition = Condition(outcome.condition, outcome.description, info)
        state = Delivery.REJECTED
    elif isinstance(outcome, Release):
        state = Delivery.RELEASED
    else:
        local.failed = outcome.failed
        local.undeliverable = outcome.undeliverable
        if outcome.annotations:
            local.annotations = {symbol(k): v for k, v in outcome.annotations.items()}
        state = Delivery.MODIFIED
    delivery.update(state)
    if settle:
        delivery.settle()


def transactional(txn_id: bytes, outcome: Outcome | None) -> list[Any]:
    """The fields of a transactional-state carrying ``outcome`` (for ``delivery.local.data``)."""
    if outcome is None:
        return [txn_id]
    return [txn_id, described_outcome(outcome)]


def described_outcome(outcome: Outcome) -> Described:
    if isinstance(outcome, Accept):
        return Described(ulong(Delivery.ACCEPTED), [])
    if isinstance(outcome, Release):
        return Described(ulong(Delivery.RELEASED), [])
    if isinstance(outcome, Reject):
        err_fields: list[Any] = [symbol(outcome.condition), outcome.description, outcome.info]
        return Described(ulong(Delivery.REJECTED), [Described(ulong(0x1D), err_fields)])
    if isinstance(outcome, Modify):
        mod_fields: list[Any] = [outcome.failed, outcome.undeliverable, outcome.annotations]
        return Described(ulong(Delivery.MODIFIED), mod_fields)
    raise ValueError(f"no described form for {outcome!r}")


def from_described(value: Any) -> Outcome | None:
    """The outcome inside a transactional-state, as proton decodes it."""
    if not isinstance(value, Described):
        return None
    desc: Any = value.descriptor
    code = int(desc) if not isinstance(desc, str) else -1
    body: Any = value.value
    fields = list(body or [])
    if code == Delivery.ACCEPTED:
        return Accept()
    if code == Delivery.RELEASED:
        return Release()
    if code == Delivery.REJECTED:
        err = fields[0] if fields else None
        if isinstance(err, Described):
            err_value: Any = err.value
            ef = list(err_value) + [None, None, None]
            return Reject(str(ef[0]), ef[1], ef[2])
        return Reject()
    if code == Delivery.MODIFIED:
        fields += [None, None, None]
        return Modify(bool(fields[0]), bool(fields[1]), fields[2])
    return None
