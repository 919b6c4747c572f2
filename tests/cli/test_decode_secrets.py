"""`amqp decode` of a damaged sasl-init: the hexdump around a decode error masks the
PLAIN initial response (the decoded fields already do), wherever the damage is, in text,
JSON and --brief; --show-secrets shows it."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from amqpcli.cli.app import main
from amqpcli.codec.composites import SaslInit
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.render.hexdump import hex_window
from amqpcli.render.redact import secret_spans

PASSWORD = b"s3cr3t"
RESPONSE = b"\x00alice\x00" + PASSWORD


def run(*args: str) -> tuple[int, str, str]:
    """`amqp ARGS` in-process; (exit code, stdout, stderr). Undecodable bytes in a damaged
    symbol pass as on a real stdout (surrogateescape)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            code = int(e.code or 0)
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", "replace"))  # type: ignore[attr-defined]
    return code, texts[0], texts[1]


def _sasl_init(hostname: str | None) -> bytes:
    return b"AMQP\x03\x01\x00\x00" + encode_frame(
        SaslInit(mechanism=Symbol("PLAIN"), initial_response=RESPONSE, hostname=hostname),
        type=1,
    )


def _leaks(text: str) -> bool:
    """Three bytes of the password in a row, as hex (a mark's brackets aside) or text."""
    flat = re.sub(r"\s+", " ", re.sub(r"[\[\]]", " ", text))
    grams = {PASSWORD[i:i + 3] for i in range(len(PASSWORD) - 2)}
    return any(g.hex(" ") in flat or g.decode() in text for g in grams)


def test_the_reported_case(tmp_path: object) -> None:
    data = bytearray(_sasl_init("localhost"))
    after = data.index(PASSWORD) + len(PASSWORD)
    assert data[after] == 0xA1
    data[after] = 0xFF
    for extra in ((), ("--json",), ("--brief",)):
        code, out, err = run("decode", data.hex(), *extra)
        assert code == 8, err
        assert "[ff]" in err and "**" in err
        assert not _leaks(out + err), out + err
    code, out, err = run("decode", data.hex(), "--show-secrets")
    assert code == 8 and "73 33 63 72 33 74[ff]" in err


@pytest.mark.parametrize("hostname", ["localhost", None])
def test_every_damaged_byte(hostname: str | None) -> None:
    good = _sasl_init(hostname)
    for i in range(8, len(good)):
        for value in {0xFF, 0x00, good[i] ^ 0x01, 0x05, 0x40}:
            data = bytearray(good)
            data[i] = value
            for extra in ((), ("--json",), ("--brief",)):
                code, out, err = run("decode", data.hex(), *extra)
                assert code in (0, 8), err
                assert not _leaks(out + err), (i, hex(value), extra, out + err)


def test_hex_window_masks_spans() -> None:
    data = _sasl_init("localhost")
    spans = secret_spans(data)
    start = data.index(RESPONSE)
    assert spans == [(start, start + len(RESPONSE))]
    lines = hex_window(data, start + len(RESPONSE), masked=spans)
    assert "** ** ** ** ** ** **" in "\n".join(lines)
    assert "[a1]" in "\n".join(lines)  # the hostname's code is no secret


def test_no_span_for_anonymous() -> None:
    data = b"AMQP\x03\x01\x00\x00" + encode_frame(
        SaslInit(mechanism=Symbol("ANONYMOUS"), initial_response=b"anon"), type=1)
    assert secret_spans(data) == []
