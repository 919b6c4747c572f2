"""Each protocol violation of a 0-10 capture is reported once by `pcap-dump`, as a text
line and as a JSON record: every kind the session model finds, on small crafted captures.
A sequence-set naming an id twice (overlapping or repeated ranges) names it once: the
unknown id is one violation, and a transfer it names twice is not "already accepted" by
its own command, nor completed twice (which gave its window credit back twice). The 1.0
side is checked the same way for a transfer on an unknown handle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, SequenceSet, encode_assembly
from tests.amqp010 import pcap_write
from tests.amqp010.test_session import Script
from tests.net.clirun import amqp_in_process

C, S = "client", "server"


def ctl(side: str, qname: str, channel: int = 1, **fields: Any) -> tuple[str, bytes]:
    return side, encode_assembly(Control.make(qname, **fields), channel)


def cmd(side: str, qname: str, body: bytes | None = None, channel: int = 1,
        **fields: Any) -> tuple[str, bytes]:
    return side, encode_assembly(Command.make(qname, **fields), channel, (), body)


ATTACHED = [ctl(C, "session.attach", name=b"s1"), ctl(S, "session.attached", name=b"s1"),
            ctl(C, "session.command-point", command_id=0, command_offset=0),
            ctl(S, "session.command-point", command_id=0, command_offset=0)]


def transfer(**fields: Any) -> tuple[str, bytes]:
    return cmd(S, "message.transfer", b"x", destination="d", **fields)


def subscribe() -> tuple[str, bytes]:
    return cmd(C, "message.subscribe", queue="q", destination="d")


def accept(*ranges: tuple[int, int]) -> tuple[str, bytes]:
    return cmd(C, "message.accept", transfers=SequenceSet(ranges))


CASES: dict[str, tuple[list[tuple[str, bytes]], list[str]]] = {
    "transfer with no session": (
        [cmd(C, "message.transfer", b"x", destination="q")],
        ["message.transfer on channel 1 with no session attached",
         "message.transfer before session.command-point: numbered from 0"]),
    "control with no session": (
        [ctl(S, "session.completed", channel=2, commands=SequenceSet.of(0))],
        ["session.completed on channel 2 with no session attached"]),
    "command before command-point": (
        ATTACHED[:2] + [cmd(C, "execution.sync")],
        ["execution.sync before session.command-point: numbered from 0"]),
    "unknown transfer": (
        ATTACHED + [accept((5, 5))], ["message.accept names unknown transfer 5"]),
    "not a transfer": (
        ATTACHED + [cmd(S, "execution.sync"), accept((0, 0))],
        ["message.accept names command 0 (execution.sync), not a message.transfer"]),
    "already accepted": (
        ATTACHED + [transfer(), accept((0, 0)), accept((0, 0))],
        ["message.accept of transfer 0, already accepted"]),
    "not acquired": (
        ATTACHED + [transfer(acquire_mode=1), accept((0, 0))],
        ["message.accept of transfer 0, not acquired"]),
    "result for unknown command": (
        ATTACHED + [cmd(C, "execution.result", command_id=9)],
        ["execution.result for unknown command 9"]),
    "second subscription": (
        ATTACHED + [subscribe(), subscribe()], ["second subscription to destination 'd'"]),
    "unknown destination": (
        ATTACHED + [cmd(C, "message.flow", destination="x", unit=0, value=1)],
        ["message.flow for unknown destination 'x'"]),
    "beyond credit": (
        ATTACHED + [subscribe(), transfer()], ["transfer 0 to 'd' beyond message and byte credit"]),
    "cancelled destination": (
        ATTACHED + [subscribe(), cmd(C, "message.cancel", destination="d"),
                    ctl(S, "session.completed", commands=SequenceSet(((0, 1),))), transfer()],
        ["transfer 0 to cancelled destination 'd'"]),
    "ids named twice": (
        ATTACHED + [transfer(), accept((0, 0), (0, 0), (5, 5), (4, 6))],
        ["message.accept names unknown transfer 5", "message.accept names unknown transfer 4",
         "message.accept names unknown transfer 6"]),
}


def _run(*args: str) -> str:
    code, out, err = amqp_in_process("pcap-dump", *args)
    assert code == 0, err
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_each_0_10_violation_is_reported_once(tmp_path: Path, case: str) -> None:
    chunks, expected = CASES[case]
    path = tmp_path / "v.pcap"
    pcap_write.write(path, [(C, PROTOCOL_HEADER), (S, PROTOCOL_HEADER), *chunks])
    text = [line.split("): ", 1)[1] for line in _run(str(path)).splitlines()
            if " !! violation " in line]
    assert text == expected
    records = [json.loads(x) for x in _run(str(path), "--json").splitlines()]
    assert [r["detail"] for r in records if r["record"] == "violation"] == expected
    summary = json.loads(_run(str(path), "--summary", "--json"))
    assert sorted(v["detail"] for v in summary["violations"]) == sorted(expected)


def test_completed_twice_in_one_set_gives_window_credit_back_once() -> None:
    s = Script()
    s.attach()
    s.subscribe(mode=1)  # window mode
    s.cmd("client", "message.flow", destination="d", unit=0, value=1)
    s.cmd("client", "message.flow", destination="d", unit=1, value=0xFFFFFFFF)
    s.transfer()
    s.ctl("client", "session.completed", commands=SequenceSet(((0, 0), (0, 0))))
    (msg,) = s.obs.messages
    assert [e.event for e in msg.timeline] == ["transfer", "completed"]
    s.transfer()
    s.transfer()  # the window was one message: the credit came back once
    assert [v.message for v in s.obs.violations] == ["transfer 2 to 'd' beyond message credit"]


def test_a_1_0_transfer_on_an_unknown_handle_is_reported_once(tmp_path: Path) -> None:
    from tests.dissect.helpers import Script as Script10
    from tests.dissect.helpers import write

    s = Script10().open().sender_link(credit=2)
    s.transfer(0, handle=7)
    s.close()
    path = str(write(tmp_path / "h.pcapng", s))
    text = [line for line in _run(path).splitlines() if "violation unknown-handle" in line]
    assert len(text) == 1, text
    records = [json.loads(x) for x in _run(path, "--json").splitlines()]
    assert [r["kind"] for r in records if r["record"] == "violation"].count("unknown-handle") == 1
