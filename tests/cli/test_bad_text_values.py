"""Text values their type does not allow, through the commands: a symbol that is not ASCII
and a char that is no Unicode scalar value are decode errors as a string that is not UTF-8
is (`decode` in text and JSON; a frame error and a framing-error violation in `pcap-dump`,
which reads on), and `send` refuses to write one (a one-line usage error). Such a symbol or
char used to decode (a symbol kept its bytes as lone surrogates) and to be sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp, amqp_in_process
from tests.net.servepeer import ServePeers

NOWHERE = "amqp://127.0.0.1:1/q"  # (refused before any connect)

# hex input, the error's offset, expected, found
BAD = {
    "string": ("a1 03 41 80 42", 3, "UTF-8 string", "byte 0x80"),
    "symbol": ("a3 03 41 80 42", 3, "ASCII symbol", "byte 0x80"),
    "symbol32": ("b3 00 00 00 02 e9 41", 5, "ASCII symbol", "byte 0xe9"),
    "surrogate": ("73 00 00 d8 00", 1, "char holding a Unicode scalar value",
                  "surrogate U+D800"),
    "past-10ffff": ("73 00 11 00 00", 1, "char holding a Unicode scalar value",
                    "0x110000 (past U+10FFFF)"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_decode_says_which_byte_is_bad_in_text_and_json(kind: str) -> None:
    hexed, offset, expected, found = BAD[kind]
    said = f"at offset {offset}: expected {expected}, found {found}"
    code, out, err = amqp_in_process("decode", "--no-color", *hexed.split())
    assert code == 8, out
    assert err.splitlines()[-1] == f"amqp: error: decode error {said}"
    assert err.startswith(f"decode error {said}\n")  # (then the bytes around it)
    code, out, err = amqp_in_process("decode", "--json", *hexed.split())
    assert code == 8
    (item,) = [json.loads(line) for line in out.splitlines()]
    assert item == {"item": "error", "offset": offset, "expected": expected, "found": found,
                    "fatal": True}
    assert err.splitlines()[-1] == f"amqp: error: decode error {said}"


def _capture(tmp_path: Path, kind: str) -> Path:
    """A connection whose client open holds a bad string (container-id) or symbol (an
    offered capability); the rest of the conversation is well formed."""
    s = Script()
    s.raw(C2S, encode_protocol_header("amqp"))
    s.raw(S2C, encode_protocol_header("amqp"))
    op = encode_frame(c.Open(container_id="client-1", offered_capabilities=[Symbol("ABCDE")]))
    bad = op.replace(b"client-1", b"client-\x80") if kind == "string" else op.replace(
        b"ABCDE", b"AB\xe9DE")
    assert bad != op
    s.raw(C2S, bad)
    s.s(c.Open(container_id="broker-1"))
    s.c(c.Close())
    s.s(c.Close())
    return write(tmp_path / f"{kind}.pcapng", s)


@pytest.mark.parametrize(("kind", "expected", "found"), [("string", "UTF-8 string", "byte 0x80"),
                                                         ("symbol", "ASCII symbol", "byte 0xe9")])
def test_pcap_dump_shows_a_frame_error_and_reads_on(tmp_path: Path, kind: str, expected: str,
                                                    found: str) -> None:
    path = str(_capture(tmp_path, kind))
    said = f"(in the frame at offset 8): expected {expected}, found {found}"
    code, out, err = amqp_in_process("pcap-dump", path)
    assert code == 8
    assert err == "amqp: error: 1 frame could not be decoded (shown where it was found)\n"
    lines = out.splitlines()
    (error,) = [x for x in lines if " frame error " in x]
    assert error.endswith(said), error
    (violation,) = [x for x in lines if "violation framing-error by client" in x]
    assert violation.endswith(said), violation
    # the frames after it are read
    assert [x.split("]  ")[1] for x in lines if "]  " in x] == [
        'open        container-id="broker-1"', "close", "close"]
    code, out, _ = amqp_in_process("pcap-dump", "--json", path)
    assert code == 8
    records = [json.loads(line) for line in out.splitlines()]
    (item,) = [r for r in records if r.get("item") == "error"]
    assert (item["expected"], item["found"]) == (expected, found)
    violations = [r for r in records if r["record"] == "violation"]
    assert violations[0]["kind"] == "framing-error" and violations[0]["detail"].endswith(said)


@pytest.mark.parametrize(("args", "said"), [
    (["x", "-P", "k:symbol=é"], "--property 'k': symbol 'é' is not ASCII: 'é' (U+00E9) at index 0"),
    (["x", "-P", 'k:json={"symbol":"a\\u00e9"}'], "--property 'k': symbol 'aé' is not ASCII"),
    (["x", "-A", "k:symbol=é"], "--annotation 'k': symbol 'é' is not ASCII"),
    (["x", "--content-type", "é"], "--content-type: symbol 'é' is not ASCII"),
    (["--body-type", "value", "symbol:é"], "body: symbol 'é' is not ASCII"),
    (["--body-type", "value", 'json:{"array":["é"],"type":"symbol"}'],
     "body: symbol 'é' is not ASCII"),
    (["--body-type", "value", 'json:{"char":"\\ud800"}'],
     "body: char '\\ud800' is surrogate U+D800, not a Unicode scalar value"),
    # an annotation's or footer's key is a symbol: checked before connecting too
    (["x", "-A", "é=v"], "--annotation 'é': symbol 'é' is not ASCII"),
    (["x", "--delivery-annotation", "é=v"], "--delivery-annotation 'é': symbol 'é' is not"),
    (["x", "--footer", "é=v"], "--footer 'é': symbol 'é' is not ASCII"),
])
def test_send_refuses_a_bad_symbol_or_char_before_connecting(args: list[str],
                                                            said: str) -> None:
    code, out, err = amqp_in_process("send", NOWHERE, *args)
    assert (code, out) == (2, "")
    assert err.startswith(f"amqp: error: {said}") and err.count("\n") == 1, err


def test_send_from_refuses_a_recorded_symbol_that_is_not_ascii(tmp_path: Path) -> None:
    # (as an earlier version wrote one it had decoded, its bad byte a lone surrogate)
    path = tmp_path / "m.jsonl"
    path.write_text('{"message-annotations": {"x-opt-\\udc80": "v"}, "body": {"value": "hi"}}\n')
    code, out, err = amqp_in_process("send", "--from", str(path), NOWHERE)
    assert (code, out) == (2, "")
    assert err == (f"amqp: error: {path}:1: not a message in the JSON format: symbol "
                   "'x-opt-\\udc80' is not ASCII: '\\udc80' (U+DC80) at index 6\n")


@pytest.mark.integration
@pytest.mark.parametrize("option", ["-A", "--delivery-annotation", "--footer"])
def test_send_refuses_a_key_that_is_no_symbol(serve: ServePeers, option: str) -> None:
    # (an annotation's or footer's key is a symbol)
    url = serve()
    r = amqp("send", f"{url}/q", "x", option, "é=v")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("amqp: error: "), r.stderr
    assert "symbol 'é' is not ASCII: 'é' (U+00E9) at index 0" in r.stderr
    r = amqp("recv", f"{url}/q", "--drain", "-t", "2", "--json", "-q")
    assert r.returncode == 0 and r.stdout == "", r.stderr
