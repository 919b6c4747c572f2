"""Capture events (per-flow byte chunks) → frames, for the replay and live sources.

The frames come from the dissect pipeline (`amqpcli.dissect.Dissector` without the
engine: the same per-direction readers as `amqp pcap-dump`, which find the next frame
after bytes the capture lost, a mid-stream start or a corrupt header). The TUI's own
engine model is fed later, by the replay controller or the live source. AMQP 0-10
connections give their protocol headers and assemblies (their keys are in `amqp010`, for
the watch to model them as 0-10), with a note saying what of them is shown; encrypted ones
are skipped with a note; flows of other protocols are only counted (`other_flows`), as
pcap-dump counts them. The dissector's notices (gaps, resynchronisation) become notes
too, and a gap or a mid-connection start is also a record (`CaptureNotice`) where it
happened, so the model takes what follows as pcap-dump's observer does. Connections are
keyed as `amqp pcap-dump` labels them: ``c1``, ``c2``, … in the order the dissector found
them. A frame-trace log's connection without times (`Conn.timed` false) is in
`untimed`; its records carry the reader's stand-in time, which no view shows.

For a source shown as it comes (`ended` given: a live interface, a pipe) a connection
whose TCP closed both ways is forgotten once its last records and stream ends are out,
and `ended(key)` says so (the watch may then let it go): what the framer keeps follows
the open connections. A replay's framer keeps them all.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from amqpcli.tui.watch import CaptureNotice, EndOfStream

AddItem = Callable[[str, str, float, Any], None]  # (connection key, side, time, item)


class CaptureFramer:
    def __init__(self, add: AddItem, note: Callable[[str], None],
                 ports: Collection[int] = (), ended: Callable[[str], None] | None = None,
                 ) -> None:
        from amqpcli.dissect import Dissector

        self.add = add
        self.note = note
        self.labels: dict[str, str] = {}
        self.amqp010: set[str] = set()  # keys of the connections that speak AMQP 0-10
        # keys of the connections whose input has no times (a proton frame trace's: its
        # records' times are no times, and the views say they are unknown)
        self.untimed: set[str] = set()
        # of a frame-trace log's connections, the transfer payloads the log cut short: the
        # size each line gives, by the connection's frame number (filled as it is read)
        self.cut: dict[str, dict[int, int]] = {}
        self._ended_cb = ended
        self._gone: list[Any] = []  # connections forgotten by the dissector, to let go
        self._dis = Dissector(engine=False, ports=ports,
                              closed="keep" if ended is None else "forget",
                              on_forget=self._gone.append)
        self._made = 0  # the dissector's connections taken up so far
        self._keys: dict[int, str] = {}  # id(Conn) -> key
        # the connections shown whose streams did not both end yet, by id: for their ends
        self._open: dict[int, Any] = {}
        self._ended: set[tuple[str, str]] = set()  # of those, (key, side) ended
        self._not_shown: set[str] = set()

    @property
    def encrypted(self) -> int:
        """Connections not shown: encrypted (each one noted)."""
        return len(self._not_shown)

    @property
    def other_flows(self) -> dict[str, int]:
        """TCP flows not shown, by protocol (as pcap-dump counts them)."""
        return self._dis.other_flows

    @property
    def ports(self) -> frozenset[int]:
        """The ports whose flows are AMQP even without a protocol header (a capture that
        starts mid-connection): the dissector's, 5672 and the ones given. The capture
        reader must be given them too, as pcap-dump gives them, or such a flow is not
        read at all."""
        return self._dis.ports

    def event(self, ev: Any) -> None:
        from amqpcli.capture import AMQP_TLS, Closed, Gap
        from amqpcli.dissect import AMQP010, AMQP10, FrameRecord, Notice

        dis = self._dis
        records: list[Any] = list(dis.run((ev,)))
        # A flow becomes a connection when it opens, or with its first bytes (no header):
        # the newest of `conns` (an event that makes one forgets none).
        new = dis.made - self._made
        self._made = dis.made
        fresh = dis.conns[len(dis.conns) - new:] if new else []
        assert all(id(c) not in self._keys for c in fresh), "a connection forgotten as made"
        for conn in fresh:
            key = conn.label  # "c1", as pcap-dump says
            self._keys[id(conn)] = key
            # its endpoints as pcap-dump names them (a trace log's are its ids, no address)
            where = conn.endpoints
            if conn.protocol in (AMQP10, AMQP010):
                self.labels[key] = where
                if not conn.timed:
                    self.untimed.add(key)
                if conn.cut_payloads is not None:
                    self.cut[key] = conn.cut_payloads
                self._open[id(conn)] = conn
                if conn.protocol == AMQP010:
                    self.amqp010.add(key)
                    self.note(f"{key} ({where}) speaks AMQP 0-10: its frames, "
                              "sessions and messages by destination are shown; link "
                              "termini and settlement states are AMQP 1.0 only")
            else:  # encrypted: pcap-dump's `encrypted` notice, in the TUI's words
                self._not_shown.add(key)
                what = "AMQP over TLS" if conn.protocol == AMQP_TLS else "TLS"
                self.note(f"{key} ({where}) is {what}, encrypted: not shown "
                          "(amqp pcap-dump --tls-keylog FILE decrypts it)")
        # Flows of other protocols (a refused connection, HTTP, AMQP 0-9-1) are counted
        # (`other_flows`), not noted one by one: pcap-dump says nothing of them either.
        for rec in records:
            cls = rec.__class__
            if cls is FrameRecord:
                key = self._keys[id(rec.conn)]
                if key not in self._not_shown:
                    self.add(key, rec.side, rec.time, rec.item)
            elif cls is Notice and rec.kind != "encrypted":
                key = self._keys.get(id(rec.conn), "") if rec.conn is not None else ""
                if key and key not in self._not_shown:
                    # the model learns of the bytes lost, and that the capture starts
                    # mid-connection, where pcap-dump's observer does
                    if rec.kind == "gap" and isinstance(ev, Gap):
                        self.add(key, rec.side, rec.time, CaptureNotice("gap", rec.text, ev.size))
                    elif rec.kind == "midstream":
                        self.add(key, rec.side or "", rec.time, CaptureNotice("midstream", rec.text))
                if key not in self._not_shown:
                    where = f"{key} {rec.side}: " if key and rec.side else f"{key}: " if key else ""
                    self.note(where + rec.text)
        if isinstance(ev, Closed):
            self._stream_ends(ev.time_ns / 1e9)
        if self._gone:
            self._let_go()

    def _let_go(self) -> None:
        """The connections the dissector forgot: their records and stream ends are out."""
        gone, self._gone[:] = list(self._gone), []
        for conn in gone:
            key = self._keys.pop(id(conn), None)
            if key is None:  # (a flow of another protocol: never shown)
                continue
            self.labels.pop(key, None)
            self.amqp010.discard(key)
            self.cut.pop(key, None)
            if self._ended_cb is not None:
                self._ended_cb(key)

    def _stream_ends(self, t: float) -> None:
        # FIN or RST: the connection really ended. The end of the capture is not the end
        # of the connection: what was pending then stays pending. (Only the connections
        # still open are looked at: a capture of many connections is read in linear time.)
        for conn in list(self._open.values()):
            key = self._keys[id(conn)]
            for side, how in conn.closed.items():
                if (key, side) not in self._ended:
                    self._ended.add((key, side))
                    if how != "end":
                        self.add(key, side, t, EndOfStream(how))
            if len(conn.closed) == 2:
                del self._open[id(conn)]
                for side in conn.closed:
                    self._ended.discard((key, side))
