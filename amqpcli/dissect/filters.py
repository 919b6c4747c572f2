"""Which records to show: by connection, address, link name, performative, delivery
state, time range and message (a JMS-style selector, as `amqp recv --selector` asks a
broker for). An empty criterion lets everything through; several values of one
criterion are alternatives; different criteria must all hold.

Connections (`connections`) are named by label (`c2`), number (`2`), IP address (either
endpoint's, IPv6 with or without brackets: `10.0.0.1`, `::1`, `[::1]`), endpoint
(`10.0.0.1:40000`, `[::1]:5672`), port (`:5672`; a bare number is a port too) or network
(`10.1.0.0/24`), each exactly: `10.1.0.1` is not `10.1.0.10`, `:4000` is not `:40000`.
A frame-trace log's connection is also named by its id as the log writes it (`[C3]`,
`[0x5581c0a3e2a0]`, or proton's pointer bare: `0x5581c0a3e2a0`).

Times (`since`, `until`) are seconds from the start of the capture (`12.5`, `+12.5`; not
negative), an ISO 8601 date and time (`2026-11-22T10:00:03.5`, UTC unless it says
otherwise) or a time of day (`10:00:03.5`, UTC). A time of day is taken on the date of the
capture's first packet, or on the next day if that would put it more than 12 hours before
the first packet: in a capture from 23:35 to 01:20, `01:00` is after midnight and `23:50`
before it.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from difflib import get_close_matches
from fnmatch import fnmatchcase
from typing import Any

from amqpcli.dissect.records import (
    AMQP010,
    AMQP10,
    Conn,
    DeliveryRecord,
    FrameRecord,
    LinkStats,
    Notice,
    ViolationRecord,
)
from amqpcli.errors import Exit, UserError

_TOD = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?$")
_DAY = 86400.0
# how far before the first packet a time of day may fall and still be on its date
_TOD_BEFORE = 12 * 3600.0
_TIME_FORMS = "seconds from the start, HH:MM:SS or ISO 8601"

# What `--state` can name: the delivery states a frame carries (`frame_state`) and the
# outcomes a delivery ends in (`Delivery.outcome`; 0-10: `completed`).
STATES = frozenset((
    "accepted", "rejected", "released", "modified", "declared", "received",
    "transactional-state", "aborted", "abandoned", "settled", "in-progress", "unsettled",
    "completed", "rolled-back", "undecided",
))


def parse_time(text: str, first: float, option: str) -> float:
    """An absolute time (epoch seconds) from one of the forms above; `first` is the time
    of the capture's first packet; `option` (`--since`) names the value in errors."""
    s = text.strip()
    try:
        secs = float(s)
    except ValueError:
        pass
    else:
        if not math.isfinite(secs):
            raise UserError(f"{option}: not a time: {text!r} ({_TIME_FORMS})", Exit.USAGE)
        if secs < 0:
            raise UserError(f"{option}: not a time: {text!r} (seconds from the start "
                            "cannot be negative)", Exit.USAGE)
        return first + secs
    if _TOD.match(s):
        parts = s.split(":")
        h, m = int(parts[0]), int(parts[1])
        sec = float(parts[2]) if len(parts) > 2 else 0.0
        if h > 23 or m > 59 or sec >= 60:
            raise UserError(f"{option}: not a time of day: {text!r} (HH:MM:SS, UTC)",
                            Exit.USAGE)
        day = datetime.fromtimestamp(first, tz=UTC).replace(hour=0, minute=0, second=0,
                                                            microsecond=0)
        t = (day + timedelta(seconds=h * 3600 + m * 60 + sec)).timestamp()
        # a capture that crosses midnight: 01:00 after a first packet at 23:35 is the
        # next day's (UTC has no daylight saving: a day is always 86400 s)
        return t + _DAY if t < first - _TOD_BEFORE else t
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise UserError(f"{option}: not a time: {text!r} ({_TIME_FORMS})",
                        Exit.USAGE) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _micros(t: float) -> int:
    """A time in whole microseconds, as `clock`, `iso` and the tables round it."""
    return round(t * 1_000_000)


