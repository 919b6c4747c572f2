"""A sasl-init (or sasl-response) whose descriptor is damaged by one octet into that of
another SASL performative: the frame decodes as that performative, with the response in
its fields. Such a frame's fields do not fit its type, so it is masked whole (a
PLAIN-shaped sasl-challenge is masked like a PLAIN response): neither the decoded fields
nor the JSON's bytes nor a hexdump show the password; intact SASL frames show as they
always did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.codec import composites as c
from amqpcli.codec.composites import SaslChallenge, SaslInit, SaslResponse
from amqpcli.codec.frames import Frame, FrameReader
from amqpcli.codec.types import Array, Symbol, UByte
from amqpcli.render.items import item_to_json, item_tree
from amqpcli.render.redact import is_secret, redact, secret_spans
from amqpcli.render.text import format_value, plain_lines, value_tree
from tests.dissect.helpers import Script, write
from tests.render.test_redact_sasl_response import (
    AMQPLAIN_RESPONSE,
    PASSWORD,
    PLAIN_RESPONSE,
    SASL_HEADER,
    SCRAM_RESPONSE,
    leaks,
    run,
    sasl,
)

SASL_CODES = range(0x40, 0x45)


def _ulong(frame: bytes) -> bytes:
    """`frame` with its descriptor in the ulong form (0x00 0x80 and eight octets)."""
    at = frame.index(b"\x00\x53", 8)
    out = bytearray(frame[:at] + b"\x00\x80" + frame[at + 2].to_bytes(8, "big") + frame[at + 3:])
    out[0:4] = len(out).to_bytes(4, "big")
    return bytes(out)


def _code_at(frame: bytes) -> int:
    """Where the octet that names the performative is."""
    return 8 + 9 if frame[8:10] == b"\x00\x80" else 8 + 2


_INITS = {
    "plain": sasl(SaslInit(mechanism=Symbol("PLAIN"), initial_response=PLAIN_RESPONSE)),
    "plain-host": sasl(SaslInit(mechanism=Symbol("PLAIN"), initial_response=PLAIN_RESPONSE,
                                hostname="localhost")),
    "amqplain": sasl(SaslInit(mechanism=Symbol("AMQPLAIN"),
                              initial_response=AMQPLAIN_RESPONSE, hostname="h")),
}
_RESPONSES = {
    "response-plain": sasl(SaslResponse(response=PLAIN_RESPONSE)),
    "response-scram": sasl(SaslResponse(response=SCRAM_RESPONSE)),
}


def _forms(frames: dict[str, bytes]) -> dict[str, bytes]:
    return {**frames, **{f"{k}-ulong": _ulong(v) for k, v in frames.items()}}


def _damaged(frames: dict[str, bytes]) -> list[Any]:
    """Each frame with its descriptor damaged into that of every other SASL performative."""
    out = []
    for name, frame in _forms(frames).items():
        at = _code_at(frame)
        for code in SASL_CODES:
            if code != frame[at]:
                data = bytearray(frame)
                data[at] = code
                out.append(pytest.param(bytes(data), id=f"{name}-{code:#x}"))
    return out


INITS = _damaged(_INITS)
# A sasl-response damaged into a sasl-challenge is a well-formed challenge: it is masked
# only when PLAIN-shaped (a SCRAM proof there cannot be told from a server's challenge).
RESPONSES = [p for p in _damaged(_RESPONSES) if p.id != "response-scram-0x42"
             and p.id != "response-scram-ulong-0x42"]


def _frame(data: bytes) -> Frame:
    (frame,) = FrameReader().feed(data)
    assert isinstance(frame, Frame), frame
    return frame


def _password_at(data: bytes) -> range:
    at = data.index(PASSWORD)
    return range(at, at + len(PASSWORD))


# -- redact() and secret_spans() ----------------------------------------------------------


@pytest.mark.parametrize("data", INITS + RESPONSES)
def test_the_decoded_frame_is_masked(data: bytes) -> None:
    frame = _frame(data)
    body = frame.body
    assert type(body) is not type(_frame(_original(data)).body)  # another performative
    assert is_secret(body)
    shown = redact(body)
    assert type(shown) is type(body) and shown._raw is None  # no bytes of the original
    texts = [
        format_value(body),
        "\n".join(plain_lines(value_tree(body))),
        "\n".join(plain_lines(item_tree(frame))),
        json.dumps(item_to_json(frame)),
    ]
    for text in texts:
        assert not leaks(text), text
    assert item_to_json(frame)["redacted"] is True
    assert leaks(json.dumps(item_to_json(frame, show_secrets=True)))


def _original(data: bytes) -> bytes:
    """The frame `data` was damaged from (the one whose code differs)."""
    at = _code_at(data)
    for frame in _forms({**_INITS, **_RESPONSES}).values():
        if len(frame) == len(data) and frame[:at] == data[:at] and frame[at + 1:] == data[at + 1:]:
            return frame
    raise AssertionError("no original")


@pytest.mark.parametrize("data", INITS + RESPONSES)
def test_secret_spans_cover_the_password(data: bytes) -> None:
    for stream in (data, SASL_HEADER + data):
        spans = secret_spans(stream)
        assert all(any(a <= i < b for a, b in spans) for i in _password_at(stream)), spans


@pytest.mark.parametrize("value", [
    c.SaslMechanisms(sasl_server_mechanisms=Symbol("PLAIN")),
    c.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN"), Symbol("ANONYMOUS")]),
    c.SaslMechanisms(sasl_server_mechanisms=Array([Symbol("SCRAM-SHA-256")])),
    c.SaslChallenge(challenge=b""),
    c.SaslChallenge(challenge=b"r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4096"),
    c.SaslChallenge(challenge=b"\x60\x82\x01\x00\x06\x09*\x86H\x86\xf7\x12\x01\x02\x02"),
    c.SaslOutcome(code=0),
    c.SaslOutcome(code=UByte(1), additional_data=b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
    SaslInit(mechanism=Symbol("ANONYMOUS"), initial_response=b"trace", hostname="h"),
    SaslInit(mechanism=Symbol("EXTERNAL")),
    SaslResponse(response=b""),
], ids=lambda v: type(v).__name__)
def test_intact_sasl_frames_are_shown_as_they_are(value: Any) -> None:
    data = sasl(value)
    for v in (value, _frame(data).body, _frame(_ulong(data)).body):
        assert redact(v) is v and not is_secret(v)
    for stream in (data, _ulong(data), SASL_HEADER + data):
        assert secret_spans(stream) == []


def test_what_does_not_fit_is_masked_whole() -> None:
    outcome = c.SaslOutcome(code=Symbol("PLAIN"), additional_data=PLAIN_RESPONSE)
    assert redact(outcome) == c.SaslOutcome(code="***", additional_data=b"***")
    mechanisms = c.SaslMechanisms(sasl_server_mechanisms=PLAIN_RESPONSE)
    assert redact(mechanisms) == c.SaslMechanisms(sasl_server_mechanisms=b"***")
    init = SaslInit(mechanism=PLAIN_RESPONSE)  # a sasl-response's response as a mechanism
    assert redact(init) == SaslInit(mechanism=b"***")
    assert redact(outcome, show_secrets=True) is outcome
    # more fields than its type has (the bytes it was decoded from hold them)
    data = bytearray(sasl(SaslInit(mechanism=Symbol("PLAIN"), initial_response=PLAIN_RESPONSE)))
    data[_code_at(bytes(data))] = 0x40
    body = _frame(bytes(data)).body
    assert body.sasl_server_mechanisms == Symbol("PLAIN")  # fits, but two fields follow
    assert redact(body) == c.SaslMechanisms(sasl_server_mechanisms="***")


def test_a_plain_shaped_challenge_is_masked_like_a_response() -> None:
    value = SaslChallenge(challenge=PLAIN_RESPONSE)
    assert is_secret(value)
    assert redact(value) == SaslChallenge(challenge=b"\x00bob\x00***")
    data = SASL_HEADER + sasl(value)
    start = data.index(PLAIN_RESPONSE)
    assert secret_spans(data) == [(start, start + len(PLAIN_RESPONSE))]


# -- amqp decode and amqp pcap-dump -------------------------------------------------------


@pytest.mark.parametrize("data", INITS + RESPONSES)
def test_decode_never_shows_the_password(data: bytes) -> None:
    """The tree and JSON; with a truncated frame after it, the hexdump of that error
    (which shows the bytes before it: the damaged frame's)."""
    for tail in (b"", b"\x00\x00\x00"):
        stream = SASL_HEADER + data + tail
        for extra in ((), ("--json",)):
            code, out, err = run("decode", stream.hex(), *extra)
            assert code == (8 if tail else 0), err
            assert not leaks(out + err), (extra, out + err)
            if tail:
                assert "** **" in err, err
    code, out, err = run("decode", (SASL_HEADER + data).hex(), "--json", "--show-secrets")
    assert code == 0 and leaks(out)


def _capture(tmp_path: Path, frame: bytes) -> str:
    s = Script()
    s.raw(C2S, SASL_HEADER).raw(S2C, SASL_HEADER)
    s.raw(S2C, sasl(c.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN")])))
    s.raw(C2S, frame)
    s.raw(S2C, sasl(c.SaslOutcome(code=0)))
    s.open().sender_link().transfer(0).dispose(0, c.Accepted()).close()
    return str(write(tmp_path / "damaged.pcapng", s))


@pytest.mark.parametrize("data", INITS)
def test_pcap_dump_never_shows_the_password(tmp_path: Path, data: bytes) -> None:
    cap = _capture(tmp_path, data)
    for extra in (("--json",), ("--json", "--frames-only"), ("--deliveries",),
                  ("--connections",), ("--summary",), ("--links",),
                  ("--json", "--connections", "--summary", "--deliveries")):
        code, out, err = run("pcap-dump", cap, *extra)
        assert code == 0, err
        assert not leaks(out + err), (extra, out + err)
    code, out, _ = run("pcap-dump", cap, "--json", "--frames-only")
    (obj,) = [o for o in map(json.loads, out.splitlines()) if o.get("from") == "client"
              and (o.get("performative") or {}).keys() & {f"sasl-{k}" for k in (
                  "mechanisms", "challenge", "response", "outcome")}]
    assert obj["redacted"] is True
    code, out, _ = run("pcap-dump", cap, "--json", "--show-secrets")
    assert code == 0 and leaks(out)


@pytest.mark.parametrize("data", RESPONSES)
def test_pcap_dump_views_never_show_a_damaged_response(tmp_path: Path, data: bytes) -> None:
    # a sasl-response damaged into a sasl-init was the chosen mechanism in --connections,
    # and a field's wrong type quoted the value in the violation text
    cap = _capture(tmp_path, data)
    for extra in ((), ("--connections",), ("--summary",), ("--json",),
                  ("--json", "--connections", "--summary")):
        code, out, err = run("pcap-dump", cap, *extra)
        assert code == 0, err
        assert not leaks(out + err), (extra, out + err)


@pytest.mark.parametrize("data", INITS)
def test_frame_lines_never_show_the_password(tmp_path: Path, data: bytes) -> None:
    code, out, err = run("decode", (SASL_HEADER + data).hex(), "--brief")
    assert code == 0 and not leaks(out + err), out
    cap = _capture(tmp_path, data)
    for extra in ((), ("--frames-only",)):
        code, out, err = run("pcap-dump", cap, *extra)
        assert code == 0 and not leaks(out + err), out


_EVERY_DAMAGE = _forms({**_INITS, "response-plain": _RESPONSES["response-plain"]})


@pytest.mark.parametrize("frame", list(_EVERY_DAMAGE.values()), ids=list(_EVERY_DAMAGE))
def test_every_damaged_octet_is_masked(frame: bytes) -> None:
    """Any one octet of the frame damaged (into another SASL descriptor's code too): the
    hexdump's spans cover every octet of the password, and what decodes shows none of it."""
    good = SASL_HEADER + frame
    checked = 0
    for i in range(len(SASL_HEADER), len(good)):
        for value in {0xFF, 0x00, 0x05, good[i] ^ 0x01, good[i] ^ 0x80, *SASL_CODES}:
            data = bytearray(good)
            data[i] = value
            if data == good or PASSWORD not in data:
                continue
            spans = secret_spans(data)
            assert all(any(a <= j < b for a, b in spans) for j in _password_at(bytes(data))), (
                i, hex(value), spans)
            for item in FrameReader().feed(bytes(data)):
                if isinstance(item, Frame) and item.body is not None:
                    text = json.dumps(item_to_json(item)) + format_value(item.body)
                    assert not leaks(text), (i, hex(value), text)
            checked += 1
    assert checked > len(frame) * 5
