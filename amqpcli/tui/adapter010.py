"""AMQP 0-10 model → view rows: the 0-10 half of `amqpcli.tui.adapter`.

A 0-10 connection (`ConnWatch010`) has sessions and messages but no links, termini or
settlement as AMQP 1.0 has them. What the views show of it, in the same rows:

* the tree: the connection with its protocol, its sessions (name, channel, attached or
  detached), and under each the destinations messages were sent to, one row per sending
  side and destination (`→` sent by the connecting side, `←` by the other; a
  subscription's destination shows from its message.subscribe on) with `d:` transfers,
  `u:` unsettled (neither completed nor given an outcome, as `pcap-dump` says) and `c:`
  the subscription's message credit;
* the link tab on a destination: its counts by state and the subscription (queue, flow
  mode, credit, accept and acquire modes), no termini, and its unsettled messages (id:
  the transfer's command id; the receiver's column: the last thing its receiver did);
* the delivery tab: a message's timeline (transfer, completed, accepted, …) and its
  header structs and body;
* the connection tab: the last connection.* control each side sent, frames per side,
  sessions, messages, violations.

Keys follow the 1.0 adapter's (`SEP` between parts): ``c1|s0`` is the connection's first
session, ``c1|s0|client|echo`` what the client sent to destination echo on it, and
``c1|s0|client|echo|3`` its transfer with command id 3. They hold across a replay's
checkpoints (whose models are new objects), as in 1.0.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from amqpcli.tui.adapter import MAX_ROWS, SEP
from amqpcli.tui.store import FrameRecord
from amqpcli.tui.view import (
    RAW_SHOWN,
    ConnDetail,
    ConnRow,
    DeliveryDetail,
    LinkDetail,
    LinkRow,
    SessionRow,
    Shown,
    TimelineRow,
    UnsettledRow,
    shown,
)
from amqpcli.tui.watch import ConnWatch010, Destination


def frame_line(rec: FrameRecord) -> Text:
    """A 0-10 item's line in the frame log: the line `pcap-dump` prints for it."""
    from amqpcli.amqp010 import StreamError
    from amqpcli.render.traffic import head, line_010

    line = f"{head(rec.time, rec.conn, rec.side)} {line_010(rec.item)}"
    style = "cyan" if rec.side == "client" else "magenta"
    if isinstance(rec.item, StreamError):
        style = "bold red"
    return Text(line, style=style, no_wrap=True)


def _other(side: str) -> str:
    return "server" if side == "client" else "client"


# -- tree -------------------------------------------------------------------------------------


def session_state(s: Any, cw: ConnWatch010) -> str:
    if s.detached_at is not None:
        return "detached"
    if cw.state() == "closed":  # a connection's close ends its sessions
        return "closed with the connection"
    return "attached" if s.attached_at is not None else "attaching"


def session_key(cw: ConnWatch010, index: int) -> str:
    return f"{cw.key}{SEP}s{index}"


def destination_key(skey: str, d: Destination) -> str:
    return f"{skey}{SEP}{d.sender}{SEP}{d.name}"


def _subscription(cw: ConnWatch010, d: Destination) -> Any:
    """The subscription whose messages `d` counts: the subscriber's peer sends them."""
    sub = cw.model.sessions[d.session].subscriptions.get(d.name)
    if sub is None or (sub.timeline and sub.timeline[0].side == d.sender):
        return None
    return sub


def _credit(sub: Any) -> int | None:
    from amqpcli.amqp010.session import UNLIMITED

    if sub is None or sub.credit["message"] == UNLIMITED:
        return None
    return int(sub.credit["message"])


def conn_row(cw: ConnWatch010, now: float, rates: Any) -> ConnRow:
    row = ConnRow(cw.key, f"{cw.key} [{cw.state()}] {cw.protocol} {cw.label}")
    row.violations = [f"violation: {v.message}" for v in cw.model.violations]
    for i, s in enumerate(cw.model.sessions):
        skey = session_key(cw, i)
        name = s.label if s.label is not None else "-"
        srow = SessionRow(skey, f"session {name} ch {s.channel} [{session_state(s, cw)}]")
        for d in cw.destinations.get(i, {}).values():
            key = destination_key(skey, d)
            srow.links.append(LinkRow(
                key=key,
                name=d.name or "(no destination)",
                role="sender" if d.sender == "client" else "receiver",
                handle="-",
                deliveries=d.transfers,
                unsettled=len(d.unsettled),
                credit=_credit(_subscription(cw, d)),
                rate=rates.rate(key, d.transfers, now, d.recent),
            ))
        row.sessions.append(srow)
    return row


