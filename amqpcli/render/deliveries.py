"""Deliveries, links and connections rebuilt from captures, as lines and as JSON.

    00:00:01.234567 c1 -> sender-a           #3     tag=0x03   212 B  accepted  by receiver    1.204 ms

A delivery line reads: when its first transfer was seen, connection, direction (the
sender's), link, delivery-id, tag, message size, outcome (with its detail: a rejection's
error, modified flags, a transaction), who settled it first (or "presettled"), and the
time from the first transfer to settlement. A delivery some of whose transfers a gap in
the capture took shows the bytes seen as a lower bound (`≥9008 B`) and says
`bytes missing`; one whose payload a frame-trace log cut short (proton shows about 1 KiB
of a frame) shows its size as the log's lines give it and says what the log shows
(`200022 B … [log shows 11676 B]`).
"""

from __future__ import annotations

from typing import Any

from amqpcli.dissect.records import (
    ABANDONED,
    AMQP10,
    Conn,
    DeliveryRecord,
    LinkStats,
    known_time,
    replaced_outcome,
)
from amqpcli.dissect.stats import link_summary
from amqpcli.render.frameline import (
    filter_key_text,
    filter_texts,
    filter_value_text,
    summarize_payload,
)
from amqpcli.render.invalid import amqp_format
from amqpcli.render.jsonvalues import Redactions, b64, to_json
from amqpcli.render.text import format_binary, format_value, printable
from amqpcli.render.traffic import ARROW, clock_text, iso
from amqpcli.render.types import (
    capabilities_text,
    mechanisms_text,
    plain_or_quoted,
    sasl_code_name,
)

_LINK_WIDTH = 18


def latency_text(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.3f} ms"
    return f"{seconds:.3f} s"


def outcome_detail(state: Any) -> str:
    """What a deciding state adds to its name: an error, modified flags, a txn."""
    if state is None:
        return ""
    name = getattr(state, "NAME", "")
    if name == "transactional-state":
        txn = getattr(state, "txn_id", None)
        inner = outcome_detail(getattr(state, "outcome", None))
        return f" in txn {format_binary(txn or b'', 16)}{inner}"
    if name == "rejected":
        err = getattr(state, "error", None)
        if err is not None:
            cond = getattr(err, "condition", None)
            desc = getattr(err, "description", None)
            cond_text = plain_or_quoted(cond) if cond is not None else "?"
            return f" ({cond_text}{': ' + printable(str(desc)) if desc else ''})"
    if name == "modified":
        flags = [
            f.replace("_", "-")
            for f in ("delivery_failed", "undeliverable_here")
            if getattr(state, f, None)
        ]
        return f" ({','.join(flags)})" if flags else ""
    return ""


def outcome_text(rec: DeliveryRecord) -> str:
    """The outcome with its detail. In a transaction not committed, what the
    transaction made of it first: `rolled-back (accepted in txn b"txn-3")`,
    `undecided (accepted in txn b"txn-5", not discharged)`; a coordinator's request says
    which and of what transaction: `accepted (discharge b"txn-3": rolled back)`."""
    if rec.aborted:
        return "aborted"
    detail = outcome_detail(rec.state)
    txn = format_binary(rec.txn_id, 16) if rec.txn_id is not None else "?"
    if rec.coordinator is not None:
        what = rec.coordinator
        if rec.coordinator != "request":
            what += f" {txn}"
        result = rec.txn_result
        if rec.coordinator == "discharge" and result is not None and result != "active":
            what += f": {result.replace('-', ' ')}"
        return f"{rec.outcome}{detail} ({what})"
    return txn_outcome_text(rec.outcome, rec.state, rec.txn_result)