def _globs(values: Iterable[str], option: str, what: str) -> tuple[str, ...]:
    out = tuple(values)
    for v in out:
        if not v.strip():  # `-a ''` would otherwise quietly match nothing
            raise UserError(f"{option}: {what} or a glob is needed (got {v!r})", Exit.USAGE)
    return out


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
                 until: str | None = None, selector: str | None = None) -> None:
        self.connections = _conn_values(connections)
        self._conn_match = [(x, _conn_matcher(x)) for x in self.connections]
        self.addresses = _globs(addresses, "--address", "an address")
        self.links = _globs(links, "--link", "a link name")
        self.performatives = _names(performatives, "--performative")
        if self.performatives:
            known = known_performatives()
            _check(self.performatives, known, "--performative", "performative",
                   [n for n in sorted(known) if "." not in n]
                   + ["or an AMQP 0-10 class.method such as message.transfer"])
        self.states = _names(states, "--state")
        _check(self.states, STATES, "--state", "state", sorted(STATES))
        for text, option in ((since, "--since"), (until, "--until")):
            if text is not None:
                # a malformed time is a usage error before reading
                parse_time(text, 0.0, option)
        self._since_text = since
        self._until_text = until
        # the range in whole microseconds, as times are printed (`clock`, `iso`) and kept
        # in the tables: a record's printed time, given as --since or --until, takes it in
        self._since_us: int | None = None
        self._until_us: int | None = None
        self._resolved = since is None and until is None
        self._conn_cache: dict[int, bool] = {}
        self.selector: Any = None
        if selector is not None:
            from amqpcli.selector import selector_option

            self.selector = selector_option(selector)
        # a message in several transfers is judged by its first: the verdict for the
        # rest, per (connection, sender, handle)
        self._judged: dict[tuple[int, str, int], bool] = {}
        self.active = bool(self.connections or self.addresses or self.links
                           or self.performatives or self.states or since or until
                           or self.selector is not None)
        self.by_link = bool(self.addresses or self.links)
        # picks records inside connections and links, not only which ones (see `Passed`)
        self.within = bool(self.performatives or self.states or since or until
                           or self.selector is not None)
        # judges what a frame or a delivery carries: notices and violations, which carry
        # no performative, state or message, pass these criteria without being judged
        self.by_content = bool(self.performatives or self.states
                               or self.selector is not None)

    def resolve(self, first: float, timed: bool = True) -> None:
        """Turn relative times into absolute ones, once the capture's start is known.
        `timed`: whether its first connection has times (a frame-trace log's may not:
        then `--since` and `--until` are a usage error, as a time that is no time is)."""
        if self._resolved:
            return
        self._resolved = True
        for text, option in ((self._since_text, "--since"), (self._until_text, "--until")):
            if text is not None and not timed:
                raise UserError(f"{option}: the log has no times to select by (proton's "
                                "frame trace carries none)", Exit.USAGE)
        if self._since_text is not None:
            self._since_us = _micros(parse_time(self._since_text, first, "--since"))
        if self._until_text is not None:
            self._until_us = _micros(parse_time(self._until_text, first, "--until"))
        if (self._since_us is not None and self._until_us is not None
                and self._since_us > self._until_us):
            raise UserError(f"--since {self._since_text} is after --until {self._until_text}",
                            Exit.USAGE)

    # --- criteria -------------------------------------------------------------------

    def time(self, t: float | None) -> bool:
        if t is None or (self._since_us is None and self._until_us is None):
            return True
        us = _micros(t)
        if self._since_us is not None and us < self._since_us:
            return False
        return not (self._until_us is not None and us > self._until_us)

    def conn(self, c: Conn | None) -> bool:
        if not self.connections or c is None:
            return not self.connections
        hit = self._conn_cache.get(c.index)
        if hit is None:
            hit = self._conn_cache[c.index] = any(m(c) for _, m in self._conn_match)
        return hit

    def naming(self, c: Conn) -> list[str]:
        """The `connections` values that name `c` (those that name none are most likely
        typos: `SeenConns.unnamed`)."""
        return [x for x, m in self._conn_match if m(c)]

    def forget(self, c: Conn) -> None:
        """`c` is gone (`Dissector(closed="forget")`): no record of it is judged again."""
        self._conn_cache.pop(c.index, None)

    def time_outside(self, first: float, last: float) -> str | None:
        """Which of `since`/`until` leaves no time of the capture (`first` to `last`) in
        range, as the option was given: "--since 2030-01-01", else None."""
        if self._since_us is not None and self._since_us > _micros(last):
            return f"--since {self._since_text} is after the last packet"
        if self._until_us is not None and self._until_us < _micros(first):
            return f"--until {self._until_text} is before the first packet"
        return None

    def chosen_conn(self, c: Conn) -> bool:
        """Whether connection `c` is one the filters choose for the end views: one
        `--connection` names, and with `--address` or `--link` one with a link they
        name."""
        return self.conn(c) and (not self.by_link or any(
            self.link_name(name, addresses) for name, addresses in _conn_links(c)))

    def unmatched_links(self, conns: Iterable[Conn]) -> list[tuple[str, str, str | None]]:
        """`(option, value, nearest)` for each `--address` and `--link` value that named
        no link of the connections `--connection` chooses (a typo, most likely); `nearest`
        is the closest address or link name there is."""
        if not self.by_link:
            return []
        names: set[str] = set()
        addresses: set[str] = set()
        for c in conns:
            if self.conn(c):
                for name, addrs in _conn_links(c):
                    names.add(name)
                    addresses.update(a for a in addrs if a)
        out: list[tuple[str, str, str | None]] = []
        for option, patterns, known in (("--address", self.addresses, addresses),
                                        ("--link", self.links, names)):
            for p in patterns:
                if not any(fnmatchcase(k, p) for k in known):
                    near = get_close_matches(p, sorted(known), n=1)
                    out.append((option, p, near[0] if near else None))
        return out

    def link_stats(self, ls: LinkStats | None) -> bool:
        if ls is None:
            return not self.by_link
        if self.links and not any(fnmatchcase(ls.name, p) for p in self.links):
            return False
        if self.addresses:
            addrs = [a for a in link_addresses(ls.link) if a]
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
        if self.selector is not None and not self._transfer_selected(rec):
            return False
        if self.by_link:
            links = frame_links(rec)
            if not links:
                return False
            return any(self.link_stats(rec.conn.link_for(lk)) for lk in links) if (
                rec.protocol == "amqp-1.0") else any(
                self.link_name(str(lk), (str(lk),)) for lk in links)
        return True

    def _transfer_selected(self, rec: FrameRecord) -> bool:
        """Whether `rec` is a transfer of a message the selector selects: the message's
        first transfer is judged by the sections before its body (header to
        application-properties, which come first); the transfers that carry the rest of
        it go with that verdict. A first transfer that ends before the body begins cannot
        be judged (a section the selector reads may follow): not selected."""
        from amqpcli.codec.composites import Transfer
        from amqpcli.render.redact import handle_key

        body = getattr(rec.item, "body", None)
        if rec.protocol != AMQP10 or not isinstance(body, Transfer):
            return False
        if any(getattr(lk, "coordinator", False) for lk in frame_links(rec)):
            return False  # a declare or discharge: a request to the coordinator, no message
        # (a damaged frame's handle may be any value, a list too: `handle_key`)
        key = (rec.conn.index, rec.side, handle_key(body.handle))
        verdict = self._judged.pop(key, None)
        if verdict is None:
            verdict = self._selects(rec.item.payload, partial=bool(body.more))
        if body.more and not body.aborted:
            self._judged[key] = verdict
        return verdict

    def _selects(self, payload: bytes | None, partial: bool = False) -> bool:
        """Whether the message in `payload` is selected: read up to its body (a body that
        does not decode is no matter), or whole when it has none; `partial`: the first
        transfer of a message that goes on."""
        from amqpcli.codec.message import Message
        from amqpcli.codec.types import DecodeError
        from amqpcli.selector import message_fields

        assert self.selector is not None
        if not payload:
            return False
        try:
            msg = Message.decode(payload, head=True)
        except DecodeError:
            if partial:
                return False
            try:
                msg = Message.decode(payload)
            except DecodeError:  # sections that do not decode: nothing to select by
                return False
        try:
            return self.selector.matches(message_fields(msg))
        except DecodeError:  # a section it reads does not decode (read on first use)
            return False

    def delivery(self, rec: DeliveryRecord) -> bool:
        if not self.time(rec.first_time) or not self.conn(rec.conn):
            return False
        if self.states and rec.outcome.lower() not in self.states:
            return False
        if self.selector is not None and (rec.protocol != AMQP10 or rec.coordinator is not None
                                          or not self._selects(rec.payload)):
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
        """Notices (gaps, encrypted flows, link notes) pass every criterion but time and
        connection, and a link note (a refused link, termini granted differently) with
        `--address` or `--link` the link it is about: that link's."""
        if not self.time(rec.time) or (rec.conn is not None and not self.conn(rec.conn)):
            return False
        if self.by_link:
            about = notice_links(rec)
            if about:
                return any(self.link_stats(ls) for ls in about)
        return True


