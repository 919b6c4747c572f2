"""What the views say of a proton frame-trace log (no times) that only a log has: a
payload the log cut short (`... (truncated)`) shows the size its lines give, and is no
message seen whole; messages and their hops come in the order of the log's lines; the
summary and the connections speak of the log, not of a capture or TCP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from amqpcli.codec.composites import Properties
from amqpcli.codec.message import Message

_ID = "[0x5600aa]: AMQP:FRAME:"
_SETUP = [
    "  -> AMQP",
    "0 -> @open(16) [container-id=\"c\", max-frame-size=0x8000]",
    "0 -> @begin(17) [next-outgoing-id=0x0, incoming-window=0x7fffffff, outgoing-window=0x7fffffff]",
    ("0 -> @attach(18) [name=\"s\", handle=0x0, role=false, snd-settle-mode=0x0, "
    "rcv-settle-mode=0x0, target=@target(41) [address=\"q1\"]]"),
    ("0 -> @attach(18) [name=\"r\", handle=0x1, role=true, snd-settle-mode=0x0, "
    "rcv-settle-mode=0x0, source=@source(40) [address=\"q1\"]]"),
    ("0 -> @flow(19) [incoming-window=0x7fffffff, next-outgoing-id=0x0, outgoing-window=0x7fffffff, "
    "handle=0x1, delivery-count=0x0, link-credit=0xa]"),
    "  <- AMQP",
    "0 <- @open(16) [container-id=\"b\", max-frame-size=0x8000]",
    ("0 <- @begin(17) [remote-channel=0x0, next-outgoing-id=0x0, incoming-window=0x800, "
    "outgoing-window=0x800]"),
    ("0 <- @attach(18) [name=\"s\", handle=0x0, role=true, snd-settle-mode=0x0, "
    "rcv-settle-mode=0x0, target=@target(41) [address=\"q1\"]]"),
    ("0 <- @flow(19) [next-incoming-id=0x0, incoming-window=0x800, next-outgoing-id=0x0, "
    "outgoing-window=0x800, handle=0x0, delivery-count=0x0, link-credit=0x64]"),
    ("0 <- @attach(18) [name=\"r\", handle=0x1, role=false, snd-settle-mode=0x0, "
    "rcv-settle-mode=0x0, source=@source(40) [address=\"q1\"]]"),
]


def _escaped(data: bytes) -> str:
    return "".join(f"\\x{b:02x}" for b in data)


def _transfer(incoming: bool, handle: int, did: int, payload: bytes, cut_to: int = 0) -> str:
    shown = payload[:cut_to] if cut_to else payload
    return (f"0 {'<-' if incoming else '->'} @transfer(20) [handle={hex(handle)}, "
            f"delivery-id={hex(did)}, delivery-tag=b\"{did}\", message-format=0x0] "
            f"({len(payload)}) {_escaped(shown)}" + (" ... (truncated)" if cut_to else ""))


def _accept(incoming: bool, role: bool, did: int) -> str:
    return (f"0 {'<-' if incoming else '->'} @disposition(21) [role={str(role).lower()}, "
            f"first={hex(did)}, settled=true, state=@accepted(36) []]")


def _message(n: int, body: bytes = b"x") -> bytes:
    return Message(properties=Properties(message_id=n), body=body).encode()


def _log(tmp_path: Path, lines: list[str]) -> Path:
    log = tmp_path / "client.trace"
    log.write_text("".join(f"{_ID}{x}\n" for x in _SETUP + lines))
    return log


def _dump(log: Path, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log), *args],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_a_payload_the_log_cut_short_shows_its_size_and_is_not_seen_whole(
        tmp_path: Path) -> None:
    big = _message(0, b"A" * 5000)
    log = _log(tmp_path, [_transfer(False, 0, 0, big, cut_to=1000), _accept(True, True, 0)])
    line = _dump(log, "--deliveries").strip()
    assert f"{len(big)} B" in line and "log shows 1000 B" in line, line
    rec = json.loads(_dump(log, "--deliveries", "--json").splitlines()[0])
    assert rec["size"] == 1000 and rec["full-size"] == len(big) and rec["incomplete"], rec
    assert "1 of them cut short by the log" in _dump(log, "--messages")
    assert "incomplete (message not seen whole): 1" in _dump(log, "--summary")


def test_a_payload_the_log_cut_short_is_not_judged_as_a_message(tmp_path: Path) -> None:
    """The frame view: the log's bytes of a cut payload are no message's to judge (it
    said "not a valid message … found end of input"), alone or joined with the other
    pieces of its delivery."""
    big = _message(0, b"A" * 5000)
    first = ("0 -> @transfer(20) [handle=0x0, delivery-id=0x1, delivery-tag=b\"1\", "
             f"message-format=0x0, more=true] (3000) {_escaped(big[:1000])} ... (truncated)")
    rest = f"0 -> @transfer(20) [handle=0x0] ({len(big) - 3000}) {_escaped(big[3000:])}"
    # and one the log did not cut, in two frames, whose bytes are no message: said so
    bad = ("0 -> @transfer(20) [handle=0x0, delivery-id=0x2, delivery-tag=b\"2\", "
           f"message-format=0x0, more=true] (3) {_escaped(b'ABC')}")
    bad_rest = f"0 -> @transfer(20) [handle=0x0] (3) {_escaped(b'DEF')}"
    log = _log(tmp_path, [_transfer(False, 0, 0, big, cut_to=1000), _accept(True, True, 0),
                          first, rest, _accept(True, True, 1), bad, bad_rest])
    text = _dump(log)
    assert text.count("valid message") == 1 and "does not decode" not in text, text
    frames = [json.loads(x) for x in _dump(log, "--json").splitlines()]
    transfers = [f for f in frames if "transfer" in (f.get("performative") or {})]
    # (JSON judges a delivery in several frames in its delivery record, not its frames)
    assert len(transfers) == 5 and not any("message-error" in f for f in transfers)


def test_messages_and_hops_in_the_order_of_the_log(tmp_path: Path) -> None:
    # sent 0, 1; received 1 (settled first), then 0
    m0, m1 = _message(0), _message(1)
    log = _log(tmp_path, [
        _transfer(False, 0, 0, m0), _transfer(False, 0, 1, m1),
        _transfer(True, 1, 0, m1), _accept(False, True, 0), _accept(True, True, 1),
        _transfer(True, 1, 1, m0), _accept(False, True, 1), _accept(True, True, 0),
    ])
    lines = _dump(log, "--messages").splitlines()
    assert "id=long:0" in lines[0] and "id=long:1" in lines[1], lines
    for line in lines[:2]:
        assert line.index("c1 ->") < line.index("c1 <-"), line


def test_a_log_speaks_of_the_log_not_of_a_capture_or_tcp(tmp_path: Path) -> None:
    log = _log(tmp_path, [_transfer(False, 0, 0, _message(0))])
    assert "unsettled when the log ended: 1" in _dump(log, "--summary")
    assert "tcp:" not in _dump(log, "--connections")
