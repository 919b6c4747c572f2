"""The 0-10 session model, sans-IO: fed assemblies with a time and a side, it numbers
commands and follows messages, subscriptions and completion.

Theory of operation
-------------------
One `SessionObserver` watches one connection from outside (both directions). `feed(asm,
time, side)` takes one `Assembly` sent by `side` ("client", the connection's initiator, or
"server").

* A session lives on a channel from session.attach to session.detached. Each side numbers
  the commands it sends: session.command-point sets the id of its next command, and every
  command (any assembly on the command track) takes that id, which then increments
  (modulo 2^32).
* session.completed from one side lists ids of the *other* side's commands that are
  complete; session.known-completed from a side lists ids of its own commands whose
  completion it has seen. execution.sync and the session header's sync flag ask for prompt
  completion; execution.result and execution.exception name the other side's command.
* message.transfer starts a `Message`; message.accept / reject / release / acquire name
  transfers of the other side by a sequence-set of command ids, and give the message its
  outcome. A transfer with accept-mode none needs no accept: it is accepted as sent. Once
  settled, a transfer may not be named again (the first outcome stands); accepting an
  unacquired message is a violation, rejecting one is ignored (both as the spec says).
* message.subscribe opens a `Subscription` per destination, in window mode with no credit.
  message.set-flow-mode, message.flow (no value: infinite), message.flush and message.stop
  manage its credit: in credit mode only message.flow adds credit; in window mode the
  completion of a transfer also gives its credit back. Byte credit counts the header and
  body segment octets. Flush and stop leave no credit once completed; transfers in flight
  before that are fine, as are transfers before a message.cancel completes. A transfer to a
  destination with too little credit, or after its cancel completed, is a violation.

Violations (protocol errors seen on the wire) are `Violation` records, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpcli.amqp010.frames import Assembly
from amqpcli.amqp010.model import Command, Control, Struct
from amqpcli.amqp010.values import SERIAL_MASK, SequenceSet

CLIENT, SERVER = "client", "server"
UNLIMITED = 0xFFFFFFFF  # a message.flow value meaning "no limit"
OUTCOMES = ("accepted", "rejected", "released")
# ranges of at most this many ids are walked id by id; larger ones are matched by scanning
_WALK_LIMIT = 4096


def peer_of(side: str) -> str:
    return SERVER if side == CLIENT else CLIENT


@dataclass(slots=True)
class TimelineEvent:
    """Something that happened to a message: what, when, who said so, by which command."""

    time: float
    side: str
    event: str  # transfer, accepted, rejected, released, acquired, completed, ...
    command_id: int | None = None  # the command that said so (None for controls)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CommandRecord:
    """One command as numbered on its session."""

    channel: int
    side: str
    command_id: int
    qname: str
    time: float
    sync: bool
    completed_at: float | None = None
    known_completed: bool = False
    result: Struct | None = None
    exception: Command | None = None


@dataclass(slots=True)
class Message:
    """A message.transfer and what became of it."""

    channel: int
    session: str | None
    sender: str
    command_id: int
    time: float  # of its first frame (Assembly.first_time), else when it was fed
    destination: str | None
    accept_mode: int  # 0 explicit, 1 none
    acquire_mode: int  # 0 pre-acquired, 1 not-acquired
    headers: tuple[Struct, ...]
    body: bytes
    sync: bool
    header_size: int = 0  # octets of the header segment
    frames: int = 1  # frames of the transfer's assembly (command, header, body segments)
    timeline: list[TimelineEvent] = field(default_factory=list)
    outcome: str | None = None  # accepted, rejected, released
    acquired: bool = False
    completed: bool = False
    known_completed: bool = False

    def header(self, qname: str) -> Struct | None:
        for s in self.headers:
            if s.qname == qname:
                return s
        return None

    @property
    def delivery_properties(self) -> Struct | None:
        return self.header("message.delivery-properties")

    @property
    def message_properties(self) -> Struct | None:
        return self.header("message.message-properties")

    @property
    def size(self) -> int:
        """Octets of the header and body segments (what byte credit counts)."""
        return self.header_size + len(self.body)

    @property
    def state(self) -> str:
        """One word for tables: the outcome if any, else completed or in flight."""
        if self.outcome:
            return self.outcome
        return "completed" if self.completed else "unsettled"


@dataclass(slots=True)
class Subscription:
    """A message.subscribe, per destination, with its flow control."""

    channel: int
    destination: str
    queue: str | None
    time: float
    accept_mode: int
    acquire_mode: int
    exclusive: bool
    arguments: dict[str, Any] | None
    command_id: int
    flow_mode: str = "window"  # the spec's default for a new subscription
    credit: dict[str, int] = field(default_factory=lambda: {"message": 0, "byte": 0})
    transfers: int = 0
    cancelled_at: float | None = None  # when the cancel completed
    cancelling: set[int] = field(default_factory=set)  # cancel ids awaiting completion
    timeline: list[TimelineEvent] = field(default_factory=list)
    draining: set[int] = field(default_factory=set)  # flush/stop ids awaiting completion


@dataclass(slots=True)
class Violation:
    time: float
    side: str  # who broke the protocol
    channel: int
    message: str
    command_id: int | None = None
    # what was broken: session, outcome, result, subscription, credit
    kind: str = "session"


@dataclass(slots=True)
class SessionInfo:
    channel: int
    name: bytes | None
    attached_at: float | None = None
    detached_at: float | None = None
    detach_code: int | None = None
    next_id: dict[str, int | None] = field(default_factory=lambda: {CLIENT: None, SERVER: None})
    commands: dict[str, dict[int, CommandRecord]] = field(
        default_factory=lambda: {CLIENT: {}, SERVER: {}})
    incomplete: dict[str, set[int]] = field(default_factory=lambda: {CLIENT: set(), SERVER: set()})
    # completed, and the sender has not yet said it knows
    unknown_completed: dict[str, set[int]] = field(
        default_factory=lambda: {CLIENT: set(), SERVER: set()})
    messages: dict[str, dict[int, Message]] = field(
        default_factory=lambda: {CLIENT: {}, SERVER: {}})
    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    # every transfer and subscription of the session, in order (the maps above keep the
    # latest by command id and by destination)
    transfers: list[Message] = field(default_factory=list)
    subscribed: list[Subscription] = field(default_factory=list)

    @property
    def label(self) -> str | None:
        if self.name is None:
            return None
        try:
            return self.name.decode()
        except UnicodeDecodeError:
            return self.name.hex()


@dataclass(slots=True)
class MessageEvent:
    message: Message
    entry: TimelineEvent


Event = CommandRecord | MessageEvent | Violation


class SessionObserver:
    """Follows every session of one connection. See the module docstring."""

    def __init__(self) -> None:
        self.sessions: list[SessionInfo] = []  # every session, in attach order
        self.messages: list[Message] = []
        self.subscriptions: list[Subscription] = []
        self.violations: list[Violation] = []
        self.connection: list[tuple[float, str, Control]] = []  # connection.* controls
        self._by_channel: dict[int, SessionInfo] = {}
        self._events: list[Event] = []

    def unanswered_syncs(self) -> list[CommandRecord]:
        """Commands that asked for prompt completion (sync flag, or execution.sync) and were
        never completed."""
        return [r for sess in self.sessions for side in (CLIENT, SERVER)
                for r in sess.commands[side].values()
                if (r.sync or r.qname == "execution.sync") and r.completed_at is None]

    # -- input -----------------------------------------------------------------------

    def feed(self, asm: Assembly, time: float, side: str) -> list[Event]:
        if side not in (CLIENT, SERVER):
            raise ValueError(f"side must be {CLIENT!r} or {SERVER!r}, not {side!r}")
        self._events = []
        m = asm.method
        if isinstance(m, Control):
            if m.klass == "connection":
                self.connection.append((time, side, m))
            elif m.klass == "session":
                self._session_control(asm.channel, m, time, side)
        else:
            self._command(asm, m, time, side)
        return self._events

    # -- session controls ------------------------------------------------------------

    def _session(self, channel: int, time: float, side: str, what: str) -> SessionInfo:
        s = self._by_channel.get(channel)
        if s is None:
            self._violate(time, side, channel, f"{what} on channel {channel} with no session "
                          "attached")
            s = self._by_channel[channel] = SessionInfo(channel, None)
            self.sessions.append(s)
        return s

    def _session_control(self, channel: int, c: Control, time: float, side: str) -> None:
        name = c.name
        if name == "attach":
            s = SessionInfo(channel, c.get("name"), attached_at=None)
            self._by_channel[channel] = s
            self.sessions.append(s)
            return
        s = self._session(channel, time, side, f"session.{name}")
        if name == "attached":
            s.attached_at = time
        elif name == "detached":
            s.detached_at = time
            s.detach_code = c.get("code", 0)
            self._by_channel.pop(channel, None)
        elif name == "command-point":
            s.next_id[side] = c.get("command-id", 0)
        elif name == "completed":
            self._completed(s, c.get("commands") or SequenceSet(), time, side)
        elif name == "known-completed":
            self._known_completed(s, c.get("commands") or SequenceSet(), time, side)

    def _completed(self, s: SessionInfo, ids: SequenceSet, time: float, side: str) -> None:
        owner = peer_of(side)  # completion is reported about the other side's commands
        done = self._select(s.incomplete[owner], ids)
        for i in sorted(done):
            s.incomplete[owner].discard(i)
            s.unknown_completed[owner].add(i)
            rec = s.commands[owner][i]
            rec.completed_at = time
            msg = s.messages[owner].get(i)
            if msg is not None:
                msg.completed = True
                self._note(msg, time, side, "completed", None)
                self._window_credit_back(s, msg, time)
            self._drained(s, rec, time, side)

    def _known_completed(self, s: SessionInfo, ids: SequenceSet, time: float, side: str) -> None:
        for i in sorted(self._select(s.unknown_completed[side], ids)):
            s.unknown_completed[side].discard(i)
            s.commands[side][i].known_completed = True
            msg = s.messages[side].get(i)
            if msg is not None:
                msg.known_completed = True
                self._note(msg, time, side, "known-completed", None)

    # -- commands --------------------------------------------------------------------

    def _command(self, asm: Assembly, c: Command, time: float, side: str) -> None:
        s = self._session(asm.channel, time, side, c.qname)
        cid = s.next_id[side]
        late = cid is None
        cid = cid or 0
        s.next_id[side] = (cid + 1) & SERIAL_MASK
        rec = CommandRecord(asm.channel, side, cid, c.qname, time, c.sync)
        s.commands[side][cid] = rec
        s.incomplete[side].add(cid)
        self._events.append(rec)
        if late:
            self._violate(time, side, asm.channel,
                          f"{c.qname} before session.command-point: numbered from 0", cid)
        handler = _HANDLERS.get(c.qname)
        if handler is not None:
            handler(self, s, asm, c, rec, time, side)

    def _transfer(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                  time: float, side: str) -> None:
        # a message's time is its first frame's (as a 1.0 delivery's is its first
        # transfer's): a transfer in many frames began then, though it completes now
        start = time if asm.first_time is None else asm.first_time
        msg = Message(s.channel, s.label, side, rec.command_id, start, c.get("destination"),
                      c.get("accept-mode", 0), c.get("acquire-mode", 0), asm.header,
                      asm.body or b"", c.sync, asm.header_size, asm.frames)
        s.messages[side][rec.command_id] = msg
        s.transfers.append(msg)
        self.messages.append(msg)
        self._note(msg, start, side, "transfer", rec.command_id,
                   destination=msg.destination, size=msg.size)  # size: as Message.size
        if msg.acquire_mode == 0:
            msg.acquired = True
        if msg.accept_mode == 1:  # settled by its sending, as a pre-settled 1.0 delivery
            msg.outcome = "accepted"
            self._note(msg, start, side, "accepted", rec.command_id, implicit="accept-mode none")
        sub = s.subscriptions.get(msg.destination or "")
        if sub is not None and side == SERVER:
            self._spend_credit(sub, msg, asm, time, side)

    def _outcome(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                 time: float, side: str) -> None:
        outcome = {"accept": "accepted", "reject": "rejected", "release": "released"}[c.name]
        detail = {k: v for k, v in c.fields.items() if k != "transfers"}
        for msg in self._transfers(s, c.get("transfers") or SequenceSet(), time, side, rec):
            if msg.outcome is not None:
                # once settled, a transfer's id may no longer be referenced; the first stands
                why = ("sent with accept-mode none" if msg.accept_mode == 1
                       and msg.outcome == "accepted" else f"already {msg.outcome}")
                self._violate(time, side, s.channel, f"message.{c.name} of transfer "
                              f"{msg.command_id}, {why}", rec.command_id, "outcome")
                self._note(msg, time, side, outcome, rec.command_id, ignored=why, **detail)
                continue
            if not msg.acquired and outcome != "released":
                if outcome == "accepted":  # the recipient must have acquired it
                    self._violate(time, side, s.channel, f"message.accept of transfer "
                                  f"{msg.command_id}, not acquired", rec.command_id, "outcome")
                else:  # the spec says a reject of an unacquired message is ignored
                    self._note(msg, time, side, outcome, rec.command_id,
                               ignored="not acquired", **detail)
                    continue
            msg.outcome = outcome
            self._note(msg, time, side, outcome, rec.command_id, **detail)

    def _acquire(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                 time: float, side: str) -> None:
        for msg in self._transfers(s, c.get("transfers") or SequenceSet(), time, side, rec):
            self._note(msg, time, side, "acquire", rec.command_id)

    def _result(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                time: float, side: str) -> None:
        target = s.commands[peer_of(side)].get(c.get("command-id", 0))
        if target is None:
            self._violate(time, side, s.channel, f"execution.result for unknown command "
                          f"{c.get('command-id', 0)}", rec.command_id, "result")
            return
        target.result = c.get("value")
        if target.qname == "message.acquire" and target.result is not None:
            acquired = target.result.get("transfers") or SequenceSet()
            for msg in self._transfers(s, acquired, time, side, rec, mine=side):
                msg.acquired = True
                self._note(msg, time, side, "acquired", rec.command_id)

    def _exception(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                   time: float, side: str) -> None:
        cid = c.get("command-id")
        target = s.commands[peer_of(side)].get(cid) if cid is not None else None
        if target is not None:
            target.exception = c
            msg = s.messages[peer_of(side)].get(cid)
            if msg is not None:
                self._note(msg, time, side, "exception", rec.command_id, **c.fields)

    def _subscribe(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                   time: float, side: str) -> None:
        dest = c.get("destination", "")
        if dest in s.subscriptions and s.subscriptions[dest].cancelled_at is None:
            self._violate(time, side, s.channel, f"second subscription to destination {dest!r}",
                          rec.command_id, "subscription")
        sub = Subscription(s.channel, dest, c.get("queue"), time, c.get("accept-mode", 0),
                           c.get("acquire-mode", 0), bool(c.get("exclusive")),
                           c.get("arguments"), rec.command_id)
        s.subscriptions[dest] = sub
        s.subscribed.append(sub)
        self.subscriptions.append(sub)
        sub.timeline.append(TimelineEvent(time, side, "subscribe", rec.command_id,
                                          {k: v for k, v in c.fields.items()}))

    def _flow_control(self, s: SessionInfo, asm: Assembly, c: Command, rec: CommandRecord,
                      time: float, side: str) -> None:
        dest = c.get("destination", "")
        sub = s.subscriptions.get(dest)
        if sub is None:
            self._violate(time, side, s.channel, f"{c.qname} for unknown destination {dest!r}",
                          rec.command_id, "subscription")
            return
        if c.name == "cancel":
            sub.cancelling.add(rec.command_id)
        elif c.name == "set-flow-mode":
            sub.flow_mode = "window" if c.get("flow-mode", 0) == 1 else "credit"
            sub.credit = {"message": 0, "byte": 0}
        elif c.name == "flow":
            unit = "byte" if c.get("unit", 0) == 1 else "message"
            value = c.get("value", UNLIMITED)  # no value: infinite credit
            if value == UNLIMITED or sub.credit[unit] == UNLIMITED:
                sub.credit[unit] = UNLIMITED
            else:
                sub.credit[unit] = min(sub.credit[unit] + value, UNLIMITED - 1)
        elif c.name in ("flush", "stop"):
            sub.draining.add(rec.command_id)
            if c.name == "stop":
                sub.credit = {"message": 0, "byte": 0}
        sub.timeline.append(TimelineEvent(time, side, c.name, rec.command_id,
                                          dict(c.fields) | {"credit": dict(sub.credit)}))

    # -- credit ----------------------------------------------------------------------

    def _spend_credit(self, sub: Subscription, msg: Message, asm: Assembly, time: float,
                      side: str) -> None:
        sub.transfers += 1
        size = asm.header_size + len(msg.body)
        if sub.cancelled_at is not None:
            self._violate(time, side, sub.channel, f"transfer {msg.command_id} to cancelled "
                          f"destination {sub.destination!r}", msg.command_id, "subscription")
            return
        if sub.draining:
            return  # a flush or stop is settling the credit: anything in flight may arrive
        short = [u for u, need in (("message", 1), ("byte", size))
                 if sub.credit[u] != UNLIMITED and sub.credit[u] < need]
        if short:
            self._violate(time, side, sub.channel, f"transfer {msg.command_id} to "
                          f"{sub.destination!r} beyond {' and '.join(short)} credit",
                          msg.command_id, "credit")
        for unit, need in (("message", 1), ("byte", size)):
            if sub.credit[unit] != UNLIMITED:
                sub.credit[unit] = max(sub.credit[unit] - need, 0)

    def _window_credit_back(self, s: SessionInfo, msg: Message, time: float) -> None:
        sub = s.subscriptions.get(msg.destination or "")
        if sub is None or sub.flow_mode != "window" or msg.sender != SERVER:
            return
        size = msg.header_size + len(msg.body)
        for unit, back in (("message", 1), ("byte", size)):
            if sub.credit[unit] != UNLIMITED:
                sub.credit[unit] = min(sub.credit[unit] + back, UNLIMITED - 1)

    def _drained(self, s: SessionInfo, rec: CommandRecord, time: float, side: str) -> None:
        if rec.qname == "message.cancel":
            for sub in s.subscriptions.values():
                if rec.command_id in sub.cancelling:
                    sub.cancelling.discard(rec.command_id)
                    sub.cancelled_at = time
                    sub.timeline.append(TimelineEvent(time, side, "cancelled", rec.command_id))
            return
        if rec.qname not in ("message.flush", "message.stop"):
            return
        for sub in s.subscriptions.values():
            if rec.command_id in sub.draining:
                sub.draining.discard(rec.command_id)
                sub.credit = {"message": 0, "byte": 0}
                sub.timeline.append(TimelineEvent(time, side, "drained", rec.command_id,
                                                  {"credit": dict(sub.credit)}))

    # -- helpers ---------------------------------------------------------------------

    def _named(self, seq: SequenceSet, known: set[int] | dict[int, Any]) -> list[int]:
        """The ids `seq` names, each once, in wire order (it is a set: ranges that overlap
        or repeat an id name it once); of a set too large to walk, the members of `known`."""
        total = sum(((hi - lo) & SERIAL_MASK) + 1 for lo, hi in seq.ranges)
        if total <= _WALK_LIMIT:
            return list(dict.fromkeys(seq.ids()))
        return [i for i in known if i in seq]

    def _select(self, ids: set[int] | dict[int, Any], seq: SequenceSet) -> list[int]:
        """Members of `ids` that `seq` names, without walking huge ranges."""
        return [i for i in self._named(seq, ids) if i in ids]

    def _transfers(self, s: SessionInfo, seq: SequenceSet, time: float, side: str,
                   rec: CommandRecord, mine: str | None = None) -> list[Message]:
        """The messages `seq` names: transfers sent by `mine` (default: the other side)."""
        owner = mine or peer_of(side)
        known = s.commands[owner]
        out = []
        for i in self._named(seq, known):
            msg = s.messages[owner].get(i)
            if msg is not None:
                out.append(msg)
            elif i in known:
                self._violate(time, side, s.channel, f"{rec.qname} names command {i} "
                              f"({known[i].qname}), not a message.transfer", rec.command_id,
                              "outcome")
            else:
                self._violate(time, side, s.channel, f"{rec.qname} names unknown transfer {i}",
                              rec.command_id, "outcome")
        return out

    def _note(self, msg: Message, time: float, side: str, event: str, cid: int | None,
              **detail: Any) -> None:
        entry = TimelineEvent(time, side, event, cid, detail)
        msg.timeline.append(entry)
        self._events.append(MessageEvent(msg, entry))

    def _violate(self, time: float, side: str, channel: int, message: str,
                 cid: int | None = None, kind: str = "session") -> None:
        v = Violation(time, side, channel, message, cid, kind)
        self.violations.append(v)
        self._events.append(v)


# what became of a message, as `Message.state` says it
STATES = ("accepted", "rejected", "released", "completed", "unsettled")


@dataclass(slots=True)
class Destination:
    """What 0-10 has instead of a 1.0 link: the message.transfers one side sent to one
    destination on one session, and the message.subscribe that opened the destination,
    if one did (the server sends to it). A client sends to an exchange by its name."""

    session_no: int  # the session's place in attach order, from 1
    session: str | None  # its name (`SessionInfo.label`)
    channel: int
    destination: str
    sender: str  # who sends the transfers: client or server
    first_time: float  # of the subscription or the first transfer
    subscription: Subscription | None = None  # the latest message.subscribe
    subscribes: int = 0  # message.subscribe commands for it (a cancelled one may return)
    transfers: int = 0
    bytes: int = 0  # octets of the header and body segments (`Message.size`)
    states: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATES, 0))


def destinations(model: SessionObserver) -> list[Destination]:
    """The destinations of every session, sessions in attach order, each session's by
    the time each was first used."""
    out: list[Destination] = []
    for no, s in enumerate(model.sessions, 1):
        found: dict[tuple[str, str], Destination] = {}
        for sub in s.subscribed:
            d = _destination(found, no, s, sub.destination, SERVER, sub.time)
            d.subscription = sub
            d.subscribes += 1
        for msg in s.transfers:
            d = _destination(found, no, s, msg.destination or "", msg.sender, msg.time)
            d.first_time = min(d.first_time, msg.time)
            d.transfers += 1
            d.bytes += msg.size
            d.states[msg.state] = d.states.get(msg.state, 0) + 1
        out += sorted(found.values(), key=lambda d: d.first_time)
    return out


def _destination(found: dict[tuple[str, str], Destination], no: int, s: SessionInfo,
                 dest: str, sender: str, time: float) -> Destination:
    d = found.get((dest, sender))
    if d is None:
        d = found[(dest, sender)] = Destination(no, s.label, s.channel, dest, sender, time)
    return d


_HANDLERS: dict[str, Any] = {
    "message.transfer": SessionObserver._transfer,
    "message.accept": SessionObserver._outcome,
    "message.reject": SessionObserver._outcome,
    "message.release": SessionObserver._outcome,
    "message.acquire": SessionObserver._acquire,
    "message.subscribe": SessionObserver._subscribe,
    "message.cancel": SessionObserver._flow_control,
    "message.set-flow-mode": SessionObserver._flow_control,
    "message.flow": SessionObserver._flow_control,
    "message.flush": SessionObserver._flow_control,
    "message.stop": SessionObserver._flow_control,
    "execution.result": SessionObserver._result,
    "execution.exception": SessionObserver._exception,
}
