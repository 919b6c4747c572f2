"""Engine model → view rows. The one module of the TUI that reads the engine's objects
(with `adapter010`, its half for AMQP 0-10 connections, which have no engine model).

Called under the source's lock at the refresh rate, so every walk here is bounded: the
unsettled table takes the oldest `MAX_ROWS` deliveries, stall checks look at most
`SCAN_LIMIT` deliveries per link.

Keys are built from what identifies a thing on the wire (connection key, session channels,
link name and sending side, delivery tag), never from object identity, so a selection
survives a replay restoring a checkpoint (which copies every object).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
from amqpcli.dissect.records import cut_sizes
from amqpcli.engine.delivery import Phase, state_name
from amqpcli.engine.shelf import step_connections
from amqpcli.render.frameline import filter_texts, item_line
from amqpcli.render.message import message_tree
from amqpcli.render.text import format_value, printable, rich_tree
from amqpcli.render.traffic import UNKNOWN_TIME
from amqpcli.render.types import (
    capabilities_text,
    mechanisms_text,
    plain_or_quoted,
    sasl_code_name,
)
from amqpcli.tui.store import FrameRecord
from amqpcli.tui.view import (
    RAW_SHOWN,
    ConnDetail,
    ConnRow,
    DeliveryDetail,
    LinkDetail,
    LinkRow,
    SessionRow,
    Snapshot,
    TerminusRow,
    TimelineRow,
    UnsettledRow,
    shown,
)
from amqpcli.tui.watch import CaptureNotice, ConnWatch010, EndOfStream, Recent

MAX_ROWS = 200
SCAN_LIMIT = 2000
SEP = "|"

_DIRECTION = {"client": "->", "server": "<-"}


def frame_line(rec: FrameRecord, untimed: Collection[str] = ()) -> Text:
    """The frame log's line: the render package's one-line form, coloured by direction.
    `untimed`: the keys of the connections whose times are unknown (`-` for the time)."""
    known = rec.conn not in untimed
    if isinstance(rec.item, EndOfStream):
        arrow = _DIRECTION.get(rec.side, "")
        when = _clock(rec.time) if known else UNKNOWN_TIME
        return Text(f"{when} {rec.conn} {arrow} stream ended ({rec.item.how})",
                    style="dim", no_wrap=True)
    if isinstance(rec.item, CaptureNotice):  # pcap-dump's notice line
        when = _clock(rec.time) if known else UNKNOWN_TIME
        side = f"{rec.side}: " if rec.side else ""
        return Text(f"{when} {rec.conn} !! {side}{rec.item.text}", style="bold yellow",
                    no_wrap=True)
    if not isinstance(rec.item, (Frame, ProtocolHeader, FrameError)):
        from amqpcli.tui import adapter010

        return adapter010.frame_line(rec)  # an AMQP 0-10 item
    line = item_line(rec.item, time=rec.time if known else UNKNOWN_TIME, connection=rec.conn,
                     direction=_DIRECTION.get(rec.side))
    style = "cyan" if rec.side == "client" else "magenta"
    if type(rec.item).__name__ == "FrameError":
        style = "bold red"
    return Text(line, style=style, no_wrap=True)


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%H:%M:%S.%f")


def known_time(cw: Any, t: float | None) -> float | None:
    """A time (or a span) of connection `cw`, or None (unknown) where its input had no
    times (`ConnWatch.timed`): what the views show as `-`."""
    return t if cw.timed else None


# -- rates ------------------------------------------------------------------------------------


class RateMeter:
    """Deliveries per second per link, over windows of at least `window` seconds, sampled
    as the views refresh: for live sources, whose clock is the wall clock."""

    def __init__(self, window: float = 1.0) -> None:
        self.window = window
        self._mark: dict[str, tuple[float, int]] = {}
        self._rate: dict[str, float] = {}

    def keep_only(self, keys: set[str]) -> None:
        """Forget the links not in `keys` (gone from the tree: a live source let their
        connection go), so the marks follow what is shown."""
        if len(self._mark) > len(keys):
            for k in [k for k in self._mark if k not in keys]:
                del self._mark[k]
                self._rate.pop(k, None)

    def rate(self, key: str, count: int, now: float, recent: Recent | None = None) -> float:
        """The rate of link `key`, which has had `count` deliveries at `now`; `recent`:
        the times they began (see `CaptureRates`)."""
        mark = self._mark.get(key)
        if mark is None or now < mark[0] or count < mark[1]:  # new, or a replay went back
            self._mark[key] = (now, count)
            self._rate[key] = 0.0
            return 0.0
        t0, c0 = mark
        if now - t0 >= self.window:
            self._rate[key] = (count - c0) / (now - t0)
            self._mark[key] = (now, count)
        return self._rate.get(key, 0.0)


class CaptureRates(RateMeter):
    """A replay's rates: the deliveries that began in the second of capture time up to
    `now` (`watch.Recent`), whatever the views sampled; the same at a frame however the
    replay got there, 0 once a link went quiet."""

    def rate(self, key: str, count: int, now: float, recent: Recent | None = None) -> float:
        return 0.0 if recent is None else recent.rate(now)


# -- keys -------------------------------------------------------------------------------------


def session_key(conn_key: str, session: Any, sides: tuple[str, str]) -> str:
    ch = [session.channel.get(s) for s in sides]
    return f"{conn_key}{SEP}s{ch[0] if ch[0] is not None else '-'}.{ch[1] if ch[1] is not None else '-'}"


def link_key(skey: str, link: Any) -> str:
    return f"{skey}{SEP}{link.sender}{SEP}{link.name}"


def delivery_key(lkey: str, d: Any) -> str:
    return f"{lkey}{SEP}{bytes(d.tag).hex()}"


# -- tree -------------------------------------------------------------------------------------


def _ended(cw: Any) -> str:
    """How the connection's transport ended ("" while it is up, or when a capture's end
    alone ended it): the source's word for it (a proxied connection whose TCP closed:
    "closed"), and "lost" where the engine saw a stream end (FIN, reset) without the
    close exchange, the source having no word for it or calling it closed."""
    ended = getattr(cw, "ended", "")
    if (not ended or ended == "closed") and cw.connection.lost:
        return "lost"
    return ended


def _lost(cw: Any) -> str:
    """How the connection's transport ended under it ("" if it did not, or closed)."""
    ended = _ended(cw)
    return ended if ended and ended != "closed" else ""


