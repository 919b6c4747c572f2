"""The session state machine: channels, transfer windows, handles, delivery-ids.

Per side a session is `unmapped` → `begun` → `ended` (`SESSION_TRANSITIONS`). The
side that sends the first begin picks its channel; the answering begin names it in
`remote-channel`. The session routes attach/flow/transfer/disposition/detach to links
and deliveries, keeps the transfer windows (Part 2 §2.5.6) and the delivery-id maps.

Windows: when side X says `next-incoming-id = N, incoming-window = W` (in its begin
or a flow), the other side may send transfer-ids up to, not including, N + W (serial
arithmetic). Every transfer frame uses the sender's next-outgoing-id and advances it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from amqpcli.codec import composites as c
from amqpcli.codec.resume import receiver_holds, restarts_on_resume

from . import serial
from .delivery import (
    _TERMINAL,
    FINAL,
    Delivery,
    Phase,
    TimelineEntry,
    new_entry,
    outcome_of,
    state_name,
)
from .events import (
    CreditChanged,
    DeliveriesSettled,
    DeliverySettled,
    DeliveryStarted,
    DeliveryUpdated,
    LinkAttached,
    LinkDetached,
    LinkRefused,
    MessageReceived,
    TerminusMismatch,
    TransactionDeclared,
    TransactionDischarged,
    UnsettledReconciled,
)
from .link import ATTACH_TRANSITIONS, RECEIVER, SENDER, Link, compare_termini
from .settled import WINDOW, SettledIds
from .shelf import carried_step_detail, shelf_key

if TYPE_CHECKING:
    from .connection import Connection

SESSION_TRANSITIONS: dict[tuple[str, str], str] = {
    ("unmapped", "begin"): "begun",
    ("begun", "end"): "ended",
}

UNSETTLED = Phase.UNSETTLED
SETTLED = Phase.SETTLED


def _check_attach_types(att: Any) -> None:
    """The fields an answering attach echoes (its name, settle modes) must be what they
    claim: a wrong type is an invalid field here, not an answer that cannot be encoded.
    (Raised to the frame's handler, which reports it as `invalid-field`.)"""
    if not isinstance(att.name, str) or not isinstance(att.role, bool) or (
            not isinstance(att.handle, int) or isinstance(att.handle, bool)):
        raise TypeError("the name, handle or role")
    for mode, top in ((att.snd_settle_mode, 2), (att.rcv_settle_mode, 1)):
        if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool)
                                 or not 0 <= mode <= top):
            raise ValueError(f"a settle mode of {mode!r}")


