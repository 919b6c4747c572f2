"""A SASL performative carried as a value (in a list, a map, a field, a message body) is
masked in JSON as the text views mask it, at any depth: `to_json` with `redactions`, the
message object (`recv --json`, `decode --json`, `pcap-dump --deliveries --json`) with
`"redacted": true` and none of the bytes that hold the secret; `--show-secrets` (a
caller's `show_secrets`) writes it whole, and only that JSON reads back as the message."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.composites import AmqpValue, Data, Properties, SaslInit, SaslResponse
from amqpcli.codec.decode import decode
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import AmqpList, Symbol, UInt
from amqpcli.render.jsonvalues import JsonValueError, from_json, to_json
from amqpcli.render.message import (
    message_bytes_from_json,
    message_from_json,
    message_to_json,
    message_tree,
    payload_to_json,
)
from amqpcli.render.text import format_value, plain_lines, value_tree
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.render.leaks import shows

PASSWORD = b"Nz4kQ8vT"
RESPONSE = b"\x00quser\x00" + PASSWORD
MASKED = b"\x00quser\x00***"
INIT = SaslInit(mechanism=Symbol("PLAIN"), initial_response=RESPONSE)
# The report's input: a message whose amqp-value is a sasl-init (password SEKRETplain).
REPORTED = bytes.fromhex(
    "00 53 77 00 53 41 c0 1c 02 a3 05 50 4c 41 49 4e a0 12 00 71 75 73 65 72 00 53 45"
    " 4b 52 45 54 70 6c 61 69 6e")


def _init32(response: bytes) -> bytes:
    """A sasl-init whose field list is a list32, as proton writes it: its JSON needs its
    bytes (`encoded`) to be exact."""
    fields = b"\xa3\x05PLAIN" + b"\xa0" + bytes([len(response)]) + response
    return (b"\x00\x53\x41\xd0" + (len(fields) + 4).to_bytes(4, "big") + (2).to_bytes(4, "big")
            + fields)


# Header and properties as list0, the body an amqp-value holding a list32 of one list32
# sasl-init: every composite and list around the secret in a form that keeps its bytes.
_INNER = _init32(RESPONSE)
WIDE = (b"\x00\x53\x70\x45\x00\x53\x73\x45\x00\x53\x77\xd0"
        + (len(_INNER) + 4).to_bytes(4, "big") + (1).to_bytes(4, "big") + _INNER)


def leaks(text: str, password: bytes = PASSWORD) -> bool:
    return shows(text, password)


def _keys(obj: Any) -> set[str]:
    """Every member name in a JSON object, at any depth."""
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


NESTED = [
    [INIT],
    AmqpList([INIT], 0xD0),
    {"k": INIT},
    {Symbol("k"): [1, INIT]},
    {INIT.mechanism: {"deeper": [INIT]}},
    AmqpValue(INIT),
    Properties(message_id=INIT),
    c.Rejected(error=c.Error(condition=Symbol("x"), info={Symbol("why"): INIT})),
    [SaslResponse(response=RESPONSE)],
]


@pytest.mark.parametrize("value", NESTED, ids=range(len(NESTED)))
def test_to_json_masks_at_any_depth(value: Any) -> None:
    raw = encode(value)
    decoded, _ = decode(raw)
    masked: list[str] = []
    shown = json.dumps(to_json(decoded, True, masked))
    assert not leaks(shown), shown
    assert masked and set(masked) <= {"sasl-init", "sasl-response"}
    # as the text views draw it: the user kept, the password ***
    assert base64.b64encode(MASKED).decode() in shown
    # without redactions the JSON is what it always was: lossless
    whole = to_json(decoded)
    assert leaks(json.dumps(whole))
    assert encode(from_json(json.loads(json.dumps(whole)))) == raw


# SASL performatives the decoder does not make into one: in an array of described values
# (the elements are their field lists), and described values whose value does not fit
_FIELDS = b"\xa3\x05PLAIN\xa0" + bytes([len(RESPONSE)]) + RESPONSE


def _array8(head: bytes, *elements: bytes) -> bytes:
    body = bytes([len(elements)]) + head + b"".join(elements)
    return b"\xe0" + bytes([len(body)]) + body


UNBUILT = {
    "array of sasl-init": b"\xe0" + bytes([len(_FIELDS) + 7, 1]) + b"\x00\x53\x41\xc0"
    + bytes([len(_FIELDS) + 1, 2]) + _FIELDS,
    "array of sasl-response, symbol": _array8(
        b"\x00\xa3\x17amqp:sasl-response:list\xc0",
        bytes([len(RESPONSE) + 3, 1, 0xA0, len(RESPONSE)]) + RESPONSE, b"\x01\x00"),
    "sasl-init holding a binary": b"\x00\x53\x41\xa0" + bytes([len(RESPONSE)]) + RESPONSE,
    "sasl-response holding a string": b"\x00\x53\x43\xa1" + bytes([len(RESPONSE)]) + RESPONSE,
    "in a list": b"\xc0" + bytes([len(RESPONSE) + 6, 1]) + b"\x00\x53\x41\xa0"
    + bytes([len(RESPONSE)]) + RESPONSE,
}


@pytest.mark.parametrize("raw", UNBUILT.values(), ids=UNBUILT.keys())
def test_performatives_not_decoded_as_one_are_masked(raw: bytes) -> None:
    value, end = decode(raw)
    assert end == len(raw)
    masked: list[str] = []
    assert not leaks(json.dumps(to_json(value, True, masked)))
    assert masked
    text = "\n".join(plain_lines(value_tree(value))) + format_value(value)
    assert PASSWORD.decode() not in text and "***" in text
    # with secrets shown, and without redactions, it is whole
    assert PASSWORD.decode() in format_value(value, show_secrets=True)
    assert encode(from_json(json.loads(json.dumps(to_json(value))))) == raw


def test_nothing_to_mask_lists_nothing() -> None:
    value, _ = decode(encode([{"k": UInt(1)}, Properties(message_id="m"), b"\x00u\x00pw"]))
    masked: list[str] = []
    assert to_json(value, True, masked) == to_json(value)
    assert masked == []


def test_what_holds_a_masked_secret_gives_none_of_its_bytes() -> None:
    msg = Message.decode(WIDE)
    whole = message_to_json(msg, show_secrets=True)
    # the bytes are needed to give it back exactly, and they are there with --show-secrets
    assert "encoded" in _keys(whole) and leaks(json.dumps(whole))
    assert message_bytes_from_json(json.loads(json.dumps(whole))) == WIDE
    masked = message_to_json(msg)
    assert not leaks(json.dumps(masked)), masked
    assert masked["redacted"] is True
    assert not _keys(masked) & {"encoded", "encoded-sections", "bare-sha256"}
    assert masked["body"]["value"]["list"][0] == {
        "sasl-init": {"mechanism": "PLAIN", "initial-response": base64.b64encode(MASKED).decode()}
    }


def test_a_section_kept_as_bytes_with_a_secret_in_it_is_not_kept_masked() -> None:
    # message-annotations as a map32 (its bytes kept) holding the secret, a header kept
    # too, and a body that needs none: masked, no section's bytes are written
    entry = b"\xa3\x08x-opt-in" + _init32(RESPONSE)
    annotations = (b"\x00\x53\x72\xd1" + (len(entry) + 4).to_bytes(4, "big")
                   + (2).to_bytes(4, "big") + entry)
    header32 = bytes.fromhex("005370d00000000500000001" "41")
    raw = header32 + annotations + bytes.fromhex("005377a10141")
    whole = message_to_json(Message.decode(raw), show_secrets=True)
    assert list(whole["encoded-sections"]) == ["header", "message-annotations"]
    assert leaks(json.dumps(whole))
    assert message_bytes_from_json(json.loads(json.dumps(whole))) == raw
    masked = message_to_json(Message.decode(raw))
    assert masked["redacted"] is True
    assert not leaks(json.dumps(masked)), masked
    assert not _keys(masked) & {"encoded", "encoded-sections", "bare-sha256"}
    with pytest.raises(JsonValueError, match="masked"):
        message_bytes_from_json(masked)


def test_the_message_object_of_the_report() -> None:
    msg = Message.decode(REPORTED)
    masked = message_to_json(msg)
    assert masked == {
        "body": {"value": {"sasl-init": {"mechanism": "PLAIN",
                                         "initial-response": "AHF1c2VyACoqKg=="}}},
        "redacted": True,
    }
    # the text view masks it the same way
    assert 'initial-response: b"\\x00quser\\x00***"' in "\n".join(plain_lines(message_tree(msg)))
    whole = message_to_json(msg, show_secrets=True)
    assert "redacted" not in whole and "bare-sha256" in whole
    assert message_bytes_from_json(whole) == REPORTED
    assert payload_to_json(REPORTED) == masked
    assert payload_to_json(REPORTED, show_secrets=True) == whole


def test_a_masked_message_does_not_read_back() -> None:
    masked = message_to_json(Message.decode(REPORTED))
    with pytest.raises(JsonValueError, match=r"redacted: a SASL secret in this message was "
                       r"masked \(\*\*\*\) when the JSON was written"):
        message_from_json(masked)
    with pytest.raises(JsonValueError, match="--show-secrets"):
        message_bytes_from_json(masked)


def test_an_ordinary_message_is_as_it_was() -> None:
    raw = Message([Data(b"\x00u\x00pw")], properties=Properties(message_id="m-1"),
                  application_properties={"k": UInt(7)}).encode()
    obj = message_to_json(Message.decode(raw))
    assert "redacted" not in obj and "bare-sha256" in obj
    assert obj == message_to_json(Message.decode(raw), show_secrets=True)
    assert message_bytes_from_json(obj) == raw


def test_text_with_show_secrets_shows_it() -> None:
    msg = Message.decode(REPORTED)
    assert "SEKRETplain" not in "\n".join(plain_lines(message_tree(msg)))
    assert "SEKRETplain" in "\n".join(plain_lines(message_tree(msg, show_secrets=True)))


# -- the commands ---------------------------------------------------------------------------


def test_decode_json_of_the_report() -> None:
    r = amqp("decode", "--json", REPORTED.hex(" "))
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout, b"SEKRETplain"), r.stdout
    (item,) = json_lines(r.stdout)
    assert item["message"]["redacted"] is True
    assert "AHF1c2VyACoqKg==" in r.stdout


NESTED_MESSAGE = Message(AmqpValue([INIT]), properties=Properties(message_id="m-1")).encode()


def _capture(path: Path, state: Any = None) -> Path:
    """A connection whose one delivery's body holds the sasl-init (its own SASL exchange
    with another password), settled with `state` (accepted)."""
    s = Script().sasl_plain(b"guest", b"Other1pw").open().sender_link()
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0),
        payload=NESTED_MESSAGE)
    s.dispose(0, state or c.Accepted())
    return write(path, s.close())


def test_pcap_dump_deliveries_json(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "nested.pcapng")
    r = amqp("pcap-dump", str(cap), "--deliveries", "--json")
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout), r.stdout
    (delivery,) = [o for o in json_lines(r.stdout) if o.get("record") == "delivery"]
    message = delivery["message"]
    assert message["redacted"] is True and "bare-sha256" not in message
    assert message["properties"] == {"message-id": "m-1"}


@pytest.mark.integration
def test_recv_and_browse_json_mask_it(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/nested-sasl"
    source = tmp_path / "whole.jsonl"
    source.write_text(json.dumps(message_to_json(Message.decode(NESTED_MESSAGE),
                                                 show_secrets=True)) + "\n")
    r = amqp("send", url, "--from", str(source))
    assert r.returncode == 0, r.stderr
    for command in ("browse", "recv"):
        r = amqp(command, url, "--json", "--count", "1", "-q")
        assert r.returncode == 0, r.stderr
        assert not leaks(r.stdout + r.stderr), r.stdout
        (message,) = json_lines(r.stdout)
        assert message["redacted"] is True
        assert message["body"] == {"value": [{"sasl-init": {
            "mechanism": "PLAIN", "initial-response": base64.b64encode(MASKED).decode()}}]}
    # recv took it: its masked line is not the message, and is not sent as one
    received = tmp_path / "received.jsonl"
    received.write_text(r.stdout)
    r = amqp("send", url, "--from", str(received))
    assert r.returncode == 2
    assert f"{received}:1: " in r.stderr and "was masked (***)" in r.stderr
    assert json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout) == []


def test_pcap_dump_brief_json_masks_a_performative_field(tmp_path: Path) -> None:
    """`--json --brief` writes performatives without the payload: a sasl-init in a field (a
    rejection's error info) is masked there, and the record says so."""
    rejected = c.Rejected(error=c.Error(condition=Symbol("x"), info={Symbol("why"): INIT}))
    cap = _capture(tmp_path / "rejected.pcapng", rejected)
    r = amqp("pcap-dump", str(cap), "--json", "--brief")
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout) and not leaks(r.stdout, b"Other1pw"), r.stdout
    records = [o for o in json_lines(r.stdout) if o.get("record") == "frame"]
    (disposition,) = [o for o in records if "disposition" in (o.get("performative") or {})]
    assert disposition["redacted"] is True
    error = disposition["performative"]["disposition"]["state"]["rejected"]["error"]["error"]
    assert error["info"] == {"map": {"why": {"sasl-init": {
        "mechanism": "PLAIN", "initial-response": base64.b64encode(MASKED).decode()}}},
        "keys": "symbol"}
    assert [o.get("redacted") for o in records].count(True) == 2  # and the sasl-init frame
    r = amqp("pcap-dump", str(cap), "--json", "--brief", "--show-secrets")
    assert r.returncode == 0, r.stderr
    assert leaks(r.stdout) and "redacted" not in r.stdout