def txn_outcome_text(outcome: str, state: Any, txn_result: str | None) -> str:
    """An outcome with its detail (`accepted in txn b"txn-1"`); one a transaction not
    committed replaced (rolled-back, undecided) with the outcome its state carries, as
    one nothing settled (abandoned, unsettled) with the outcome a side had given it:
    `abandoned (accepted, never settled)`."""
    detail = outcome_detail(state)
    inner = replaced_outcome(outcome, state, txn_result)
    if inner is None:
        return outcome + detail
    why = ""
    if outcome == ABANDONED:
        why = ", never settled"
    elif txn_result == "undecided":
        why = ", not discharged"
    elif txn_result is not None and txn_result.startswith("failed"):
        why = f"; discharge {txn_result}"
    return f"{outcome} ({inner}{detail}{why})"


def settled_text(rec: DeliveryRecord) -> str:
    if rec.presettled:
        return "presettled"
    if rec.at_end:
        return "unsettled at end"
    if rec.settled_by is None:
        return "-"
    return f"by {rec.settled_by}" + (" (second)" if rec.second_mode else "")


def delivery_line(rec: DeliveryRecord, *, bodies: bool = False) -> str:
    name = printable(rec.link)  # a capture's link name may hold anything
    link = name if len(name) <= _LINK_WIDTH else name[: _LINK_WIDTH - 1] + "…"
    did = f"#{rec.delivery_id}" if rec.delivery_id is not None else "#?"
    tag = f"tag={format_binary(rec.tag, 16)}" if rec.tag is not None else ""
    outcome = outcome_text(rec)
    flags = []
    if rec.resumed:
        flags.append("resumed" if rec.resumed_from is None
                     else f"resumed from {rec.resumed_from}")
    if rec.frames > 1:
        flags.append(f"{rec.frames} frames")
    size = f"{rec.size} B"
    in_log = rec.size_in_log
    if rec.incomplete:  # the capture lost some of its transfers: at least this size
        size = "≥" + size
        flags.append("bytes missing")
    elif in_log is not None:  # the log cut its payload short, but says how long it was
        flags.append(f"log shows {size}")
        size = f"{in_log} B"
    parts = [
        clock_text(known_time(rec.conn, rec.first_time)),
        rec.conn.label,
        ARROW.get(rec.sender, "  "),
        link.ljust(_LINK_WIDTH),
        did.ljust(6),
        tag.ljust(15),
        size.rjust(8),
        outcome.ljust(9),
        settled_text(rec).ljust(16),
        latency_text(known_time(rec.conn, rec.latency)).rjust(10),
    ]
    if flags:
        parts.append("[" + ", ".join(flags) + "]")
    if bodies and rec.payload:
        parts.append(
            " "
            + (
                summarize_payload(rec.payload, invalid=_whole_message(rec))
                if rec.protocol == AMQP10
                else format_binary(rec.payload, 60)
            )
        )
    return " ".join(parts).rstrip()


def _whole_message(rec: DeliveryRecord) -> bool:
    """Whether a delivery's payload is all of an AMQP message as it was sent, to be called
    no valid message when it is none: of the AMQP message format, seen whole, neither
    aborted nor resumed (a resumed delivery may carry only the rest of one), nor the first
    on a link attached before the capture (it may have begun there)."""
    return (amqp_format(getattr(rec, "message_format", 0)) and rec.seen_whole
            and not rec.aborted and not rec.resumed and not getattr(rec, "may_be_tail", False))


def _entry_json(e: Any, conn: Conn, hide: Redactions | None = None) -> dict[str, Any]:
    if hasattr(e, "frame_no"):  # 1.0 TimelineEntry
        out: dict[str, Any] = {
            "time": iso(known_time(conn, e.time)),
            "side": e.side,
            "kind": e.kind,
            "frame": e.frame_no,
        }
        if e.state is not None:
            out["state"] = to_json(e.state, True, hide)
        if e.settled:
            out["settled"] = True
        if e.more:
            out["more"] = True
        if e.size:
            out["size"] = e.size
        if e.detail:
            out["detail"] = e.detail
        return out
    from amqpcli.render.traffic import plain_010

    out = {"time": iso(known_time(conn, e.time)), "side": e.side, "kind": e.event}
    if e.command_id is not None:
        out["command-id"] = e.command_id
    if e.detail:
        out["detail"] = plain_010(e.detail, typed=True)
    return out