def _stream_ends_text(conn: Any) -> str:
    """How each side's stream ended, as pcap-dump's `tcp:` line says it."""
    return ", ".join(f"{side} {conn.stream_ends[side] or 'ended'}" for side in conn.sides
                     if side in conn.stream_ends and conn.stream_ends[side] != "end")


def _link_warnings(link: Any, violations: int, lost: str = "") -> list[str]:
    w: list[str] = []
    if lost and link.state not in ("detached", "refused"):
        w.append(f"connection {lost}")
    if violations:
        w.append(f"{violations} violation(s)")
    if link.state == "attached" and link.link_credit <= 0 and not link.coordinator:
        w.append("no credit")
    if link.drain:
        w.append("drain pending")
    half = 0
    for i, d in enumerate(link.live.values()):
        if i >= SCAN_LIMIT:
            break
        if d.phase == Phase.WAIT_RECEIVER or (d.sender_settled != d.receiver_settled):
            half += 1
    if half:
        w.append(f"{half} settled by one side only")
    if link.state in ("refused",):
        w.append("refused")
    return w


def _gap_text(cw: Any) -> str:
    lost = sum(cw.gap_bytes.values())
    return f"the capture lost {lost} bytes ({cw.gaps} gap{'s' if cw.gaps > 1 else ''})"


def conn_state(cw: Any) -> str:
    """The connection's state as the tree and the connection pane say it: the engine's,
    a login the server refused (no AMQP open can follow), how the transport ended."""
    conn = cw.connection
    state = conn.state
    if conn.sasl_code and state == "opening":
        state = f"login refused ({sasl_code_name(conn.sasl_code) or conn.sasl_code})"
    # the transport's end, unless it says the same again (a proxied connection: "closed")
    ended = _ended(cw)
    return f"{state}, {ended}" if ended and ended != state else state


def session_state(s: Any) -> str:
    """The session's state; ended by its connection's close (no end of its own) says so."""
    state = s.state
    if state in ("ended", "ending") and not s.end:
        return "closed with the connection"
    return state


def link_state(link: Any) -> str:
    """The link's state; detached by its session's end or its connection's close (no
    detach of its own) says so, by pcap-dump's rule for it (`--links`: `state=closed-with-connection`)."""
    how = link.detached_with
    if how is not None:
        return "ended with its session" if how == "end" else "closed with the connection"
    return link.state


def _conn_label(cw: Any) -> str:
    return f"{cw.key} [{conn_state(cw)}] {cw.label}"


