"""Capture events → frames → engine observer → records.

`Dissector.run(events)` takes the capture package's events (`Opened`, `Data`, `Gap`,
`Closed`, from a file, a live interface or TLS decryption) and yields records
(`records.py`) in capture order. Per TCP flow it picks a handler by the protocol the flow
speaks: AMQP 1.0 (with or without SASL) goes through a `DirectionReader` per direction and
one engine `Observer`; AMQP 0-10 through `amqpcli.amqp010.ConnectionObserver`; TLS and
other protocols get one notice. `Dissector.read(paths)` does the same for capture files
and knows which packet completed each frame.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal

from amqpcli.capture import (
    AMQP_0_10,
    AMQP_1_0,
    AMQP_SASL,
    AMQP_TLS,
    TLS,
    UNKNOWN,
    CaptureError,
    Closed,
    Data,
    FlowTracker,
    Gap,
    Opened,
    PacketDecoder,
    read_capture,
    read_packets,
)
from amqpcli.capture.files import found_paths, is_capture_file, opened_once, was_found
from amqpcli.capture.reader import FILE_SHIFT, NUMBER_MASK, first_of, merge_by_time
from amqpcli.capture.tcp import endpoint_text
from amqpcli.codec.frames import Frame, ProtocolHeader
from amqpcli.codec.framestart import CutShort
from amqpcli.dissect.records import (
    AMQP010,
    AMQP10,
    TXN_DECIDED,
    Conn,
    DeliveryRecord,
    FilePacket,
    FrameRecord,
    LinkFacts,
    LinkStats,
    Notice,
    ViolationRecord,
    txn_outcome,
)
from amqpcli.dissect.stats import transaction_kind
from amqpcli.dissect.streams import DirectionReader

if TYPE_CHECKING:
    from amqpcli.engine.observer import Observer as _Observer

# The engine's classes, bound by `_load_engine` when the first observer is made:
# `--frames-only` never imports the engine.
CreditChanged: Any = None
DeliverySettled: Any = None
DeliveryStarted: Any = None
DeliveryUpdated: Any = None
LinkAttached: Any = None
LinkDetached: Any = None
LinkRefused: Any = None
Observer: Any = None
SaslOutcome: Any = None
SessionBegun: Any = None
TerminusMismatch: Any = None
TransactionDischarged: Any = None
UnsettledReconciled: Any = None
Violation: Any = None
explained_by_gap: Any = None  # the after-gap rule, shared with the TUI

SIDES = ("client", "server")
_NEVER = [False]  # a stop flag never set: a run of every event
# the phases of a delivery whose payload may have stopped short of its last transfer
_ENDED_UNFINISHED = frozenset({"abandoned", "settled"})
DEFAULT_PORTS = frozenset({5672})  # flows on these are read even without a header
# seconds after a grant within which a delivery that starts shows its sender was waiting
# for that credit (a credit stall without a word of `available`); where the capture saw
# the TCP handshake, at least twice its round trip (`stall_prompt`): the grant goes on to
# the sender and its transfer comes back through the capture point
STALL_PROMPT = 0.1
Record = FrameRecord | DeliveryRecord | ViolationRecord | Notice


class Dissector:
    """Turns capture events into records. Options:

    * `keep_payload`: keep transfer payloads (messages) on delivery records (`--json`,
      message bodies in delivery views); frame records always carry the frame's payload.
    * `stall_threshold`: seconds a link may go without credit while its sender has
      something to send before it counts as a credit stall.
    * `ports`: TCP ports whose flows are read as AMQP 1.0 even without a protocol header
      (captures that start mid-connection).
    * `engine=False`: frames only (AMQP 1.0): no observer, so no deliveries, links,
      violations or events — the fastest way to list frames.
    * `delivery_records=False` (AMQP 1.0): no `DeliveryRecord` for a delivery that
      settles, and the delivery figures of its link (settled, bytes, outcomes,
      latencies) are not counted: for views that show neither. Deliveries started are
      still counted (`Conn.deliveries`, `LinkStats.deliveries`).
    * `delivery_updates=False` (AMQP 1.0): the frame records' engine events leave out
      `DeliveryUpdated` (a step of a delivery that did not start or settle it), which
      nothing here reads, and with `delivery_records=False` too `DeliverySettled`; only
      a caller that looks for the deliveries a frame concerns in its events (link and
      address filters) needs them.
    * `closed`: what a connection closed both ways keeps, so that memory follows the
      open connections where the views allow. "keep" (the default): everything, its
      engine model included (the table pipeline reads its sessions and links' engine
      objects; records may be collected first and looked into after). Any other: a
      caller must read each record before asking for the next, as `pcap-dump` does:
      from the next frame on, `Conn.link_for` knows no link retired (`Link.retired`),
      and no link of a closed connection. "facts": its figures and links,
      and of its engine model only what the end views read (`Conn.keep_facts`: for
      `--links`, `--connections`, `--summary`, the link and address filters' notes).
      "release": only its own figures (`Conn.release`: for views that read neither
      its model nor its links at the end). "forget": not even those: it leaves `conns`,
      handed to `on_forget` (which tallies what the caller reads at the end), so memory
      follows the open connections alone; `made` counts every connection.
    * `latencies=False`: keep no settlement latencies on the links
      (`LinkStats.latencies`, 8 bytes a settled delivery, which exact percentiles need):
      for views that print no link's latency (only `--links` and `--summary` do).
    * `credit_timeline=True`: keep every flow's credit on its link
      (`LinkStats.credit_timeline`, for `--links --json`); it grows with the capture.
    """

    def __init__(self, *, keep_payload: bool = False, stall_threshold: float = 1.0,
                 ports: Collection[int] = (), engine: bool = True,
                 delivery_records: bool = True, delivery_updates: bool = True,
                 credit_timeline: bool = False, latencies: bool = True,
                 closed: Literal["keep", "facts", "release", "forget"] = "keep",
                 on_forget: Callable[[Conn], None] | None = None) -> None:
        if closed not in ("keep", "facts", "release", "forget"):
            raise ValueError(f"closed={closed!r}: keep, facts, release or forget")
        self.engine = engine
        self.closed_mode = closed  # (what a closed connection keeps)
        self.on_forget = on_forget
        self.made = 0  # connections made (`conns` holds them all but those forgotten)
        self.credit_timeline = credit_timeline
        self.latencies = latencies
        self.delivery_records = delivery_records
        self.delivery_updates = delivery_updates
        self.keep_payload = keep_payload
        self.stall_threshold = stall_threshold
        self.ports = frozenset(ports) | DEFAULT_PORTS
        self.conns: list[Conn] = []
        self.capture_errors: list[CaptureError] = []
        self.other_flows: dict[str, int] = {}  # protocol -> flows not shown
        self.first_time: float | None = None
        self.last_time = 0.0
        self._handlers: dict[int, Any] = {}  # flow index -> handler
        self._encrypted: list[tuple[Conn, Any]] = []  # (connection, flow) not decoded
        self.decoder = PacketDecoder()  # counts the packets: see `packets`
        # links a connection ended with attached, for a later connection between the
        # same containers to resume (made with the engine: `_Handler10`)
        self.shelf: Any = None

    @property
    def packets(self) -> int:
        """Packets read so far, of every file."""
        return self.decoder.packets

    # --- inputs ---------------------------------------------------------------------

    def read(self, sources: str | os.PathLike[str] | Iterable[Any], *,
             waiting: AbstractContextManager[Any] | None = None,
             stopped: list[bool] = _NEVER,
             found: Collection[str] | None = None) -> Iterator[Record]:
        """Records of capture files or streams (several are merged by time). A record's
        packet is the one that completed it, numbered in its own file as tshark numbers
        frames; with several files a `FilePacket`, which names the file too. A damaged
        file ends in a `capture-error` notice after every readable record; the error is
        kept in `capture_errors`. `waiting`: see `amqpcli.capture.files`. `stopped[0]`
        set (by a signal) ends the records before the next capture event: the records of
        an event all go out, so what the model took in is what was handed out. `found`:
        the paths found in folders or by globs (see `read_capture`)."""
        found = found_paths(sources, found)
        if isinstance(sources, (str, os.PathLike)) or hasattr(sources, "read"):
            sources = [sources]
        # (a file read once, a named pipe, is peeked at to tell a log from a capture)
        srcs = [opened_once(s, waiting) for s in sources]
        if not all(is_capture_file(s) for s in srcs):
            # (the log reader only for what may be a log: captures start without it)
            from amqpcli.capture.tracelog import are_trace_logs, not_a_log_error, read_trace_logs

            if are_trace_logs(srcs):
                # frame-trace logs, not captures: each frame numbered by its line
                return self._run(read_trace_logs(srcs, numbering=self.decoder,
                                                 waiting=waiting), self.decoder, stopped)
            text = not_a_log_error(srcs[0]) if len(srcs) == 1 else None
            if text is not None:  # (as the capture reader's damage: a notice, then the error)
                return self._run(_raising(text), self.decoder, stopped)
        if len(srcs) == 1:
            # the decoder's count is the packet's number: records yielded right after a
            # packet was fed belong to that packet
            events = read_capture(srcs, ports=self.ports, decoder=self.decoder,
                                  waiting=waiting, found=found)
            return self._run(events, self.decoder, stopped)
        merged = _MergedFiles(srcs, self.ports, self.decoder, waiting, found)
        return self._run(merged.events(), merged, stopped)

    def run(self, events: Iterable[Any], *, stopped: list[bool] = _NEVER) -> Iterator[Record]:
        """Records of any stream of capture events (live, decrypted, crafted); `stopped`
        as for `read`."""
        return self._run(events, None, stopped)

    def _run(self, events: Iterable[Any], numbering: PacketDecoder | _MergedFiles | None,
             stopped: list[bool]) -> Iterator[Record]:
        # one generator for `read` and `run`, so each record is handed out from here;
        # from files (`numbering`: what says which packet the events came from), records
        # carry the packet's number and damage ends in a notice
        handlers = self._handlers
        try:
            for ev in events:
                if stopped[0]:
                    return
                packet = numbering.packets if numbering is not None else 0
                cls = ev.__class__
                if cls is Data:
                    h = handlers.get(ev.flow.index)
                    if h is not None:
                        if h.__class__ is _Deferred:
                            h = yield from self._start(h, packet)
                        yield from h.data(ev, packet)
                    else:  # (an encrypted connection's bytes: only their time is kept)
                        ev.flow.last_ns = ev.time_ns
                elif cls is Opened:
                    yield from self._opened(ev, packet)
                elif cls is Gap:
                    h = handlers.get(ev.flow.index)
                    if h is not None:
                        yield from h.gap(ev, packet)
                elif cls is Closed:
                    # (every look-up is `get`: a flow without an entry is one without a
                    # reader, as one whose entry is None: not AMQP, encrypted)
                    h = handlers.get(ev.flow.index)
                    if h is None:
                        handlers.pop(ev.flow.index, None)
                    else:
                        yield from h.closed(ev, packet)
                        if h.__class__ is _Deferred:
                            if len(h.ended) == 2:  # (never a byte: a probe, a scan)
                                del handlers[ev.flow.index]
                        elif h.done:
                            # both sides closed: its readers go (memory follows the open
                            # connections); a late segment is let be. (A flow that has
                            # sent nothing yet may still, until both its sides closed.)
                            del handlers[ev.flow.index]
                            if self.closed_mode == "release":
                                h.conn.release()
                            elif self.closed_mode == "facts":
                                h.conn.keep_facts()
                            elif self.closed_mode == "forget":
                                self._forget(h.conn)
        except CaptureError as e:
            if numbering is None:
                raise
            self.capture_errors.append(e)
            # (of several files, which one's packet is in the error's text)
            packet = self.packets if numbering is self.decoder else 0
            yield Notice(None, None, self.last_time, packet, "capture-error", str(e))
        if numbering is not None:  # a whole capture read (`run`'s callers: `finish`)
            self._end_encrypted()

    def _forget(self, conn: Conn) -> None:
        conn.release()
        # from the end: the connections made after it are few, the ones kept to the end
        # (encrypted, other protocols) may be many
        conns = self.conns
        for i in range(len(conns) - 1, -1, -1):
            if conns[i] is conn:
                del conns[i]
                break
        if self.on_forget is not None:
            self.on_forget(conn)

    def _new_conn(self) -> tuple[int, str]:
        """The next connection's number and label: c1, c2, ... in order of first sight."""
        self.made += 1
        return self.made, f"c{self.made}"

    def _end_encrypted(self) -> None:
        """Encrypted connections run to their flows' last packets, which no event says
        (their packets are not read): once, at the end."""
        for conn, flow in self._encrypted:
            conn.last_time = max(conn.last_time, flow.last_ns / 1e9)
        self._encrypted.clear()

    def _opened(self, ev: Opened, packet: int) -> Iterator[Record]:
        flow = ev.flow
        t = ev.time_ns / 1e9
        if self.first_time is None:
            self.first_time = t
        proto = flow.protocol or UNKNOWN
        selected = proto in (AMQP_1_0, AMQP_SASL, AMQP_0_10, AMQP_TLS) or (
            proto == UNKNOWN and flow.by_port)
        tls = proto == TLS and (flow.server_port in self.ports or flow.server_port == 5671)
        if not selected and not tls:
            self.other_flows[proto] = self.other_flows.get(proto, 0) + 1
            self._handlers[flow.index] = None
            return
        if proto == UNKNOWN:
            # no header: a connection only once it carries bytes (not a refused probe)
            self._handlers[flow.index] = _Deferred(flow, t)
            return
        conn = Conn(*self._new_conn(), _ep(flow.client),
                    _ep(flow.server), proto, t, t, timed=_timed(flow), source=_source(flow),
                    cut_payloads=getattr(flow, "cut", None))
        self.conns.append(conn)
        if proto == AMQP_0_10:
            conn.protocol = AMQP010
            self._handlers[flow.index] = _Handler010(self, conn)
        elif tls or proto == AMQP_TLS:
            self._handlers[flow.index] = None
            self._encrypted.append((conn, flow))  # (its last packet's time: `_end_encrypted`)
            what = "TLS" if tls else "AMQP over TLS (protocol id 2)"
            text = f"{what}: encrypted, not decoded (give --tls-keylog FILE to decrypt)"
            conn.notes.append(text)
            yield Notice(conn, None, t, packet, "encrypted", text)
        else:
            conn.protocol = AMQP10
            self._handlers[flow.index] = _Handler10(self, conn, handshake=flow.handshake,
                                                    prompt=stall_prompt(flow))

    def _start(self, d: _Deferred, packet: int) -> Generator[Record, None, _Handler10]:
        """The first bytes of a flow that had no protocol header: read it as AMQP 1.0
        joined mid-connection."""
        flow = d.flow
        conn = Conn(*self._new_conn(), _ep(flow.client),
                    _ep(flow.server), AMQP10, d.time, d.time, timed=_timed(flow),
                    source=_source(flow), cut_payloads=getattr(flow, "cut", None))
        conn.midstream = True
        self.conns.append(conn)
        h = _Handler10(self, conn, prompt=stall_prompt(flow))
        self._handlers[flow.index] = h
        text = "no protocol header: the capture starts mid-connection"
        conn.notes.append(text)
        yield Notice(conn, None, d.time, packet, "midstream", text)
        return h

    def finish(self) -> Iterator[Record]:
        """Nothing left open after `run`: the capture's end closes every flow (how="end");
        kept for callers that feed events themselves and stop early."""
        self._end_encrypted()
        for h in list(self._handlers.values()):
            if h is not None and not h.done:
                yield from h.finish(self.last_time, self.packets)


def _timed(flow: Any) -> bool:
    """Whether a flow's events carry times: a capture's do; a frame-trace log's
    (`TraceFlow`) say."""
    return getattr(flow, "timed", True)


def stall_prompt(flow: Any) -> float:
    """`STALL_PROMPT`, or twice the round trip of the flow's TCP handshake if longer (a
    frame-trace log's flow, or one captured without its handshake, has none)."""
    rtt = getattr(flow, "rtt_ns", None)
    return STALL_PROMPT if rtt is None else max(STALL_PROMPT, 2 * rtt / 1e9)


def _source(flow: Any) -> str:
    """What a flow was read from (`Conn.source`): a frame-trace log's (`TraceFlow`) is
    the one that says whether it is timed."""
    return "log" if hasattr(flow, "timed") else "capture"


_ep = endpoint_text  # (a connection's endpoints, named as the capture layer names them)


class _Deferred:
    """A flow without a protocol header on an AMQP port, before its first bytes."""

    done = True  # nothing to finish if no bytes ever come

    __slots__ = ("ended", "flow", "time")

    def __init__(self, flow: Any, time: float) -> None:
        self.flow = flow
        self.time = time
        self.ended: set[int] = set()  # the directions that closed

    def gap(self, ev: Any, packet: int) -> Iterator[Record]:
        return iter(())

    def closed(self, ev: Any, packet: int) -> Iterator[Record]:
        self.ended.add(ev.direction)
        return iter(())


class _Handler:
    done = False

    def data(self, ev: Any, packet: int) -> Iterable[Record]:
        raise NotImplementedError

    def gap(self, ev: Any, packet: int) -> Iterator[Record]:
        raise NotImplementedError

    def closed(self, ev: Any, packet: int) -> Iterator[Record]:
        raise NotImplementedError

    def finish(self, t: float, packet: int) -> Iterator[Record]:
        raise NotImplementedError


# --- AMQP 1.0 --------------------------------------------------------------------------


class _Handler10(_Handler):
    """One AMQP 1.0 connection: a reader per direction, one observer for both."""

    def __init__(self, dis: Dissector, conn: Conn, handshake: bool = True,
                 prompt: float = STALL_PROMPT) -> None:
        self.dis = dis
        self.conn = conn
        self.stall_prompt = prompt  # (`_stall_sent`)
        # without the TCP handshake a side's protocol header may be before the capture:
        # the sides whose first item is still to come
        self._unheard = set() if handshake or conn.midstream else set(SIDES)
        self.observer: _Observer | None = None
        if dis.engine:
            _load_engine()
            self.observer = Observer(SIDES, keep_payload=dis.keep_payload,
                                     midstream=conn.midstream,
                                     updates=dis.delivery_updates,
                                     settled=dis.delivery_updates or dis.delivery_records)
            self._model = self.observer.connection
            if dis.shelf is None:
                from amqpcli.engine.shelf import LinkShelf

                dis.shelf = LinkShelf()
            self._model.shelf = dis.shelf
            self._model.label = conn.label
        conn.observer = self.observer
        self._count = 0  # frames, when there is no observer to count them
        self.readers = {s: DirectionReader(hunting=conn.midstream) for s in SIDES}
        self._sessions: list[Any] = []
        # deliveries settled in a transaction not yet discharged, by txn-id: handed out
        # when it is (committed: their outcome; rolled back), or at the connection's end
        # (undecided)
        self._held: dict[bytes, list[DeliveryRecord]] = {}
        # links retired by the last frame (`Link.retired`): made small (`_let_go`) at the
        # next, once the records of that frame, which may look them up, have been read
        self._retired: list[LinkStats] = []

    def data(self, ev: Any, packet: int) -> Iterable[Record]:
        # not a generator itself: most chunks complete one frame or none, and the
        # records come from one generator (`_items`) or none
        side = SIDES[ev.direction]
        t = ev.time_ns / 1e9
        conn = self.conn
        # (bytes held beyond a hole keep their own, earlier time: never go back; a compare,
        # not a call of max, on this path of every chunk)
        if t > conn.last_time:  # noqa: PLR1730
            conn.last_time = t
        if t > self.dis.last_time:  # noqa: PLR1730
            self.dis.last_time = t
        data = ev.data
        conn.bytes[side] += len(data)
        reader = self.readers[side]
        items = reader.feed(data)
        if self._unheard and items and side in self._unheard:
            missed = self._first_item(side, items[0], t, packet)
            if missed is not None:
                return itertools.chain((missed,), self._notes(reader, side, t, packet),
                                       self._items(side, items, t, packet))
        if reader.notes:
            return itertools.chain(self._notes(reader, side, t, packet),
                                   self._items(side, items, t, packet))
        if not items:
            return ()
        if self.observer is None:  # (as _items)
            return self._frames_only(side, items, t, packet)
        if len(items) == 1 and items[0].__class__ is Frame:
            # one frame (most chunks): its records in a list, all made before any is
            # handed out, as `_observed` does for each frame
            item = items[0]
            model = self._model
            events = model.on_frame(side, item, t)
            conn.frames[side] += 1
            rec = FrameRecord(conn, side, t, packet, model.frame_no, item, events)
            if events:
                return self._events(events, t, packet, [rec], item)
            return (rec,)
        return self._observed(side, items, t, packet)

    def _first_item(self, side: str, item: Any, t: float, packet: int) -> Notice | None:
        """The first item from `side` of a flow captured without its handshake: a frame
        there means its protocol header came before the capture (the connection is read
        as joined mid-connection from then on); the notice that says so, or None."""
        self._unheard.discard(side)
        if item.__class__ is not Frame:
            return None
        conn = self.conn
        conn.midstream = True
        if self.observer is not None:
            self.observer.connection.midstream = True
        text = ("its protocol header is not in the capture, which starts mid-connection "
                "(after the TCP handshake)")
        conn.notes.append(text)
        return Notice(conn, side, t, packet, "midstream", text)

    def _notes(self, reader: DirectionReader, side: str, t: float,
               packet: int) -> Iterator[Record]:
        conn = self.conn
        for text in reader.notes:
            kind = "resync" if text.startswith("resync") else "skipped"
            conn.resyncs = reader.resyncs + self.readers[_other(side)].resyncs
            conn.skipped_bytes = (reader.skipped_total
                                  + self.readers[_other(side)].skipped_total)
            yield Notice(conn, side, t, packet, kind, text)
        reader.notes.clear()

    def _items(self, side: str, items: list[Any], t: float, packet: int) -> Iterable[Record]:
        """The records of the items read from one direction."""
        if self.observer is None:
            return self._frames_only(side, items, t, packet)
        return self._observed(side, items, t, packet)

    def _observed(self, side: str, items: list[Any], t: float,
                  packet: int) -> Iterator[Record]:
        conn = self.conn
        obs = self.observer
        assert obs is not None
        model = obs.connection
        on_frame = model.on_frame  # (obs.feed for a Frame)
        feed = obs.feed
        frames = conn.frames
        for item in items:
            cls = item.__class__
            if cls is Frame:
                events = on_frame(side, item, t)
                frames[side] += 1
                rec = FrameRecord(conn, side, t, packet, model.frame_no, item, events)
            elif cls is ProtocolHeader:
                events = feed(side, item, t)
                rec = FrameRecord(conn, side, t, packet, 0, item, events)
            else:
                events = feed(side, item, t)
                conn.frame_errors += 1
                frames[side] += 1
                rec = FrameRecord(conn, side, t, packet, model.frame_no, item, events)
            if events:
                # what the frame caused is known (links, counters) before the frame is
                # handed out, and the records it caused follow it
                derived = self._events(events, t, packet, None, item)
                yield rec
                yield from derived
            else:
                yield rec

    def _frames_only(self, side: str, items: list[Any], t: float,
                     packet: int) -> list[Record]:
        # a list, not a generator: without an observer nothing a consumer might look at
        # changes between one record and the next
        conn = self.conn
        count = self._count
        out: list[Record] = []
        for item in items:
            cls = item.__class__
            if cls is Frame:
                count += 1
                out.append(FrameRecord(conn, side, t, packet, count, item, _NO_EVENTS))
            elif cls is ProtocolHeader:
                out.append(FrameRecord(conn, side, t, packet, 0, item, _NO_EVENTS))
            else:
                count += 1
                conn.frame_errors += 1
                out.append(FrameRecord(conn, side, t, packet, count, item, _NO_EVENTS))
        conn.frames[side] += count - self._count
        self._count = count
        return out

    def _events(self, events: list[Any], t: float, packet: int,
                out: list[Record] | None = None, frame: Any = None) -> list[Record]:
        """What the engine's events of one frame (`frame`, or of the transport's end)
        change in the connection's and links' figures, and the records they make, appended
        to `out` (the frame's record, if given). A list: the records are all made before
        any is handed out (a frame's records follow the frame)."""
        conn = self.conn
        if self._retired:
            self._let_go()
        if out is None:
            out = []
        records = self.dis.delivery_records
        decided: list[Record] = []  # deliveries of a transaction discharged here
        for ev in events:
            cls = ev.__class__
            if cls is DeliveryStarted:
                d = ev.delivery
                ls = conn._by_link.get(id(d.link))  # (conn.link_for)
                if ls is not None:
                    ls.deliveries += 1
                    conn.deliveries += 1
                    link = d.link
                    if link.implicit and ls.deliveries == 1 and records:
                        ls.first_unseen = d
                    if ls.stall_unproven is not None:
                        self._stall_sent(ls, t)
                    if link.link_credit <= 0 and ls.credit_zero_since is None:
                        ls.credit_zero_since = t
                        ls.stall_available = _has_more(ls)
            elif cls is DeliverySettled:
                if records:
                    rec = self._delivery(ev.delivery, False)
                    if rec is not None:
                        out.append(rec)
            elif cls is TransactionDischarged:
                # after the discharge's own record (its settlement follows this event)
                decided.extend(self._decided(rec, ev.outcome)
                               for rec in self._held.pop(bytes(ev.txn_id), ()))
            elif cls is DeliveryUpdated:
                pass  # (a disposition's step: known from the delivery when it settles)
            elif cls is CreditChanged:
                if ev.link is not None:
                    self._credit(ev, t, frame)
            elif cls is Violation:
                link = ev.link
                if explained_by_gap(ev.kind, conn.gaps):
                    # the frames that would explain it may be the ones the capture lost
                    out.append(Notice(conn, ev.side, t, packet, "after-gap",
                                      f"frame {ev.frame_no}: {ev.detail} (after bytes the "
                                      "capture lost, so not called a violation)"))
                    continue
                conn.violations += 1
                out.append(ViolationRecord(conn, AMQP10, ev.kind, ev.side, ev.detail,
                                           ev.frame_no, packet, t,
                                           str(link.name) if link is not None else None))
            elif cls is LinkAttached:
                link = ev.link
                ls = conn.link_for(link)
                if ls is None:
                    no = self._session_no(link.session)
                    ls = LinkStats(link, no, attached=t)
                    conn.add_link(ls)
                ls.handles.update(link.handle)
                ls._address = None  # termini may have changed
            elif cls is LinkDetached:
                ls = conn.link_for(ev.link)
                if ls is not None:
                    ls.detached = t
                    self._stall_end(ls, t, False)
                    if (ev.link.retired and self.dis.closed_mode != "keep"
                            and ls not in self._retired):
                        self._retired.append(ls)
            elif cls is SessionBegun:
                self._session_no(ev.session)
            elif cls is TerminusMismatch:
                diffs = "; ".join(_difference_text(d) for d in ev.differences)
                text = f"link {ev.link.name!r}: {ev.side} granted differently: {diffs}"
                ls = conn.link_for(ev.link)
                if ls is not None:
                    ls.notes.append(text)
                out.append(Notice(conn, ev.side, t, packet, "link", text))
            elif cls is UnsettledReconciled:
                text = (f"link {ev.link.name!r}: {ev.side}'s unsettled map on re-attach vs "
                        f"what was seen: {len(ev.only_in_attach)} only in the attach, "
                        f"{len(ev.only_in_model)} only seen, {len(ev.state_differs)} "
                        "with another state")
                ls = conn.link_for(ev.link)
                if ls is not None:
                    ls.notes.append(text)
                out.append(Notice(conn, ev.side, t, packet, "link", text))
            elif cls is LinkRefused:
                err = ev.error
                text = f"link {ev.link.name!r} refused by {ev.side}" + (
                    f": {getattr(err, 'condition', err)}" if err is not None else "")
                ls = conn.link_for(ev.link)
                if ls is not None:
                    ls.notes.append(text)
                out.append(Notice(conn, ev.side, t, packet, "link", text))
            elif cls is SaslOutcome:
                conn.sasl_outcome = ev.code
        if decided:
            out.extend(decided)
        return out

    def _let_go(self) -> None:
        """The links retired by the last frame, on a connection still open: like the
        connection once it closes (`Conn.keep_facts`, `Conn.release`), each keeps only
        what the end views read of it, or goes where they read none, so a connection
        that attaches and detaches link after link does not keep them all."""
        conn = self.conn
        for ls in self._retired:
            conn._by_link.pop(id(ls.link), None)
            if self.dis.closed_mode == "facts":
                ls.link = LinkFacts(ls.link)
                ls.first_unseen = None  # (a Delivery: it would keep the engine's model)
            else:
                conn.links.remove(ls)
        self._retired.clear()

    def _session_no(self, session: Any) -> int:
        """The session's number in this connection, 1-based, in order of first sight."""
        for i, s in enumerate(self._sessions):
            if s is session:
                return i + 1
        self._sessions.append(session)
        self.conn.sessions = len(self._sessions)
        return len(self._sessions)

    def _credit(self, ev: CreditChanged, t: float, frame: Any) -> None:
        ls = self.conn.link_for(ev.link)
        if ls is None:
            return
        if ev.side == ev.link.sender:
            # (the event's `available` is the link's: an earlier flow's, if this one left
            # it out)
            said = getattr(getattr(frame, "body", None), "available", None)
            if said is not None:
                ls.sender_available = int(said)
                ls.available_at = ls.deliveries
        ls.flows += 1
        if ev.drain:
            ls.drains += 1
        if ev.echo:
            ls.echoes += 1
        credit = ev.link_credit
        if credit is not None and credit > ls.max_credit:
            ls.max_credit = credit
        if self.dis.credit_timeline:
            ls.credit_timeline.append((t, ev.side, credit, ev.delivery_count, ev.available,
                                       ev.drain, ev.echo))
        if credit is not None and credit > 0:
            self._stall_end(ls, t, True)
        elif credit is not None and credit <= 0:
            if ls.credit_zero_since is None:
                ls.credit_zero_since = t
            if _has_more(ls):
                ls.stall_available = True

    def _stall_end(self, ls: LinkStats, t: float, granted: bool) -> None:
        """Credit came back (`granted`), or the link or its connection ended: the wait
        since credit ran out is a stall if it was long enough and the sender had something
        to send. A sender that said it had (`_has_more`) did; a wait that a grant ended
        without a word of that is a stall only if a delivery starts at once
        (`_stall_sent`)."""
        start = ls.credit_zero_since
        if start is None:
            return
        ls.credit_zero_since = None
        waited = t - start
        if waited >= self.dis.stall_threshold:
            if ls.stall_available:
                ls.stalls.append((start, waited))
                ls.stall_unproven = None
            elif granted:
                ls.stall_unproven = (start, waited, t)
        ls.stall_available = False

    def _stall_sent(self, ls: LinkStats, t: float) -> None:
        """A delivery starts on a link whose wait for credit a grant ended (`_stall_end`):
        sent the moment credit came back (within `stall_prompt` seconds), the sender was
        waiting with it, and the wait is a stall."""
        unproven = ls.stall_unproven
        assert unproven is not None
        ls.stall_unproven = None
        start, waited, granted = unproven
        if t - granted <= self.stall_prompt:
            ls.stalls.append((start, waited))

    def _delivery(self, d: Any, at_end: bool) -> DeliveryRecord | None:
        """The record of a delivery that reached its end; None while the transaction it
        was settled in is undecided (`_held`: handed out once it is)."""
        rec = self._record(d, at_end)
        link = d.link
        if link.coordinator:
            req = d.txn_request
            name = getattr(req, "NAME", None)
            rec.coordinator = name if name in ("declare", "discharge") else "request"
            if name == "discharge":
                rec.txn_id = _binary(req.txn_id)
                if rec.txn_id is not None:
                    rec.txn_result = self._model.transactions.get(rec.txn_id)
            elif name == "declare":
                rec.txn_id = _binary(getattr(d.receiver_state, "txn_id", None))
        elif rec.txn_id is not None:
            rec.txn_id = _binary(rec.txn_id)
            result = self._model.transactions.get(rec.txn_id)  # type: ignore[arg-type]
            if result is None or result == "active":
                if rec.outcome in TXN_DECIDED and not rec.at_end:
                    self._held.setdefault(rec.txn_id, []).append(  # type: ignore[arg-type]
                        rec)
                    return None
            else:
                return self._decided(rec, result)
        self._tally(rec)
        return rec

    def _decided(self, rec: DeliveryRecord, result: str | None) -> DeliveryRecord:
        """A delivery in a transaction, once it is known what became of the transaction
        (None: not discharged in the capture), counted."""
        rec.txn_result = result if result is not None else "undecided"
        rec.outcome = txn_outcome(rec.outcome, result)
        self._tally(rec)
        return rec

    def _undecided(self) -> list[Record]:
        """The deliveries held for transactions never discharged: undecided."""
        out: list[Record] = []
        for recs in self._held.values():
            out.extend(self._decided(r, None) for r in recs)
        self._held.clear()
        return out

    def _tally(self, rec: DeliveryRecord) -> None:
        """A delivery's figures on its link: messages by outcome, a coordinator's
        requests by what became of the transaction."""
        ls = rec.link_stats
        if ls is None:
            return
        ls.settled += 1
        ls.bytes += rec.size
        if rec.coordinator is not None:
            kind = transaction_kind(rec)
            ls.transactions[kind] = ls.transactions.get(kind, 0) + 1
        else:
            ls.outcomes[rec.outcome] = ls.outcomes.get(rec.outcome, 0) + 1
        first = rec.first_time  # (rec.latency)
        settled_time = rec.settled_time
        if (first is not None and settled_time is not None and not rec.presettled
                and self.dis.latencies):
            ls.latencies.append(settled_time - first)

    def _record(self, d: Any, at_end: bool) -> DeliveryRecord:
        conn = self.conn
        link = d.link
        ls = conn._by_link.get(id(link))  # (conn.link_for)
        outcome = d.outcome
        # abandoned when a side's stream ended: by the capture's end (how="end"), not by
        # the connection, it is a delivery still unsettled when the capture stopped (one
        # its sender settled as it began, still being transferred, is settled), and its
        # timeline has no abandon step: the transport did not end, the capture did
        timeline = d.timeline
        by_capture = outcome == "abandoned" and _ended_by_capture(d, conn)
        if by_capture:
            timeline = timeline[:-1]
        end = at_end or (by_capture and not d.presettled)
        # aborted, abandoned, unsettled: never settled, so no settlement time or latency
        # (an abort frame may say settled, as proton's does: it gives the delivery up,
        # with no outcome; `settled_by` still says who). Settled: the time of the frame
        # that settled it first, the one `settled_by` names (`first_settled_time`)
        settled_time = d.first_settled_time if d.settled_time is not None else None
        if end:
            outcome = "unsettled"
        elif by_capture:
            outcome = "settled"
        state = d.receiver_state if d.receiver_state is not None else d.sender_state
        settled_by = None
        if d.settled_by is not None:
            settled_by = "sender" if d.settled_by == d.sender else "receiver"
        second = (d.rcv_settle_mode if d.rcv_settle_mode is not None else link.rcv_mode) == 1
        rec = DeliveryRecord(
            conn, AMQP10, str(link.name), ls.address() if ls is not None else None,
            d.sender, d.delivery_id, d.tag, d.size, d.frames, outcome, state, settled_by,
            d.presettled, second, d.first_time, settled_time, d.txn_id, d.resumed,
            d.aborted, end, timeline,
            d.payload if self.dis.keep_payload else None, ls,
            # its message not seen whole: a gap took transfers, or it ended with more to
            # come: abandoned (its stream, link or session ended; the capture stopped),
            # or settled by a resume that sent none of the rest
            incomplete=(conn.gaps > 0 and d.incomplete) or (
                not d.payload_ready and d.phase in _ENDED_UNFINISHED),
            message_format=d.message_format, resumed_from=d.origin)
        if ls is not None and ls.first_unseen is d:
            rec.may_be_tail = True
            ls.first_unseen = None
        return rec

    def gap(self, ev: Any, packet: int) -> Iterator[Record]:
        side = SIDES[ev.direction]
        t = ev.time_ns / 1e9
        conn = self.conn
        conn.gaps += 1
        conn.gap_bytes += ev.size
        self.readers[side].gap(ev.size)
        # frames before the gap are missing: what follows is judged leniently, and the
        # deliveries the side was in the middle of sending lost transfers (incomplete)
        if self.observer is not None:
            self._model.on_gap(side, ev.size, t)
        yield Notice(conn, side, t, packet, "gap",
                     f"{ev.size} bytes from the {side} missing from the capture "
                     f"(stream offset {ev.offset}); looking for the next frame")

    def closed(self, ev: Any, packet: int) -> Iterator[Record]:
        side = SIDES[ev.direction]
        t = ev.time_ns / 1e9
        yield from self._close_side(side, ev.how, t, packet)

    def _close_side(self, side: str, how: str, t: float, packet: int) -> Iterator[Record]:
        conn = self.conn
        if side in conn.closed:
            return
        conn.closed[side] = how
        reader = self.readers[side]
        items = reader.close()
        if reader.notes:
            yield from self._notes(reader, side, t, packet)
        if items:
            yield from self._items(side, items, t, packet)
        if reader.cut is not None:
            yield from self._cut_short(side, reader.cut, how, t, packet)
        if reader.opaque is not None and reader.opaque != "error":
            yield Notice(conn, side, t, packet, "opaque",
                         f"after its {reader.opaque} header the {side}'s bytes are not decoded")
        if self.observer is not None:
            events = self.observer.transport_closed(side, t, how)
            for ls in conn.links:
                self._stall_end(ls, t, False)
            yield from self._events(events, t, packet)
        if len(conn.closed) == 2:
            self.done = True
            yield from self._undecided()

    def _cut_short(self, side: str, cut: CutShort, how: str, t: float,
                   packet: int) -> Iterator[Record]:
        """The stream from `side` ended inside a frame (or protocol header) whose start
        is sound: a notice, not a frame error. Its sender went away or the capture
        stopped; the delivery it was part of is abandoned or unsettled, and incomplete
        (`_delivery`). The observer still finds a frame larger than its receiver's
        max-frame-size a violation: the size is wrong, cut or not."""
        conn = self.conn
        frame_no = self._count + 1
        events: list[Any] = []
        if self.observer is not None:
            frame_no = self._model.frame_no + 1
            events = self.observer.feed(side, cut, t)
        text = cut.text(side, how, frame_no)
        conn.notes.append(text)
        yield Notice(conn, side, t, packet, "truncated", text)
        if events:
            yield from self._events(events, t, packet)

    def finish(self, t: float, packet: int) -> Iterator[Record]:
        for side in SIDES:
            yield from self._close_side(side, "end", t, packet)


_NO_EVENTS: list[Any] = []


def _raising(error: Exception) -> Iterator[Any]:
    """Events of a source that is no capture: none, its error."""
    raise error
    yield


class _MergedFiles:
    """Several capture files as `read_capture` reads them (merged by time, ties in the
    order given, each file opened when the merge reaches its first packet), and which
    packet the events handed out last came from: `packets`, its number in its own file
    with that file's name (a `FilePacket`). The merge is `amqpcli.capture.reader`'s
    (`merge_files`), with each file's packets counted on their own: it counts them
    across the files (`merge_by_time` with each file's packets numbered)."""

    def __init__(self, sources: list[Any], ports: Collection[int], decoder: PacketDecoder,
                 waiting: AbstractContextManager[Any] | None,
                 found: Collection[str] = ()) -> None:
        self.sources = sources
        self.found = found  # the paths found in folders or by globs
        self.names = [os.fspath(s) if isinstance(s, (str, os.PathLike)) else "-"
                      for s in sources]
        self.ports = ports
        self.decoder = decoder
        self.waiting = waiting
        self.packets: int = 0

    def events(self) -> Iterator[Any]:
        tracker = FlowTracker(self.ports)
        out = tracker.events
        feed = tracker.feed
        decode = self.decoder.decode
        names = self.names
        errors: list[CaptureError] = []
        late = tracker.late_packets
        file = number = 0
        for ts, file, number, linktype, data in self._packets(errors):
            seg = decode(linktype, data)
            if seg is not None:
                # (the tracker keeps the packet of bytes held beyond a hole: file and
                # number in one int, `FILE_SHIFT`)
                if feed(ts, *seg, file << FILE_SHIFT | number) is not None and late:
                    yield from self._numbered(tracker, file << FILE_SHIFT | number)
                elif out:
                    self.packets = FilePacket(number, names[file])
                    yield from out
                    out.clear()
        if number:  # the flows still open end with the last packet
            self.packets = FilePacket(number, names[file])
        tracker.finish()
        if out:
            yield from self._numbered(tracker, file << FILE_SHIFT | number)
        if errors:
            raise first_of(errors)

    def _numbered(self, tracker: FlowTracker, current: int) -> Iterator[Any]:
        """The tracker's events, each with its own packet in `packets` (those of bytes held
        beyond a hole are an earlier packet's: `FlowTracker.event_packets`)."""
        names = self.names
        numbers = tracker.event_packets(current)
        for ev, key in zip(tracker.events, numbers, strict=True):
            if key & NUMBER_MASK:
                self.packets = FilePacket(key & NUMBER_MASK, names[key >> FILE_SHIFT])
            yield ev
        tracker.events.clear()

    def _packets(self, errors: list[CaptureError]) -> Iterator[_Numbered]:
        """`(time, file index, number in the file, linktype, data)` of every packet of
        every file, merged by time as `read_capture` merges them."""
        return merge_by_time(self.sources, self._file, errors)

    def _file(self, index: int, errors: list[CaptureError] | None,
              block_size: int) -> Generator[_Numbered, None, None]:
        """One file's packets, numbered from 1; its damage ends it, the error kept in
        `errors` (None: ignored, for a first look)."""
        n = 0
        try:
            source = self.sources[index]
            for ts, linktype, data in read_packets(source, block_size=block_size,
                                                   waiting=self.waiting,
                                                   found=was_found(source, self.found)):
                n += 1
                yield ts, index, n, linktype, data
        except CaptureError as e:
            if errors is not None:
                errors.append(e)


_Numbered = tuple[int, int, int, int, Any]


def _load_engine() -> None:
    global CreditChanged, DeliverySettled, DeliveryStarted, DeliveryUpdated, LinkAttached
    global LinkDetached, LinkRefused, Observer, SaslOutcome, SessionBegun, TerminusMismatch
    global TransactionDischarged, UnsettledReconciled, Violation, explained_by_gap
    if Observer is not None:
        return
    from amqpcli import engine as e
    from amqpcli.engine.observer import explained_by_gap as by_gap

    explained_by_gap = by_gap

    CreditChanged, DeliverySettled, DeliveryStarted = (
        e.CreditChanged, e.DeliverySettled, e.DeliveryStarted)
    DeliveryUpdated, LinkAttached, LinkDetached = (
        e.DeliveryUpdated, e.LinkAttached, e.LinkDetached)
    LinkRefused, SaslOutcome, SessionBegun = e.LinkRefused, e.SaslOutcome, e.SessionBegun
    TerminusMismatch, UnsettledReconciled, Violation = (
        e.TerminusMismatch, e.UnsettledReconciled, e.Violation)
    TransactionDischarged = e.TransactionDischarged
    Observer = e.Observer  # last: it says the rest are bound


def _ended_by_capture(d: Any, conn: Conn) -> bool:
    """Whether delivery `d` was abandoned because the capture stopped (the stream that
    ended it, the side of its abandon step, ended with the capture), not the connection."""
    tl = d.timeline
    last = tl[-1] if tl else None
    return last is not None and last.kind == "abandon" and conn.closed.get(last.side) == "end"


def _binary(v: Any) -> bytes | None:
    """A txn-id as bytes (None for none, or one that is not binary)."""
    return bytes(v) if isinstance(v, (bytes, bytearray, memoryview)) else None


def _has_more(ls: LinkStats) -> bool:
    """Whether the link's sender has messages waiting, as far as it said: the `available`
    of its latest flow that said one, less the deliveries it started since (each uses one
    up, Part 2 §2.6.7). False when it never said."""
    said = ls.sender_available
    return said is not None and said > ls.deliveries - ls.available_at


def _other(side: str) -> str:
    return "server" if side == "client" else "client"


def _difference_text(d: Any) -> str:
    """One field a responder granted differently: `field: asked A, granted B (note)`,
    values as the frame lines draw them (`unsettled`, `"orders"`; capabilities
    `"a,b",queue`: a name holding a comma is quoted). A note that only says the field
    changed is left out; a capabilities note names them as plain text, so only its kind
    is kept (`capabilities dropped`): the two lists show which."""
    from amqpcli.render.text import terminus_field_text
    from amqpcli.render.types import capabilities_text, printable

    note = d.note
    if d.field.endswith("capabilities"):
        asked, granted = (capabilities_text(v) if v else "none"
                          for v in (d.requested, d.granted))
        note = note.split(":", 1)[0]
    else:
        asked, granted = (terminus_field_text(d.field, v) for v in (d.requested, d.granted))
        if note == f"{d.field.rpartition('.')[2]} changed":
            note = ""
        # a filter left out of one side (`filter dropped: k`, `filter added: k`) is none
        # there; one answered with null is `not-applied`, as a terminus shows it
        if note.startswith("filter dropped"):
            granted = "none"
        elif note.startswith("filter added"):
            asked = "none"
    # (a filter's field and note hold its key as the peer wrote it: escaped; the values
    # are drawn escaped already)
    return (f"{printable(d.field)}: asked {_short(asked)}, granted {_short(granted)}"
            + (f" ({printable(note)})" if note else ""))


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


# --- AMQP 0-10 -------------------------------------------------------------------------


class _Handler010(_Handler):
    """One AMQP 0-10 connection through `amqpcli.amqp010.ConnectionObserver`."""

    def __init__(self, dis: Dissector, conn: Conn) -> None:
        from amqpcli.amqp010 import ConnectionObserver

        self.dis = dis
        self.conn = conn
        self.observer = ConnectionObserver()
        conn.observer = self.observer
        self.dead: set[str] = set()
        self.reported: set[int] = set()  # id() of messages already handed out

    def data(self, ev: Any, packet: int) -> Iterator[Record]:
        side = SIDES[ev.direction]
        if side in self.dead:
            return
        t = ev.time_ns / 1e9
        self.conn.last_time = max(self.conn.last_time, t)  # (held bytes are earlier)
        self.dis.last_time = max(self.dis.last_time, t)
        self.conn.bytes[side] += len(ev.data)
        yield from self._observed(self.observer.feed(side, ev.data, t), packet)

    def _observed(self, observed: list[Any], packet: int) -> Iterator[Record]:
        from amqpcli.amqp010 import Assembly, StreamError
        from amqpcli.amqp010 import Violation as V010
        from amqpcli.amqp010.session import OUTCOMES, MessageEvent

        conn = self.conn
        for o in observed:
            item = o.item
            no = 0
            if isinstance(item, Assembly):
                # numbered by its last frame on the wire (both sides, as they came), as a
                # 1.0 record by its frame: the frame that completed it, as `packet` is the
                # packet; frames of other assemblies between its first and last count too
                no = o.frame
                conn.frames[o.side] += item.frames  # wire frames, as for 1.0
                conn.sessions = len(self.observer.model.sessions)
            elif isinstance(item, StreamError):
                conn.frame_errors += 1
                self.dead.add(o.side)
            yield FrameRecord(conn, o.side, o.time, packet, no, item, o.events, AMQP010)
            for ev in o.events:
                if isinstance(ev, MessageEvent):
                    m = ev.message
                    if ev.entry.event == "transfer":
                        conn.deliveries += 1
                    final = ev.entry.event in OUTCOMES and not ev.entry.detail.get("ignored")
                    if m.accept_mode == 1 and ev.entry.event == "transfer":
                        final = True
                    if final and id(m) not in self.reported:
                        self.reported.add(id(m))
                        yield self._delivery(m, o.time, False)
                elif isinstance(ev, V010):
                    conn.violations += 1
                    yield ViolationRecord(conn, AMQP010, ev.kind, ev.side, ev.message, no,
                                          packet, ev.time)

    def _delivery(self, m: Any, t: float, at_end: bool) -> DeliveryRecord:
        """A 0-10 message: its outcome (accept-mode none: accepted as sent), else
        "completed" (the receiver completed the transfer) or "unsettled"."""
        settled_time = None
        settled_by = None
        if m.accept_mode == 1:
            outcome = m.outcome or "accepted"
            settled_time, settled_by = m.time, "sender"
        else:
            outcome = m.outcome or ("completed" if m.completed else "unsettled")
            wanted = ("accepted", "rejected", "released") if m.outcome else ("completed",)
            for e in m.timeline:
                if e.event in wanted:
                    settled_time = e.time
                    settled_by = "sender" if e.side == m.sender else "receiver"
                    break
        return DeliveryRecord(
            self.conn, AMQP010, m.destination or "", m.destination, m.sender, m.command_id,
            None, m.size, m.frames, outcome, None, settled_by, m.accept_mode == 1, False, m.time,
            settled_time, at_end=at_end and outcome == "unsettled",
            timeline=list(m.timeline), payload=m.body,
            extra={"channel": m.channel, "headers": m.headers, "session": m.session})

    def gap(self, ev: Any, packet: int) -> Iterator[Record]:
        side = SIDES[ev.direction]
        t = ev.time_ns / 1e9
        self.conn.gaps += 1
        self.conn.gap_bytes += ev.size
        self.dead.add(side)
        yield Notice(self.conn, side, t, packet, "gap",
                     f"{ev.size} bytes from the {side} missing from the capture; the rest "
                     "of that direction is not decoded (0-10 has no resynchronisation)")

    def closed(self, ev: Any, packet: int) -> Iterator[Record]:
        side = SIDES[ev.direction]
        self.conn.closed[side] = ev.how
        if len(self.conn.closed) == 2:
            yield from self.finish(ev.time_ns / 1e9, packet)

    def finish(self, t: float, packet: int) -> Iterator[Record]:
        if self.done:
            return
        self.done = True
        yield from self._observed(self.observer.close(t), packet)
        for m in self.observer.model.messages:
            if id(m) not in self.reported:
                self.reported.add(id(m))
                yield self._delivery(m, t, True)
