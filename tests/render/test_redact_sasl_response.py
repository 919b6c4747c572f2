"""SASL secrets beyond a PLAIN sasl-init: the response to a challenge (sasl-response) and
the initial response of mechanisms other than PLAIN (RabbitMQ's AMQPLAIN, SCRAM, ...) are
masked in every output of `amqp decode` and `amqp pcap-dump` (tree, lines, JSON, the
hexdump of a decode error) unless --show-secrets; ANONYMOUS and EXTERNAL hold none."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.codec import composites as c
from amqpcli.codec.composites import SaslInit, SaslResponse
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import item_to_json, item_tree
from amqpcli.render.redact import is_secret, redact, secret_spans
from amqpcli.render.text import format_value, plain_lines, value_tree
from tests.cli.test_decode_secrets import run as run_capturing_undecodable
from tests.dissect.helpers import Script, write
from tests.render.leaks import shows_a_piece

PASSWORD = b"Zq9xW7kJ"
PLAIN_RESPONSE = b"\x00bob\x00" + PASSWORD
SCRAM_RESPONSE = b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=" + PASSWORD
AMQPLAIN_RESPONSE = (
    b"\x05LOGINS\x00\x00\x00\x03bob\x08PASSWORDS\x00\x00\x00\x08" + PASSWORD
)
SASL_HEADER = encode_protocol_header("sasl")


def sasl(perf: Any) -> bytes:
    return encode_frame(perf, type=1)


run = run_capturing_undecodable


def leaks(text: str) -> bool:
    return shows_a_piece(text, PASSWORD)


def shows_password(text: str) -> bool:
    return PASSWORD.decode() in text or base64.b64encode(PLAIN_RESPONSE).decode() in text


# -- redact() itself -------------------------------------------------------------------------


def test_a_plain_shaped_sasl_response_keeps_its_user() -> None:
    value = SaslResponse(response=PLAIN_RESPONSE)
    shown = redact(value)
    assert isinstance(shown, SaslResponse) and shown.response == b"\x00bob\x00***"
    assert value.response == PLAIN_RESPONSE  # the original is untouched
    assert is_secret(value) and not is_secret(shown)
    assert redact(shown) is shown  # masking twice changes nothing more
    assert redact(value, show_secrets=True) is value
    authzid = SaslResponse(response=b"admin\x00bob\x00" + PASSWORD)
    assert redact(authzid).response == b"admin\x00bob\x00***"


@pytest.mark.parametrize("response", [SCRAM_RESPONSE, PASSWORD, b"\x00" + PASSWORD,
                                      b"a\x00b\x00c\x00" + PASSWORD])
def test_any_other_sasl_response_is_masked_whole(response: bytes) -> None:
    value = SaslResponse(response=response)
    assert redact(value).response == b"***"
    assert is_secret(value)


def test_a_sasl_response_decoded_as_a_string_is_masked_too() -> None:
    value = SaslResponse(response="\x00bob\x00" + PASSWORD.decode())
    assert redact(value).response == "\x00bob\x00***"


def test_an_empty_sasl_response_has_nothing_to_hide() -> None:
    for value in (SaslResponse(response=b""), SaslResponse(response=None)):
        assert redact(value) is value and not is_secret(value)


@pytest.mark.parametrize("mechanism", ["AMQPLAIN", "SCRAM-SHA-256", "CRAM-MD5", "amqplain"])
def test_other_mechanisms_initial_response_is_masked_whole(mechanism: str) -> None:
    value = SaslInit(mechanism=Symbol(mechanism), initial_response=AMQPLAIN_RESPONSE,
                     hostname="h")
    shown = redact(value)
    assert shown.initial_response == b"***"
    assert shown.mechanism == Symbol(mechanism) and shown.hostname == "h"
    assert is_secret(value)
    assert redact(value, show_secrets=True) is value


@pytest.mark.parametrize("mechanism", ["ANONYMOUS", "EXTERNAL", "anonymous"])
def test_anonymous_and_external_are_shown(mechanism: str) -> None:
    value = SaslInit(mechanism=Symbol(mechanism), initial_response=b"trace@example")
    assert redact(value) is value and not is_secret(value)
    data = SASL_HEADER + sasl(value)
    assert secret_spans(data) == []
    (frame,) = FrameReader().feed(sasl(value))
    assert "redacted" not in item_to_json(frame)
    assert "trace@example" in frame_line(frame)


def test_plain_sasl_init_is_unchanged() -> None:
    value = SaslInit(mechanism=Symbol("PLAIN"), initial_response=PLAIN_RESPONSE)
    assert redact(value).initial_response == b"\x00bob\x00***"


def test_every_renderer_hides_a_sasl_response() -> None:
    value = SaslResponse(response=PLAIN_RESPONSE)
    (frame,) = FrameReader().feed(sasl(value))
    texts = [
        frame_line(frame),
        "\n".join(plain_lines(item_tree(frame))),
        "\n".join(plain_lines(value_tree(value))),
        format_value(value),
        json.dumps(item_to_json(frame)),
    ]
    for text in texts:
        assert not leaks(text), text
        assert "bob" in text or "AGJvYgAqKio=" in text, text
    assert item_to_json(frame)["redacted"] is True
    assert "redacted" not in item_to_json(frame, show_secrets=True)
    assert shows_password(frame_line(frame, show_secrets=True))
    assert shows_password("\n".join(plain_lines(item_tree(frame, show_secrets=True))))


# -- amqp decode ------------------------------------------------------------------------------

# A client that answers the server's challenge: an empty initial response, then the PLAIN
# credentials in a sasl-response; then a SCRAM-like proof; then an AMQPLAIN sasl-init.
STREAM = (
    SASL_HEADER
    + sasl(SaslInit(mechanism=Symbol("PLAIN"), initial_response=b""))
    + sasl(SaslResponse(response=PLAIN_RESPONSE))
    + sasl(SaslResponse(response=SCRAM_RESPONSE))
    + sasl(SaslInit(mechanism=Symbol("AMQPLAIN"), initial_response=AMQPLAIN_RESPONSE))
)


@pytest.mark.parametrize("extra", [(), ("--brief",), ("--json",)])
def test_decode_masks(tmp_path: Path, extra: tuple[str, ...]) -> None:
    path = tmp_path / "sasl.bin"
    path.write_bytes(STREAM)
    code, out, err = run("decode", str(path), *extra)
    assert code == 0, err
    assert not leaks(out + err), out + err
    assert "sasl-response" in out and "AMQPLAIN" in out
    if extra == ("--json",):
        objs = [json.loads(line) for line in out.splitlines()]
        frames = [o for o in objs if o["item"] == "frame"]
        assert [o.get("redacted") for o in frames] == [None, True, True, True]
        responses = [base64.b64decode(o["performative"]["sasl-response"]["response"])
                     for o in frames[1:3]]
        assert responses == [b"\x00bob\x00***", b"***"]
        init = frames[3]["performative"]["sasl-init"]["initial-response"]
        assert base64.b64decode(init) == b"***"
    else:
        assert '\\x00bob\\x00***' in out
    code, out, err = run("decode", str(path), "--show-secrets", *extra)
    assert code == 0 and "redacted" not in out
    assert leaks(out)
    if extra != ("--json",):
        assert "\\x00bob\\x00" + PASSWORD.decode() in out


def _damaged(frame: bytes) -> list[bytes]:
    """`frame` after a SASL header with each of its bytes past the frame header damaged in
    a few ways."""
    good = SASL_HEADER + frame
    out = []
    for i in range(len(SASL_HEADER) + 8, len(good)):
        for value in {0xFF, 0x00, good[i] ^ 0x01, 0x05, 0x40}:
            data = bytearray(good)
            data[i] = value
            out.append(bytes(data))
    return out


@pytest.mark.parametrize("frame", [
    sasl(SaslResponse(response=PLAIN_RESPONSE)),
    sasl(SaslResponse(response=SCRAM_RESPONSE)),
    sasl(SaslInit(mechanism=Symbol("AMQPLAIN"), initial_response=AMQPLAIN_RESPONSE,
                  hostname="localhost")),
], ids=["response-plain", "response-scram", "init-amqplain"])
def test_decode_error_hexdumps_mask_every_damage(frame: bytes) -> None:
    """Wherever the damage, neither the decoded fields nor the hexdump nor the error's
    text shows the secret. (A descriptor damaged into that of another SASL performative
    makes a frame of that kind: see test_redact_damaged_descriptor.py.)"""
    (intact,) = FrameReader().feed(frame)
    errors = 0
    for data in _damaged(frame):
        items = FrameReader().feed(data)
        if any(getattr(i, "body", None) is not None and type(i.body) is not type(intact.body)
               for i in items):
            continue
        for extra in ((), ("--json",), ("--brief",)):
            code, out, err = run("decode", data.hex(), *extra)
            assert code in (0, 8), err
            errors += code == 8
            assert not leaks(out + err), (data.hex(), extra, out + err)
    assert errors  # some damage ended in a hexdump


def test_the_sasl_response_hexdump() -> None:
    data = bytearray(SASL_HEADER + sasl(SaslResponse(response=PLAIN_RESPONSE)))
    start = bytes(data).index(PLAIN_RESPONSE)
    assert secret_spans(data) == [(start, start + len(PLAIN_RESPONSE))]
    data[start - 4] = 0x30  # the list's size: longer than the frame
    code, out, err = run("decode", data.hex())
    assert code == 8 and "decode error" in err and "** **" in err, err
    assert not leaks(out + err), err
    code, out, err = run("decode", data.hex(), "--show-secrets")
    assert code == 8 and leaks(err)


def test_secret_spans_of_a_sasl_response() -> None:
    for response in (PLAIN_RESPONSE, SCRAM_RESPONSE):
        data = SASL_HEADER + sasl(SaslResponse(response=response))
        start = data.index(response)
        assert secret_spans(data) == [(start, start + len(response))]
    assert secret_spans(SASL_HEADER + sasl(SaslResponse(response=b""))) == []
    init = sasl(SaslInit(mechanism=Symbol("AMQPLAIN"), initial_response=AMQPLAIN_RESPONSE))
    start = init.index(AMQPLAIN_RESPONSE)
    assert secret_spans(init) == [(start, start + len(AMQPLAIN_RESPONSE))]


# -- amqp pcap-dump ---------------------------------------------------------------------------


def _capture(tmp_path: Path) -> Path:
    """A PLAIN client that answers a challenge, then an AMQPLAIN client, then an
    EXTERNAL one."""
    s = Script()
    s.raw(C2S, SASL_HEADER).raw(S2C, SASL_HEADER)
    s.raw(S2C, sasl(c.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN")])))
    s.raw(C2S, sasl(SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"")))
    s.raw(S2C, sasl(c.SaslChallenge(challenge=b"")))
    s.raw(C2S, sasl(SaslResponse(response=PLAIN_RESPONSE)))
    s.raw(S2C, sasl(c.SaslOutcome(code=0)))
    return write(tmp_path / "challenge.pcapng", s)


def _amqplain_capture(tmp_path: Path, mechanism: str, response: bytes) -> Path:
    s = Script()
    s.raw(C2S, SASL_HEADER).raw(S2C, SASL_HEADER)
    s.raw(S2C, sasl(c.SaslMechanisms(sasl_server_mechanisms=[Symbol(mechanism)])))
    s.raw(C2S, sasl(SaslInit(mechanism=Symbol(mechanism), initial_response=response)))
    s.raw(S2C, sasl(c.SaslOutcome(code=0)))
    return write(tmp_path / f"{mechanism}.pcapng", s)


@pytest.mark.parametrize("extra", [(), ("--json",), ("--frames-only",),
                                   ("--json", "--frames-only")])
def test_pcap_dump_masks_a_sasl_response(tmp_path: Path, extra: tuple[str, ...]) -> None:
    cap = str(_capture(tmp_path))
    code, out, err = run("pcap-dump", cap, *extra)
    assert code == 0, err
    assert "sasl-response" in out
    assert not leaks(out + err), out
    if "--json" in extra:
        (obj,) = [json.loads(ln) for ln in out.splitlines() if "sasl-response" in ln]
        assert obj["redacted"] is True
        resp = base64.b64decode(obj["performative"]["sasl-response"]["response"])
        assert resp == b"\x00bob\x00***"
    else:
        assert "\\x00bob\\x00***" in out
    code, out, err = run("pcap-dump", cap, "--show-secrets", *extra)
    assert code == 0 and leaks(out) and "redacted" not in out


@pytest.mark.parametrize("extra", [(), ("--json",), ("--frames-only",)])
def test_pcap_dump_masks_amqplain(tmp_path: Path, extra: tuple[str, ...]) -> None:
    cap = str(_amqplain_capture(tmp_path, "AMQPLAIN", AMQPLAIN_RESPONSE))
    code, out, err = run("pcap-dump", cap, *extra)
    assert code == 0, err
    assert "AMQPLAIN" in out and not leaks(out + err), out
    if "--json" in extra:
        (obj,) = [json.loads(ln) for ln in out.splitlines() if "sasl-init" in ln]
        assert obj["redacted"] is True
    code, out, err = run("pcap-dump", cap, "--show-secrets", *extra)
    assert code == 0 and leaks(out)


def test_pcap_dump_shows_external(tmp_path: Path) -> None:
    cap = str(_amqplain_capture(tmp_path, "EXTERNAL", b"bob"))
    code, out, _ = run("pcap-dump", cap)
    assert code == 0 and 'initial-response=b"bob"' in out
    code, out, _ = run("pcap-dump", cap, "--json")
    (obj,) = [json.loads(ln) for ln in out.splitlines() if "sasl-init" in ln]
    assert "redacted" not in obj
    assert base64.b64decode(obj["performative"]["sasl-init"]["initial-response"]) == b"bob"
