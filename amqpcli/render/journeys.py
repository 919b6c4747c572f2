"""Messages followed across connections (`pcap-dump --messages`), as lines and as JSON.

    23:35:48.071976 6e5c021f    143 B id=ulong:0      c1 -> /queue/orders accepted; +313.954 ms c2 <- /queue/orders accepted

A message line reads: when its first hop's first transfer was seen, the first 8 hex
digits of its bare message's SHA-256 (the `bare-sha256` of `recv --json`), the bare
message's size, its message-id, then each hop — after the first, the time since the
first — with connection, direction (the sender's), the node's address (or the link's
name when its termini name none), `+properties` where the message came with a properties
section a node added to it (RabbitMQ 3.10 does, to one sent without), and outcome.
"""

from __future__ import annotations

from typing import Any

from amqpcli.dissect.journeys import Hop, Journey, Journeys
from amqpcli.dissect.stats import percentile
from amqpcli.render.deliveries import latency_text, txn_outcome_text
from amqpcli.render.jsonvalues import to_json
from amqpcli.render.text import format_value, printable
from amqpcli.render.traffic import ARROW, clock_text, iso

_ID_WIDTH = 12
_WHERE_WIDTH = 32


def _hop_text(h: Hop, first: float | None) -> str:
    after = ""
    if first is not None and h.first_time is not None:
        after = f"+{latency_text(h.first_time - first)} "
    outcome = ("unsettled at end" if h.at_end
               else txn_outcome_text(h.outcome, h.state, h.txn_result))
    # the node's address says more than a link name (often a generated one) where a
    # message went; the link's name when its termini name no node
    where = printable(h.address if h.address else h.link)
    if len(where) > _WHERE_WIDTH:
        where = where[: _WHERE_WIDTH - 1] + "…"
    added = " +properties" if h.properties_added else ""
    return f"{after}{h.conn} {ARROW.get(h.sender, '  ')} {where}{added} {outcome}"


def journey_line(j: Journey, show_secrets: bool = False) -> str:
    hidden = j.secret and not show_secrets
    key = "redacted" if hidden else j.digest[:4].hex()
    mid = ""
    if j.message_id is not None and not hidden:
        text = format_value(j.message_id)
        mid = "id=" + (text if len(text) <= _ID_WIDTH else text[: _ID_WIDTH - 1] + "…")
    first = j.first_time
    hops = "; ".join(_hop_text(h, None if i == 0 else first) for i, h in enumerate(j.hops))
    return " ".join([clock_text(first), key, f"{j.size} B".rjust(8), mid.ljust(_ID_WIDTH + 3),
                     hops]).rstrip()


def _hop_json(h: Hop, first: float | None, show_secrets: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "connection": h.conn,
        "link": h.link,
        "address": h.address,
        "from": h.sender,
        "delivery-id": h.delivery_id,
        "first-time": iso(h.first_time),
        "after": None if first is None or h.first_time is None else h.first_time - first,
        "outcome": h.outcome,
        "settled-by": h.settled_by,
        "presettled": h.presettled,
        "settled-time": iso(h.settled_time),
        "latency": h.latency,
    }
    if h.state is not None:
        out["state"] = to_json(h.state, True, None if show_secrets else [])
    if h.at_end:
        out["unsettled-at-end"] = True
    if h.properties_added:
        out["properties-added"] = True
    if h.txn_result is not None:
        out["txn-result"] = h.txn_result
    return out


def journey_json(j: Journey, show_secrets: bool = False) -> dict[str, Any]:
    """A message and its hops; one whose bare message holds a SASL secret says
    `"redacted": true` in place of its hash and message-id, unless `show_secrets`."""
    out: dict[str, Any] = {"record": "message"}
    if j.secret and not show_secrets:
        out["redacted"] = True
    else:
        out["bare-sha256"] = j.digest.hex()
        out["message-id"] = None if j.message_id is None else to_json(j.message_id, True)
    first = j.first_time
    out.update({
        "size": j.size,
        "first-time": iso(first),
        "hops": [_hop_json(h, first, show_secrets) for h in j.hops],
        "transit": j.transit,
    })
    return out


def journeys_summary(journeys: Journeys, shown: list[Journey]) -> str:
    """The line that ends the text view: how many messages, on how many hops, and the
    spread of their transit times."""
    many = [j for j in shown if len(j.hops) > 1]
    text = (f"{len(shown)} message{'s' if len(shown) != 1 else ''}: "
            f"{len(shown) - len(many)} seen once, {len(many)} on two or more deliveries")
    transits = sorted(t for j in many if (t := j.transit) is not None)
    if transits:
        p50, p90 = (latency_text(percentile(transits, q)) for q in (50, 90))
        text += f"; first to last p50 {p50} p90 {p90} max {latency_text(transits[-1])}"
    if journeys.unreadable:
        cut, invalid = journeys.cut_by_log, journeys.invalid
        why = f", {cut} of them cut short by the log" if cut else ""
        if invalid:
            why += f", {invalid} of them not a valid message"
        text += (f" ({journeys.unreadable} deliveries without a readable message are not "
                 f"followed{why})")
    return text