class Session:
    """One session, as both sides described it."""

    __slots__ = (
        "__weakref__",
        "begin",
        "channel",
        "conn",
        "deliveries",
        "end",
        "first_id",
        "handle_max",
        "handles",
        "in_high",
        "in_limit",
        "incoming_window",
        "inflight",
        "links",
        "next_outgoing_id",
        "outgoing_window",
        "owing",
        "recent",
        "side_state",
        "transfers",
    )

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        a, b = conn.sides
        self.channel: dict[str, int] = {}
        self.begin: dict[str, Any] = {}
        self.end: dict[str, Any] = {}
        self.side_state: dict[str, str] = {a: "unmapped", b: "unmapped"}
        self.next_outgoing_id: dict[str, int] = {a: 0, b: 0}
        self.in_limit: dict[str, int | None] = {a: None, b: None}
        # the highest limit each side has announced: transfers in flight when a window
        # shrinks are judged against it, not against the latest one
        self.in_high: dict[str, int | None] = {a: None, b: None}
        self.incoming_window: dict[str, int] = {a: 0, b: 0}
        self.outgoing_window: dict[str, int] = {a: 0, b: 0}
        self.handle_max: dict[str, int] = {a: serial.MASK, b: serial.MASK}
        self.handles: dict[str, dict[int, Link]] = {a: {}, b: {}}
        self.links: dict[tuple[str, str], Link] = {}  # (name, sender side) -> link
        # earlier attachments of a name in `links`, oldest first: its initiator attached
        # the name again before the other side's answers to them (attach, detach) came;
        # those answers come first and go to them (`on_attach`)
        self.owing: dict[tuple[str, str], list[Link]] = {}
        self.inflight: dict[str, dict[int, Delivery]] = {a: {}, b: {}}
        # delivery-id -> side that settled it, for the ids settled lately (late
        # confirmations), per sending side
        self.recent: dict[str, SettledIds] = {a: SettledIds((a, b)), b: SettledIds((a, b))}
        self.transfers: dict[str, int] = {a: 0, b: 0}
        self.deliveries: dict[str, int] = {a: 0, b: 0}
        self.first_id: dict[str, int | None] = {a: None, b: None}  # first delivery-id seen

    @property
    def state(self) -> str:
        vals = set(self.side_state.values())
        if vals == {"begun"}:
            return "mapped"
        if "ended" in vals:
            return "ended" if vals == {"ended"} else "ending"
        return "beginning"

    def _set_limit(self, side: str, limit: int) -> None:
        self.in_limit[side] = limit
        high = self.in_high[side]
        if high is None or serial.lt(high, limit):
            self.in_high[side] = limit

    def remote_incoming_window(self, side: str) -> int | None:
        """How many more transfer frames `side` may send now."""
        lim = self.in_limit[self.conn.other[side]]
        if lim is None:
            return None
        return serial.diff(self.next_outgoing_id[side], lim)

    def __repr__(self) -> str:
        return f"<Session {self.channel} {self.state} links={len(self.links)}>"

    # --- begin / end / flow -----------------------------------------------------------

    def on_begin(self, side: str, begin: Any) -> None:
        other = self.conn.other[side]
        self.begin[side] = begin
        self.side_state[side] = SESSION_TRANSITIONS.get((self.side_state[side], "begin"), "begun")
        self.next_outgoing_id[side] = int(begin.next_outgoing_id or 0)
        self.incoming_window[side] = int(begin.incoming_window or 0)
        self.outgoing_window[side] = int(begin.outgoing_window or 0)
        self.handle_max[side] = int(begin.get("handle_max"))
        if other in self.begin:
            # next-incoming-id of each side starts at the other's next-outgoing-id
            self._set_limit(side, serial.add(self.next_outgoing_id[other],
                                             self.incoming_window[side]))
            if self.in_limit[other] is None:
                self._set_limit(other, serial.add(self.next_outgoing_id[side],
                                                  self.incoming_window[other]))

    def on_end(self, side: str, error: Any = None) -> None:
        self.side_state[side] = SESSION_TRANSITIONS.get((self.side_state[side], "end"), "ended")
        if error is not None:
            # Some peers refuse an attach by ending the session (RabbitMQ: amqp:not-found):
            # links the other side asked for and this side never answered were refused.
            for link in self.all_links():
                if link.initiator != side and side not in link.attach and not link.refused:
                    link.refused = True
                    self.conn.emit(LinkRefused(link, side, error, self.conn.time))
        for link in list(self.handles[side].values()):
            # ending a session detaches its links implicitly (Part 2 §2.5.5)
            link.side_state[side] = "detached"
            link.handle.pop(side, None)
        self.handles[side].clear()
        if self.state == "ended":
            for link in self.all_links():
                self._retire_link(link)

    def attached_before(self, link: Link, side: str) -> bool:
        """Whether `side` still has an earlier attachment of `link`'s name attached: it
        attached the name again and has not detached the earlier one (yet: proton's
        detach follows its attach). The other side must not answer `link` then."""
        for x in self.owing.get((link.name, link.sender), ()):
            if x is link:
                return False
            if side in x.handle:
                return True
        return False

    def all_links(self) -> list[Link]:
        """Every link of the session: `links`, and the attachments they are `owing`."""
        return [x for xs in self.owing.values() for x in xs] + list(self.links.values())

    def on_flow(self, side: str, flow: Any) -> None:
        conn = self.conn
        if flow.next_outgoing_id is not None:
            self.next_outgoing_id[side] = int(flow.next_outgoing_id)
        if flow.incoming_window is not None:
            self.incoming_window[side] = int(flow.incoming_window)
            nid = flow.next_incoming_id
            if nid is None:
                other = conn.other[side]
                nid = self.next_outgoing_id[other] if other in self.begin else None
            if nid is not None:
                self._set_limit(side, serial.add(int(nid), self.incoming_window[side]))
        if flow.outgoing_window is not None:
            self.outgoing_window[side] = int(flow.outgoing_window)
        link = None
        if flow.handle is not None:
            link = self.handles[side].get(int(flow.handle))
            if link is None:
                if not conn.midstream:
                    conn.violation("unknown-handle", f"flow for handle {flow.handle}",
                                   session=self)
                return
            link.apply_flow(side, flow)
        conn.emit(CreditChanged(
            self, link, side,
            link.link_credit if link is not None else None,
            link.delivery_count if link is not None else None,
            link.available if link is not None else None,
            bool(flow.drain), bool(flow.echo), conn.time,
        ))

    # --- attach / detach --------------------------------------------------------------

    def on_attach(self, side: str, att: Any) -> None:
        conn = self.conn
        other = conn.other[side]
        if att.handle is None or att.name is None or att.role is None:
            conn.violation("missing-field", "attach without name, handle or role", session=self)
            return
        _check_attach_types(att)
        handle = int(att.handle)
        if handle in self.handles[side]:
            conn.violation("handle-in-use", f"handle {handle} is already attached", session=self)
            return
        if handle > self.handle_max[other]:
            conn.violation("handle-max-exceeded",
                           f"handle {handle} > handle-max {self.handle_max[other]}", session=self)
            return
        sender = side if bool(att.role) == SENDER else other
        key = (str(att.name), sender)
        newest = self.links.get(key)
        earlier = self.owing.get(key, ())
        if any(side in x.handle and other in x.attach for x in (*earlier, newest)
               if x is not None):
            # Link names are unique per direction (Part 2 §2.6.1): `side` still has this
            # name attached, and the other side answered it. (The handle is new, so this
            # is not handle-in-use, §2.8.17: an attach on a handle in use.)
            conn.violation("link-name-in-use",
                           f"link name {str(att.name)!r} is already attached on this session",
                           session=self)
            return
        # answers come in order: the oldest attachment this side has not answered first
        waiting = next((x for x in earlier if side not in x.attach), None)
        if waiting is None and newest is not None and side not in newest.attach:
            waiting = newest
        responding = waiting is not None
        if waiting is not None:
            link = waiting
        elif newest is not None:
            # `side` attaches the name again before the other side answered its last
            # attachment (detached, or not yet: proton writes a callback's attaches before
            # its detaches): a new attachment; the other side's answers to the last one
            # (its attach, its detach, Part 2 §2.6.5) come first, and go to that one
            self.owing.setdefault(key, []).append(newest)
            link = self.links[key] = newest.successor(side)
        else:
            resumed = conn.suspended.pop(key, None)
            if resumed is not None:
                resumed.session = self
                resumed.resume(side)
                link = resumed
            else:
                link = Link(str(att.name), self, side, sender, conn.other[sender])
                if conn.shelf is not None and att.unsettled:
                    self._unshelve(link, side)
            self.links[key] = link
        if not responding and conn.shelf is not None:
            conn.claim(link)  # (a new attachment, whichever way: the link's latest)
        link.handle[side] = handle
        self.handles[side][handle] = link
        link.attach[side] = att
        link.side_state[side] = ATTACH_TRANSITIONS[("detached", "attach")]
        link.refresh()
        if side == sender and att.initial_delivery_count is not None:
            link.delivery_count = int(att.initial_delivery_count)
        if isinstance(att.target, c.Coordinator):
            link.coordinator = True
        conn.emit(LinkAttached(link, side, conn.time))
        if link.reattached and (att.unsettled is not None or link.unsettled[side]) or (
                att.unsettled):
            # A re-attach: the link was attached here before, or the attach says what it
            # resumes (an attachment this model did not see). A first attach never is,
            # even when transfers came before it (sent before the credit, a violation).
            self._reconcile(link, side, att.unsettled or {})
        if responding:
            remote_terminus = att.source if link.initiator == link.receiver else att.target
            if remote_terminus is None:
                link.refusing = True  # the detach with the reason follows
            else:
                diffs = compare_termini(link.attach[link.initiator], att)
                if diffs:
                    conn.emit(TerminusMismatch(link, side, tuple(diffs), conn.time))

    def _unshelve(self, link: Link, side: str) -> None:
        """A link's first attach on this connection, with an unsettled map (it resumes
        an attachment): if a connection between the same containers ended with the link
        attached (`LinkShelf`), this resumes that attachment, its unsettled state and its
        deliveries not yet final carried over. (An attach without one starts the link
        afresh: the many clients that never resume would otherwise be told, at each
        reconnection, what they did not carry over.)"""
        conn = self.conn
        key = shelf_key(conn, link.name, link.sender)
        shelved = conn.shelf.take(key) if key is not None and conn.shelf else None
        if shelved is None:
            return
        link.unsettled[link.sender] = shelved.sender_map
        link.unsettled[link.receiver] = shelved.receiver_map
        for d in shelved.deliveries:
            d.link = link
            d.session = None  # (its delivery-id was of the other connection's session)
            d.resumed = False  # (resumed here, it is reported here: `_abandon`)
            # where the earlier connection's steps end (their frame numbers are its own)
            d.timeline.append(new_entry(TimelineEntry, (
                conn.time, None, "carried", conn.frame_no, None, False, False, 0,
                carried_step_detail(shelved.origin))))
            d.sender, d.receiver = link.sender, link.receiver
            link.live[d.tag] = d
        link.resume(side)

    def _reconcile(self, link: Link, side: str, theirs: dict[Any, Any]) -> None:
        mine = link.unsettled[side]
        only_model = tuple(t for t in mine if t not in theirs)
        only_attach = tuple(bytes(t) for t in theirs if t not in mine)
        # (a received state the model never saw is no contradiction of its "not known":
        # a receiver keeps one per delivery it has part of, and need not send it)
        differs = tuple(t for t in mine if t in theirs and theirs[t] != mine[t] and not (
            mine[t] is None and theirs[t].__class__ is c.Received))
        self.conn.emit(UnsettledReconciled(link, side, only_model, only_attach, differs,
                                           self.conn.time))
        if side == link.receiver and theirs:
            _take_held_outcomes(link, link.attach[side], theirs)
        earlier = link.attach.get(self.conn.other[side])
        if theirs and earlier is not None and earlier.unsettled:
            self._carry_over(link, theirs, earlier.unsettled)

    def _carry_over(self, link: Link, theirs: dict[Any, Any], other: dict[Any, Any]) -> None:
        """Both sides' attaches of a re-attach list these deliveries unsettled: they carry
        over to the new attachment (Part 2 §2.6.13). On the session they were sent on,
        each is known by its delivery-id again (suspending the link let go of it, in
        `_retire_link`), so a disposition naming it settles it; a resuming transfer
        may give it another (`_start`)."""
        infl = self.inflight[link.sender]
        live = link.live
        for tag in theirs:
            if tag not in other:
                continue
            d = live.get(bytes(tag))
            if d is not None and d.session is self and d.delivery_id is not None:
                infl.setdefault(d.delivery_id, d)  # (unless a later delivery took the id)

    def on_detach(self, side: str, det: Any) -> None:
        conn = self.conn
        if det.handle is None:
            conn.violation("missing-field", "detach without handle", session=self)
            return
        link = self.handles[side].pop(int(det.handle), None)
        if link is None:
            if not conn.midstream:
                conn.violation("unknown-handle", f"detach for handle {det.handle}",
                               session=self)
            return
        link.handle.pop(side, None)
        link.detach[side] = det
        link.side_state[side] = ATTACH_TRANSITIONS[("attached", "detach")]
        if link.refusing and side != link.initiator:
            link.refused = True
            conn.emit(LinkRefused(link, side, det.error, conn.time))
        conn.emit(LinkDetached(link, side, bool(det.closed), det.error, conn.time))
        if all(v == "detached" for v in link.side_state.values()) and not self._owed(link, side):
            self._retire_link(link)

    def _owed(self, link: Link, side: str) -> bool:
        """Whether `side` detached a link the other side has not attached yet: the other
        still owes its attach, then its detach (Part 2 §2.6.5: an endpoint may detach any
        time after its own attach, and the partner answers). The link stays (the same
        one, for the answering attach to find) until they come, or until the other side
        ends the session. A link seen first midstream is not waited for: the other side's
        attach came before the capture."""
        other = self.conn.other[side]
        return (other not in link.attach and not link.implicit and not link.refused
                and self.side_state[other] != "ended")

    def _retire_link(self, link: Link) -> None:
        """Both ends detached: close it for good, or keep it for a later resume (unless
        a later attachment of its name resumed it already: `Link.successor`)."""
        key = (link.name, link.sender)
        superseded = False
        if self.links.get(key) is link:
            del self.links[key]
        elif link in self.owing.get(key, ()):
            superseded = True
            self.owing[key].remove(link)
            if not self.owing[key]:
                del self.owing[key]
        for side, h in list(link.handle.items()):
            self.handles[side].pop(h, None)
        link.handle.clear()
        for d in link.live.values():
            if d.delivery_id is not None:
                self.inflight[d.sender].pop(d.delivery_id, None)
        if link.closed or link.refused or self.conn.closing:
            link.retired = True
            why = ("link closed" if link.closed else "link refused" if link.refused
                   else "connection closed")
            self.conn.shelve(link)  # (or only let go of its claim: `Connection.shelve`)
            for d in list(link.live.values()):
                self._abandon(d, why)
        elif superseded:
            link.retired = True
        else:
            self.conn.suspended[key] = link

    def _abandon(self, d: Delivery, why: str) -> None:
        """Unsettled when its link or connection went away: the outcome is in doubt."""
        conn = self.conn
        if d.origin is not None and not d.resumed:
            # carried over from another connection (`LinkShelf`) and not resumed here: its
            # end was reported there; it may be carried on again
            d.link.live.pop(d.tag, None)
            d.link.carried.pop(d.tag, None)
            return
        if d.step("abandon"):
            # the side is the one whose frame (a detach) or end of stream ended it; none
            # when the connection's close did: both sides closed it, the second close
            # (the frame named) ending it is no more one side's doing than the first
            side = None if why == "connection closed" else conn.side
            e = TimelineEntry(conn.time, side, "abandon", conn.frame_no, detail=why)
            d.timeline.append(e)
            self._finish(d)
        else:
            d.link.live.pop(d.tag, None)
            if d.link.carried:
                d.link.carried.pop(d.tag, None)

    # --- transfer ---------------------------------------------------------------------

    def on_transfer(self, side: str, t: Any, payload: bytes) -> None:
        # The hot path of a capture: plain attribute reads, inlined serial arithmetic.
        conn = self.conn
        h = t.handle
        link = self.handles[side].get(h) if h is not None else None
        if (link is not None and link.current is None and side == link.sender
                and t.more is not True and t.state is None and t.aborted is not True
                and t.resume is not True and t.rcv_settle_mode is None
                and t.delivery_id is not None and t.delivery_tag is not None
                and conn._adopt is None and not link.coordinator and link.gap_since is None
                and self._one_frame(side, link, t, payload)):
            return
        if link is None:
            if h is not None and conn.midstream:
                link = self._implicit_link(side, h, t)
            if link is not None:
                pass
            elif h is None:
                conn.violation("missing-field", "transfer without handle", session=self)
            elif not conn.midstream:
                conn.violation("unknown-handle", f"transfer on handle {h}", session=self)
            if link is None:
                return
        if side != link.sender:
            conn.violation("wrong-role", f"transfer from the receiving end of {link.name!r}",
                           session=self, link=link)
            return
        receiver = link.receiver
        self._count_transfer(side, receiver, link)
        d = link.current
        gap = link.gap_since
        if gap is not None:
            link.gap_since = None
            if d is not None and _another_delivery(d, t):
                self._lost_end(d, link)
                d = None
        if d is None:
            d = self._start(side, receiver, link, t)
            if d is None:
                return
            # (one the model had no earlier part of starts here, resumed all the same)
            kind = "resume" if d.resumed and t.resume and d.frames else "transfer"
            detail = f"resumed as delivery-id {d.delivery_id}" if kind == "resume" else ""
            if (gap is not None and d.frames == 0 and not t.message_format
                    and not starts_message(payload)):
                d.timeline.append(gap)  # its first transfers were in the gap
        else:
            kind = "transfer"
            detail = ""
            did = t.delivery_id
            if did is not None and did != d.delivery_id:
                conn.violation("transfer-mismatch",
                               f"continuation carries delivery-id {did},"
                               f" expected {d.delivery_id}", session=self, link=link)
        d.frames += 1
        n = len(payload)
        d.size += n
        # an endpoint keeps what it receives, not what it sends (the caller has that),
        # except on a coordinator link, whose requests it must read; those are kept
        # even without `keep_payload` (they are small): an observer follows the
        # transactions they declare and discharge
        if n and (link.coordinator or (conn.keep_payload and side != conn.local)):
            d._chunks.append(payload)
        mms = link.mms
        if mms and d.size > mms and d.size - n <= mms:
            conn.violation("message-size-exceeded",
                           f"delivery {d.delivery_id} is {d.size} bytes > {mms}",
                           session=self, link=link)
        state = t.state
        if state is not None:
            d.sender_state = state
            if state.__class__ is c.TransactionalState:
                d.txn_id = state.txn_id
        if t.rcv_settle_mode is not None:
            d.rcv_settle_mode = int(t.rcv_settle_mode)
        if t.batchable:
            d.batchable = True
        settled = t.settled is True
        if settled and not d.sender_settled:
            d.sender_settled = True
            if d.frames == 1 and not d.resumed:
                d.presettled = True
            if d.settled_by is None:
                d.settled_by = side
            link.unsettled[side].pop(d.tag, None)
        more = t.more is True
        if t.aborted:
            kind = "abort"
            d.aborted = True
            d.step("abort")
        elif more:
            d.step("frame")
        else:
            # a resume that only settles one whose transfer was cut off (the receiver's
            # attach held its outcome, Part 2 §2.6.13): the rest never came, not whole
            cut_off = kind == "resume" and not n and d.phase == Phase.TRANSFERRING
            d.step("last-settled" if (d.sender_settled and not self._waits_rcv(d)) or
                   d.receiver_settled else "last")
            link.current = None
            d.payload_ready = not cut_off
        time = conn.time
        e = new_entry(TimelineEntry, (time, side, kind, conn.frame_no, state, settled, more, n,
                                      detail))
        d.timeline.append(e)
        if d.frames == 1 and kind == "transfer":
            if not conn.lean or more or conn.local != receiver:
                conn._events.append(DeliveryStarted(d, side, time))
            # else lean: its MessageReceived follows at once
        elif conn.updates:
            conn._events.append(DeliveryUpdated(d, e, time))
        if not more and not d.aborted:
            if link.coordinator:
                self._read_txn_request(d)
            if conn.local == receiver:
                conn._events.append(MessageReceived(d, time))
        if d.phase in FINAL:
            self._finish(d, not (conn.lean and conn.local == receiver and d.frames == 1
                                 and not d.aborted and not d.resumed))

    def _lost_end(self, d: Delivery, link: Link) -> None:
        """`d`'s last transfers are missing from the capture: it ends with what was seen
        (its timeline has the gap), as its last frame would have ended it."""
        link.current = None
        d.step("last-settled" if (d.sender_settled and not self._waits_rcv(d)) or
               d.receiver_settled else "last")
        if d.phase in FINAL:
            self._finish(d)

    def _count_transfer(self, side: str, receiver: str, link: Link) -> None:
        """A transfer frame from `side`: its transfer-id taken, checked against the
        receiver's incoming window (serial arithmetic inlined)."""
        nxt = self.next_outgoing_id
        tid = nxt[side]
        nxt[side] = (tid + 1) & serial.MASK
        self.transfers[side] += 1
        lim = self.in_high[receiver]
        if lim is not None and not 0 < ((lim - tid) & serial.MASK) < serial.HALF:
            self.conn.violation("transfer-beyond-window",
                                f"transfer-id {tid} outside the incoming window (limit {lim})",
                                session=self, link=link)

    def _one_frame(self, side: str, link: Link, t: Any, payload: bytes) -> bool:
        """`on_transfer` for the common case, in one pass: a new delivery in one frame,
        no state, no resume, no per-delivery settle mode (the caller checked those).
        False, having changed nothing, when the delivery needs the general path (its tag
        or id is in use, it exceeds the link's max-message-size, or it comes settled in
        sender-settle-mode unsettled)."""
        conn = self.conn
        did = t.delivery_id
        tag = t.delivery_tag
        if tag.__class__ is not bytes:
            tag = bytes(tag)
        n = len(payload)
        mms = link.mms
        infl = self.inflight[side]
        if tag in link.live or did in infl or (mms and n > mms) or (
                t.settled is True and link.snd_mode == 0):  # (a settle-mode violation)
            return False
        did = int(did)
        receiver = link.receiver
        self._count_transfer(side, receiver, link)
        time = conn.time
        d = Delivery(link, side, receiver, tag)
        d.first_time = time
        mf = t.message_format
        if mf:
            d.message_format = int(mf)
        link.deliveries += 1
        self.deliveries[side] += 1
        settled = t.settled is True
        if not settled:
            link.unsettled[side][tag] = None
            link.unsettled[receiver][tag] = None
        # Link.consume_credit, inlined
        dc = link.delivery_count
        hw = link.high_water
        link.delivery_count = (dc + 1) & serial.MASK
        if link.link_credit > 0:
            link.link_credit -= 1
        if (hw is None or not 0 < ((hw - dc) & serial.MASK) < serial.HALF) and not (
                link.implicit and hw is None):
            conn.violation("transfer-beyond-credit",
                           f"delivery {did} on {link.name!r} with no link credit",
                           session=self, link=link)
        if self.first_id[side] is None:
            self.first_id[side] = did
        d.session = self
        d.delivery_id = did
        d.frames = 1
        d.size = n
        if n and conn.keep_payload and side != conn.local:
            d._chunks.append(payload)
        if t.batchable:
            d.batchable = True
        d.payload_ready = True
        d.timeline.append(new_entry(TimelineEntry, (time, side, "transfer", conn.frame_no, None,
                                                    settled, False, n, "")))
        lean_rcv = conn.lean and conn.local == receiver
        if settled:
            d.sender_settled = True
            d.presettled = True
            d.settled_by = side
            d.phase = Phase.SETTLED  # queued --last-settled--> settled
        else:
            d.phase = Phase.UNSETTLED  # queued --last--> unsettled
            infl[did] = d
            link.live[tag] = d
        events = conn._events
        if not lean_rcv:
            events.append(DeliveryStarted(d, side, time))
        if conn.local == receiver:
            events.append(MessageReceived(d, time))
        if settled:  # _finish, for a delivery that was never in the live maps
            d.settled_time = time
            link.settled_count += 1
            outcomes = link.outcomes
            outcomes["settled"] = outcomes.get("settled", 0) + 1  # no state: "settled"
            self.recent[side].add(did, side)
            if not lean_rcv and conn.settled_events:
                events.append(DeliverySettled(d, time))
        return True

    def local_transfer(self, side: str, link: Link, d: Delivery, did: int, settled: bool,
                       message_format: int, n: int) -> None:
        """`on_transfer` for a delivery the local side sends in one frame (endpoint roles):
        `d` is new, the transfer carries no state, and its payload is not kept."""
        conn = self.conn
        receiver = link.receiver
        self._count_transfer(side, receiver, link)
        tag = d.tag
        time = conn.time
        d.first_time = time
        d.message_format = message_format
        link.deliveries += 1
        self.deliveries[side] += 1
        if not settled:
            link.unsettled[side][tag] = None
            link.unsettled[receiver][tag] = None
        if not link.consume_credit() and not (link.implicit and link.high_water is None):
            conn.violation("transfer-beyond-credit",
                           f"delivery {did} on {link.name!r} with no link credit",
                           session=self, link=link)
        infl = self.inflight[side]
        if did in infl:
            conn.violation("delivery-id-in-use", f"delivery-id {did} is still unsettled",
                           session=self, link=link)
        d.session = self
        d.delivery_id = did
        if self.first_id[side] is None:
            self.first_id[side] = did
        d.frames = 1
        d.size = n
        mms = link.mms
        if mms and n > mms:
            conn.violation("message-size-exceeded",
                           f"delivery {did} is {n} bytes > {mms}", session=self, link=link)
        d.payload_ready = True
        d.timeline.append(new_entry(TimelineEntry, (time, side, "transfer", conn.frame_no, None,
                                                    settled, False, n, "")))
        if settled:
            d.sender_settled = True
            d.presettled = True
            d.settled_by = side
            d.phase = Phase.SETTLED  # queued --last-settled--> settled
            if not conn.lean:
                conn._events.append(DeliveryStarted(d, side, time))
            self._finish(d)
        else:
            d.phase = Phase.UNSETTLED  # queued --last--> unsettled
            infl[did] = d
            link.live[tag] = d
            if not conn.lean:
                conn._events.append(DeliveryStarted(d, side, time))

    def local_transfers(self, side: str, link: Link, sent: list[tuple[int, bytes, int]],
                        first: int, settled: bool, time: float) -> list[Delivery]:
        """`local_transfer` for a run of one-frame deliveries a lean endpoint just sent
        (`Endpoint.send_many`), given as (delivery-id, tag, size) with consecutive ids from
        `first`; the caller checked credit, window and sizes. Pre-settled ones get no
        Delivery (a lean endpoint never reads them): they are counted, and remembered as
        recently settled like any other. Returns the deliveries made."""
        conn = self.conn
        k = len(sent)
        conn.time = time
        conn.side = side
        frame_no = conn.frame_no
        conn.frame_no = frame_no + k
        conn.frames[side] += k
        conn.last_frame_time[side] = time
        nxt = self.next_outgoing_id
        nxt[side] = (nxt[side] + k) & serial.MASK
        self.transfers[side] += k
        self.deliveries[side] += k
        if self.first_id[side] is None:
            self.first_id[side] = first
        link.deliveries += k
        link.delivery_count = (link.delivery_count + k) & serial.MASK
        link.link_credit -= k
        if settled:
            link.settled_count += k
            outcomes = link.outcomes
            outcomes["settled"] = outcomes.get("settled", 0) + k
            add = self.recent[side].add
            for did, _tag, _n in sent[-WINDOW:]:
                add(did, side)
            return []
        receiver = link.receiver
        remote = link.unsettled[receiver]
        mine = link.unsettled[side]
        infl = self.inflight[side]
        live = link.live
        ds = []
        unsettled = Phase.UNSETTLED
        for did, tag, n in sent:
            frame_no += 1
            d = Delivery(link, side, receiver, tag)
            d.session = self
            d.delivery_id = did
            d.first_time = time
            d.frames = 1
            d.size = n
            d.payload_ready = True
            d.phase = unsettled  # queued --last--> unsettled
            d.timeline.append(new_entry(TimelineEntry, (time, side, "transfer", frame_no, None,
                                                        False, False, n, "")))
            mine[tag] = None
            remote[tag] = None
            infl[did] = d
            live[tag] = d
            ds.append(d)
        return ds

    def _implicit_link(self, side: str, handle: Any, t: Any) -> Link | None:
        """Midstream: a link attached before the capture, first seen by a transfer that
        starts a delivery (continuations of unseen deliveries are skipped)."""
        if t.delivery_id is None:
            return None
        other = self.conn.other[side]
        link = Link(f"(handle {int(handle)})", self, side, side, other)
        link.implicit = True
        link.handle[side] = int(handle)
        link.side_state[side] = "attached"
        self.handles[side][int(handle)] = link
        self.links[(link.name, side)] = link
        self.conn.emit(LinkAttached(link, side, self.conn.time))
        return link

    def _waits_rcv(self, d: Delivery) -> bool:
        """Settle mode second: the receiver settles after the sender (unless pre-settled)."""
        mode = d.rcv_settle_mode if d.rcv_settle_mode is not None else d.link.rcv_mode
        return mode == 1 and not d.presettled and not d.receiver_settled

    def _start(self, side: str, receiver: str, link: Link, t: Any) -> Delivery | None:
        conn = self.conn
        if t.delivery_id is None or t.delivery_tag is None:
            if conn.midstream and t.delivery_id is None:
                return None  # the rest of a delivery that began before the capture
            conn.violation("missing-field", "first transfer of a delivery without"
                           " delivery-id or delivery-tag", session=self, link=link)
            return None
        did = int(t.delivery_id)
        tag = t.delivery_tag
        if tag.__class__ is not bytes:
            tag = bytes(tag)
        old = link.live.get(tag)
        if (old is not None and not t.resume and link.carried.get(tag) is old
                and not receiver_holds(link.attach.get(receiver), tag)):
            # carried over from the link's earlier attachment, and the receiver's attach
            # has no record of it: the sender sends the message again as a new delivery
            # under the same tag (Part 3 §3.4.6); the first sending ends, in doubt
            del link.carried[tag]
            (old.session or self)._abandon(
                old, f"sent again as delivery-id {did} (the receiver's re-attach did not"
                     " hold it)")
            old = None
        if t.resume and old is not None:
            link.carried.pop(tag, None)  # (sent on this attachment from now on)
            d = old
            if d.origin is not None and not d.resumed:
                # carried over from another connection: a delivery of this one from now
                # on (its record, its link's count), its bytes and times from the first
                link.deliveries += 1
                self.deliveries[side] += 1
                conn._events.append(DeliveryStarted(d, side, conn.time))
            d.resumed = True
            d.step("resume")
            if restarts_on_resume(link.attach.get(receiver), tag):
                d._chunks = []
                d.size = 0
        else:
            if old is not None:
                conn.violation("delivery-id-in-use",
                               f"delivery-tag {tag!r} is still unsettled on {link.name!r}",
                               session=self, link=link)
            d = (conn.adopt(link, tag) if conn._adopt is not None else None) or Delivery(
                link, side, receiver, tag)
            d.first_time = conn.time
            d.message_format = int(t.message_format or 0)
            if t.resume:
                d.resumed = True  # (its earlier part was before the capture, or elsewhere)
                _take_held_outcomes(link, link.attach.get(receiver), (tag,), d)
            link.deliveries += 1
            self.deliveries[side] += 1
            if not t.settled:
                link.unsettled[side][tag] = t.state
                link.unsettled[receiver][tag] = None
            elif link.snd_mode == 0 and not t.resume:
                # Part 2 §2.8.2: in mode unsettled the sender sends every delivery
                # unsettled first (its receiver counts on settling it)
                conn.violation("settle-mode", f"delivery {did} sent settled on {link.name!r},"
                               " whose sender-settle-mode is unsettled", session=self, link=link)
        if not link.consume_credit() and not (link.implicit and link.high_water is None):
            conn.violation("transfer-beyond-credit",
                           f"delivery {did} on {link.name!r} with no link credit",
                           session=self, link=link)
        infl = self.inflight[side]
        if did in infl and infl[did] is not d:
            conn.violation("delivery-id-in-use", f"delivery-id {did} is still unsettled",
                           session=self, link=link)
        old_id = d.delivery_id
        if old_id is not None and old_id != did and d.session is not None:
            # resumed under another id: the one it carried over (`_carry_over`) is free
            old_infl = d.session.inflight[side]
            if old_infl.get(old_id) is d:
                del old_infl[old_id]
        d.session = self
        d.delivery_id = did
        if self.first_id[side] is None:
            self.first_id[side] = did
        infl[did] = d
        link.live[tag] = d
        link.current = d
        return d

    def _read_txn_request(self, d: Delivery) -> None:
        try:
            body = d.message().body
        except ValueError:  # a malformed request is the coordinator's to reject
            return
        value = getattr(body, "value", body)
        if isinstance(value, (c.Declare, c.Discharge)):
            d.txn_request = value

    # --- disposition ------------------------------------------------------------------

    def on_disposition(self, side: str, disp: Any) -> None:
        conn = self.conn
        if disp.role is None or disp.first is None:
            conn.violation("missing-field", "disposition without role or first", session=self)
            return
        sender = conn.other[side] if bool(disp.role) == RECEIVER else side
        first = int(disp.first)
        last = int(disp.last) if disp.last is not None else first
        infl = self.inflight[sender]
        n = serial.span(first, last)
        if n == 1:
            found = [infl[first]] if first in infl else []
        elif first + n <= serial.MOD and (n <= 64 or n <= len(infl)):
            found = [infl[i] for i in range(first, first + n) if i in infl]
        elif n <= 64 or n <= len(infl):
            found = [infl[i] for i in (serial.add(first, k) for k in range(n)) if i in infl]
        else:
            found = [d for i, d in infl.items() if serial.in_range(i, first, last)]
        if not found:
            fid = self.first_id[sender]
            if conn.midstream and (fid is None or serial.lt(first, fid)):
                return  # deliveries that began before the capture
            recent = self.recent[sender]
            if n == 1 and first in recent:
                if recent[first] == side:
                    conn.violation("already-settled",
                                   f"delivery {first} was already settled by {side}",
                                   session=self)
            elif n == 1 or not recent.any_of(first, min(n, 64)):
                conn.violation("unknown-delivery",
                               f"disposition for unknown delivery {first}..{last}", session=self)
            return
        settled = bool(disp.settled)
        state = disp.state
        if settled and state.__class__ in _TERMINAL and bool(disp.role) == RECEIVER:
            self._settle_received(found, side, state)
            return
        for d in found:
            self._dispose(d, side, state, settled)

    def _settle_received(self, found: list[Delivery], side: str, state: Any) -> None:
        """A receiver's disposition that settles `found` with a terminal outcome: what
        `_dispose` and `_finish` do, in one pass, for the deliveries in the common case
        (no state or settlement seen before from either side, receiver-settle-mode first,
        not a transaction request); the others go through `_dispose`."""
        conn = self.conn
        time = conn.time
        frame_no = conn.frame_no
        lean = conn.lean
        events = conn._events
        name = state_name(state) or "settled"
        sender = conn.other[side]
        # lean: a caller that settled what it received itself needs no event saying so,
        # and hears of its own deliveries settled by the peer in one event per disposition
        report = not lean
        updates = report and conn.updates
        settled_events = conn.settled_events
        ours: list[Delivery] | None = [] if lean and side != conn.local else None
        infl = self.inflight[sender]
        remember = self.recent[sender].add
        link: Link | None = None
        done = 0  # settled on `link` since it was last counted
        for d in found:
            if d.link is not link:
                if link is not None and done:
                    link.settled_count += done
                    link.outcomes[name] = link.outcomes.get(name, 0) + done
                link = d.link
                done = 0
                ordinary = link.rcv_mode != 1
                live = link.live
                sender_map = link.unsettled[sender]
                receiver_map = link.unsettled[side]
            if (not ordinary or d.phase != UNSETTLED or d.receiver_state is not None
                    or d.sender_state is not None or d.sender_settled or d.receiver_settled
                    or d.txn_request is not None or d.rcv_settle_mode is not None):
                if done:  # counted first, so the outcomes keep their order of arrival
                    link.settled_count += done
                    link.outcomes[name] = link.outcomes.get(name, 0) + done
                    done = 0
                self._dispose(d, side, state, True)
                continue
            d.receiver_state = state
            d.receiver_settled = True
            d.phase = SETTLED  # unsettled --rcv-settle--> settled
            d.settled_by = side  # the first to settle: nothing was settled before
            e = new_entry(TimelineEntry, (time, side, "disposition", frame_no, state, True, False,
                                          0, ""))
            d.timeline.append(e)
            if updates:
                events.append(DeliveryUpdated(d, e, time))
            # _finish
            d.settled_time = time
            tag = d.tag
            live.pop(tag, None)
            if link.carried:  # (only after a re-attach)
                link.carried.pop(tag, None)
            sender_map.pop(tag, None)
            receiver_map.pop(tag, None)
            if link.current is d:
                link.current = None
            done += 1
            did: int = d.delivery_id  # type: ignore[assignment]  # in flight: it has one
            if infl.get(did) is d:
                del infl[did]
            remember(did, side)
            if report:
                if settled_events:
                    events.append(DeliverySettled(d, time))
            elif ours is not None:
                ours.append(d)
        if link is not None and done:
            link.settled_count += done
            link.outcomes[name] = link.outcomes.get(name, 0) + done
        if ours:
            events.append(DeliveriesSettled(ours, time))

    def _dispose(self, d: Delivery, side: str, state: Any, settled: bool) -> None:
        conn = self.conn
        link = d.link
        is_rcv = side == d.receiver
        if state is not None:
            new = outcome_of(state)
            own = d.receiver_state if is_rcv else d.sender_state
            theirs = d.sender_state if is_rcv else d.receiver_state
            if new is not None and (own is not None or theirs is not None):
                prev = outcome_of(own)
                if prev is not None and prev != new:
                    conn.violation("outcome-changed",
                                   f"delivery {d.delivery_id}: {side} changed its outcome from"
                                   f" {prev.NAME} to {new.NAME}", session=self, link=link)
                other_out = outcome_of(theirs)
                if other_out is not None and other_out != new:
                    conn.violation("conflicting-outcome",
                                   f"delivery {d.delivery_id}: {side} says {new.NAME},"
                                   f" {conn.other[side]} said {other_out.NAME}",
                                   session=self, link=link)
            if is_rcv:
                d.receiver_state = state
            else:
                d.sender_state = state
            if isinstance(state, c.TransactionalState):
                d.txn_id = state.txn_id
            mine = link.unsettled[side]
            if d.tag in mine:
                mine[d.tag] = state
        if settled:
            if is_rcv:
                if d.receiver_settled:
                    conn.violation("already-settled",
                                   f"delivery {d.delivery_id} settled twice by {side}",
                                   session=self, link=link)
                if not d.sender_settled and self._waits_rcv(d):
                    conn.violation("early-settle",
                                   f"delivery {d.delivery_id} settled by the receiver before"
                                   " the sender in receiver-settle-mode second",
                                   session=self, link=link)
                d.receiver_settled = True
                step = "rcv-settle"
            else:
                if d.sender_settled:
                    conn.violation("already-settled",
                                   f"delivery {d.delivery_id} settled twice by {side}",
                                   session=self, link=link)
                d.sender_settled = True
                step = "snd-settle-2" if self._waits_rcv(d) else "snd-settle"
            if d.settled_by is None:
                d.settled_by = side
            link.unsettled[side].pop(d.tag, None)
            d.step(step)
        e = TimelineEntry(conn.time, side, "disposition" if state is not None else "settle",
                          conn.frame_no, state, settled)
        d.timeline.append(e)
        if conn.updates and (not conn.lean or d.phase not in FINAL):
            conn._events.append(DeliveryUpdated(d, e, conn.time))
        if d.txn_request is not None and is_rcv and state is not None:
            self._txn_outcome(d, state)
        if d.done:
            self._finish(d)

    def _txn_outcome(self, d: Delivery, state: Any) -> None:
        conn = self.conn
        req = d.txn_request
        if isinstance(req, c.Declare) and isinstance(state, c.Declared):
            txn_id = bytes(state.txn_id)
            conn.transactions[txn_id] = "active"
            conn.emit(TransactionDeclared(txn_id, d, conn.time))
        elif isinstance(req, c.Discharge) and outcome_of(state) is not None:
            txn_id = bytes(req.txn_id)
            fail = bool(req.fail)
            if isinstance(state, c.Accepted):
                result = "rolled-back" if fail else "committed"
            else:
                err = getattr(state, "error", None)
                result = f"failed: {getattr(err, 'condition', None) or state_label(state)}"
            conn.transactions[txn_id] = result
            conn.emit(TransactionDischarged(txn_id, fail, result, d, conn.time))

    def _finish(self, d: Delivery, report: bool = True) -> None:
        """The delivery is final: out of the live maps, into a DeliverySettled event
        (`report=False`: lean endpoint, a message settled on arrival, whose
        MessageReceived is its report)."""
        conn = self.conn
        d.settled_time = conn.time
        d.link.count_final(d)
        if d.delivery_id is not None:
            infl = self.inflight[d.sender]
            if infl.get(d.delivery_id) is d:
                del infl[d.delivery_id]
            self.recent[d.sender].add(d.delivery_id, d.settled_by)
        if report and conn.settled_events:
            conn._events.append(DeliverySettled(d, conn.time))