def delivery_json(
    rec: DeliveryRecord, *, message: bool = True, show_secrets: bool = False
) -> dict[str, Any]:
    """A delivery as JSON; its message (1.0) in the format of `recv --json`. SASL secrets
    in its states and message are masked unless `show_secrets`, and the record then says
    `"redacted": true`."""
    masked: Redactions = []
    hide = None if show_secrets else masked
    out: dict[str, Any] = {
        "record": "delivery",
        "protocol": rec.protocol,
        "connection": rec.conn.label,
        "link": rec.link,
        "address": rec.address,
        "from": rec.sender,
        "delivery-id": rec.delivery_id,
    }
    if rec.tag is not None:
        out["delivery-tag"] = b64(rec.tag)
    out.update(
        {
            "size": rec.size,
            "frames": rec.frames,
            "outcome": rec.outcome,
            "settled-by": rec.settled_by,
            "presettled": rec.presettled,
            "first-time": iso(known_time(rec.conn, rec.first_time)),
            "settled-time": iso(known_time(rec.conn, rec.settled_time)),
            "latency": known_time(rec.conn, rec.latency),
        }
    )
    if rec.state is not None:
        out["state"] = to_json(rec.state, True, hide)
    if rec.second_mode:
        out["rcv-settle-mode"] = "second"
    if rec.txn_id is not None:
        out["txn-id"] = b64(rec.txn_id)
    if rec.txn_result is not None:
        out["txn-result"] = rec.txn_result
    if rec.coordinator is not None:
        out["coordinator"] = rec.coordinator
    if rec.resumed:
        out["resumed"] = True
        if rec.resumed_from is not None:
            out["resumed-from"] = rec.resumed_from
    if rec.aborted:
        out["aborted"] = True
    if rec.at_end:
        out["unsettled-at-end"] = True
    if not rec.seen_whole:
        out["incomplete"] = True
    if rec.may_be_tail:  # (its message is not judged by the lines)
        out["may-be-tail"] = True
    in_log = rec.size_in_log
    if in_log is not None:  # (`size` is what the log shows)
        out["full-size"] = in_log
    out["timeline"] = steps = [_entry_json(e, rec.conn, hide) for e in rec.timeline]
    if getattr(rec, "resumed_from", None) is not None:
        # the steps of the connections it came over from: their frames are those's
        from amqpcli.engine.shelf import step_connections

        here = rec.conn.label
        for step, where in zip(steps, step_connections(rec.timeline, here), strict=True):
            if where != here:
                step["connection"] = where
    if message and rec.payload:
        if rec.protocol == AMQP10:
            msg_json: dict[str, Any] = _message_json(rec.payload, show_secrets)
            out["message"] = msg_json
            message_format = getattr(rec, "message_format", 0)
            if message_format:  # (as recv --json writes it)
                msg_json["message-format"] = message_format
        else:
            from amqpcli.render.traffic import plain_010

            out["headers"] = [
                {"struct": s.qname, "fields": plain_010(s.fields, typed=True)}
                for s in rec.extra.get("headers", ())
            ]
            out["body"] = plain_010(rec.payload)
    if masked or "redacted" in out.get("message", ()):
        out["redacted"] = True
    return out


def _message_json(payload: bytes, show_secrets: bool = False) -> dict[str, Any]:
    from amqpcli.codec.message import Message
    from amqpcli.render.message import load_sections, message_to_json
    from amqpcli.render.redact import may_hold_secret

    try:
        return message_to_json(load_sections(Message.decode(payload)), show_secrets=show_secrets)
    except Exception as e:  # noqa: BLE001 - a broken message is shown as its bytes
        if not show_secrets and may_hold_secret(payload):  # (nothing masked it: its size)
            return {"undecodable": str(e), "size": len(payload), "redacted": True}
        return {"undecodable": str(e), "encoded": b64(payload)}


# --- links ----------------------------------------------------------------------------