def _iter_links(cw: Any) -> list[tuple[str, Any, list[tuple[str, Any]]]]:
    """Sessions and their links in the order they began, ended ones included (the watch
    keeps them; the engine has dropped them from its maps)."""
    conn = cw.connection
    sessions = list(cw.sessions)
    for s in conn.sessions:  # a watch that started late may have missed the begin
        if not any(x is s for x in sessions):
            sessions.append(s)
    links = list(cw.links)
    for s in conn.sessions:
        for lk in s.links.values():
            if not any(x is lk for x in links):
                links.append(lk)
    for lk in links:  # a session set up before a capture began: it has no begin to show
        if not any(x is lk.session for x in sessions):
            sessions.append(lk.session)
    out = []
    for s in sessions:
        sk = session_key(cw.key, s, conn.sides)
        out.append((sk, s, [(link_key(sk, lk), lk) for lk in links if lk.session is s]))
    return out


def tree_rows(conns: list[tuple[str, Any]], now: float, rates: RateMeter, ours: bool) -> list[ConnRow]:
    rows: list[ConnRow] = []
    for key, cw in conns:
        if isinstance(cw, ConnWatch010):
            from amqpcli.tui import adapter010

            rows.append(adapter010.conn_row(cw, now, rates))
            continue
        conn = cw.connection
        by_link: dict[int, int] = {}
        for v in cw.violations:
            if v.link is not None:
                by_link[id(v.link)] = by_link.get(id(v.link), 0) + 1
        crow = ConnRow(key, _conn_label(cw))
        lost = _lost(cw)
        crow.violations = [f"{v.kind}: {v.detail}" for v in cw.violations]
        if cw.gaps:
            crow.warnings.append(_gap_text(cw))
        if conn.lost:
            crow.warnings.append("the transport ended without a close: "
                                 + _stream_ends_text(conn))
        for sk, s, links in _iter_links(cw):
            a, b = (s.channel.get(x) for x in conn.sides)
            state = session_state(s)
            if lost and s.state != "ended":
                state = f"{state}, connection {lost}"
            srow = SessionRow(sk, f"session ch {a if a is not None else '-'}/{b if b is not None else '-'} [{state}]")
            for lk, link in links:
                role = "sender" if link.sender == conn.sides[0] else "receiver"
                lrow = LinkRow(
                    key=lk,
                    name=str(link.name),
                    role=role,
                    handle="/".join(str(link.handle.get(x, "-")) for x in conn.sides),
                    deliveries=link.deliveries,
                    unsettled=len(link.live),
                    credit=link.link_credit,
                    rate=known_time(cw, rates.rate(lk, link.deliveries, now,
                                                   cw.recent.get(link))),
                    warnings=_link_warnings(link, by_link.get(id(link), 0), lost),
                    ours=ours,
                )
                srow.links.append(lrow)
                if lrow.warnings:
                    srow.warnings.append(f"{link.name}: {', '.join(lrow.warnings)}")
            crow.sessions.append(srow)
            crow.warnings.extend(srow.warnings)
        rows.append(crow)
    rates.keep_only({lk.key for c in rows for s in c.sessions for lk in s.links})
    return rows


# -- link detail ------------------------------------------------------------------------------

_TERMINUS_FIELDS = (
    "address", "durable", "expiry_policy", "timeout", "dynamic", "dynamic_node_properties",
    "distribution_mode", "filter", "default_outcome", "outcomes", "capabilities",
)


def _fmt(v: Any) -> str:
    """A value as the frame lines show it (a string quoted, its control characters
    escaped): `Shown`, never escaped again."""
    if v is None:
        return ""
    return shown(format_value(v))


def _field_text(name: str, v: Any) -> str:
    """A terminus's or an open's field; capabilities as the frame lines draw them
    (`"a,b",queue`: a name holding a comma is quoted)."""
    if v is not None and name.endswith("capabilities"):
        return shown(capabilities_text(v))
    if v is not None and name == "filter":  # `jms-selector=selector("n > 3")`, whole
        return shown(" ".join(t.removeprefix("filter.") for t in filter_texts(v, None)))
    return _fmt(v)


def terminus_rows(requested: Any, granted: Any) -> list[TerminusRow]:
    if requested is None and granted is None:
        return []
    if type(requested).__name__ != type(granted).__name__ and requested is not None and granted is not None:
        return [TerminusRow("type", type(requested).__name__, type(granted).__name__)]
    rows = []
    for f in _TERMINUS_FIELDS:
        a = getattr(requested, f, None) if requested is not None else None
        b = getattr(granted, f, None) if granted is not None else None
        if a is None and b is None:
            continue
        rows.append(TerminusRow(f.replace("_", "-"), _field_text(f, a),
                                _field_text(f, b) if granted is not None else "…"))
    return rows


