"""Which records to show: by connection, address, link name, performative, delivery
state and time range. An empty criterion lets everything through; several values of one
criterion are alternatives; different criteria must all hold.

Times (`since`, `until`) are seconds from the start of the capture (`12.5`, `+12.5`),
an ISO 8601 date and time (`2026-11-22T10:00:03.5`, UTC unless it says otherwise) or a
time of day (`10:00:03.5`, UTC, on the capture's first day).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from difflib import get_close_matches
from fnmatch import fnmatchcase
from typing import Any

from amqpcli.dissect.records import (
    Conn,
    DeliveryRecord,
    FrameRecord,
    LinkStats,
    Notice,
    ViolationRecord,
)
from amqpcli.errors import Exit, UserError

_TOD = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?$")

# What `--state` can name: the delivery states a frame carries (`frame_state`) and the
# outcomes a delivery ends in (`Delivery.outcome`; 0-10: `completed`).
STATES = frozenset((
    "accepted", "rejected", "released", "modified", "declared", "received",
    "transactional-state", "aborted", "abandoned", "settled", "in-progress", "unsettled",
    "completed",
))


def parse_time(text: str, first: float) -> float:
    """An absolute time (epoch seconds) from one of the forms above; `first` is the time
    of the capture's first packet."""
    s = text.strip()
    try:
        secs = float(s)
    except ValueError:
        pass
    else:
        if not math.isfinite(secs):
            raise UserError(f"not a time: {text!r} (seconds from the start, HH:MM:SS or "
                            "ISO 8601)", Exit.USAGE)
        return first + secs
    if _TOD.match(s):
        parts = s.split(":")
        h, m = int(parts[0]), int(parts[1])
        sec = float(parts[2]) if len(parts) > 2 else 0.0
        if h > 23 or m > 59 or sec >= 60:
            raise UserError(f"not a time of day: {text!r} (HH:MM:SS, UTC)", Exit.USAGE)
        day = datetime.fromtimestamp(first, tz=UTC).replace(hour=0, minute=0, second=0,
                                                            microsecond=0)
        return (day + timedelta(seconds=h * 3600 + m * 60 + sec)).timestamp()
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise UserError(f"not a time: {text!r} (seconds from the start, HH:MM:SS or ISO 8601)",
                        Exit.USAGE) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _names(values: Iterable[str], option: str) -> frozenset[str]:
    out: set[str] = set()
    for v in values:
        names = [x.strip().lower() for x in v.split(",") if x.strip()]
        if not names:  # `--state ''` would otherwise quietly let everything through
            raise UserError(f"{option}: a name is needed (got {v!r})", Exit.USAGE)
        out.update(names)
    return frozenset(out)


def known_performatives() -> frozenset[str]:
    """Every name `--performative` can match (`performative_name`'s values): the AMQP 1.0
    performatives, "heartbeat", "header" (a protocol header), "error" (a frame error) and
    the AMQP 0-10 controls and commands ("message.transfer")."""
    from amqpcli.amqp010.spec import METHODS
    from amqpcli.codec import composites as c

    names = {"heartbeat", "header", "error"}
    names.update(str(getattr(k, "NAME", "")) for k in vars(c).values() if isinstance(k, type)
                 and {"frame", "sasl-frame"} & set(getattr(k, "PROVIDES", None) or ()))
    names.update(f"{m[1]}.{m[2]}" for m in METHODS)
    return frozenset(names)