def find_destination(cw: ConnWatch010, key: str) -> Destination | None:
    parts = key.split(SEP)
    if len(parts) < 4 or not parts[1].startswith("s"):
        return None
    try:
        index = int(parts[1][1:])
    except ValueError:
        return None
    return cw.destinations.get(index, {}).get((parts[2], SEP.join(parts[3:])))


# -- link tab ---------------------------------------------------------------------------------

_ACCEPT_MODES = {0: "explicit", 1: "none"}
_ACQUIRE_MODES = {0: "pre-acquired", 1: "not-acquired"}


def _receiver_did(msg: Any) -> str:
    """The last thing the message's receiver did to it ("-": nothing yet)."""
    for e in reversed(msg.timeline):
        if e.side != msg.sender:
            return str(e.event)
    return "-"


def destination_detail(cw: ConnWatch010, d: Destination, key: str, now: float) -> LinkDetail:
    s = cw.model.sessions[d.session]
    session = s.label if s.label is not None else "-"
    title = (f"{d.name or '(no destination)'}   {d.sender} → {_other(d.sender)}   "
             f"AMQP 0-10 messages on session {session} ch {s.channel}")
    states = ", ".join(f"{k} {v}" for k, v in sorted(d.states.items())) or "-"
    flow = [("transfers", str(d.transfers)), ("states", states)]
    sub = _subscription(cw, d)
    if sub is not None:
        credit = _credit(sub)
        flow += [
            ("subscription", f"queue {sub.queue or '-'}"),
            ("flow-mode", sub.flow_mode),
            ("credit", "unlimited" if credit is None else f"{credit} messages"),
            ("accept-mode", _ACCEPT_MODES.get(sub.accept_mode, str(sub.accept_mode))),
            ("acquire-mode", _ACQUIRE_MODES.get(sub.acquire_mode, str(sub.acquire_mode))),
        ]
        if sub.cancelled_at is not None:
            flow.append(("cancelled", "yes"))
    rows = []
    for cid, msg in list(d.unsettled.items())[:MAX_ROWS]:
        rows.append(UnsettledRow(
            key=f"{key}{SEP}{cid}",
            delivery_id=str(cid),
            tag="-",
            age=max(0.0, now - msg.time),
            sender_state="-",
            receiver_state=_receiver_did(msg),
            sender_settled=False,
            receiver_settled=False,
        ))
    return LinkDetail(key=key, title=title, source=[], target=[], flow=flow, unsettled=rows,
                      unsettled_total=len(d.unsettled), termini=False)


# -- delivery tab -----------------------------------------------------------------------------


def find_message(d: Destination, key: str) -> Any:
    try:
        return d.messages.get(int(key.rsplit(SEP, 1)[-1]))
    except ValueError:
        return None


def _value(v: Any) -> Shown:
    """A value as it is shown, printable already (`Shown`: the widgets do not escape it
    again): a binary as the frame lines write it (`b"a\\\\b\\x00"`, its backslashes and
    NULs escaped once), a map or list as the frame lines write one (`{k=v, b=b"x"}`,
    `[1,2]`: each entry escaped once, not Python's repr escaped again), the rest as its
    text with its control characters escaped."""
    from amqpcli.render.text import format_binary, printable
    from amqpcli.render.traffic import plain_010

    if isinstance(v, (bytes, bytearray)):
        return shown(format_binary(bytes(v), 60))
    if isinstance(v, (dict, list, tuple)):
        return shown(_entry(v))
    return shown(printable(str(plain_010(v))))