def find_link(conns: list[tuple[str, Any]], key: str) -> tuple[Any, Any, str] | None:
    conn_key = key.split(SEP, 1)[0]
    for ck, cw in conns:
        if ck != conn_key or isinstance(cw, ConnWatch010):
            continue
        for _, _, links in _iter_links(cw):
            for lk, link in links:
                if lk == key:
                    return cw, link, lk
    return None


def _age(d: Any, now: float) -> float:
    return max(0.0, now - d.first_time) if d.first_time is not None else 0.0


def _receiver_said(link: Any) -> str:
    """The delivery-count and credit of the receiver's last flow; `-` before its first."""
    if link.rcv_link_credit is None:
        return "-"
    return f"dc {link.rcv_delivery_count} credit {link.rcv_link_credit}"


def link_detail(cw: Any, link: Any, lk: str, now: float, ours: bool) -> LinkDetail:
    conn = cw.connection
    req, got = link.requested, link.granted
    title = (
        f"{link.name}   {link.sender} → {link.receiver}   [{link_state(link)}]"
        f"   initiated by {link.initiator}"
    )
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(link.outcomes.items())) or "-"
    modes = {0: "unsettled", 1: "settled", 2: "mixed"}
    rmodes = {0: "first", 1: "second"}
    flow = [
        ("credit", str(link.link_credit)),
        ("delivery-count", str(link.delivery_count)),
        ("available", "-" if link.available is None else str(link.available)),
        ("drain", "yes" if link.drain else "no"),
        ("receiver said", _receiver_said(link)),
        ("snd-settle", modes.get(link.snd_settle_mode, str(link.snd_settle_mode))),
        ("rcv-settle", rmodes.get(link.rcv_settle_mode, str(link.rcv_settle_mode))),
        ("deliveries", str(link.deliveries)),
        ("settled", str(link.settled_count)),
        ("outcomes", outcomes),
    ]
    rows: list[UnsettledRow] = []
    tags_seen: set[bytes] = set()
    for d in list(link.live.values())[:MAX_ROWS]:
        tags_seen.add(bytes(d.tag))
        rows.append(
            UnsettledRow(
                key=delivery_key(lk, d),
                delivery_id="-" if d.delivery_id is None else str(d.delivery_id),
                tag=_fmt(bytes(d.tag)),
                age=known_time(cw, _age(d, now)),
                sender_state=state_name(d.sender_state) or "-",
                receiver_state=state_name(d.receiver_state) or "-",
                sender_settled=d.sender_settled,
                receiver_settled=d.receiver_settled,
            )
        )
    # Tags one side still lists (e.g. from a resumed link's attach) without a live delivery.
    for side in (link.sender, link.receiver):
        for tag, state in list(link.unsettled.get(side, {}).items()):
            if len(rows) >= MAX_ROWS:
                break
            if bytes(tag) in tags_seen:
                continue
            tags_seen.add(bytes(tag))
            st = state_name(state) or "-"
            rows.append(
                UnsettledRow(
                    key=f"{lk}{SEP}{bytes(tag).hex()}",
                    delivery_id="-",
                    tag=_fmt(bytes(tag)),
                    age=known_time(cw, 0.0),
                    sender_state=st if side == link.sender else "-",
                    receiver_state=st if side == link.receiver else "-",
                    sender_settled=False,
                    receiver_settled=False,
                )
            )
    total = max(len(link.live), len(rows))
    violations = sum(1 for v in cw.violations if v.link is link)
    return LinkDetail(
        key=lk,
        title=title,
        source=terminus_rows(getattr(req, "source", None), getattr(got, "source", None)),
        target=terminus_rows(getattr(req, "target", None), getattr(got, "target", None)),
        flow=flow,
        unsettled=rows,
        unsettled_total=total,
        warnings=_link_warnings(link, violations, _lost(cw)),
        ours=ours,
        role=link.role_of(conn.local) if getattr(conn, "local", None) else "",
    )


# -- delivery detail --------------------------------------------------------------------------


def find_delivery(cw: Any, link: Any, key: str) -> Any:
    tag_hex = key.rsplit(SEP, 1)[-1]
    for d in link.live.values():
        if bytes(d.tag).hex() == tag_hex:
            return d
    for d in reversed(cw.settled):
        same = d.link is link or (d.link.name == link.name and d.link.sender == link.sender)
        if same and bytes(d.tag).hex() == tag_hex:
            return d
    return None