def _terminus(t: Any) -> str:
    if t is None:
        return "null"
    if getattr(t, "NAME", None) == "coordinator":  # no node: drawn as the frame line does
        bits = ["@coordinator"]
    else:
        a = getattr(t, "address", None)
        bits = [format_value(a) if a is not None else "(no address)"]
    if getattr(t, "dynamic", None):
        bits.append("dynamic")
    caps = getattr(t, "capabilities", None)
    if caps is not None:
        bits.append("caps=" + capabilities_text(caps))
    flt = getattr(t, "filter", None)  # a source's, as the frame line draws it
    if flt is not None:
        bits.extend(filter_texts(flt))
    return " ".join(bits)


def _same_terminus(a: Any, b: Any) -> bool:
    """Whether two attaches' drawings of one terminus say the same: a null terminus and
    one that names nothing (no address, not dynamic, no capabilities, no filter) do;
    RabbitMQ's attach leaves out the target of a link it sends on, whatever the
    receiver's had. Filters are compared whole (their drawing cuts a long one short)."""
    a, b = (t if _names_something(t) else None for t in (a, b))
    return _terminus(a) == _terminus(b) and _filters(a) == _filters(b)


def _names_something(t: Any) -> bool:
    return t is not None and any(getattr(t, f, None) for f in ("address", "dynamic",
                                                               "capabilities", "filter"))


def _filters(t: Any) -> dict[str, str]:
    """A source's filters, each whole, by key (none for one without a filter map)."""
    flt = getattr(t, "filter", None)
    if not isinstance(flt, dict):
        return {}
    return {filter_key_text(k): filter_value_text(v, None) for k, v in flt.items()}


def filter_changes(requested: Any, granted: Any) -> str:
    """What the sender's answer did to the filters the receiver asked for (Part 3 §3.5.8:
    a sender that does not apply a filter leaves it out, or answers null for it), as
    `; filter.KEY dropped`, `not applied`, `changed`, `added`; "" when nothing."""
    asked, got = _filters(requested), _filters(granted)
    notes = []
    for key, text in asked.items():
        if key not in got:
            notes.append(f"filter.{key} dropped")
        elif got[key] == "not-applied" != text:
            notes.append(f"filter.{key} not applied")
        elif got[key] != text:
            notes.append(f"filter.{key} changed")
    notes += [f"filter.{key} added" for key in got if key not in asked]
    return "".join("; " + n for n in notes)


def _given(granted: Any, requested: Any) -> Any:
    return granted if granted is not None else requested


def _link_state(link: Any) -> str:
    """The link's state for the text line: one detached by no detach frame, only by its
    session's end or its connection's close, is named by that (as the TUI names it), not
    `detached`; JSON keeps `detached` and says how in `detached-with`."""
    how = link.detached_with
    if how is None:
        return str(link.state)
    return "ended-with-session" if how == "end" else "closed-with-connection"


def link_lines(conn: Conn, ls: LinkStats) -> list[str]:
    link = ls.link
    s = link_summary(conn, ls)
    role = "client sends" if link.sender == "client" else "server sends"
    handles = " ".join(f"{side[0]}:{h}" for side, h in sorted(ls.handles.items()))
    req = getattr(link, "requested", None)
    gr = getattr(link, "granted", None)
    # A refused link (answered with a null terminus) is a link to what it asked for, as
    # the frames and the summary have it; state=refused says the rest. A terminus the
    # responder left out is the one the initiator gave (RabbitMQ leaves out a target).
    termini = req if link.refused and req is not None else link
    source, target = (_given(getattr(termini, name), getattr(req, name, None))
                      for name in ("source", "target"))
    first = (
        f"{conn.label} s{ls.session_no} link {ls.name!r} ({role}) handles {handles or '-'}"
        f" source={_terminus(source)} target={_terminus(target)}"
        f" state={_link_state(link)}"
    )
    lines = [first]
    if req is not None and gr is not None and not link.refused:
        for name in ("source", "target"):
            a, b = getattr(req, name, None), getattr(gr, name, None)
            if not _same_terminus(a, b):
                lines.append(f"    {name}: requested {_terminus(a)}, granted {_terminus(b)}"
                             + filter_changes(a, b))
    outs = " ".join(f"{k}={v}" for k, v in sorted(s.outcomes.items()))
    if s.transactions:  # a coordinator's requests: no messages
        from amqpcli.render.summary import transactions_text

        outs = (outs + "; " if outs else "") + "transactions " + transactions_text(
            s.transactions)
    outs = outs or "-"
    lat = "-"
    if s.latency:
        lat = " ".join(f"{k}={latency_text(v)}" for k, v in s.latency.items())
    lines.append(f"    deliveries {ls.deliveries} ({ls.bytes} B): {outs}; latency {lat}")
    lines.append(
        f"    credit: {ls.flows} flows, max {ls.max_credit}, drain {ls.drains}, echo "
        f"{ls.echoes}; delivery-count {link.delivery_count}, credit now {link.link_credit}"
        + (
            f"; {len(s.stalls)} stalls, longest {max(d for _, d in s.stalls):.3f} s"
            if s.stalls
            else ""
        )
    )
    lines += [f"    note: {n}" for n in ls.notes]
    return lines


