"""--show-secrets shows a SASL response whole: an AMQPLAIN initial-response (its password
at the end) was cut at 32 bytes like any binary. Without it the response stays masked.
The proxy's lines, `amqp decode` and pcap-dump share the frame line."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from amqpcli.cli.proxy import LinePrinter
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.types import Symbol

RESP = b"\x05LOGINS\x00\x00\x00\x05guest\x08PASSWORDS\x00\x00\x00\x0esecret-at-end"
BODIES = [c.SaslInit(mechanism=Symbol("AMQPLAIN"), initial_response=RESP),
          c.SaslResponse(response=RESP)]


class _Conn:
    key = "c1"


@pytest.mark.parametrize("body", BODIES, ids=["sasl-init", "sasl-response"])
@pytest.mark.parametrize("show", [True, False])
def test_proxy_line(body: Any, show: bool, capsys: pytest.CaptureFixture[str]) -> None:
    (frame,) = FrameReader().feed(encode_frame(body, type=1))
    LinePrinter(False, show).on_item(_Conn(), "client", frame, 0.0, [])
    out = capsys.readouterr().out
    assert (RESP.hex() in out) is show
    assert "…" not in out and "bytes)" not in out
    if not show:
        assert '=b"***"' in out


@pytest.mark.parametrize("show", [True, False])
def test_decode(show: bool) -> None:
    data = encode_frame(BODIES[0], type=1).hex()
    out = subprocess.run([sys.executable, "-m", "amqpcli", "decode", data]
                         + (["--show-secrets"] if show else []),
                         check=True, capture_output=True, text=True, timeout=60).stdout
    assert (RESP.hex() in out) is show
    assert "secret" not in out or show
