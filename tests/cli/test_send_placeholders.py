"""`amqp send`: {n} and {uuid} in every value typed for a message, their escapes,
`--expand` for a BODY argument, and `--sequence`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Int, Long, Symbol, UByte, UInt, ULong
from amqpcli.render.message import message_to_json
from tests.net.clirun import amqp, amqp_in_process
from tests.peers import DirectReceiver

pytestmark = pytest.mark.integration


def _sent(rcv: DirectReceiver, k: int) -> list[Message]:
    return [Message.decode(m.raw) for m in rcv.wait_for_messages(k)]


def test_n_in_every_typed_value(direct_receiver: Callable[..., DirectReceiver]) -> None:
    # -P sn:long={n} was 'bad long value', -P tag=x-{n} and --group-sequence went literally
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/q", "x", "-c", "3", "-P", "sn:long={n}", "-P", "tag=x-{n}",
             "-P", "lit=a{{n}}b{{uuid}}", "-P", "id:uuid={uuid}", "-A", "x-opt-k:uint=1{n}",
             "--delivery-annotation", "x-opt-d:symbol=d{n}", "--footer", "x-opt-f:ubyte={n}",
             "--group-sequence", "{n}", "--to", "t{n}", "--subject", "s{n}",
             "--correlation-id", "ulong:{n}", "--user-id", "u{n}")
    assert r.returncode == 0, r.stderr
    got = _sent(rcv, 3)
    for n, m in enumerate(got, 1):
        ap = m.application_properties.value
        assert [type(v) for v in ap.values()] == [Long, str, str, uuid.UUID]
        assert (ap["sn"], ap["tag"], ap["lit"]) == (n, f"x-{n}", "a{n}b{uuid}")
        assert m.message_annotations.value == {Symbol("x-opt-k"): UInt(int(f"1{n}"))}
        assert m.delivery_annotations.value == {Symbol("x-opt-d"): Symbol(f"d{n}")}
        assert type(m.delivery_annotations.value[Symbol("x-opt-d")]) is Symbol
        assert m.footer.value == {Symbol("x-opt-f"): UByte(n)}
        assert type(m.footer.value[Symbol("x-opt-f")]) is UByte
        p = m.properties
        assert (p.group_sequence, p.to, p.subject, p.correlation_id, p.user_id) == (
            UInt(n), f"t{n}", f"s{n}", ULong(n), f"u{n}".encode())
        assert type(p.group_sequence) is UInt and type(p.correlation_id) is ULong
    ids = [m.application_properties.value["id"] for m in got]
    assert len(set(ids)) == 3  # a fresh one each


def test_a_body_is_expanded_only_when_asked(direct_receiver: Callable[..., DirectReceiver],
                                            tmp_path: Path) -> None:
    rcv = direct_receiver()
    assert amqp("send", f"{rcv.url}/q", "b {n}", "-c", "2").returncode == 0
    r = amqp("send", f"{rcv.url}/q", "b {n} {{n}}", "--expand", "-c", "2")
    assert r.returncode == 0, r.stderr
    r = amqp("send", f"{rcv.url}/q", "long:{n}", "-b", "value", "--expand", "-c", "2")
    assert r.returncode == 0, r.stderr
    r = amqp("send", f"{rcv.url}/q", "a{n}\nb{n}", "--lines", "--expand")
    assert r.returncode == 0, r.stderr
    bodies = [m.body for m in _sent(rcv, 8)]
    assert bodies[:4] == [[c.Data(b)] for b in (b"b {n}", b"b {n}", b"b 1 {n}", b"b 2 {n}")]
    assert [b.value for b in bodies[4:6]] == [1, 2] and type(bodies[4].value) is Long
    assert bodies[6:] == [[c.Data(b"a1")], [c.Data(b"b2")]]
    # bytes from a file are sent as they are: --expand with one is refused
    f = tmp_path / "body"
    f.write_text("{n}")
    r = amqp("send", f"{rcv.url}/q", "--file", str(f), "--expand")
    assert r.returncode == 2 and "sent as it is" in r.stderr


@pytest.mark.parametrize(("args", "said"), [
    # the run's length is known: every message's values are checked before anything is
    # sent, and the error names the first message that fails (it named the last)
    (["-c", "300", "-P", "sn:ubyte={n}"], "message 256: --property 'sn': bad ubyte value '256'"),
    (["-c", "300", "-P", "c:byte={n}"], "message 128: --property 'c': bad byte value '128'"),
    (["-c", "300", "-P", "c:byte=-{n}"], "message 129: --property 'c': bad byte value '-129'"),
    (["-c", "300", "-P", "c:byte=1{n}"], "message 28: --property 'c': bad byte value '128'"),
    (["-c", "300", "--footer", "c:char={n}"],
     "message 10: --footer 'c': bad char value '10': a char is one character"),
    (["-c", "50", "-A", "f:float=1e{n}"], "message 39: --annotation 'f': 1e+39 is out of range"),
    (["-c", "10000000", "--group-sequence", "{n}000"],
     "message 4294968: --group-sequence: bad uint value '4294968000'"),
    (["-P", "sn:long={uuid}"], "message 1: --property 'sn': bad long value"),
    (["--group-sequence", "x{n}"], "message 1: --group-sequence: bad uint value 'x1'"),
    (["-A", "k:nope={n}"], "--annotation 'k': unknown type 'nope'"),
    (["--sequence", "-P", "sn=1"], "--property 'sn' and --sequence set the same property"),
])
def test_bad_values_are_usage_errors_before_connecting(args: list[str], said: str) -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "x", *args)
    assert code == 2 and err.count("\n") == 1 and said in err, err


@pytest.mark.parametrize(("args", "said"), [
    # an expanded body too, and whichever of body and values fails first
    (["byte:{n}", "-b", "value", "--expand", "-c", "300"],
     "message 128: body: bad byte value '128'"),
    (["byte:{n}", "-b", "value", "--expand", "-c", "300", "-P", "k:ubyte={n}"],
     "message 128: body: bad byte value '128'"),
    (["byte:-{n}", "-b", "value", "--expand", "-c", "300", "-P", "k:ubyte=1{n}"],
     "message 100: --property 'k': bad ubyte value '1100'"),
    (["float:1e{n}", "-b", "value", "--expand", "-c", "300"],
     "message 39: body: 1e+39 is out of range for float"),
])
def test_an_expanded_body_is_checked_for_every_message(args: list[str], said: str) -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", *args)
    assert code == 2 and err.count("\n") == 1 and said in err, err


def test_the_lines_of_the_body_argument_are_the_length_of_the_run() -> None:
    # lines of the BODY argument are all there: their number is the run's length
    body = "x\n" * 300
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", body, "--lines",
                                   "-c", "300", "-P", "c:byte={n}")
    assert code == 2 and "message 128: --property 'c'" in err, err
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "x\ny", "--lines",
                                   "-c", "300", "-P", "c:byte={n}")
    assert code == 3 and "cannot connect" in err, err


@pytest.mark.parametrize("command", ["send", "request"])
@pytest.mark.parametrize(("args", "said"), [
    # a value made for each message says which message's it is, the first one's too
    (["-P", "k:int=x{n}"], "message 1: --property 'k': bad int value 'x1'"),
    (["--message-id", "ulong:x{n}"], "message 1: --message-id: bad ulong value 'x1'"),
    (["--correlation-id", "ulong:{n}x"], "message 1: --correlation-id: bad ulong value '1x'"),
    (["-A", "f:float={n}e39"], "message 1: --annotation 'f': 1e+39 is out of range for float"),
    (["--footer", "c:char={n}{n}"], "message 1: --footer 'c': bad char value '11'"),
    # one the same in every message names the option alone
    (["-P", "k:int=x"], "--property 'k': bad int value 'x'"),
    (["--message-id", "ulong:x"], "--message-id: bad ulong value 'x'"),
    (["-A", "f:float=1e39"], "--annotation 'f': 1e+39 is out of range for float"),
])
def test_the_first_message_is_named_when_its_value_was_made_for_it(
        command: str, args: list[str], said: str) -> None:
    # (the old code named message 1 of a value made for each message as typed)
    code, out, err = amqp_in_process(command, "amqp://127.0.0.1:1/q", "x", *args)
    assert (code, out) == (2, "") and err.startswith(f"amqp: error: {said}"), err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("body", "said"), [
    (["x{n}", "--expand"], "message 1: body is not lossless JSON"),
    (["x"], "body is not lossless JSON"),
])
def test_an_expanded_body_names_the_first_message_too(body: list[str], said: str) -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", *body, "--json-body")
    assert code == 2 and err.startswith(f"amqp: error: {said}"), err


def test_request_checks_every_request_before_connecting() -> None:
    code, _, err = amqp_in_process("request", "amqp://127.0.0.1:1/q", "x", "-c", "300",
                                   "-P", "k:byte={n}")
    assert code == 2 and "message 128: --property 'k': bad byte value '128'" in err, err
    code, _, err = amqp_in_process("request", "amqp://127.0.0.1:1/q", "a", "b", "c",
                                   "-P", "k:int={n}", "-P", "c:bool={n}")
    assert code == 2 and "message 2: --property 'c': bad bool value '2'" in err, err


def test_a_number_past_its_type_mid_run_stops_the_input_there(
        direct_receiver: Callable[..., DirectReceiver]) -> None:
    # with --lines the last number is not known before: message 256 is the error
    rcv = direct_receiver()
    lines = "".join(f"{i}\n" for i in range(300)).encode()
    r = amqp("send", f"{rcv.url}/q", "--lines", "-P", "k:ubyte={n}", "--json", input=lines)
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert summary["accepted"] == 255
    assert "message 256: --property 'k': bad ubyte value '256'" in summary["error"]
    assert [m.application_properties.value["k"] for m in _sent(rcv, 255)][-1] == UByte(255)
    # one the encoder refuses says which option gave it, and a body which message it is
    lines = b"x\n" * 45
    r = amqp("send", f"{rcv.url}/q", "--lines", "-P", "f:float=1e{n}", "--json", input=lines)
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert summary["accepted"] == 38
    assert summary["error"] == ("message 39: --property 'f': 1e+39 is out of range for float "
                                "(32-bit: use double for larger numbers)")
    r = amqp("send", f"{rcv.url}/q", "float:1e{n}", "-b", "value", "--expand",
             "--duration", "60", "--json")
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert summary["accepted"] == 38
    assert summary["error"] == ("message 39: body: 1e+39 is out of range for float "
                                "(32-bit: use double for larger numbers)")


def test_sequence_numbers_messages_and_replays(direct_receiver: Callable[..., DirectReceiver],
                                               tmp_path: Path) -> None:
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/q", "x", "-c", "3", "--sequence", "-P", "k:int=7")
    assert r.returncode == 0, r.stderr
    got = _sent(rcv, 3)
    assert [m.application_properties.value for m in got] == [
        {"k": Int(7), "sn": ULong(n)} for n in (1, 2, 3)]
    assert all(type(m.application_properties.value["sn"]) is ULong for m in got)
    # --from: each replayed message numbered as sent, an sn it had replaced, the rest kept
    old = Message(b"r", properties=c.Properties(subject="s"),
                  application_properties={"sn": "old", "k": Int(1)})
    f = tmp_path / "in.jsonl"
    f.write_text(f"{json.dumps(message_to_json(old))}\n" * 2)
    r = amqp("send", f"{rcv.url}/q", "--from", str(f), "--sequence-key", "sn")
    assert r.returncode == 0, r.stderr
    replayed = _sent(rcv, 5)[3:]
    assert [m.application_properties.value for m in replayed] == [
        {"sn": ULong(1), "k": Int(1)}, {"sn": ULong(2), "k": Int(1)}]
    assert all(m.properties.subject == "s" and m.body == [c.Data(b"r")] for m in replayed)