def notice_links(rec: Notice) -> list[LinkStats]:
    """The links a link note is about (AMQP 1.0): those of its connection whose notes
    hold its text (the dissector notes it on the link as it makes the notice); none for
    other notices."""
    if rec.kind != "link" or rec.conn is None:
        return []
    return [ls for ls in rec.conn.links if rec.text in ls.notes]


_Addr = ipaddress.IPv4Address | ipaddress.IPv6Address
_CONN_FORMS = ("a label (c2), a number, an IP address, ip:port, [ipv6]:port, :port, a "
               "network (10.1.0.0/24) or a trace log's id ([C3], 0x5581c0a3e2a0)")


def _conn_values(values: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        names = [x.strip() for x in v.split(",") if x.strip()]
        if not names:  # `-C ''` would otherwise quietly let everything through
            raise UserError(f"--connection: a connection is needed (got {v!r}; "
                            f"{_CONN_FORMS})", Exit.USAGE)
        out.extend(names)
    return tuple(out)


def _ip(text: str) -> _Addr | None:
    """An IP address, an IPv4-mapped IPv6 address as its IPv4 one; None if `text` is not
    one."""
    try:
        a = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
        return a.ipv4_mapped
    return a


def _port(text: str, x: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise UserError(f"--connection {x}: not a TCP port: {text!r}", Exit.USAGE)
    return int(text)


def _endpoint(ep: str) -> tuple[_Addr | None, int | None]:
    """(address, port) of an endpoint as `Conn` gives it: "10.0.0.1:40000",
    "[::1]:5672", "?"."""
    host, sep, port = ep.rpartition(":")
    if not sep:
        return None, None
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return _ip(host), int(port) if port.isdigit() else None


def _log_id(x: str) -> str | None:
    """The connection id of a frame-trace log that `x` names, as the log's lines write it:
    in brackets (a router's `[C3]`, `[2]`, proton's `[0x5581c0a3e2a0]`), or proton's
    pointer bare (`0x5581c0a3e2a0`); None for any other form."""
    if x.startswith("[") and x.endswith("]") and len(x) > 2 and _ip(x[1:-1]) is None:
        return x[1:-1]
    if re.fullmatch(r"0x[0-9a-fA-F]+", x):
        return x
    return None


def _conn_matcher(x: str) -> Callable[[Conn], bool]:
    """A test of whether a `Conn` is the one `x` (a `--connection` value) names: by label
    or number, or by an endpoint's address, address and port, port or network, exactly
    (`10.1.0.1` is not `10.1.0.10`, `:4000` not `:40000`). A usage error for a value of
    none of these forms."""
    low = x.lower()
    if re.fullmatch(r"c\d+", low):
        return lambda c: c.label.lower() == low
    log_id = _log_id(x)
    if log_id is not None:  # a frame-trace log's own id: its endpoints are ID:0 and ID:1
        return lambda c: c.source == "log" and c.client.rpartition(":")[0] == log_id
    if x.isdigit():  # a connection's number or a port (`-C 46610`)
        n = int(x)
        return lambda c: c.index == n or n in (_endpoint(c.client)[1],
                                               _endpoint(c.server)[1])
    host: str | None = None
    port: int | None = None
    if _ip(x) is not None:  # 10.0.0.1, ::1 (an IPv6 address with a port needs [])
        host = x
    elif x.startswith(":") and "/" not in x:  # (`::/0`, `::1/128` are networks)
        port = _port(x[1:], x)
    elif x.startswith("["):  # [ipv6] or [ipv6]:port
        inner, close, rest = x[1:].partition("]")
        if not close or (rest and not rest.startswith(":")):
            raise UserError(f"--connection: not a connection: {x!r} ({_CONN_FORMS})",
                            Exit.USAGE)
        host = inner
        if rest:
            port = _port(rest[1:], x)
    elif "/" in x:
        try:
            net = ipaddress.ip_network(x, strict=False)
        except ValueError:
            raise UserError(f"--connection: not a network: {x!r} ({_CONN_FORMS})",
                            Exit.USAGE) from None

        def in_net(c: Conn) -> bool:
            addrs = (_endpoint(c.client)[0], _endpoint(c.server)[0])
            return any(a is not None and a.version == net.version and a in net
                       for a in addrs)

        return in_net
    elif x.count(":") == 1:  # 10.0.0.1:40000
        host, _, p = x.partition(":")
        port = _port(p, x)
    addr = _ip(host) if host is not None else None
    if (host is not None and addr is None) or (host is None and port is None):
        raise UserError(f"--connection: not a connection: {x!r} ({_CONN_FORMS})",
                        Exit.USAGE)

    def at(c: Conn) -> bool:
        for a, p in (_endpoint(c.client), _endpoint(c.server)):
            if (addr is None or a == addr) and (port is None or p == port):
                return True
        return False

    return at


def _address(terminus: Any) -> str | None:
    a = getattr(terminus, "address", None)
    return None if a is None else str(a)


def link_addresses(link: Any) -> tuple[str | None, ...]:
    """The addresses an AMQP 1.0 link's termini name, as `--address` matches them: its
    source's and target's in the attach that answered it and in the one that asked for
    it. A link refused (answered with a null terminus, then detached with an error) is a
    link to the address it asked for: its frames, its line in `--links` and the summary
    and its connection go with that address from the first attach to the last detach."""
    out = (_address(link.source), _address(link.target))  # (the answer's, else the ask's)
    asked = link.requested
    if asked is None or link.granted is None:
        return out
    return (*out, _address(asked.source), _address(asked.target))


def _conn_links(c: Conn) -> list[tuple[str, tuple[str | None, ...]]]:
    """`(name, addresses)` of each link of a connection, as the filters match them:
    1.0 links by name and by their source's and target's address; 0-10 destinations
    (of subscriptions and messages), which are name and address both."""
    if c.protocol == AMQP010:
        model = c.observer.model
        dests = dict.fromkeys([s.destination for s in model.subscriptions]
                              + [m.destination or "" for m in model.messages])
        return [(d, (d,)) for d in dests]
    return [(ls.name, link_addresses(ls.link)) for ls in c.links]


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
        from amqpcli.amqp010.session import MessageEvent

        for ev in rec.events:
            if ev.__class__ is not MessageEvent:  # (a Violation's `message` is its text)
                continue
            m = ev.message
            if m.destination and m.destination not in out:
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