def _entry_detail(e: Any, conn_key: str, said: int | None = None) -> str:
    """A timeline step's detail (`said`: the size a frame-trace log's line gives a
    transfer whose payload it cut short, `e.size` being what it shows)."""
    parts = []
    st = state_name(e.state)
    if st:
        parts.append(st)
    if e.settled:
        parts.append("settled")
    if e.more:
        parts.append("more")
    if said is not None:
        parts.append(f"{said} bytes (log shows {e.size})")
    elif e.size:
        parts.append(f"{e.size} bytes")
    if e.detail:
        parts.append(e.detail)
    # the connection's own frame number (pcap-dump's JSON `frame`): `g c1:12` goes there
    parts.append(f"{conn_key} frame {e.frame_no}")
    return "  ".join(parts)


def message_view(payload: bytes) -> RenderableType:
    """Every section of the message, as the render package's message tree."""
    from amqpcli.codec.message import Message

    try:
        return rich_tree(message_tree(Message.decode(payload)))
    except Exception as e:  # noqa: BLE001 - a message that does not decode is shown as such
        return Text(f"message does not decode: {e} (x shows the bytes)", style="bold red")


# The message view of the delivery shown last: (key, size, phase) and its view. The view
# is asked for at every refresh while a delivery is open; a large message is decoded and
# drawn once, not ten times a second (with its payload joined each time).
_shown_message: list[Any] = [None, None]


def _message_of(d: Any, key: str) -> Any:
    """The message view of `d`: none without bytes, a line while they are still coming
    (what came so far does not decode), else its sections, drawn once per change."""
    if not d.size:
        return None
    if d.phase in (Phase.QUEUED, Phase.TRANSFERRING):
        return Text(f"(the message is arriving: {d.size} bytes so far; x shows them)",
                    style="dim")
    mark = (key, d.size, d.phase, id(d))
    if _shown_message[0] != mark:
        _shown_message[:] = [mark, message_view(d.payload)]
    return _shown_message[1]


def delivery_detail(cw: Any, d: Any, key: str) -> DeliveryDetail:
    rows: list[TimelineRow] = []
    prev = d.first_time
    # each step's connection (a delivery resumed here from another has its steps too)
    carried_over = getattr(d, "origin", None) is not None
    where = (step_connections(d.timeline, cw.key) if carried_over
             else [cw.key] * len(d.timeline))
    # a frame-trace log's: the transfers whose payloads it cut short, the size it gives
    # each (as pcap-dump's `size_in_log`)
    cuts = (cut_sizes(d.timeline, cw.key, carried_over, cw.log_cut) if cw.log_cut
            else [None] * len(d.timeline))
    full, was_cut = 0, False
    for e, conn_key, said in zip(d.timeline, where, cuts, strict=True):
        delta = 0.0 if prev is None else max(0.0, e.time - prev)
        prev = e.time
        if e.kind == "transfer":
            full += e.size if said is None else said
            was_cut = was_cut or said is not None
        # no side: a step the connection's end took (an abandon by its close)
        rows.append(TimelineRow(known_time(cw, e.time), known_time(cw, delta),
                                e.side or "-", e.kind, _entry_detail(e, conn_key, said)))
    if was_cut:
        # not a message that does not decode: one the log did not show whole
        message: Any = Text(f"the log cut this message short: it shows {d.size} of its "
                            f"{full} bytes (x shows them)", style="dim")
    else:
        message = _message_of(d, key)
    lat = d.latency
    summary = f"[{getattr(d.phase, 'value', d.phase)}] outcome {d.outcome}"
    if lat is not None:
        after = f"{lat * 1000:.1f} ms" if cw.timed else UNKNOWN_TIME
        summary += f"  settled after {after} by {d.settled_by or '-'}"
    return DeliveryDetail(
        key=key,
        title=shown(f"delivery id {d.delivery_id} tag {_fmt(bytes(d.tag))} on {printable(d.link.name)}"),
        timeline=rows,
        message=message,
        raw=d.head(RAW_SHOWN),
        summary=summary,
        size=d.size,
    )


# -- the whole snapshot -----------------------------------------------------------------------


def _open_field(o: Any, name: str) -> str:
    if o is None:
        return ""
    return _field_text(name, getattr(o, name, None))


