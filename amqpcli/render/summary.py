"""The end-of-capture summary (`dissect.stats.Summary`) as text and as JSON."""

from __future__ import annotations

from typing import Any

from amqpcli.dissect.records import AMQP010
from amqpcli.dissect.stats import Summary, micros
from amqpcli.render.deliveries import latency_text
from amqpcli.render.traffic import clock, iso, violation_json, violation_line
from amqpcli.render.types import printable


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))


def transactions_text(d: dict[str, int]) -> str:
    """A coordinator's requests by what they came to: `declared 2, rolled back 1`."""
    order = ("declared", "committed", "rolled-back", "failed", "request")
    return ", ".join(f"{k.replace('-', ' ')} {d[k]}" for k in order if d.get(k))


def summary_lines(s: Summary, *, stall_threshold: float = 1.0) -> list[str]:
    span = ""
    if s.first_time is not None and s.last_time is not None:
        # the time of day, with the date when the capture runs over more than one day
        when = clock if int(s.first_time // 86400) == int(s.last_time // 86400) else iso
        # (in whole microseconds, as the tables keep times: a span of 1.5 ms said 0.002 s
        # of the captures and 0.001 s of their tables, one float apart)
        seconds = (micros(s.last_time) - micros(s.first_time)) / 1e6
        span = f" from {when(s.first_time)} to {when(s.last_time)} ({seconds:.3f} s)"
    if s.untimed_frames:  # (a frame-trace log's connections whose lines have no time)
        span += f" ({s.untimed_frames} at unknown times)" if span else ", times unknown"
    out = [
        f"connections: {s.connections}" + (f" ({_counts(s.protocols)})" if s.protocols else ""),
        f"frames: {s.frames}{span}",
    ]
    if s.by_performative:
        # a 0-10 assembly of several frames is one control or command
        per = " (a 0-10 assembly once)" if AMQP010 in s.protocols else ""
        out.append(f"  by performative{per}: {_counts(s.by_performative)}")
    out.append(f"deliveries: {s.deliveries}")
    if s.by_outcome:
        out.append(f"  by outcome: {_counts(s.by_outcome)}")
    if s.unsettled_at_end:
        ended = "the log" if s.from_log else "the capture"
        out.append(f"  unsettled when {ended} ended: {s.unsettled_at_end}")
    if s.incomplete:
        out.append(f"  incomplete (message not seen whole): {s.incomplete}")
    if s.transactions:
        out.append(f"transactions (coordinator requests): {transactions_text(s.transactions)}")
    if s.links:
        out.append("links:")
        for ls in s.links:
            lat = (
                "latency " + " ".join(f"{k} {latency_text(v)}" for k, v in ls.latency.items())
                if ls.latency
                else "no settled latency" if ls.timed else "latency unknown"
            )
            outs = _counts(ls.outcomes) or "no deliveries"
            if ls.transactions:
                outs = ("" if not ls.outcomes else outs + ", ") + (
                    "transactions " + transactions_text(ls.transactions))
            addr = f" ({printable(ls.address)})" if ls.address else ""
            if not ls.deliveries and not ls.outcomes and not ls.transactions:
                # said once: no outcomes and no latency go without saying
                out.append(f"  {ls.conn} {ls.name!r}{addr} {ls.sender} sends: no deliveries")
                continue
            out.append(
                f"  {ls.conn} {ls.name!r}{addr} {ls.sender} sends: {ls.deliveries} "
                f"deliveries; {outs}; {lat}"
            )
    if s.addresses:
        out.append("addresses shared by several links:")
        for shared in s.addresses:
            lat = (
                "latency " + " ".join(f"{k} {latency_text(v)}"
                                      for k, v in shared.latency.items())
                if shared.latency
                else "no settled latency" if shared.timed else "latency unknown"
            )
            out.append(f"  {shared.address!r}: {shared.name}, {shared.deliveries} deliveries; "
                       f"{_counts(shared.outcomes) or 'no deliveries'}; {lat}")
    stalls = [(ls, a, d) for ls in s.links for a, d in ls.stalls]
    out.append(
        f"credit stalls (no credit for {stall_threshold:g} s or more while the sender "
        f"waited): {len(stalls)}"
    )
    for ls, a, d in stalls[:20]:
        out.append(f"  {ls.conn} {ls.name!r} at {clock(a)} for {d:.3f} s")
    total_v = sum(s.by_violation.values())
    out.append(f"violations: {total_v}" + (f" ({_counts(s.by_violation)})" if total_v else ""))
    for v in s.violations:
        out.append("  " + violation_line(v))
    if total_v > len(s.violations):
        out.append(f"  … {total_v - len(s.violations)} more")
    if s.notices:
        out.append(f"notices: {_counts(s.notices)}")
    return out


def summary_json(s: Summary) -> dict[str, Any]:
    return {
        "record": "summary",
        "connections": s.connections,
        "protocols": s.protocols,
        "frames": s.frames,
        "first-time": iso(s.first_time),
        "last-time": iso(s.last_time),
        "by-performative": s.by_performative,
        "deliveries": s.deliveries,
        "by-outcome": s.by_outcome,
        "transactions": s.transactions,
        "unsettled-at-end": s.unsettled_at_end,
        "incomplete": s.incomplete,
        "links": [
            {
                "connection": ls.conn,
                "name": ls.name,
                "address": ls.address,
                "sender": ls.sender,
                "deliveries": ls.deliveries,
                "outcomes": ls.outcomes,
                **({"transactions": ls.transactions} if ls.transactions else {}),
                "latency": ls.latency,
                "flows": ls.flows,
                "drains": ls.drains,
                "stalls": [{"start": iso(a), "seconds": d} for a, d in ls.stalls],
            }
            for ls in s.links
        ],
        **({"addresses": [
            {"address": a.address, "links": int(a.name.split()[0]),
             "deliveries": a.deliveries, "outcomes": a.outcomes, "latency": a.latency}
            for a in s.addresses]} if s.addresses else {}),
        "by-violation": s.by_violation,
        "violations": [violation_json(v) for v in s.violations],
        "notices": s.notices,
    }