def link_json(conn: Conn, ls: LinkStats) -> dict[str, Any]:
    link = ls.link
    s = link_summary(conn, ls)
    out: dict[str, Any] = {
        "record": "link",
        "protocol": AMQP10,
        "connection": conn.label,
        "session": ls.session_no,
        "name": ls.name,
        "sender": link.sender,
        "initiator": link.initiator,
        "handles": dict(ls.handles),
        "attached": iso(known_time(conn, ls.attached)),
        "detached": iso(known_time(conn, ls.detached)),
        "state": link.state,
    }
    how = link.detached_with
    if how is not None:
        out["detached-with"] = how
    for side, att in sorted(link.attach.items()):
        out[f"attach-{side}"] = to_json(att)
    out.update(
        {
            "deliveries": ls.deliveries,
            "bytes": ls.bytes,
            "outcomes": s.outcomes,
            **({"transactions": s.transactions} if s.transactions else {}),
            "latency": s.latency,
            "flows": ls.flows,
            "drains": ls.drains,
            "echoes": ls.echoes,
            "max-credit": ls.max_credit,
            "delivery-count": link.delivery_count,
            "link-credit": link.link_credit,
            "stalls": [{"start": iso(a), "seconds": d} for a, d in s.stalls],
            "credit-timeline": [
                {
                    "time": iso(known_time(conn, t)),
                    "side": side,
                    "link-credit": c,
                    "delivery-count": dc,
                    "available": av,
                    "drain": dr,
                    "echo": ec,
                }
                for t, side, c, dc, av, dr, ec in ls.credit_timeline
            ],
            "notes": list(ls.notes),
        }
    )
    return out


# --- connections ----------------------------------------------------------------------

def _open_text(o: Any) -> str:
    if o is None:
        return "no open"
    bits = [f"container={format_value(o.container_id)}"]
    for name, attr in (
        ("host", "hostname"),
        ("max-frame", "max_frame_size"),
        ("channel-max", "channel_max"),
        ("idle-timeout", "idle_time_out"),
    ):
        v = getattr(o, attr, None)
        if v is not None:
            bits.append(f"{name}={int(v) if isinstance(v, int) else format_value(v)}")
    return " ".join(bits)


def _close_text(c: Any) -> str:
    if c is None:
        return "no close"
    err = getattr(c, "error", None)
    if err is None:
        return "close"
    if getattr(err, "NAME", None) != "error":  # a damaged close: its value as it came
        return f"close {format_value(err)}"
    desc = getattr(err, "description", None)  # the peer's text: escaped
    return f"close {plain_or_quoted(err.condition)}" + (f" ({printable(desc)})" if desc else "")