def conn_detail(cw: Any, max_violations: int = 50) -> ConnDetail:
    if isinstance(cw, ConnWatch010):
        from amqpcli.tui import adapter010

        return adapter010.conn_detail(cw, max_violations)
    conn = cw.connection
    a, b = conn.sides
    oa, ob = conn.open.get(a), conn.open.get(b)
    rows: list[tuple[str, str, str]] = [
        ("state", conn.side_state.get(a, ""), conn.side_state.get(b, "")),
        ("frames", str(conn.frames.get(a, 0)), str(conn.frames.get(b, 0))),
    ]
    for name in ("container_id", "hostname", "max_frame_size", "channel_max", "idle_time_out",
                 "offered_capabilities", "desired_capabilities", "properties"):
        x, y = _open_field(oa, name), _open_field(ob, name)
        if x or y:
            rows.append((name.replace("_", "-"), x, y))
    if conn.sasl_mechanism or conn.sasl_mechanisms:
        offered = mechanisms_text(conn.sasl_mechanisms, ", ")
        chose = plain_or_quoted(conn.sasl_mechanism or "-")
        rows.append(("sasl", shown(f"chose {chose}"), shown(f"offered {offered}")))
        if conn.sasl_code is not None:
            outcome = sasl_code_name(conn.sasl_code) or str(conn.sasl_code)
            rows.append(("sasl outcome", "", outcome if conn.sasl_code == 0
                         else f"{outcome}: login refused"))
    for side, col in ((a, 1), (b, 2)):
        cl = conn.close.get(side)
        if cl is not None and cl.error is not None:
            err = cl.error
            text = f"{getattr(err, 'condition', '')}: {getattr(err, 'description', '') or ''}".strip(": ")
            rows.append(("close error", text if col == 1 else "", text if col == 2 else ""))
    ends = conn.stream_ends
    if any(how != "end" for how in ends.values()):
        # how each stream ended (pcap-dump's `tcp:`), and whether its side had closed
        how = ["" if ends.get(x, "end") == "end" else
               f"{ends[x] or 'ended'}{'' if x in conn.close else ', no close'}" for x in (a, b)]
        rows.append(("stream ended", how[0], how[1]))
    if cw.gaps:
        lost = [f"{cw.gap_bytes[s]} bytes" if cw.gap_bytes.get(s) else "" for s in (a, b)]
        rows.append(("lost in capture", lost[0], lost[1]))

    def line(v: Any) -> str:
        # the detail quotes names as pcap-dump's violation lines do (escaped already)
        return shown(f"{v.side}: {v.kind}: {v.detail} ({cw.key} frame {v.frame_no})")

    violations = [line(v) for v in list(cw.violations)[-max_violations:]]
    notices = [line(v) for v in list(cw.after_gap)[-max_violations:]]
    return ConnDetail(cw.key, f"{cw.key} {cw.label}   [{conn_state(cw)}]", rows, violations,
                      cw.violations_total, notices, cw.after_gap_total)


def snapshot(
    conns: list[tuple[str, Any]],
    link: str | None,
    delivery: str | None,
    now: float,
    rates: RateMeter,
    ours: bool = False,
    conn: str | None = None,
) -> Snapshot:
    tree = tree_rows(conns, now, rates, ours)
    ld = dd = None
    cd = None
    if link is None and conn is not None:
        for ck, cw in conns:
            if ck == conn:
                cd = conn_detail(cw)
    by_key = dict(conns)
    owner = by_key.get(link.split(SEP, 1)[0]) if link is not None else None
    if isinstance(owner, ConnWatch010):
        from amqpcli.tui import adapter010

        ld = adapter010.link_detail(owner, link, now)  # type: ignore[arg-type]
    elif link is not None:
        found = find_link(conns, link)
        if found is not None:
            cw, lnk, lk = found
            ld = link_detail(cw, lnk, lk, now, ours)
    if delivery is not None:
        # the delivery opened, whichever link is selected: its key begins with its link's
        dlink = delivery.rsplit(SEP, 1)[0]
        owner = by_key.get(dlink.split(SEP, 1)[0])
        if isinstance(owner, ConnWatch010):
            from amqpcli.tui import adapter010

            dd = adapter010.delivery_detail(owner, delivery)
        else:
            found = find_link(conns, dlink)
            if found is not None:
                cw, lnk, lk = found
                d = find_delivery(cw, lnk, delivery)
                if d is not None:
                    dd = delivery_detail(cw, d, delivery)
    return Snapshot(tree, ld, dd, conn=cd)
