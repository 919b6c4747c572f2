"""Dissector records → table rows, and `FlowJob`: one canonical flow key from segments to rows.

A `FlowJob` is the unit of work both executors share. It is fed the TCP segments of one
flow key (both directions, possibly several connections that reused the 4-tuple) in the
canonical order — by effective time, then file, then packet (see `inputs.py`) — and runs
them through its own `FlowTracker` and `amqpcli.dissect.Dissector`. So the rows cannot
depend on which executor ran the job, nor on what other flows it ran beside: nothing is
counted across flows. Identifiers are derived, never counted:

* `connection_id`: 16 hex digits of SHA-1 over the capture file's name (of the flow's
  first packet), both endpoints and the first packet's time in nanoseconds;
* `session_id` = `connection_id/session_no`, `link_id` = `connection_id/session_no/n`
  (n: the link's place in the connection, in order of attach); 0-10 deliveries use
  `connection_id/0-10/destination`.

Packet numbers are per file (1-based, every record counted, as tshark numbers them).
Items decoded only when the input ended (a truncated tail, deliveries left unsettled)
have no packet.

`LogJob` is the unit of work of a frame-trace log (`amqpcli.capture.tracelog`): one
file, read from its first line to its last through one dissector, as `pcap-dump` reads a
log (a log's connection is that file's). Its rows name the log in `capture` and the line
in `packet` (the line is the frame's number, as the views number a log's frames); a
connection's id takes in the line it begins on too (a log's connection ids are taken
again, and a proton trace has no times). A connection whose lines have no time (proton's
trace: `Conn.timed` false) has null times, latencies and partition (`date`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from amqpcli.capture import FlowTracker, Opened, format_ip
from amqpcli.capture.reader import FILE_SHIFT, NUMBER_MASK
from amqpcli.dissect import (
    AMQP10,
    DEFAULT_PORTS,
    DeliveryRecord,
    Dissector,
    FrameRecord,
    Notice,
    ViolationRecord,
)
from amqpcli.dissect.filters import frame_state, performative_name
from amqpcli.dissect.records import replaced_outcome
from amqpcli.dissect.stats import micros, node_address, percentile
from amqpcli.engine import LinkAttached, SessionBegun, SessionEnded
from amqpcli.pipeline.schema import PARTITION, TABLES

SIDES = ("client", "server")


class Tables:
    """Rows being gathered for every table (dicts; a missing column is null)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self.count = 0

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows[table].append(row)
        self.count += 1

    def take(self) -> dict[str, list[dict[str, Any]]]:
        """The rows so far, per table; the buffer starts empty again."""
        out = self.rows
        self.rows = {t: [] for t in TABLES}
        self.count = 0
        return out


def _us(t: float | None) -> int | None:
    """Seconds (float) → whole microseconds: how times are stored (`micros`)."""
    return None if t is None else micros(t)


def _ep(e: Any) -> str:
    ip = format_ip(e[0]) if not isinstance(e[0], str) else e[0]
    return f"[{ip}]:{e[1]}" if ":" in ip else f"{ip}:{e[1]}"


def connection_id(capture_name: str, flow: Any, line: int | None = None) -> str:
    a = _ep(flow.client) if flow.client else "?"
    b = _ep(flow.server) if flow.server else "?"
    text = f"{capture_name}|{a}|{b}|{flow.first_ns}"
    if line is not None:  # (a log's connection: the line it begins on too)
        text += f"|{line}"
    # (a path's bytes that are not UTF-8 as they are: two such names do not collide)
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _none(t: float | None) -> None:
    """A time not known (a connection of a proton trace): null."""


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d")


def _text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))  # the codec's ULong etc. print with their type name
    if isinstance(v, str):
        return str.__new__(str, v)
    return str(v)


def _error(e: Any) -> str | None:
    """An AMQP error as "condition: description" (a damaged one, not an error list: its
    value as text)."""
    if e is None:
        return None
    if getattr(e, "NAME", None) != "error":
        return str(e)
    cond = getattr(e, "condition", None)
    desc = getattr(e, "description", None)
    return f"{cond}: {desc}" if desc else str(cond)