def _check(given: frozenset[str], known: frozenset[str], option: str, what: str,
           listed: Iterable[str]) -> None:
    """A usage error for the first name in `given` that matches nothing in `known`."""
    for name in sorted(given - known):
        near = get_close_matches(name, known, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise UserError(f"{option}: unknown {what} {name!r} ({hint}one of: "
                        f"{', '.join(listed)})", Exit.USAGE)


class Filter:
    """Criteria for records; `active` says whether any was given."""

    def __init__(self, *, connections: Iterable[str] = (), addresses: Iterable[str] = (),
                 links: Iterable[str] = (), performatives: Iterable[str] = (),
                 states: Iterable[str] = (), since: str | None = None,
                 until: str | None = None) -> None:
        self.connections = tuple(c.strip() for v in connections for c in v.split(",") if c.strip())
        self.addresses = tuple(addresses)
        self.links = tuple(links)
        self.performatives = _names(performatives, "--performative")
        if self.performatives:
            known = known_performatives()
            _check(self.performatives, known, "--performative", "performative",
                   [n for n in sorted(known) if "." not in n]
                   + ["or an AMQP 0-10 class.method such as message.transfer"])
        self.states = _names(states, "--state")
        _check(self.states, STATES, "--state", "state", sorted(STATES))
        self._since_text = since
        self._until_text = until
        self.since: float | None = None
        self.until: float | None = None
        self._resolved = since is None and until is None
        self._conn_cache: dict[int, bool] = {}
        self.active = bool(self.connections or self.addresses or self.links
                           or self.performatives or self.states or since or until)
        self.by_link = bool(self.addresses or self.links)

    def resolve(self, first: float) -> None:
        """Turn relative times into absolute ones, once the capture's start is known."""
        if self._resolved:
            return
        self._resolved = True
        if self._since_text is not None:
            self.since = parse_time(self._since_text, first)
        if self._until_text is not None:
            self.until = parse_time(self._until_text, first)
        if self.since is not None and self.until is not None and self.since > self.until:
            raise UserError(f"--since {self._since_text} is after --until {self._until_text}",
                            Exit.USAGE)

    # --- criteria -------------------------------------------------------------------

    def time(self, t: float | None) -> bool:
        if t is None:
            return True
        if self.since is not None and t < self.since:
            return False
        return not (self.until is not None and t > self.until)

    def conn(self, c: Conn | None) -> bool:
        if not self.connections or c is None:
            return not self.connections
        hit = self._conn_cache.get(c.index)
        if hit is None:
            hit = self._conn_cache[c.index] = any(_names_conn(x, c) for x in self.connections)
        return hit

    def unmatched_connections(self, conns: Iterable[Conn]) -> list[str]:
        """The `connections` values that named none of `conns` (a typo, most likely)."""
        conns = list(conns)
        return [x for x in self.connections if not any(_names_conn(x, c) for c in conns)]

    def time_outside(self, first: float, last: float) -> str | None:
        """Which of `since`/`until` leaves no time of the capture (`first` to `last`) in
        range, as the option was given: "--since 2030-01-01", else None."""
        if self.since is not None and self.since > last:
            return f"--since {self._since_text} is after the last packet"
        if self.until is not None and self.until < first:
            return f"--until {self._until_text} is before the first packet"
        return None

    def link_stats(self, ls: LinkStats | None) -> bool:
        if ls is None:
            return not self.by_link
        if self.links and not any(fnmatchcase(ls.name, p) for p in self.links):
            return False
        if self.addresses:
            addrs = [a for a in (_address(ls.link.source), _address(ls.link.target)) if a]
            if not any(fnmatchcase(a, p) for a in addrs for p in self.addresses):
                return False
        return True

    def link_name(self, name: str | None, addresses: Iterable[str | None]) -> bool:
        if self.links and (name is None or not any(fnmatchcase(name, p) for p in self.links)):
            return False
        if self.addresses:
            addrs = [a for a in addresses if a]
            if not any(fnmatchcase(a, p) for a in addrs for p in self.addresses):
                return False
        return True

    # --- records --------------------------------------------------------------------

    def frame(self, rec: FrameRecord) -> bool:
        if not self.time(rec.time) or not self.conn(rec.conn):
            return False
        if self.performatives and performative_name(rec.item).lower() not in self.performatives:
            return False
        if self.states:
            st = frame_state(rec.item)
            if st is None or st not in self.states:
                return False
        if self.by_link:
            links = frame_links(rec)
            if not links:
                return False
            return any(self.link_stats(rec.conn.link_for(lk)) for lk in links) if (
                rec.protocol == "amqp-1.0") else any(
                self.link_name(str(lk), (str(lk),)) for lk in links)
        return True

    def delivery(self, rec: DeliveryRecord) -> bool:
        if not self.time(rec.first_time) or not self.conn(rec.conn):
            return False
        if self.states and rec.outcome.lower() not in self.states:
            return False
        if self.by_link:
            if rec.link_stats is not None:
                return self.link_stats(rec.link_stats)
            return self.link_name(rec.link, (rec.address,))
        return True

    def violation(self, rec: ViolationRecord) -> bool:
        if not self.time(rec.time) or not self.conn(rec.conn):
            return False
        if self.by_link:
            if rec.link is None:
                return False
            named = [ls for ls in rec.conn.links if ls.name == rec.link]
            return any(self.link_stats(ls) for ls in named) if named else self.link_name(
                rec.link, ())
        return True

    def notice(self, rec: Notice) -> bool:
        """Notices about the capture (gaps, encrypted flows) pass every criterion but
        time and connection."""
        return self.time(rec.time) and (rec.conn is None or self.conn(rec.conn))


def _names_conn(x: str, c: Conn) -> bool:
    """Whether a `--connection` value names `c`: its label, its number or part of an
    endpoint."""
    return x == c.label or x in c.client or x in c.server or x == str(c.index)


def _address(terminus: Any) -> str | None:
    a = getattr(terminus, "address", None)
    return None if a is None else str(a)


def performative_name(item: Any) -> str:
    """"transfer", "heartbeat", "sasl-init", "header", "error"; 0-10: "message.transfer"."""
    method = getattr(item, "method", None)
    if method is not None:
        return str(method.qname)
    body: Any = getattr(item, "body", _MISSING)
    if body is not _MISSING:
        return "heartbeat" if body is None else str(body.NAME)
    cls = item.__class__.__name__
    return "header" if cls == "ProtocolHeader" else "error"


_MISSING = object()


def frame_state(item: Any) -> str | None:
    """The delivery state a frame carries (transfer, disposition), by name; 0-10: the
    outcome a message.accept/reject/release gives."""
    method = getattr(item, "method", None)
    if method is not None:
        if method.klass == "message" and method.name in ("accept", "reject", "release"):
            return {"accept": "accepted", "reject": "rejected", "release": "released"}[
                method.name]
        return None
    body = getattr(item, "body", None)
    if body is not None:
        st = getattr(body, "state", None)
        if st is None:
            return None
        name = getattr(st, "NAME", None)
        if name == "transactional-state":
            inner = getattr(st, "outcome", None)
            return str(inner.NAME) if inner is not None else "transactional-state"
        return str(name) if name else None
    return None


def frame_links(rec: FrameRecord) -> list[Any]:
    """The links a frame concerns: engine Links (1.0), destinations (0-10)."""
    out: list[Any] = []
    if rec.protocol != "amqp-1.0":
        method = getattr(rec.item, "method", None)
        dest = method.fields.get("destination") if method is not None else None
        if dest:
            out.append(dest)
        for ev in rec.events:
            m = getattr(ev, "message", None)
            if m is not None and m.destination and m.destination not in out:
                out.append(m.destination)
        return out
    for ev in rec.events:
        link = getattr(ev, "link", None)
        if link is None:
            d = getattr(ev, "delivery", None)
            link = d.link if d is not None else None
        if link is not None and not any(x is link for x in out):
            out.append(link)
    return out
