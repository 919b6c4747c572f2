"""`amqp decode` of a damaged AMQP 0-10 connection.start-ok: the hexdump around a decode
error masks the SASL response wherever the damage is (cut short, or any octet changed),
as the decoded fields in text, --brief and --json do; --show-secrets shows it."""

from __future__ import annotations

import base64
import json
import re

import pytest

from amqpcli.amqp010 import PROTOCOL_HEADER, Control, encode_assembly
from amqpcli.render.hexdump import hex_window
from amqpcli.render.redact import secret_spans
from tests.cli.test_decode_secrets import run

PASSWORD = b"Xq9zKw"
RESPONSE = b"\x00alice\x00" + PASSWORD
MODES = ((), ("--json",), ("--brief",))


def _start_ok(props: bool = True, mechanism: str = "PLAIN", max_frame_size: int = 0xFFFF,
              response: bytes = RESPONSE) -> bytes:
    fields = {"client_properties": {"product": "amqpcli", "version": 3}} if props else {}
    method = Control.make("connection.start-ok", mechanism=mechanism, response=response,
                          locale="en_US", **fields)
    return encode_assembly(method, max_frame_size=max_frame_size)


def _leaks(text: str) -> bool:
    """Three octets of the password in a row, as hex (a mark's brackets aside) or text."""
    flat = re.sub(r"\s+", " ", re.sub(r"[\[\]]", " ", text))
    grams = {PASSWORD[i:i + 3] for i in range(len(PASSWORD) - 2)}
    return any(g.hex(" ") in flat or g.decode() in text for g in grams)


def _check(data: bytes, headerless: bool, what: object) -> None:
    args = ("--as", "frames-0-10") if headerless else ()
    for extra in MODES:
        code, out, err = run("decode", *args, data.hex(), *extra)
        assert code in (0, 8), (what, extra, err)
        assert not _leaks(out + err), (what, extra, out + err)


STREAMS = {
    "header, client-properties": (PROTOCOL_HEADER + _start_ok(), False),
    "header, no client-properties": (PROTOCOL_HEADER + _start_ok(props=False), False),
    "headerless": (_start_ok(), True),
}


def test_the_plain_case() -> None:
    data = bytearray(PROTOCOL_HEADER + _start_ok())
    locale = data.index(b"\x05en_US")
    data[locale] = 0xFF  # the locale's size: the control cannot decode
    for extra in MODES:
        code, out, err = run("decode", data.hex(), *extra)
        assert code == 8, err
        assert "**" in err and "decode error" in err
        assert not _leaks(out + err), out + err
    code, out, err = run("decode", data.hex(), "--show-secrets")
    assert code == 8 and PASSWORD.hex(" ") in err


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_cut(name: str) -> None:
    good, headerless = STREAMS[name]
    for cut in range(1 if headerless else 8, len(good)):
        _check(good[:cut], headerless, cut)


@pytest.mark.parametrize("name", list(STREAMS))
def test_every_damaged_octet(name: str) -> None:
    good, headerless = STREAMS[name]
    for i in range(0 if headerless else 8, len(good)):
        for value in {0xFF, 0x00, good[i] ^ 0x01, good[i] ^ 0x80, 0x05, 0x0D}:
            data = bytearray(good)
            data[i] = value
            _check(bytes(data), headerless, (i, hex(value)))


def test_damaged_then_cut() -> None:
    good = PROTOCOL_HEADER + _start_ok(props=False)
    response = good.index(RESPONSE)
    for i in range(8, response):
        data = bytearray(good)
        data[i] ^= 0xFF
        for cut in range(response + 2, len(good), 3):
            _check(bytes(data[:cut]), False, (i, cut))


def test_a_response_over_several_frames() -> None:
    long = b"\x00alice\x00" + PASSWORD * 40
    good = PROTOCOL_HEADER + _start_ok(max_frame_size=64, response=long)
    spans = secret_spans(good)
    assert spans and spans[0][0] == good.index(b"\x00alice\x00")
    assert spans[-1][1] >= good.rindex(PASSWORD) + len(PASSWORD)
    for cut in range(8, len(good), 7):
        _check(good[:cut], False, cut)


def test_spans_of_intact_controls() -> None:
    data = PROTOCOL_HEADER + _start_ok()
    start = data.index(RESPONSE)
    assert secret_spans(data) == [(start, start + len(RESPONSE))]
    lines = "\n".join(hex_window(data, start + len(RESPONSE), masked=secret_spans(data)))
    assert "** ** ** ** ** **" in lines and "[05]" in lines  # the locale is no secret
    # no secret under ANONYMOUS and EXTERNAL, but for a response shaped as PLAIN's
    for open_mechanism in ("ANONYMOUS", "EXTERNAL"):
        assert secret_spans(PROTOCOL_HEADER + _start_ok(mechanism=open_mechanism,
                                                        response=b"guest@vm")) == []
        data = PROTOCOL_HEADER + _start_ok(mechanism=open_mechanism)
        start = data.index(RESPONSE)
        assert secret_spans(data) == [(start, start + len(RESPONSE))]
    start_ctl = encode_assembly(Control.make("connection.start", mechanisms=["PLAIN"],
                                             locales=["en_US"]))
    assert secret_spans(PROTOCOL_HEADER + start_ctl) == []
    secure_ok = encode_assembly(Control.make("connection.secure-ok", response=RESPONSE))
    data = PROTOCOL_HEADER + secure_ok
    start = data.index(RESPONSE)
    assert secret_spans(data) == [(start, start + len(RESPONSE))]


def test_intact_start_ok_is_masked_in_every_output() -> None:
    data = PROTOCOL_HEADER + _start_ok()
    for extra in MODES:
        code, out, err = run("decode", data.hex(), *extra)
        assert code == 0, err
        assert not _leaks(out + err), out
        assert extra == ("--json",) or "alice" in out, out
    code, out, _ = run("decode", data.hex(), "--json")
    response = json.loads(out.splitlines()[1])["fields"]["response"]
    assert base64.b64decode(response["binary"]) == b"\x00alice\x00***"
    code, out, _ = run("decode", data.hex(), "--show-secrets")
    assert code == 0 and PASSWORD.decode() in out


def test_a_later_error_leaves_the_start_ok_masked() -> None:
    """The start-ok decodes; the bytes after it do not: every output still masks it."""
    data = PROTOCOL_HEADER + _start_ok() + b"\x0f\x00\x00\x10\xff"
    for extra in MODES:
        code, out, err = run("decode", data.hex(), *extra)
        assert code == 8, err
        assert not _leaks(out + err), (extra, out + err)
