"""ANONYMOUS and EXTERNAL send no secret — but a client configured for PLAIN that names
the wrong mechanism still sends `authzid NUL authcid NUL password`: a response of that
shape is masked as PLAIN's is, in every view of both protocols (it was shown whole)."""

from __future__ import annotations

import pytest

from amqpcli.amqp010 import PROTOCOL_HEADER, Assembly, Control, StreamDecoder, encode_assembly
from amqpcli.codec.composites import SaslInit
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol
from amqpcli.render.amqp010 import tree_010
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import item_to_json
from amqpcli.render.redact import redact, secret_spans
from amqpcli.render.traffic import json_010, line_010

SHAPED = b"\x00alice\x00hunter2-pw"


@pytest.mark.parametrize("mechanism", ["ANONYMOUS", "anonymous", "EXTERNAL"])
def test_a_plain_shaped_response_is_masked_under_an_open_mechanism(mechanism: str) -> None:
    init = SaslInit(mechanism=Symbol(mechanism), initial_response=SHAPED, hostname="h")
    assert redact(init).initial_response == b"\x00alice\x00***"
    assert redact(init, show_secrets=True) is init
    frame_bytes = encode_frame(init, type=1)
    (frame,) = FrameReader().feed(frame_bytes)
    assert "hunter2" not in frame_line(frame) and "alice" in frame_line(frame)
    assert "hunter2" not in str(item_to_json(frame))
    # raw bytes (hexdumps, a delivery's pieces): the response is a secret's span
    data = encode_protocol_header("sasl") + frame_bytes
    at = data.index(SHAPED)
    assert any(a <= at and at + len(SHAPED) <= b for a, b in secret_spans(data))


@pytest.mark.parametrize("response", [b"trace@example.com", b"", b"\x00only-one-nul"])
def test_what_open_mechanisms_send_stays_shown(response: bytes) -> None:
    init = SaslInit(mechanism=Symbol("ANONYMOUS"), initial_response=response)
    assert redact(init) is init
    assert secret_spans(encode_protocol_header("sasl") + encode_frame(init, type=1)) == []


def _start_ok(mechanism: str, response: bytes) -> Assembly:
    data = PROTOCOL_HEADER + encode_assembly(Control.make(
        "connection.start-ok", mechanism=mechanism, response=response, locale="en_US"))
    (item,) = [i for i in StreamDecoder().feed(data) if isinstance(i, Assembly)]
    return item


def test_amqp_0_10_start_ok_alike() -> None:
    item = _start_ok("ANONYMOUS", SHAPED)
    assert json_010(item)["redacted"] is True
    for text in (line_010(item), str(json_010(item)), "\n".join(map(str, tree_010(item)))):
        assert "hunter2" not in text
    raw = PROTOCOL_HEADER + encode_assembly(Control.make(
        "connection.start-ok", mechanism="ANONYMOUS", response=SHAPED, locale="en_US"))
    at = raw.index(SHAPED)
    assert any(a <= at and at + len(SHAPED) <= b for a, b in secret_spans(raw))
    assert "redacted" not in json_010(_start_ok("ANONYMOUS", b"guest@vm"))