def _another_delivery(d: Delivery, t: Any) -> bool:
    """Transfer `t` names a delivery other than `d`, the one in progress on its link."""
    did = t.delivery_id
    if did is not None and did != d.delivery_id:
        return True
    tag = t.delivery_tag
    return tag is not None and bytes(tag) != d.tag


_SECTION_CODES = range(0x70, 0x79)  # header .. footer (Part 3 §3.2)


def starts_message(payload: bytes) -> bool:
    """Whether `payload` can be the start of a message (format 0): it opens with a
    described section, a 0x00 then its descriptor as a small ulong, a ulong or an
    `amqp:` symbol. An empty payload tells nothing and counts as a start; a
    continuation that happens to begin with such bytes is one in millions."""
    if not payload:
        return True
    if len(payload) < 3 or payload[0] != 0:
        return False
    ctor = payload[1]
    if ctor == 0x53:
        return payload[2] in _SECTION_CODES
    if ctor == 0x80:
        return payload[2:9] == bytes(7) and len(payload) > 9 and payload[9] in _SECTION_CODES
    if ctor == 0xA3:
        return payload.startswith(b"amqp:", 3)
    if ctor == 0xB3:
        return payload.startswith(b"amqp:", 6)
    return False


def state_label(state: Any) -> str:
    return getattr(state, "NAME", type(state).__name__)




def _take_held_outcomes(link: Link, attach: Any, tags: Any,
                        d: Delivery | None = None) -> None:
    """A receiver's re-attach (`attach`) lists the deliveries it has, each with its
    state: where that is an outcome and the model knows none from the receiver (its
    disposition was not seen: lost with the earlier connection, or before the capture),
    it is the receiver's state of the delivery, which the sender settles with a resume
    or a disposition (Part 2 §2.6.13). `tags`: those to look at, of the link's live
    deliveries, or of `d` alone (one the model meets first in its resume)."""
    held = getattr(attach, "unsettled", None)
    if not isinstance(held, dict):
        return
    live = link.live
    for tag in tags:
        state = held.get(tag)
        if outcome_of(state) is None:
            continue
        one = d if d is not None else live.get(bytes(tag))
        if one is not None and outcome_of(one.receiver_state) is None:
            one.receiver_state = state