def _state_detail(state: Any) -> str | None:
    if state is None:
        return None
    name = getattr(state, "NAME", "")
    if name == "transactional-state":
        return _state_detail(getattr(state, "outcome", None))
    if name == "rejected":
        return _error(getattr(state, "error", None))
    if name == "modified":
        flags = [f.replace("_", "-") for f in ("delivery_failed", "undeliverable_here")
                 if getattr(state, f, None)]
        return ",".join(flags) or None
    return None


class _ConnInfo:
    __slots__ = ("capture", "date", "id", "line", "links", "notices", "session_info",
                 "sessions", "timed")

    def __init__(self, cid: str, capture: str, date: str | None, timed: bool = True,
                 line: int | None = None) -> None:
        self.id = cid
        self.capture = capture
        self.date = date
        self.timed = timed  # its times are known (a proton trace's are not)
        self.line = line  # a log's connection: the line it begins on
        self.notices: dict[str, int] = {}  # kind -> count, as the summary counts them
        self.links: dict[int, str] = {}  # id(LinkStats) -> link_id
        self.sessions: list[Any] = []  # engine sessions, in order of first sight
        self.session_info: dict[int, list[float | None]] = {}  # id(session) -> [begin, end]


class RowBuilder:
    """Turns one dissector's records into rows of `tables`; `stall` is the threshold the
    dissector found credit stalls with (each link row says it)."""

    def __init__(self, tables: Tables, stall: float = 1.0) -> None:
        self.tables = tables
        self.stall = stall
        self.conns: dict[int, _ConnInfo] = {}  # id(Conn) -> info
        self._texts: dict[str, str] = {}  # a capture's path -> its text in the tables

    def _text(self, path: str) -> str:
        """A path as the tables' text: a file name's bytes that are not UTF-8 (kept by
        the file system as surrogates, which no string column takes) as U+FFFD."""
        text = self._texts.get(path)
        if text is None:
            text = self._texts[path] = path.encode("utf-8", "surrogateescape").decode(
                "utf-8", "replace")
        return text

    def opened(self, conn: Any, flow: Any, capture: str, line: int | None = None) -> None:
        """`line`: a log's connection, the line it begins on."""
        cid = connection_id(capture.rsplit("/", 1)[-1], flow, line)
        capture = self._text(capture)
        timed = bool(getattr(conn, "timed", True))
        self.conns[id(conn)] = _ConnInfo(cid, capture, _day(conn.first_time) if timed else None,
                                         timed, line)

    def record(self, rec: Any, capture: str | None, packet: int | None) -> None:
        info = self.conns.get(id(rec.conn)) if rec.conn is not None else None
        if info is None:
            return  # a notice about the capture, not a connection
        if capture is not None:
            capture = self._text(capture)
        cls = rec.__class__
        if cls is FrameRecord:
            self._frame(rec, info, capture, packet)
        elif cls is DeliveryRecord:
            self._delivery(rec, info)
        elif cls is Notice:
            info.notices[rec.kind] = info.notices.get(rec.kind, 0) + 1
        elif cls is ViolationRecord:
            self.tables.add("violations", {
                "connection_id": info.id, "protocol": rec.protocol,
                "time": _us(rec.time) if info.timed else None,
                "kind": rec.kind, "side": rec.side, "link": rec.link,
                "frame_no": rec.frame_no, "capture": capture, "packet": packet,
                "detail": rec.detail, PARTITION: info.date})

    # --- frames ---------------------------------------------------------------------

    def _frame(self, rec: FrameRecord, info: _ConnInfo, capture: str | None,
               packet: int | None) -> None:
        item = rec.item
        cls = item.__class__.__name__
        # frames on the wire, as the summary of captures counts them (Summary.add): a 0-10
        # record is an assembly, which took `frames` of them
        frames = getattr(item, "frames", 1) if rec.protocol != AMQP10 else 1
        row: dict[str, Any] = {
            "connection_id": info.id, "frame_no": rec.frame_no, "protocol": rec.protocol,
            "side": rec.side, "time": _us(rec.time) if info.timed else None,
            "capture": capture, "packet": packet,
            "frames": frames, "performative": performative_name(item), PARTITION: info.date}
        if rec.protocol == AMQP10:
            if cls == "Frame":
                body = item.body
                row["kind"] = "sasl" if item.type == 1 else "amqp"
                row["channel"] = item.channel
                row["size"] = item.size
                row["payload_size"] = len(item.payload) if item.payload else 0
                if body is not None:
                    g = getattr
                    row["handle"] = g(body, "handle", None)
                    did = g(body, "delivery_id", None)
                    if did is None:
                        did = g(body, "first", None)
                    row["delivery_id"] = did
                    row["settled"] = g(body, "settled", None)
                    row["more"] = g(body, "more", None)
                    row["state"] = frame_state(item)
                for ev in rec.events:
                    ecls = ev.__class__
                    if ecls is SessionBegun or ecls is LinkAttached or ecls is SessionEnded:
                        self._session_event(ev, info)
            else:
                row["kind"] = "header" if cls == "ProtocolHeader" else "error"
        else:
            method = getattr(item, "method", None)
            if method is not None:
                row["kind"] = "assembly"
                row["channel"] = item.channel
                row["payload_size"] = len(item.body) if item.body is not None else 0
                row["state"] = frame_state(item)
            else:
                row["kind"] = "error" if getattr(item, "error", None) is not None else "header"
        self.tables.add("frames", row)

    def _session_event(self, ev: Any, info: _ConnInfo) -> None:
        s = ev.link.session if ev.__class__ is LinkAttached else ev.session
        key = id(s)
        times = info.session_info.get(key)
        if times is None:
            info.sessions.append(s)
            times = info.session_info[key] = [None, None]
        if ev.__class__ is SessionBegun:
            if times[0] is None:
                times[0] = ev.time
        elif ev.__class__ is SessionEnded:
            times[1] = ev.time

    # --- deliveries -----------------------------------------------------------------

    def _link_id(self, info: _ConnInfo, conn: Any, ls: Any) -> str | None:
        if ls is None:
            return None
        lid = info.links.get(id(ls))
        if lid is None:
            n = next(i for i, x in enumerate(conn.links) if x is ls) + 1
            lid = info.links[id(ls)] = f"{info.id}/{ls.session_no}/{n}"
        return lid

    def _delivery(self, rec: DeliveryRecord, info: _ConnInfo) -> None:
        message_id = None
        redeliveries = None
        if rec.protocol == AMQP10:
            link_id = self._link_id(info, rec.conn, rec.link_stats)
            last = None
            for e in rec.timeline:
                if e.kind == "transfer":
                    last = e.time
            if rec.payload:
                message_id, redeliveries = _message_facts(rec.payload)
            detail = _state_detail(rec.state)
            inner = replaced_outcome(rec.outcome, rec.state, rec.txn_result)
            if inner is not None:  # (`accepted`, `rejected: amqp:x: why`)
                detail = inner + (f": {detail}" if detail else "")
        else:
            link_id = f"{info.id}/0-10/{rec.link}"
            last = rec.first_time
            detail = None
            for s in rec.extra.get("headers") or ():
                if s.qname == "message.message-properties":
                    message_id = _text(s.fields.get("message-id"))
                elif s.qname == "message.delivery-properties":
                    redeliveries = 1 if s.fields.get("redelivered") else 0
        latency = rec.latency
        us = _us
        if not info.timed:  # (times unknown: no time, no latency)
            latency = None
            us = _none
        self.tables.add("deliveries", {
            "connection_id": info.id, "link_id": link_id, "protocol": rec.protocol,
            "link": rec.link, "address": rec.address, "sender": rec.sender,
            "delivery_id": rec.delivery_id, "tag": rec.tag, "message_id": message_id,
            "size": rec.size, "frames": rec.frames, "first_time": us(rec.first_time),
            "last_time": us(last), "outcome": rec.outcome, "outcome_detail": detail,
            "settled_by": rec.settled_by, "settled_time": us(rec.settled_time),
            "latency": latency, "presettled": rec.presettled, "second_mode": rec.second_mode,
            "redelivery_count": redeliveries, "resumed": rec.resumed, "aborted": rec.aborted,
            # (not whole: a gap took some of it, or a frame-trace log cut a payload short)
            "at_end": rec.at_end, "incomplete": not rec.seen_whole, "txn_id": rec.txn_id,
            "coordinator": rec.coordinator if rec.protocol == AMQP10 else None,
            PARTITION: info.date})

    # --- connections, sessions, links (once the connection is over) ----------------

    def finished(self, conn: Any) -> None:
        info = self.conns.pop(id(conn), None)
        if info is None:
            return
        add = self.tables.add
        us = _us if info.timed else _none
        row: dict[str, Any] = {
            "connection_id": info.id, "capture": info.capture, "line": info.line,
            "protocol": conn.protocol, "client": conn.client, "server": conn.server,
            "first_time": us(conn.first_time), "last_time": us(conn.last_time),
            "midstream": conn.midstream, "sessions": conn.sessions, "links": len(conn.links),
            "frames_client": conn.frames["client"], "frames_server": conn.frames["server"],
            "bytes_client": conn.bytes["client"], "bytes_server": conn.bytes["server"],
            "deliveries": conn.deliveries, "violations": conn.violations,
            "frame_errors": conn.frame_errors, "gaps": conn.gaps, "gap_bytes": conn.gap_bytes,
            "resyncs": conn.resyncs, "skipped_bytes": conn.skipped_bytes,
            "closed_client": conn.closed.get("client"),
            "closed_server": conn.closed.get("server"), "notes": list(conn.notes),
            "notices": [{"kind": k, "count": v} for k, v in sorted(info.notices.items())],
            PARTITION: info.date}
        model = conn.model
        if conn.protocol == AMQP10 and model is not None:
            row["sasl_mechanism"] = model.sasl_mechanism
            row["sasl_outcome"] = model.sasl_code
            for side in SIDES:
                o = model.open.get(side)
                if o is not None:
                    row[f"container_{side}"] = o.container_id
                    row[f"max_frame_{side}"] = o.max_frame_size
                    row[f"idle_timeout_{side}"] = o.idle_time_out
                    if side == "client":
                        row["hostname"] = o.hostname
            errs = [_error(getattr(model.close.get(s), "error", None)) for s in SIDES]
            row["close_error"] = next((e for e in errs if e), None)
        add("connections", row)
        for no, s in enumerate(info.sessions, 1):
            begin, end = info.session_info[id(s)]
            srow: dict[str, Any] = {
                "connection_id": info.id, "session_id": f"{info.id}/{no}", "session_no": no,
                "begin_time": us(begin), "end_time": us(end),
                "links": sum(1 for ls in conn.links if ls.link.session is s),
                PARTITION: info.date}
            errs = [_error(getattr(s.end.get(x), "error", None)) for x in SIDES]
            srow["end_error"] = next((e for e in errs if e), None)
            for side in SIDES:
                srow[f"channel_{side}"] = s.channel.get(side)
                b = s.begin.get(side)
                if b is not None:
                    srow[f"incoming_window_{side}"] = b.incoming_window
                    srow[f"outgoing_window_{side}"] = b.outgoing_window
                    srow[f"handle_max_{side}"] = b.handle_max
                srow[f"transfers_{side}"] = s.transfers.get(side)
            add("sessions", srow)
        for ls in conn.links:
            add("links", self._link_row(info, conn, ls))

    def _link_row(self, info: _ConnInfo, conn: Any, ls: Any) -> dict[str, Any]:
        link = ls.link
        timed = info.timed
        us = _us if timed else _none
        # (times unknown: no latency, and no stalls to tell, as the summary of a log says)
        lat = sorted(ls.latencies) if timed else []
        errs = [_error(getattr(link.detach.get(x), "error", None)) for x in SIDES]
        # a refused link (answered with a null terminus) is a link to what it asked for,
        # as the summary and `--links` have it
        asked = link.requested
        termini = asked if link.refused and asked is not None else link
        return {
            "connection_id": info.id, "link_id": self._link_id(info, conn, ls),
            "session_no": ls.session_no, "name": ls.name, "sender": link.sender,
            "initiator": link.initiator, "address": node_address(ls),
            "source_address": _text(getattr(termini.source, "address", None)),
            "target_address": _text(getattr(termini.target, "address", None)),
            "handle_client": ls.handles.get("client"), "handle_server": ls.handles.get("server"),
            "snd_settle_mode": link.snd_mode, "rcv_settle_mode": link.rcv_mode,
            "coordinator": link.coordinator, "refused": link.refused,
            "attach_time": us(ls.attached), "detach_time": us(ls.detached),
            "detach_error": next((e for e in errs if e), None),
            "deliveries": ls.deliveries, "settled": ls.settled, "bytes": ls.bytes,
            "outcomes": [{"outcome": k, "count": v} for k, v in sorted(ls.outcomes.items())],
            "transactions": [{"kind": k, "count": v}
                             for k, v in sorted(ls.transactions.items())],
            "latency_count": len(lat) if timed else None,
            "latency_p50": percentile(lat, 50) if lat else None,
            "latency_p90": percentile(lat, 90) if lat else None,
            "latency_p99": percentile(lat, 99) if lat else None,
            "latency_max": lat[-1] if lat else None,
            "flows": ls.flows, "drains": ls.drains, "echoes": ls.echoes,
            "max_credit": ls.max_credit,
            "stalls": [{"start": _us(a), "seconds": d} for a, d in ls.stalls] if timed else [],
            "stall_threshold": self.stall, "notes": list(ls.notes), PARTITION: info.date}


