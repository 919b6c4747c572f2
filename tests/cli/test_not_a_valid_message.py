"""A transfer whose payload is not a valid AMQP message: every view of `decode` and
`pcap-dump` keeps its bytes and says why, in the codec's words, at which payload byte
(and in `decode`'s tree and JSON, at which offset of the input). A valid message is shown
as before; a payload of a message format other than 0 is opaque, never called invalid;
a delivery in several frames is judged on its payloads joined."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.message import Message
from amqpcli.render.items import TransferAssembler, item_bytes_from_json
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process

run = amqp_in_process

# an amqp-value whose value has the format code 0xff; a data section that claims 5 bytes
# and has 3
BAD_VALUE = b"\x00\x53\x77\xff\x01"
BAD_DATA = b"\x00Su\xa0\x05hel"
REASONS = {
    BAD_VALUE: "expected a format code, found 0xff",
    BAD_DATA: "expected a data section of 7 bytes, found end of input",
}
GOOD = Message(body="hello").encode()
VENDOR_FORMAT = 0x80013700  # a vendor's message format: its payload is opaque


def transfer(payload: bytes, did: int | None = 0, *, fmt: int | None = 0, more: bool = False,
             tag: bytes | None = b"t") -> bytes:
    return encode_frame(c.Transfer(handle=0, delivery_id=did, delivery_tag=tag,
                                   message_format=fmt, settled=True, more=more),
                        0, payload=payload)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


# where the payload of such a transfer frame starts in it
PAYLOAD_AT = len(transfer(b""))


@pytest.mark.parametrize("bad", [BAD_VALUE, BAD_DATA], ids=["bad-value", "cut-data"])
def test_decode_tree_says_why_after_the_payload(bad: bytes) -> None:
    frames = transfer(bad) + transfer(GOOD, 1) + transfer(bad, 2, fmt=VENDOR_FORMAT)
    code, out, err = run("decode", frames.hex())
    assert code == 0, err  # the frames decode: the exit status says so (docs/decode.md)
    lines = out.splitlines()
    i = lines.index(f"  payload: 0x{bad.hex()}  (binary, {len(bad)} bytes)")
    assert lines[i + 1] == (f"  message: not a valid message at payload byte 3 (offset "
                            f"{PAYLOAD_AT + 3}): {REASONS[bad]}")
    # the valid message is shown as a message, the vendor's format as bytes alone
    assert '    body: amqp-value "hello"  (0x77 = amqp:amqp-value:*)' in lines
    assert out.count("not a valid message") == 1
    assert lines[-1] == f"  payload: 0x{bad.hex()}  (binary, {len(bad)} bytes)"
    # the same bytes as a message alone: the codec's same words, a decode error
    code, out, err = run("decode", "--as", "message", bad.hex())
    assert code == 8 and "Traceback" not in err
    assert err.splitlines()[-1] == f"amqp: error: decode error at offset 3: {REASONS[bad]}"


@pytest.mark.parametrize("bad", [BAD_VALUE, BAD_DATA], ids=["bad-value", "cut-data"])
def test_decode_brief_marks_the_frame_line(bad: bytes) -> None:
    frames = transfer(bad) + transfer(GOOD, 1) + transfer(bad, 2, fmt=VENDOR_FORMAT)
    code, out, err = run("decode", "--brief", frames.hex())
    assert code == 0, err
    first, good, vendor = out.splitlines()[1:]
    assert first == (f'[0]  transfer    handle=0 id=0 tag=b"t" format=0 settled  not a valid '
                     f"message at payload byte 3: {REASONS[bad]} ({len(bad)} bytes)")
    assert good.endswith(' settled  value "hello" (10 bytes)')
    assert vendor.endswith(f"format={VENDOR_FORMAT} settled  ({len(bad)} bytes)")


@pytest.mark.parametrize("bad", [BAD_VALUE, BAD_DATA], ids=["bad-value", "cut-data"])
def test_decode_json_has_message_error_beside_the_payload(bad: bytes) -> None:
    frames = transfer(bad) + transfer(GOOD, 1) + transfer(bad, 2, fmt=VENDOR_FORMAT)
    code, out, err = run("decode", "--json", frames.hex())
    assert code == 0, err
    first, good, vendor = json_lines(out)
    expected, found = REASONS[bad].removeprefix("expected ").split(", found ")
    assert base64.b64decode(first["payload"]) == bad
    assert first["message-error"] == {"offset": PAYLOAD_AT + 3, "payload-offset": 3,
                                      "expected": expected, "found": found}
    assert list(first)[-2:] == ["payload", "message-error"]
    assert "message" not in first
    assert "message-error" not in good and good["message"]["body"] == {"value": "hello"}
    assert "message-error" not in vendor and "message" not in vendor
    # still lossless: the items give the input back
    assert b"".join(item_bytes_from_json(o) for o in (first, good, vendor)) == frames


# a delivery in two frames whose data section claims 9 bytes: 2 in the first, 4 in the
# second; alone, the second frame's bytes are no message either
PIECES = (b"\x00Su\xa0\x09ab", b"cdef")


def _two_frames() -> bytes:
    return (transfer(PIECES[0], more=True)
            + transfer(PIECES[1], None, fmt=None, tag=None))


def test_decode_judges_the_payloads_of_a_delivery_joined() -> None:
    frames = _two_frames()
    reason = "expected a data section of 11 bytes, found end of input"
    code, out, err = run("decode", frames.hex())
    assert code == 0, err
    assert (f"  message (all frames of the delivery): not a valid message at payload byte 3 "
            f"(offset {PAYLOAD_AT + 3}): {reason}  (11 bytes in all)") in out.splitlines()
    code, out, err = run("decode", "--brief", frames.hex())
    first, last = out.splitlines()[1:]
    assert first.endswith(" more  (7 bytes)")
    assert last == ("[0]  transfer    handle=0 settled  not a valid message at payload "
                    f"byte 3: {reason} (11 bytes in all)")
    code, out, err = run("decode", "--json", frames.hex())
    first, last = json_lines(out)
    assert "message-error" not in first
    assert last["message-error"] == {"offset": PAYLOAD_AT + 3, "payload-offset": 3,
                                     "expected": "a data section of 11 bytes",
                                     "found": "end of input"}


def test_joined_offset_in_a_later_frame() -> None:
    # the error at payload byte 9 of 8 + 4 bytes (the descriptor, 0x53 0xff, that names
    # no section): byte 1 of the second frame's payload
    frames = (transfer(b"\x00Su\xa0\x03abc", more=True)
              + transfer(b"\x00\x53\xff\x01", None, fmt=None, tag=None))
    a, b = FrameReader().feed(frames)
    joiner = TransferAssembler()
    assert joiner.feed(a) is None
    bad = joiner.feed(b)
    assert bad.error is not None and bad.error.offset == 9
    assert bad.offset == b.offset + b.size - 4 + 1
    assert bad.text() == ("not a valid message at payload byte 9: expected a message "
                          "section descriptor, found 0xff")


def test_a_vendor_format_delivery_in_frames_is_not_judged() -> None:
    frames = (transfer(PIECES[0], fmt=VENDOR_FORMAT, more=True)
              + transfer(b"\x00\x53\x77\xff", 0, fmt=None, tag=None)
              + transfer(BAD_VALUE, 1))
    code, out, err = run("decode", "--brief", frames.hex())
    assert code == 0, err
    vendor_last, bad = out.splitlines()[2:]
    assert vendor_last == "[0]  transfer    handle=0 id=0 settled  (4 bytes)"
    assert "not a valid message at payload byte 3" in bad
    code, out, _ = run("decode", frames.hex())
    assert out.count("not a valid message") == 1


# --- pcap-dump -----------------------------------------------------------------------


def _capture(tmp_path: Path) -> str:
    s = Script().open().sender_link()
    s.raw(0, transfer(BAD_VALUE, 0, tag=b"t0"))  # (direction 0: client to server)
    s.raw(0, transfer(BAD_DATA, 1, tag=b"t1"))
    s.raw(0, transfer(GOOD, 2, tag=b"t2"))
    s.raw(0, transfer(BAD_VALUE, 3, fmt=VENDOR_FORMAT, tag=b"t3"))
    s.raw(0, transfer(PIECES[0], 4, tag=b"t4", more=True))
    s.raw(0, transfer(PIECES[1], None, fmt=None, tag=None))
    # a delivery in two frames whose last repeats its delivery-id: its piece is no message
    # alone, and not judged alone
    good = Message(body=b"x" * 20).encode()
    s.raw(0, transfer(good[:10], 5, tag=b"t5", more=True))
    s.raw(0, transfer(good[10:], 5, fmt=None, tag=None))
    s.close()
    return str(write(tmp_path / "bad.pcapng", s))


def _transfers(out: str) -> list[str]:
    return [x for x in out.splitlines() if " transfer " in x]


def test_pcap_dump_frame_lines(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", _capture(tmp_path))
    assert code == 0, err
    t = _transfers(out)
    assert t[0].endswith(f"not a valid message at payload byte 3: {REASONS[BAD_VALUE]} (5 bytes)")
    assert t[1].endswith(f"not a valid message at payload byte 3: {REASONS[BAD_DATA]} (8 bytes)")
    assert t[2].endswith('value "hello" (10 bytes)')
    assert t[3].endswith(f"format={VENDOR_FORMAT} settled  (5 bytes)")
    assert t[4].endswith(" more  (7 bytes)")
    assert t[5].endswith("handle=0 settled  not a valid message at payload byte 3: expected a "
                         "data section of 11 bytes, found end of input (11 bytes in all)")
    assert t[7].endswith('data b"xxxxxxxxxxxxxxxxxxxx" (25 bytes in all)')
    # frames only: no message is decoded, none is judged
    code, out, _ = run("pcap-dump", "--frames-only", _capture(tmp_path))
    assert "valid message" not in out and "(5 bytes)" not in out


def test_pcap_dump_json_frames(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", "--json", _capture(tmp_path))
    assert code == 0, err
    t = [o for o in json_lines(out) if "transfer" in (o.get("performative") or {})]
    assert t[0]["message-error"]["payload-offset"] == 3
    assert t[0]["message-error"]["found"] == "0xff"
    assert t[0]["message-error"]["offset"] == t[0]["offset"] + len(transfer(b"", tag=b"t0")) + 3
    assert t[1]["message-error"]["expected"] == "a data section of 7 bytes"
    assert base64.b64decode(t[1]["payload"]) == BAD_DATA
    assert "message-error" not in t[2] and t[2]["message"]["body"] == {"value": "hello"}
    # a vendor's format, and pieces of deliveries in several frames: nothing said
    assert all("message-error" not in o and "message" not in o for o in t[3:])
    code, out, _ = run("pcap-dump", "--json", "--show-secrets", _capture(tmp_path))
    assert out.count('"message-error"') == 2


def test_pcap_dump_deliveries_with_bodies(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", "--deliveries", "--bodies", _capture(tmp_path))
    assert code == 0, err
    d = out.splitlines()
    assert d[0].endswith(f" not a valid message at payload byte 3: {REASONS[BAD_VALUE]} "
                         "(5 bytes)")
    assert d[1].endswith(f" not a valid message at payload byte 3: {REASONS[BAD_DATA]} (8 bytes)")
    assert d[2].endswith(' value "hello" (10 bytes)')
    assert d[3].endswith(" presettled         0.000 ms  (5 bytes)")
    assert d[4].endswith(" [2 frames]  not a valid message at payload byte 3: expected a data "
                         "section of 11 bytes, found end of input (11 bytes)")
    assert d[5].endswith(' [2 frames]  data b"xxxxxxxxxxxxxxxxxxxx" (25 bytes)')


def test_pcap_dump_messages_counts_the_invalid_ones(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", "--messages", _capture(tmp_path))
    assert code == 0, err
    assert out.splitlines()[-1].endswith(
        "(4 deliveries without a readable message are not followed, 3 of them not a valid "
        "message)")
