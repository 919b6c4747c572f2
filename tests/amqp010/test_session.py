"""The session model on scripted conversations: numbering, completion, outcomes, acquire,
subscriptions and credit, violations."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.amqp010 import Command, Control, SequenceSet, Struct, decode_stream, encode_assembly
from amqpcli.amqp010.session import UNLIMITED, SessionObserver


class Script:
    """Feeds assemblies (through the encoder and decoder) at increasing times."""

    def __init__(self) -> None:
        self.obs = SessionObserver()
        self.t = 0.0

    def send(self, side: str, method: Control | Command, body: bytes | None = None,
             header: tuple[Struct, ...] = (), channel: int = 1) -> list[Any]:
        self.t += 1.0
        (asm,) = decode_stream(encode_assembly(method, channel, header, body),
                               expect_header=False)
        return self.obs.feed(asm, self.t, side)

    def ctl(self, side: str, qname: str, **fields: Any) -> list[Any]:
        return self.send(side, Control.make(qname, **fields))

    def cmd(self, side: str, qname: str, body: bytes | None = None, sync: bool = False,
            **fields: Any) -> list[Any]:
        return self.send(side, Command.make(qname, sync=sync, **fields), body)

    def attach(self, point: int = 0) -> None:
        self.ctl("client", "session.attach", name=b"s1")
        self.ctl("server", "session.attached", name=b"s1")
        self.ctl("client", "session.command-point", command_id=point, command_offset=0)
        self.ctl("server", "session.command-point", command_id=point, command_offset=0)

    def subscribe(self, mode: int = 0, acquire: int = 0, accept: int = 0) -> None:
        self.cmd("client", "message.subscribe", queue="q", destination="d", accept_mode=accept,
                 acquire_mode=acquire)
        self.cmd("client", "message.set-flow-mode", destination="d", flow_mode=mode)

    def transfer(self, side: str = "server", dest: str = "d", **kw: Any) -> list[Any]:
        return self.cmd(side, "message.transfer", body=b"body", destination=dest, **kw)


def test_credit_mode_outcomes_and_completion() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0)
    s.cmd("client", "message.flow", destination="d", unit=0, value=2)
    s.cmd("client", "message.flow", destination="d", unit=1, value=UNLIMITED)
    for _ in range(3):
        s.transfer()
    s.cmd("client", "message.accept", transfers=SequenceSet.of(0))
    s.cmd("client", "message.reject", transfers=SequenceSet.of(1), code=1, text="no route")
    s.cmd("client", "message.release", transfers=SequenceSet.of(2), set_redelivered=True)
    s.ctl("client", "session.completed", commands=SequenceSet(((0, 2),)))
    s.ctl("server", "session.known-completed", commands=SequenceSet(((0, 2),)))
    obs = s.obs
    assert [(m.command_id, m.outcome, m.completed, m.known_completed) for m in obs.messages] == [
        (0, "accepted", True, True), (1, "rejected", True, True), (2, "released", True, True)]
    assert [e.event for e in obs.messages[1].timeline] == [
        "transfer", "rejected", "completed", "known-completed"]
    reject = obs.messages[1].timeline[1]
    assert (reject.side, reject.command_id, reject.detail) == (
        "client", 5, {"code": 1, "text": "no route"})
    assert [(v.kind, v.message) for v in obs.violations] == [
        ("credit", "transfer 2 to 'd' beyond message credit")]
    (sub,) = obs.subscriptions
    assert (sub.destination, sub.queue, sub.flow_mode, sub.transfers) == ("d", "q", "credit", 3)
    assert sub.credit == {"message": 0, "byte": UNLIMITED}
    assert [e.event for e in sub.timeline] == ["subscribe", "set-flow-mode", "flow", "flow"]


def test_window_mode_gives_credit_back_on_completion() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=1)
    s.cmd("client", "message.flow", destination="d", unit=0, value=1)
    s.cmd("client", "message.flow", destination="d", unit=1, value=UNLIMITED)
    s.transfer()
    s.ctl("client", "session.completed", commands=SequenceSet.of(0))
    s.transfer()
    assert s.obs.violations == []
    s.transfer()  # the second was not completed: no credit left
    assert [v.message for v in s.obs.violations] == ["transfer 2 to 'd' beyond message credit"]
    assert s.obs.subscriptions[0].flow_mode == "window"


def test_byte_credit_counts_header_and_body() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0)
    s.cmd("client", "message.flow", destination="d", unit=0, value=UNLIMITED)
    s.cmd("client", "message.flow", destination="d", unit=1, value=5)
    s.transfer()  # 4 octets of body, no header: fits
    mp = Struct.make("message.message-properties", content_type="t")
    s.send("server", Command.make("message.transfer", destination="d"), b"x", (mp,))
    assert [v.message for v in s.obs.violations] == ["transfer 1 to 'd' beyond byte credit"]


def test_acquire_resolved_through_execution_result() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0, acquire=1)
    s.cmd("client", "message.flow", destination="d", unit=0, value=UNLIMITED)
    s.cmd("client", "message.flow", destination="d", unit=1, value=UNLIMITED)
    s.transfer(acquire_mode=1)
    s.transfer(acquire_mode=1)
    s.cmd("client", "message.acquire", transfers=SequenceSet(((0, 1),)), sync=True)  # id 4
    acquired = Struct.make("message.acquired", transfers=SequenceSet.of(0))
    s.cmd("server", "execution.result", command_id=4, value=acquired)
    m0, m1 = s.obs.messages
    assert (m0.acquired, m1.acquired) == (True, False)
    assert [e.event for e in m0.timeline] == ["transfer", "acquire", "acquired"]
    assert [e.event for e in m1.timeline] == ["transfer", "acquire"]
    assert s.obs.sessions[0].commands["client"][4].result == acquired


def test_accept_mode_none_is_accepted_as_sent() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="amq.direct", accept_mode=1)
    (m,) = s.obs.messages
    assert m.outcome == "accepted" and m.timeline[1].detail == {"implicit": "accept-mode none"}


def test_violations_for_bad_references() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="x")  # client id 0
    s.cmd("client", "execution.sync")  # client id 1
    s.cmd("server", "message.accept", transfers=SequenceSet.of(0))
    s.cmd("server", "message.reject", transfers=SequenceSet.of(0), code=0)
    s.cmd("server", "message.accept", transfers=SequenceSet.of(1, 7))
    s.cmd("server", "execution.result", command_id=42)
    s.cmd("client", "message.flow", destination="nobody", unit=0, value=1)
    assert [(v.side, v.command_id, v.message) for v in s.obs.violations] == [
        ("server", 1, "message.reject of transfer 0, already accepted"),
        ("server", 2, "message.accept names command 1 (execution.sync), not a message.transfer"),
        ("server", 2, "message.accept names unknown transfer 7"),
        ("server", 3, "execution.result for unknown command 42"),
        ("client", 2, "message.flow for unknown destination 'nobody'"),
    ]


def test_numbering_from_command_point_and_wrap() -> None:
    s = Script()
    s.attach(point=0xFFFFFFFE)
    ids = [s.transfer(side="client", dest="x")[0].command_id for _ in range(3)]
    assert ids == [0xFFFFFFFE, 0xFFFFFFFF, 0]
    s.ctl("server", "session.completed", commands=SequenceSet(((0xFFFFFFFE, 0),)))
    assert all(m.completed for m in s.obs.messages)


def test_command_before_command_point_is_numbered_from_zero() -> None:
    s = Script()
    s.ctl("client", "session.attach", name=b"s")
    events = s.transfer(side="client", dest="x")
    assert events[0].command_id == 0
    assert [v.message for v in s.obs.violations] == [
        "message.transfer before session.command-point: numbered from 0"]


def test_huge_completed_ranges_do_not_walk_every_id() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="x")
    s.ctl("server", "session.completed", commands=SequenceSet(((0, 0xFFFFFFF0),)))
    assert s.obs.messages[0].completed


def test_flush_settles_credit_once_completed() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0)
    s.cmd("client", "message.flow", destination="d", unit=0, value=1)
    s.cmd("client", "message.flow", destination="d", unit=1, value=UNLIMITED)
    s.cmd("client", "message.flush", destination="d", sync=True)  # client id 4
    s.transfer()
    s.transfer()  # in flight while the flush settles: not a violation
    s.ctl("server", "session.completed", commands=SequenceSet(((0, 4),)))
    assert s.obs.violations == []
    s.transfer()  # a flush leaves no credit of either unit
    assert [v.message for v in s.obs.violations] == [
        "transfer 2 to 'd' beyond message and byte credit"]
    assert s.obs.subscriptions[0].timeline[-1].event == "drained"


def test_exception_lands_on_the_message() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="nowhere")
    s.cmd("server", "execution.exception", error_code=404, command_id=0, description="no")
    (m,) = s.obs.messages
    assert m.timeline[-1].event == "exception"
    assert m.timeline[-1].detail["error-code"] == 404
    assert s.obs.sessions[0].commands["client"][0].exception is not None


def test_side_must_be_client_or_server() -> None:
    s = Script()
    with pytest.raises(ValueError):
        s.send("left", Control.make("session.attach", name=b"x"))


def test_flow_without_value_is_infinite_credit() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0)
    s.cmd("client", "message.flow", destination="d", unit=0)
    s.cmd("client", "message.flow", destination="d", unit=1)
    for _ in range(5):
        s.transfer()
    assert s.obs.violations == []
    assert s.obs.subscriptions[0].credit == {"message": UNLIMITED, "byte": UNLIMITED}


def test_unacquired_messages_reject_ignored_accept_violates() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0, acquire=1)
    s.cmd("client", "message.flow", destination="d", unit=0)
    s.cmd("client", "message.flow", destination="d", unit=1)
    s.transfer(acquire_mode=1)
    s.transfer(acquire_mode=1)
    s.cmd("client", "message.reject", transfers=SequenceSet.of(0), code=0)  # ignored
    s.cmd("client", "message.accept", transfers=SequenceSet.of(1))  # not acquired
    m0, m1 = s.obs.messages
    assert m0.outcome is None and m0.timeline[-1].detail["ignored"] == "not acquired"
    assert m1.outcome == "accepted"
    assert [(v.kind, v.message) for v in s.obs.violations] == [
        ("outcome", "message.accept of transfer 1, not acquired")]


def test_settled_transfers_may_not_be_referenced_again() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="x")
    s.transfer(side="client", dest="x", accept_mode=1)
    s.cmd("server", "message.accept", transfers=SequenceSet(((0, 1),)))
    s.cmd("server", "message.release", transfers=SequenceSet.of(0))
    m0, m1 = s.obs.messages
    assert (m0.outcome, m1.outcome) == ("accepted", "accepted")  # the first outcome stands
    assert [v.message for v in s.obs.violations] == [
        "message.accept of transfer 1, sent with accept-mode none",
        "message.release of transfer 0, already accepted"]


def test_cancel_takes_effect_when_completed() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=0)
    s.cmd("client", "message.flow", destination="d", unit=0)
    s.cmd("client", "message.flow", destination="d", unit=1)
    s.cmd("client", "message.cancel", destination="d")  # client id 4
    s.transfer()  # still allowed: the cancel is not complete
    assert s.obs.violations == [] and s.obs.subscriptions[0].cancelled_at is None
    s.ctl("server", "session.completed", commands=SequenceSet(((0, 4),)))
    assert s.obs.subscriptions[0].cancelled_at is not None
    s.transfer()
    assert [(v.kind, v.message) for v in s.obs.violations] == [
        ("subscription", "transfer 1 to cancelled destination 'd'")]


def test_unanswered_syncs() -> None:
    s = Script()
    s.attach()
    s.transfer(side="client", dest="x", sync=True)  # 0
    s.cmd("client", "execution.sync")  # 1
    s.cmd("client", "queue.query", queue="q")  # 2, no sync asked
    assert [r.command_id for r in s.obs.unanswered_syncs()] == [0, 1]
    s.ctl("server", "session.completed", commands=SequenceSet.of(1))
    assert [r.command_id for r in s.obs.unanswered_syncs()] == [0]
    assert s.obs.messages[0].size == 4


def test_destinations_by_session_and_sender() -> None:
    # what `pcap-dump --links` shows of a 0-10 connection: per session, destination and
    # sending side, the transfers by state and the subscription that opened it
    from amqpcli.amqp010 import destinations

    s = Script()
    s.attach()
    s.subscribe()
    s.cmd("client", "message.flow", destination="d", unit=0, value=UNLIMITED)
    s.cmd("client", "message.flow", destination="d", unit=1, value=UNLIMITED)
    s.transfer()  # server 0
    s.transfer("client", dest="amq.direct")  # client 4
    s.cmd("client", "message.cancel", destination="d")  # client 5
    s.ctl("server", "session.completed", commands=SequenceSet(((0, 5),)))
    s.subscribe()  # again, after the cancel completed
    s.transfer()  # server 1
    s.cmd("client", "message.accept", transfers=SequenceSet.of(1))
    s.ctl("client", "session.detach", name=b"s1")
    s.ctl("server", "session.detached", name=b"s1")
    s.ctl("client", "session.attach", name=b"other")  # the same channel again
    s.ctl("client", "session.command-point", command_id=0, command_offset=0)
    s.transfer("client", dest="amq.direct", accept_mode=1)
    got = [(d.session_no, d.session, d.destination, d.sender, d.transfers, d.subscribes,
            {k: v for k, v in d.states.items() if v}) for d in destinations(s.obs)]
    assert got == [
        (1, "s1", "d", "server", 2, 2, {"accepted": 1, "unsettled": 1}),
        (1, "s1", "amq.direct", "client", 1, 0, {"completed": 1}),
        (2, "other", "amq.direct", "client", 1, 0, {"accepted": 1}),
    ]
    first = destinations(s.obs)[0]
    assert first.subscription is s.obs.subscriptions[1]
    assert first.subscription.cancelled_at is None
    assert first.bytes == 2 * len(b"body")