def _message_facts(payload: bytes) -> tuple[str | None, int | None]:
    """(message-id, header delivery-count) of a message's bytes; (None, None) when they
    do not decode."""
    from amqpcli.codec.message import Message

    try:
        m = Message.decode(payload)
        props = m.properties
        header = m.header
    except Exception:  # noqa: BLE001 - a damaged message still makes a delivery row
        return None, None
    mid = _text(getattr(props, "message_id", None)) if props is not None else None
    count = getattr(header, "delivery_count", None) if header is not None else None
    if count is None:
        return mid, 0
    # (a count sent as another type than a uint, as the views show it: not known)
    return mid, int(count) if isinstance(count, int) and not isinstance(count, bool) else None


class FlowJob:
    """The segments of one flow key → rows. `feed` them in canonical order with the file
    and packet they came from; `finish()` at the end. Connections are written out as soon
    as their flow is over (`retired`)."""

    __slots__ = ("_flow", "_flow_files", "captures", "dis", "ports", "rows", "stall", "tracker")

    def __init__(self, tables: Tables, captures: list[str], *, ports: tuple[int, ...] = (),
                 stall: float = 1.0) -> None:
        self.captures = captures  # file index -> path
        self.ports = ports
        self.stall = stall
        # as the dissector reads files: flows on 5672 are AMQP even without a header
        self.tracker = FlowTracker(DEFAULT_PORTS | frozenset(ports))
        self.rows = RowBuilder(tables, stall)
        self.dis: Dissector | None = None
        self._flow_files: dict[int, str] = {}  # flow index -> capture of its first packet
        self._flow: Any = None  # the flow opened last

    def _dissector(self) -> Dissector:
        if self.dis is None:
            self.dis = Dissector(keep_payload=True, stall_threshold=self.stall, ports=self.ports)
        return self.dis

    def feed(self, ts: int, seg: tuple[Any, ...], file: int, packet: int) -> None:
        tr = self.tracker
        n = tr.flow_count
        # (the tracker keeps the packet of bytes held beyond a hole: file and number in
        # one int)
        src, sport, dst, dport, seq, ack, flags, payload = seg
        if (tr.feed(ts, src, sport, dst, dport, seq, ack, flags, payload,
                    file << FILE_SHIFT | packet) is not None and tr.late_packets):
            if tr.flow_count != n:
                self._flow_files[n] = self.captures[file]
            self._run_numbered(file << FILE_SHIFT | packet)
        else:
            if tr.flow_count != n:
                self._flow_files[n] = self.captures[file]
            if not tr.events:
                return
            self._run(tr.events, self.captures[file], packet)
            tr.events.clear()
        if tr.open_flows() == 0:
            self._retire()

    def finish(self) -> None:
        tr = self.tracker
        tr.finish()
        if tr.events:
            self._run_numbered(0)  # (0: no packet, but for bytes held beyond a hole)
        self._retire()

    def _run_numbered(self, current: int) -> None:
        """Hand the tracker's events over in runs of one packet each (`current`, the
        packet fed last, but for bytes held beyond a hole: `FlowTracker.event_packets`)."""
        tr = self.tracker
        events = tr.events
        keys = tr.event_packets(current)
        i, n = 0, len(events)
        while i < n:
            key = keys[i]
            j = i + 1
            while j < n and keys[j] == key:
                j += 1
            number = key & NUMBER_MASK
            if number:
                self._run(events[i:j], self.captures[key >> FILE_SHIFT], number)
            else:
                self._run(events[i:j], None, None)
            i = j
        events.clear()

    def _run(self, events: list[Any], capture: str | None, packet: int | None) -> None:
        """Hand events to the dissector. Its connections appear when a flow is opened or,
        without a protocol header, at the flow's first bytes: the flow is the one opened
        last (a key's flows follow each other), so events are handed over in runs that
        end before each `Opened`."""
        dis = self._dissector()
        i = 0
        n = len(events)
        while i < n:
            j = i + 1
            while j < n and events[j].__class__ is not Opened:
                j += 1
            if events[i].__class__ is Opened:
                self._flow = events[i].flow
            self._records(dis.run(events[i:j]), capture, packet)
            i = j

    def _records(self, records: Any, capture: str | None, packet: int | None) -> None:
        rows = self.rows
        known = rows.conns
        for rec in records:
            conn = rec.conn
            if conn is not None and id(conn) not in known and self._flow is not None:
                flow = self._flow
                rows.opened(conn, flow, self._flow_files.get(flow.index, capture or ""))
            rows.record(rec, capture, packet)

    def _retire(self) -> None:
        """Every flow of the key is closed: write out its connections and forget them
        (a later connection on the same 4-tuple gets a fresh dissector)."""
        dis = self.dis
        if dis is None:
            return
        self._records(dis.finish(), None, None)
        for conn in dis.conns:
            self.rows.finished(conn)
        self.dis = None
        self._flow_files.clear()


