"""`amqp decode` on AMQP 0-10 frame streams: trees, lines, JSON, errors and secrets."""

from __future__ import annotations

import base64
import json

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Command,
    Control,
    Struct,
    decode_stream,
    encode_assembly,
)
from amqpcli.capture import C2S, Data, read_capture
from tests.cli.test_decode import run
from tests.paths import CAPTURES_DIR

ECHO = CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng"


def _client_stream() -> bytes:
    """The client's bytes of the real qpid-python echo capture, through our own reader."""
    out = bytearray()
    for ev in read_capture([ECHO]):
        if isinstance(ev, Data) and ev.direction == C2S:
            out += ev.data
    return bytes(out)


def _start_ok(mechanism: str, response: bytes) -> bytes:
    method = Control.make("connection.start-ok", mechanism=mechanism, response=response)
    return PROTOCOL_HEADER + encode_assembly(method)


def test_echo_capture_tree_names_every_assembly_and_shows_the_message() -> None:
    data = _client_stream()
    code, out, err = run("decode", "--input", "raw", "-", stdin=data)
    assert code == 0, err
    assemblies = [i for i in decode_stream(data) if getattr(i, "method", None) is not None]
    assert out.splitlines()[0].startswith(f"an AMQP 0-10 frame stream: {len(assemblies)} assemblies")
    for asm in assemblies:
        assert f"[{asm.channel}] {asm.method.qname}  (" in out
    assert "header message.delivery-properties" in out
    assert 'routing-key: "echo"' in out
    assert 'body: b"hello 0-10 #0"  (13 bytes)' in out


def test_json_and_brief_give_one_item_per_assembly() -> None:
    data = _client_stream()
    items = decode_stream(data)
    code, out, _ = run("decode", "--json", "--input", "raw", "-", stdin=data)
    assert code == 0
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o.get("method") for o in objs] == [
        getattr(getattr(i, "method", None), "qname", None) for i in items
    ]
    # the header as a 1.0 header is written: offset, name, version
    assert objs[0] == {"item": "protocol-header", "offset": 0, "protocol": "amqp0-10",
                       "name": "AMQP 0-10", "version": [1, 1, 0, 10]}
    transfer = next(o for o in objs if o.get("method") == "message.transfer")
    assert transfer["fields"]["destination"] == "echo"
    assert transfer["body"] == {"binary-text": "hello 0-10 #0"}
    code, out, _ = run("decode", "--brief", "--input", "raw", "-", stdin=data)
    assert code == 0
    assert sum("message.transfer" in line for line in out.splitlines()) == sum(
        getattr(getattr(i, "method", None), "qname", "") == "message.transfer" for i in items
    )


def test_headerless_stream_needs_as_frames_0_10() -> None:
    cmd = Command.make("message.transfer", destination="q")
    header = (Struct.make("message.delivery-properties", routing_key="k"),)
    data = encode_assembly(cmd, channel=3, header=header, body=b"payload")
    code, out, err = run("decode", "--as", "frames-0-10", "--input", "raw", "-", stdin=data)
    assert code == 0, err
    assert "[3] message.transfer" in out and 'body: b"payload"' in out


def test_plain_password_is_masked_unless_asked() -> None:
    data = _start_ok("PLAIN", b"\0alice\0s3cret")
    for args in ((), ("--brief",)):
        code, out, _ = run("decode", *args, "--input", "raw", "-", stdin=data)
        assert code == 0
        assert "s3cret" not in out and "alice" in out and "***" in out
    code, out, _ = run("decode", "--json", "--input", "raw", "-", stdin=data)
    response = json.loads(out.splitlines()[1])["fields"]["response"]
    assert base64.b64decode(response["binary"]) == b"\0alice\0***"
    code, out, _ = run("decode", "--show-secrets", "--input", "raw", "-", stdin=data)
    assert "s3cret" in out


def test_truncated_stream_ends_in_a_decode_error_with_its_offset() -> None:
    data = _client_stream()[:200]
    code, out, err = run("decode", "--input", "raw", "-", stdin=data)
    assert code == 8
    assert "AMQP 0-10 protocol header" in out
    assert "decode error at offset 8" in err and "^^" in err
    assert "Traceback" not in err