def connection_lines(conn: Conn) -> list[str]:
    span = (f"{clock_text(conn.first_time)} - {clock_text(conn.last_time)}" if conn.timed
            else clock_text(None))
    first = f"{conn.label} {conn.endpoints} {conn.protocol} {span}"
    if conn.midstream:
        first += " (joined mid-connection)"
    lines = [first]
    obs = conn.observer
    model = conn.model
    if conn.protocol == AMQP10 and model is not None:
        if model.sasl_mechanisms or model.sasl_mechanism:
            code = model.sasl_code
            lines.append(
                f"    sasl: offered {mechanisms_text(model.sasl_mechanisms, ' ')}, chose "
                f"{plain_or_quoted(model.sasl_mechanism or '-')}, outcome "
                f"{(sasl_code_name(code) or code) if code is not None else '-'}"
            )
        for side in ("client", "server"):
            lines.append(
                f"    {side}: {_open_text(model.open.get(side))}; "
                f"{_close_text(model.close.get(side))}; {conn.frames[side]} frames, "
                f"{conn.bytes[side]} B"
            )
        lines.append(
            f"    sessions {conn.sessions}, links {len(conn.links)}, deliveries "
            f"{conn.deliveries}, violations {conn.violations}"
        )
    elif model is None and obs is not None:  # 0-10
        c = _counts_010(conn)
        lines.append(
            f"    sessions {c['sessions']}, messages {c['messages']}, "
            f"subscriptions {c['subscriptions']}, violations {conn.violations}"
        )
        for side in ("client", "server"):
            lines.append(f"    {side}: {c['assemblies'][side]} assemblies in "
                         f"{conn.frames[side]} frames, {conn.bytes[side]} B")
    if conn.gaps or conn.resyncs or conn.frame_errors:
        lines.append(
            f"    capture: {conn.gaps} gaps ({conn.gap_bytes} B), {conn.resyncs} "
            f"resyncs ({conn.skipped_bytes} B skipped), {conn.frame_errors} frame errors"
        )
    # (a log's connection has no TCP: its ends are the log's EOS lines or its end)
    ends = "" if conn.source == "log" else ", ".join(
        f"{s} {h}" for s, h in sorted(conn.closed.items()))
    if ends:
        lines.append(f"    tcp: {ends}")
    lines += [f"    note: {n}" for n in conn.notes]
    return lines


def _counts_010(conn: Conn) -> dict[str, Any]:
    """What a 0-10 connection's text and JSON both count, from its model."""
    obs = conn.observer
    m = obs.model
    return {
        "sessions": conn.sessions,
        "messages": len(m.messages),
        "subscriptions": len(m.subscriptions),
        "assemblies": dict(obs.assemblies),
    }


def connection_json(conn: Conn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "record": "connection",
        "protocol": conn.protocol,
        "connection": conn.label,
        "client": conn.client,
        "server": conn.server,
        "first-time": iso(known_time(conn, conn.first_time)),
        "last-time": iso(known_time(conn, conn.last_time)),
        "midstream": conn.midstream,
        "frames": dict(conn.frames),
        "bytes": dict(conn.bytes),
        "sessions": conn.sessions,
        "links": len(conn.links),
        "deliveries": conn.deliveries,
        "violations": conn.violations,
        "gaps": conn.gaps,
        "gap-bytes": conn.gap_bytes,
        "resyncs": conn.resyncs,
        "skipped-bytes": conn.skipped_bytes,
        "frame-errors": conn.frame_errors,
        "tcp-closed": dict(conn.closed),
        "notes": list(conn.notes),
    }
    model = conn.model
    if conn.protocol == AMQP10 and model is not None:
        from amqpcli.render.redact import redact

        out["sasl"] = {
            "offered": list(model.sasl_mechanisms),
            "mechanism": model.sasl_mechanism,
            "outcome": sasl_code_name(model.sasl_code) or model.sasl_code
            if model.sasl_code is not None
            else None,
        }
        for side in ("client", "server"):
            o = model.open.get(side)
            c = model.close.get(side)
            out[f"open-{side}"] = to_json(redact(o)) if o is not None else None
            out[f"close-{side}"] = to_json(c) if c is not None else None
    elif model is None and conn.observer is not None:  # 0-10
        out.update(_counts_010(conn))
    return out