Emit = Callable[[dict[str, list[dict[str, Any]]]], None]


class LogJob:
    """One frame-trace log → rows: its lines in order through one dissector, as
    `pcap-dump` reads a log. `warn` is told what the log reader warns of (a frame line
    that does not parse, a gzipped log cut short); `lines` counts the frame lines read.
    Rows go to `tables` as they come: `steps()` stops whenever `FLUSH_ROWS` rows have
    gathered, and once at the end, for the caller to take them; a connection's row, and
    its sessions and links, come at the end of the log."""

    FLUSH_ROWS = 20000

    def __init__(self, tables: Tables, path: str, *, ports: tuple[int, ...] = (),
                 stall: float = 1.0, warn: Callable[[str], None] | None = None,
                 source: Any = None) -> None:
        self.tables = tables
        self.path = path  # the log's name in the rows
        self.source = source if source is not None else path  # what is read
        self.ports = ports
        self.stall = stall
        self.warn = warn
        self.lines = 0

    def steps(self) -> Iterator[None]:
        """Read the whole log, stopping whenever rows have gathered (and at the end)."""
        from amqpcli.capture.tracelog import TraceReader

        kw: dict[str, Any] = {} if self.warn is None else {"warn": self.warn}
        reader = TraceReader([self.source], **kw)
        dis = Dissector(keep_payload=True, stall_threshold=self.stall, ports=self.ports)
        rows = RowBuilder(self.tables, self.stall)
        known = rows.conns
        path = self.path
        tables = self.tables
        for ev in reader.events():
            line = reader.packets
            # one event at a time: a connection's first record comes with its flow's event
            for rec in dis.run([ev]):
                conn = rec.conn
                if conn is not None and id(conn) not in known:
                    rows.opened(conn, ev.flow, path, line)
                rows.record(rec, path, line)
            if tables.count >= self.FLUSH_ROWS:
                yield
        self.lines = reader.packets
        for rec in dis.finish():
            rows.record(rec, path, None)
        for conn in dis.conns:
            rows.finished(conn)
        yield