def _entry(v: Any) -> str:
    """A value inside a map or list, as `pcap-dump`'s 0-10 frame lines write it (see
    `amqpcli.render.traffic._v010`), uncut: a string bare when plain, else quoted with its
    escapes; a binary by `format_binary`; maps and lists by their entries."""
    from amqpcli.render.text import format_binary, printable
    from amqpcli.render.traffic import _v010
    from amqpcli.render.types import quoted

    if v is None or isinstance(v, bool):
        return "void" if v is None else "true" if v else "false"
    if isinstance(v, (bytes, bytearray)):
        return format_binary(bytes(v), 60)
    if isinstance(v, str):
        if v and " " not in v and v.isprintable() and "\\" not in v and '"' not in v:
            return v
        return quoted(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{printable(str(k))}={_entry(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_entry(x) for x in v) + "]"
    return _v010(v, 60)  # a number, uuid, struct, sequence-set: as the frame lines


def message_view(msg: Any) -> RenderableType:
    """The header structs, field by field, and the body."""
    from amqpcli.render.text import printable
    from amqpcli.tui.widgets.safe import literal

    parts: list[RenderableType] = []
    for struct in msg.headers:
        parts.append(literal(struct.qname, "bold"))
        parts += [literal(shown(f"  {printable(k)}: {_value(v)}")) for k, v in struct.fields.items()]
    parts.append(literal(shown(f"body: {_value(msg.body)}  ({len(msg.body)} bytes)"), "bold"))
    return Group(*parts)


def message_detail(msg: Any, key: str) -> DeliveryDetail:
    from amqpcli.render.text import printable

    rows = []
    prev = msg.time
    for e in msg.timeline:
        detail = "  ".join(f"{printable(k)}={_value(v)}" for k, v in e.detail.items())
        if e.command_id is not None:
            detail = f"{detail}  command {e.command_id}".strip()
        rows.append(TimelineRow(e.time, max(0.0, e.time - prev), e.side, e.event, shown(detail)))
        prev = e.time
    return DeliveryDetail(
        key=key,
        title=(f"message.transfer {msg.command_id} to {msg.destination or '(no destination)'}"
               f" on session {msg.session or '-'}"),
        timeline=rows,
        message=message_view(msg),
        raw=bytes(msg.body[:RAW_SHOWN]),
        summary=f"[{msg.state}]",
        size=len(msg.body),
    )


def link_detail(cw: ConnWatch010, link: str, now: float) -> LinkDetail | None:
    """The link tab's detail of destination `link`."""
    dest = find_destination(cw, link)
    return None if dest is None else destination_detail(cw, dest, link, now)


def delivery_detail(cw: ConnWatch010, delivery: str) -> DeliveryDetail | None:
    """The delivery tab's detail of message `delivery` (its key begins with its
    destination's)."""
    dest = find_destination(cw, delivery.rsplit(SEP, 1)[0])
    msg = None if dest is None else find_message(dest, delivery)
    return None if msg is None else message_detail(msg, delivery)


# -- connection tab ---------------------------------------------------------------------------


def _field_texts(method: Any) -> list[str]:
    """A control's fields, one "name: value" each (a map's entries on its line), secrets
    masked as in the frame log; `Shown`, a binary as the frame log writes it."""
    from amqpcli.render.redact import redact_010_fields
    from amqpcli.render.text import printable

    out: list[str] = []
    for name, v in redact_010_fields(method).items():
        if isinstance(v, dict):
            text = ", ".join(f"{printable(k)}={_value(x)}" for k, x in v.items())
        else:
            text = _value(v)
        out.append(shown(f"{printable(name)}: {text}"))
    return out or ["-"]


def conn_detail(cw: ConnWatch010, max_violations: int = 50) -> ConnDetail:
    model = cw.model
    rows: list[tuple[str, str, str]] = [
        ("protocol", cw.protocol, cw.protocol),
        ("frames", str(cw.frames["client"]), str(cw.frames["server"])),
    ]
    for (side, qname), asm in cw.controls.items():  # in the order they were first sent
        for i, text in enumerate(_field_texts(asm.method)):
            rows.append((qname if i == 0 else "", text if side == "client" else "",
                         text if side == "server" else ""))
    sent = {"client": 0, "server": 0}
    for dests in cw.destinations.values():
        for d in dests.values():
            sent[d.sender] += d.transfers
    rows.append(("messages sent", str(sent["client"]), str(sent["server"])))
    rows.append(("sessions", str(len(model.sessions)), ""))
    for side, how in sorted(cw.errors.items()):
        rows.append(("decoding stopped", how if side == "client" else "", how if side == "server" else ""))
    vs = model.violations
    violations = [f"{v.side}: {v.message} (channel {v.channel})" for v in vs[-max_violations:]]
    return ConnDetail(cw.key, f"{cw.key} {cw.label}   {cw.protocol}   [{cw.state()}]",
                      rows, violations, len(vs))
