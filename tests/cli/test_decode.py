"""`amqp decode`: every input form, every kind of content, errors, JSON round trip, secrets."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.cli.send import replayed_message
from amqpcli.codec.composites import Open, SaslInit, Transfer
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UInt
from amqpcli.render.items import item_bytes_from_json
from tests.net.clirun import amqp, amqp_in_process, json_lines

EXAMPLES = Path(__file__).resolve().parents[2] / "amqpcli" / "examples"
SESSION = (EXAMPLES / "client-session.amqp").read_bytes()
MESSAGE = (EXAMPLES / "message.amqp").read_bytes()


run = amqp_in_process


def hexdump_c(data: bytes) -> str:
    rows = []
    for r in range(0, len(data), 16):
        c = data[r : r + 16]
        left = " ".join(f"{b:02x}" for b in c[:8])
        right = " ".join(f"{b:02x}" for b in c[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in c)
        rows.append(f"{r:08x}  {left:<23}  {right:<23}  |{text}|")
    return "\n".join([*rows, f"{len(data):08x}"]) + "\n"


def xxd(data: bytes) -> str:
    rows = []
    for r in range(0, len(data), 16):
        c = data[r : r + 16]
        groups = " ".join(c[i : i + 2].hex() for i in range(0, len(c), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in c)
        rows.append(f"{r:08x}: {groups:<39}  {text}")
    return "\n".join(rows) + "\n"


FRAME = encode_frame(Open(container_id="hex-test"))


@pytest.mark.parametrize(
    "text",
    [
        FRAME.hex(),
        FRAME.hex(" "),
        " ".join(f"0x{b:02x}" for b in FRAME),
        "".join(f"\\x{b:02x}" for b in FRAME),
        FRAME.hex(":"),
        hexdump_c(FRAME),
        xxd(FRAME),
        base64.b64encode(FRAME).decode(),
    ],
    ids=["plain", "spaced", "0x", "escapes", "colons", "hexdump-C", "xxd", "base64"],
)
def test_text_input_forms_on_stdin(text: str) -> None:
    code, out, err = run("decode", stdin=text.encode())
    assert code == 0, err
    assert out.splitlines()[0].startswith("a single frame (detected)")
    assert '  container-id: "hex-test"' in out


def test_argument_words_file_and_stdin_raw(tmp_path: Path) -> None:
    code, out, _ = run("decode", *FRAME.hex(" ").split())
    assert code == 0 and "hex input (argument)" in out and "hex-test" in out
    f = tmp_path / "frame.bin"
    f.write_bytes(FRAME)
    for args in (("decode", str(f)), ("decode", "-f", str(f))):
        code, out, _ = run(*args)
        assert code == 0 and "raw input" in out and "hex-test" in out
    code, out, _ = run("decode", stdin=FRAME)
    assert code == 0 and "raw input (stdin)" in out


def test_forced_input_form() -> None:
    # "41424344" is hex and base64 alike: hex wins unless told.
    code, out, _ = run("decode", "41424344")
    assert code == 0 and out.startswith("a sequence of 4 AMQP values (detected); 4 bytes from hex")
    code, out, _ = run("decode", "--input", "base64", "oQJoaQ==")
    assert code == 0 and "base64 input" in out and '"hi"' in out
    code, out, _ = run("decode", "--input", "raw", "A")  # the byte 0x41: boolean true
    assert code == 0 and "; 1 byte from raw input" in out and "true" in out
    code, _, err = run("decode", "--input", "hex", "xyz")
    assert code == 2 and "not hex" in err


def test_frame_stream_with_headers() -> None:
    code, out, _ = run("decode", stdin=SESSION)
    assert code == 0
    assert out.splitlines()[0].startswith(
        "a frame stream: 2 protocol headers, 11 frames (detected)"
    )
    for name in (
        "sasl-init",
        "open",
        "begin",
        "attach",
        "flow",
        "transfer",
        "disposition",
        "close",
    ):
        assert f"[0] {'SASL ' if name.startswith('sasl') else ''}{name}" in out
    assert "application-properties" in out  # the transfer's message is shown


def test_frames_without_header_and_brief() -> None:
    no_header = SESSION[SESSION.index(AMQP_HEADER) + 8 :]
    code, out, _ = run("decode", "--brief", stdin=no_header)
    assert code == 0
    assert out.splitlines()[0].startswith("a frame stream: 10 frames (detected)")
    assert any(line.startswith("[0]  transfer    handle=0 id=0") for line in out.splitlines())


@pytest.mark.parametrize(
    ("data", "first"),
    [
        (MESSAGE, "an encoded message, annotated"),
        (Message(b"x").encode(), "an encoded message, bare"),
        (bytes.fromhex("a10568656c6c6f4143"), "a sequence of 3 AMQP values"),
    ],
)
def test_messages_and_values(data: bytes, first: str) -> None:
    code, out, _ = run("decode", data.hex())
    assert code == 0
    assert out.splitlines()[0].startswith(first)


@pytest.mark.parametrize(
    ("args", "first"),
    [
        # a message whose amqp-value is cut short: no value of a sequence, a message
        (("00 53 77 a1 09 68 65",), "an encoded message, cut short (detected); 7 bytes"),
        (("00 53 70 45 00 53 77 a1 09 68 65",), "an encoded message, cut short (detected)"),
        (("--as", "message", "00 53 77 a1 09 68 65"), "an encoded message, cut short (as asked)"),
        (("--as", "message", "a1 02 68 69"),
         "an encoded message that does not decode (as asked)"),
        (("--as", "values", "00 53 77 a1 09 68 65"), "an AMQP value cut short (as asked)"),
        (("a1 09 68 65",), "an AMQP value cut short (detected)"),
        (("ff",), "an AMQP value that does not decode (detected); 1 byte"),
        (("a1 02 68 69 a1 09 68 65",), "a sequence of 1 AMQP value, then one cut short (detected)"),
        (("a1 02 68 69 a1 02 68 69 ff",),
         "a sequence of 2 AMQP values, then one that does not decode (detected)"),
    ],
)
def test_values_that_end_in_an_error_say_how_they_end(args: tuple[str, ...], first: str) -> None:
    # the first line counts what --json lists: the values, and the error that ends them
    code, out, err = run("decode", *args)
    assert code == 8 and out.startswith(first), out
    assert err.splitlines()[-1].startswith("amqp: error: decode error at offset ")
    code, items, _ = run("decode", "--json", *args)
    kinds = [json.loads(line)["item"] for line in items.splitlines()]
    assert kinds[-1] == "error" and "error" not in kinds[:-1]
    if "message" not in first:
        values = kinds.count("value")
        assert f" {values} AMQP value" in first if values else "an AMQP value" in first


def test_forced_kind() -> None:
    code, out, _ = run("decode", "--as", "values", MESSAGE.hex())
    assert code == 0 and out.startswith("a sequence of 5 AMQP values (as asked)")


def test_decode_error_shows_offset_window_and_partial_results() -> None:
    good = encode_frame(Open(container_id="before"))
    bad = bytes.fromhex("0000000c02000000005310ff")
    code, out, err = run("decode", (good + bad).hex())
    assert code == 8
    assert 'container-id: "before"' in out  # what came before is printed
    assert f"decode error at offset {len(good) + 11}" in err
    assert "[ff]" in err and "^^^^" in err
    assert err.strip().splitlines()[-1].startswith("amqp: error: decode error at offset")
    assert "Traceback" not in err


def test_truncated_value_error() -> None:
    code, out, err = run("decode", "--as", "values", "41 a1 05 68 65")
    assert code == 8
    assert "value: true" in out  # decoded before the error
    assert "decode error at offset 1: expected string of 5 bytes" in err and "41[a1]05 68 65" in err


def test_console_script_exit_code_and_no_traceback() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "amqpcli", "decode", "00 53 10 c0 04 01 a1 01 ff"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert p.returncode == 8
    assert "decode error at offset 8" in p.stderr and "Traceback" not in p.stderr


def test_json_round_trips_to_the_input_bytes() -> None:
    for data in (
        SESSION,
        MESSAGE,
        bytes.fromhex("a10568656c6c6f4143"),
        (EXAMPLES / "selector-filter.amqp").read_bytes(),
    ):
        code, out, _ = run("decode", "--json", "--show-secrets", stdin=data)
        assert code == 0
        items = [json.loads(line) for line in out.splitlines()]
        assert b"".join(item_bytes_from_json(i) for i in items) == data
    code, out, _ = run("decode", "--json", stdin=SESSION)
    items = [json.loads(line) for line in out.splitlines()]
    assert [i["item"] for i in items][:3] == ["protocol-header", "frame", "protocol-header"]
    transfer = next(i for i in items if i.get("performative") and "transfer" in i["performative"])
    assert transfer["message"]["properties"]["to"] == "/queue/orders"
    assert transfer["performative"]["transfer"]["delivery-tag"] == "AAAAAAAAAAE="


def test_sasl_plain_redaction_on_and_off() -> None:
    data = b"AMQP\x03\x01\x00\x00" + encode_frame(
        SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\x00bob\x00hunter2"), type=1
    )
    hidden = base64.b64encode(b"hunter2").decode()
    for args in ((), ("--brief",), ("--json",)):
        code, out, _ = run("decode", *args, stdin=data)
        assert code == 0 and "hunter2" not in out and "\\x00bob\\x00" not in out[:0]
        assert "bob" in out or base64.b64encode(b"\x00bob\x00***").decode() in out
    code, out, _ = run("decode", "--show-secrets", stdin=data)
    assert "hunter2" in out
    code, out, _ = run("decode", "--json", "--show-secrets", stdin=data)
    assert base64.b64encode(b"\x00bob\x00hunter2").decode() in out
    assert hidden not in run("decode", "--json", stdin=data)[1]


def test_examples_and_usage_errors() -> None:
    # one name for each example: its file's without the suffix (the list showed file names,
    # client-session.amqp and client-session.hex, that the help and docs did not use)
    files = sorted(f.name for f in EXAMPLES.iterdir() if not f.name.endswith(".pcapng"))
    names = sorted({f.rsplit(".", 1)[0] for f in files})
    assert len(names) == len(files) and "client-session" in names
    code, out, _ = run("decode", "--example", "list")
    assert code == 0 and out.split() == names
    for name, file in zip(names, files, strict=True):
        code, by_name, _ = run("decode", "--example", name, "--json")
        assert code == 0, name
        code, by_file, _ = run("decode", "--example", file, "--json")
        assert code == 0 and by_file == by_name, file
    code, out, _ = run("decode", "--example", "client-session")
    assert code == 0 and "a frame stream" in out
    code, out, _ = run("decode", "--example", "client-session-hexdump")
    assert code == 0 and "578 bytes from hex input" in out
    code, _, err = run("decode", "--example", "nope")
    assert code == 2 and f"examples: {', '.join(names)}" in err
    code, _, err = run("decode", "--as", "pictures", "00")
    assert code == 2 and "--as must be one of" in err
    code, _, err = run("decode", "")
    assert code == 2


def test_max_frame_size_option() -> None:
    big = encode_frame(Transfer(handle=UInt(0)), payload=b"x" * 600)
    code, _, err = run("decode", "--max-frame-size", "512", big.hex())
    assert code == 8 and "max-frame-size" in err


def test_stdin_dash_forced_frames_and_opaque_note() -> None:
    code, out, _ = run("decode", "-", stdin=FRAME.hex().encode())
    assert code == 0 and "hex-test" in out
    code, out, err = run("decode", "--as", "frames", "a1 05 68 65 6c 6c 6f")
    assert code == 8 and "as asked" in out and "decode error at offset 0" in err
    code, out, err = run("decode", stdin=b"AMQP\x02\x01\x00\x00\x16\x03\x01\x02\x00")
    assert code == 0 and "AMQP 1.0 TLS protocol header" in out
    assert "note: 5 bytes of tls data after its header are not decoded" in err


def test_multi_frame_delivery_shown_whole() -> None:
    msg = Message(b"y" * 40).encode()
    data = encode_frame(
        Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t", more=True),
        payload=msg[:10],
    ) + encode_frame(Transfer(handle=UInt(0)), payload=msg[10:])
    code, out, _ = run("decode", "--brief", data.hex())
    assert code == 0 and out.splitlines()[-1].endswith('data b"' + "y" * 40 + '" (45 bytes in all)')
    code, out, _ = run("decode", "--json", data.hex())
    last = json.loads(out.splitlines()[-1])
    assert last["message"]["body"] == {"data": [{"binary-text": "y" * 40}]}


def test_a_delivery_whose_last_frame_has_no_payload_is_whole_in_every_view() -> None:
    # a sender may end a delivery with a transfer that carries only `more=false`
    msg = Message(b"z" * 30).encode()
    data = AMQP_HEADER + encode_frame(
        Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t", more=True),
        payload=msg[:10],
    ) + encode_frame(Transfer(handle=UInt(0), more=True), payload=msg[10:]) + encode_frame(
        Transfer(handle=UInt(0), more=False))
    done = amqp("decode", "--no-color", "-", input=data)
    assert done.returncode == 0, done.stderr
    tree = done.stdout.split("[0] transfer")[-1]
    assert "message (all frames of the delivery)" in tree and '"' + "z" * 30 + '"' in tree
    done = amqp("decode", "--brief", "-", input=data)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        '[0]  transfer    handle=0  data b"' + "z" * 30 + '" (35 bytes in all)')
    done = amqp("decode", "--json", "-", input=data)
    assert done.returncode == 0, done.stderr
    last = json_lines(done.stdout)[-1]
    assert "payload" not in last
    assert last["message"]["body"] == {"data": [{"binary-text": "z" * 30}]}
    # and it replays: `send --from` takes the message of the delivery's last frame
    assert replayed_message(last) == msg


def test_a_surrogate_char_is_a_decode_error_in_json() -> None:
    """A char must be a Unicode scalar value: a surrogate is an error (it was written as a
    lone surrogate); a char past the BMP decodes and its JSON gives its bytes back."""
    code, _out, err = run("decode", "--json", "730000d800")
    assert code == 8 and "found surrogate U+D800" in err, err
    data = bytes.fromhex("730001f600")
    code, out, err = run("decode", "--json", data.hex())
    assert code == 0, err
    assert "😀" in out
    assert item_bytes_from_json(json.loads(out.splitlines()[0])) == data


def test_colour_when_asked_plain_otherwise() -> None:
    code, out, _ = run("decode", "--example", "client-session", "--brief", "--color")
    assert code == 0 and "\x1b[" in out
    code, plain, _ = run("decode", "--example", "client-session", "--brief", "--no-color")
    assert code == 0 and "\x1b[" not in plain
    _, piped, _ = run("decode", "--example", "client-session", "--brief")
    assert piped == plain  # not a terminal: plain by default
    assert len(plain.splitlines()) == len(out.splitlines())


def test_no_color_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from amqpcli.cli import decode as decode_cli

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not decode_cli._Out().rich
    monkeypatch.delenv("NO_COLOR")
    assert decode_cli._Out().rich
    assert not decode_cli._Out(False).rich


def test_pcap_dump_shows_a_delivery_ended_by_an_empty_transfer_as_any_other(
        tmp_path: Path) -> None:
    # pcap-dump draws frames with the same functions: the last frame's line and the
    # delivery line give the whole message, an empty last frame too
    from amqpcli.codec import composites as c
    from tests.dissect.helpers import Script, write

    msg = Message("hello multi-frame world").encode()
    lines = {}
    for empty_last in (False, True):
        s = Script().open().sender_link()
        s.c(Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t0",
                     message_format=UInt(0), more=True), payload=msg[:10])
        s.c(Transfer(handle=UInt(0), more=empty_last), payload=msg[10:])
        if empty_last:
            s.c(Transfer(handle=UInt(0), more=False))
        s.dispose(0, c.Accepted()).close()
        cap = write(tmp_path / f"{empty_last}.pcap", s)
        done = amqp("pcap-dump", str(cap), "--deliveries", "--bodies")
        assert done.returncode == 0, done.stderr
        lines[empty_last] = done.stdout.splitlines()
        frames = amqp("pcap-dump", str(cap)).stdout.splitlines()
        transfers = [ln.split(" -> ", 1)[1] for ln in frames if "transfer" in ln]
        assert transfers[-1] == ('[0]  transfer    handle=0  value "hello multi-frame world"'
                                 " (28 bytes in all)")
    for empty_last, out in lines.items():
        assert len(out) == 1
        assert f"[{2 + empty_last} frames]" in out[0]
        assert out[0].endswith('value "hello multi-frame world" (28 bytes)')


def test_a_one_byte_value_is_one_byte() -> None:
    code, out, err = run("decode", "41", "7000000100")
    assert code == 0, err
    assert out.splitlines() == [
        "a sequence of 2 AMQP values (detected); 6 bytes from hex input (argument)",
        "value: true  (@0, 1 byte)",
        "value: 256  (uint; @1, 5 bytes)"]


def test_the_error_line_counts_the_decode_errors() -> None:
    """One: where it is; more: how many, and where the first is (the lines above say
    where each is)."""
    bad = ["0000000c02000000005310ff", "0000000c02000000005311ff"]
    code, _, err = run("decode", "--brief", "414d515000010000", bad[0])
    assert code == 8
    assert err.splitlines()[-1] == ("amqp: error: decode error at offset 19: expected a format "
                                    "code, found 0xff")
    code, _, err = run("decode", "--brief", "414d515000010000", *bad)
    assert code == 8
    assert err.splitlines()[-1] == ("amqp: error: 2 decode errors, the first at offset 19: "
                                    "expected a format code, found 0xff")
