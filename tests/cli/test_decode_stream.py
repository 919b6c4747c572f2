"""`amqp decode` on inputs longer than what it reads before deciding what they are: decoded
as they are read, in memory bounded by the largest item rather than by the input, with the
same items, errors and hex windows as the whole input gives."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from amqpcli.cli.decode import _LOOKAHEAD
from amqpcli.cli.decode_input import (
    Base64Reader,
    HexDumpReader,
    PlainHexReader,
    detect_format,
    detect_kind_prefix,
    open_reader,
    parse_base64,
    parse_dump,
    parse_plain_hex,
)
from amqpcli.codec.composites import Data, Header, Properties, SaslInit, Transfer
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UInt
from amqpcli.render.hexdump import hex_window
from amqpcli.render.redact import secret_spans
from tests.cli.test_decode import run, xxd
from tests.paths import REPO_ROOT

MiB = 1 << 20
MESSAGE = Message([Data(b"x" * 80)], properties=Properties(message_id="m-1")).encode()


def transfers(n: int, payload: bytes = MESSAGE) -> bytes:
    return b"".join(
        encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(i),
                              delivery_tag=i.to_bytes(4, "big")), 0, payload)
        for i in range(n)
    )


def binaries(n: int, size: int) -> bytes:
    """`n` vbin32 values of `size` bytes (every byte but a few: `|` among them, which a hex
    dump's text column holds)."""
    blob = bytes(i * 7 % 251 for i in range(size))
    return (b"\xb0" + size.to_bytes(4, "big") + blob) * n


# -- memory ---------------------------------------------------------------------------------

# Runs a command with this helper's stdin, its stdout to /dev/null, and prints the peak RSS
# of that command alone (a process forked from the large test process would count the
# pages it started with) and its exit code.
# the command as the tests run it: the checkout's package, whether or not `amqp` is on PATH
AMQP = (sys.executable, "-m", "amqpcli")

_PEAK = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))\n"
)


def peak_rss(path: Path, *args: str) -> int:
    """Peak RSS in bytes of `amqp decode ARGS -` reading `path` on stdin (it must succeed)."""
    with path.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-c", _PEAK, *AMQP, "decode", *args, "-"],
                              stdin=stdin, capture_output=True, text=True, check=True,
                              cwd=REPO_ROOT)
    rss, code = done.stdout.split()
    assert code == "0", done.stderr[-2000:]
    return int(rss)


# Each about 48 MiB of bytes once read from its form; the old decoder held the input (and
# every item) at once: 60 MiB and more over its start.
LARGE_INPUTS: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    "raw values": (lambda: binaries(192, 256 * 1024), ("--input", "raw", "--json")),
    "tiny values": (lambda: b"\x41" * 500_000, ("--input", "raw", "--no-color")),
    "frames": (lambda: AMQP_HEADER + transfers(768, binaries(1, 64_000)), ("--json",)),
    "plain hex": (lambda: binaries(96, 256 * 1024).hex().encode(), ("--json",)),
    "hex dump": (lambda: xxd(binaries(16, 256 * 1024)).encode(), ("--json",)),
    "base64": (lambda: base64.encodebytes(binaries(192, 256 * 1024)), ("--json",)),
}
MEMORY_BOUND = 24 * MiB  # over what decoding a one-byte input takes


@pytest.mark.parametrize("name", list(LARGE_INPUTS))
def test_a_large_input_is_decoded_in_bounded_memory(name: str, tmp_path: Path) -> None:
    make, args = LARGE_INPUTS[name]
    tiny = tmp_path / "tiny"
    tiny.write_bytes(b"\x41")
    large = tmp_path / "large"
    large.write_bytes(make())
    baseline = peak_rss(tiny, "--input", "raw", *args[-1:])
    peak = peak_rss(large, *args)
    assert peak - baseline < MEMORY_BOUND, (
        f"{name}: {large.stat().st_size >> 20} MiB of input took {(peak - baseline) >> 20} "
        "MiB more than a one-byte input")


# -- output as the input comes ----------------------------------------------------------------


@pytest.mark.timeout(120)  # the old decoder waited for the end of its input: a hang
@pytest.mark.parametrize("mode", ["--json", "--no-color"])
def test_output_comes_before_the_input_ends(mode: str) -> None:
    count = 2 * _LOOKAHEAD // len(transfers(1))
    first_part = AMQP_HEADER + transfers(count)
    last_part = transfers(3)
    proc = subprocess.Popen([*AMQP, "decode", mode, "-"], cwd=REPO_ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    an_item_was_read = threading.Event()

    def write() -> None:
        assert proc.stdin is not None
        proc.stdin.write(first_part)
        proc.stdin.flush()
        an_item_was_read.wait()
        proc.stdin.write(last_part)
        proc.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    lines = [proc.stdout.readline()]
    while b"protocol-header" not in lines[-1] and b"AMQP 1.0 protocol header" not in lines[-1]:
        assert lines[-1], b"".join(lines)
        lines.append(proc.stdout.readline())
    assert writer.is_alive()  # the first item is out, the input still open
    an_item_was_read.set()
    lines += proc.stdout.readlines()
    writer.join()
    assert proc.wait() == 0, proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    frames = count + 3
    if mode == "--json":
        items = [json.loads(line) for line in lines]
        assert [i["item"] for i in items] == ["protocol-header"] + ["frame"] * frames
        assert items[-1]["offset"] == len(first_part) + len(transfers(2))
    else:
        assert lines[0].decode().startswith(
            "a frame stream (detected); raw input (stdin) decoded as it is read")
        # the counts close the output, as they open that of a short input
        assert lines[-1].decode() == (f"a frame stream: 1 protocol header, {frames} frames "
                                      f"(detected); {len(first_part) + len(last_part)} bytes "
                                      "from raw input (stdin)\n")


# -- counts, and a reader that goes away ---------------------------------------------------------


COUNTED = {
    # a frame that does not decode (reading goes on), a delivery in two frames the last of
    # which has no payload, frames after them
    "frames": (AMQP_HEADER + transfers(_LOOKAHEAD // len(transfers(1)) + 10)
               + bytes.fromhex("0000000c02000000005314ff")  # 0xff: no format code
               + encode_frame(Transfer(handle=UInt(1), delivery_id=UInt(8), delivery_tag=b"u",
                                       more=True), 0, MESSAGE)
               + encode_frame(Transfer(handle=UInt(1))) + transfers(5)),
    # values, then one that does not decode: the end
    "values": binaries(5, 256 * 1024) + b"\xff\x41",
}
_COUNTED_AS = {"protocol header": "protocol-header", "frame": "frame", "error": "error",
               "AMQP value": "value"}


@pytest.mark.parametrize("name", list(COUNTED))
@pytest.mark.parametrize("form", ["raw", "hex dump"])
def test_a_long_input_s_counts_are_those_of_its_json_items(name: str, form: str) -> None:
    data = COUNTED[name]
    given = data if form == "raw" else xxd(data).encode()
    text = subprocess.run([*AMQP, "decode", "--no-color", "-"], input=given,
                          capture_output=True, cwd=REPO_ROOT, check=False)
    as_json = subprocess.run([*AMQP, "decode", "--json", "-"], input=given,
                             capture_output=True, cwd=REPO_ROOT, check=False)
    assert text.returncode == as_json.returncode == 8
    assert text.stderr == as_json.stderr  # the same error, window and summary
    lines = text.stdout.decode().splitlines()
    assert "decoded as it is read: its counts come at the end" in lines[0]
    counts = lines[-1].split(" (detected)")[0].split(": ", 1)[-1]
    said = {}
    if ", then one that does not decode" in counts:  # the error that ends a sequence
        counts = counts.replace(", then one that does not decode", ", 1 error")
    for part in counts.replace("a sequence of ", "").split(", "):
        n, what = part.split(" ", 1)
        said[_COUNTED_AS[what.rstrip("s") if n != "1" else what]] = int(n)
    items: dict[str, int] = {}
    for line in as_json.stdout.decode().splitlines():
        item = json.loads(line)["item"]
        items[item] = items.get(item, 0) + 1
    assert set(said) == ({"protocol-header", "frame", "error"} if name == "frames"
                         else {"value", "error"})
    # every item --json gives is counted: a sequence of values says the error ending it
    assert said == items
    assert items["error"] == sum(ln.startswith("decode error at offset")
                                 for ln in text.stderr.decode().splitlines())
    assert lines[-1].endswith(f"; {len(data)} bytes from {form.split()[0]} input (stdin)")


@pytest.mark.parametrize("mode", ["--json", "--no-color", "--brief", "--color"])
@pytest.mark.parametrize("form", ["raw", "hex dump"])
def test_a_reader_going_away_mid_stream_is_a_quiet_end(mode: str, form: str,
                                                       tmp_path: Path) -> None:
    data = AMQP_HEADER + transfers(3 * _LOOKAHEAD // len(transfers(1)))
    source = tmp_path / "input"
    source.write_bytes(data if form == "raw" else xxd(data).encode())
    with source.open("rb") as stdin:  # read as it comes: stdin, not a file named
        proc = subprocess.Popen([*AMQP, "decode", mode, "-"], stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT)
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline()
        proc.stdout.close()  # like `| head -1`: megabytes of output are still to come
        err = proc.stderr.read()
        assert proc.wait() == 0, err
    proc.stderr.close()
    assert err == b""


# -- the same items, errors and windows as the whole input gives ---------------------------------

PASSWORD = b"s3cr3t"


def test_an_error_past_the_first_mib_shows_its_window_with_secrets_masked() -> None:
    sasl = bytearray(encode_frame(SaslInit(mechanism=Symbol("PLAIN"),
                                           initial_response=b"\x00alice\x00" + PASSWORD,
                                           hostname="localhost"), type=1))
    sasl[sasl.index(PASSWORD) + len(PASSWORD)] = 0xFF  # the hostname's code: damage
    data = AMQP_HEADER + transfers(_LOOKAHEAD // len(transfers(1)) + 10) + bytes(sasl)
    data += transfers(5)
    error = data.index(PASSWORD) + len(PASSWORD)
    window = hex_window(data, error, masked=secret_spans(data))  # as the whole input has it
    assert "** ** **[ff]" in "\n".join(window)
    for mode in ("--json", "--no-color", "--brief"):
        code, out, err = run("decode", mode, "--as", "frames", "-", stdin=data)
        assert code == 8
        assert err.splitlines()[1:-1] == ["  " + line for line in window]
        assert err.splitlines()[-1] == (f"amqp: error: decode error at offset {error}: "
                                        "expected a format code, found 0xff")
        assert PASSWORD.hex(" ") not in err and PASSWORD.decode() not in out
        if mode != "--json":
            assert out.splitlines()[0].startswith("a frame stream (as asked); raw input (stdin) "
                                                  "decoded as it is read")


def test_a_value_error_past_the_first_mib_has_the_offsets_of_the_input() -> None:
    # the offsets in an error's text are the input's, not those of the bytes held then
    data = binaries(5, 256 * 1024) + bytes.fromhex("c00402414141") + b"\x41" * 40
    code, out, err = run("decode", "--input", "raw", "--json", "-", stdin=data)
    at = len(binaries(5, 256 * 1024))
    assert code == 8
    assert json.loads(out.splitlines()[-1]) == {
        "item": "error", "offset": at + 5, "expected": f"list items ending at {at + 6}",
        "found": f"items ending at {at + 5}", "fatal": True}
    assert err.splitlines()[1:-1] == ["  " + ln for ln in hex_window(data, at + 5)]
    assert len(out.splitlines()) == 6
    code, text, text_err = run("decode", "--input", "raw", "--no-color", "-", stdin=data)
    assert code == 8 and text_err == err
    lines = text.splitlines()
    assert lines[0] == ("a sequence of AMQP values (detected); raw input (stdin) decoded as it "
                        "is read: its counts come at the end")
    assert lines[-1] == (f"a sequence of 5 AMQP values, then one that does not decode "
                         f"(detected); {len(data)} bytes from raw input (stdin)")


def test_a_long_input_cut_short_says_so_as_a_short_one_does() -> None:
    # the counts that close a long input's output are worded as those opening a short one
    cases = {
        "an AMQP value cut short": bytes.fromhex("b100200000") + b"x" * (_LOOKAHEAD + 5),
        "a sequence of 300000 AMQP values, then one cut short":
            bytes.fromhex("a1026869") * 300000 + bytes.fromhex("a1096865"),
        # detection reads on while the bytes may start a message: to the end, here
        "an encoded message, cut short":
            bytes.fromhex("005377b100200000") + b"x" * (_LOOKAHEAD + 5),
    }
    for said, data in cases.items():
        code, out, err = run("decode", "--no-color", "-", stdin=data)
        assert code == 8 and "found end of input at" in err
        lines = out.splitlines()
        streamed = "decoded as it is read" in lines[0]
        assert streamed == (not said.startswith("an encoded message"))
        assert lines[-1 if streamed else 0] == (
            f"{said} (detected); {len(data)} bytes from raw input (stdin)")


def test_a_long_input_that_breaks_its_form_later_is_a_usage_error_there() -> None:
    head = (AMQP_HEADER + transfers(3 * _LOOKAHEAD // len(transfers(1)))).hex().encode()
    code, out, err = run("decode", "--json", "-", stdin=head + b"00 zz 00")
    assert code == 2 and err == "amqp: error: stdin: not hex: unexpected character 'z'\n"
    assert json.loads(out.splitlines()[0])["item"] == "protocol-header"
    code, out, err = run("decode", "--json", "-", stdin=head + b"0")
    assert code == 2 and err == (
        f"amqp: error: stdin: odd number of hex digits ({len(head) + 1}): a digit missing? "
        "(--input raw decodes the characters themselves)\n")
    assert json.loads(out.splitlines()[-1])["item"] == "frame"


# -- readers of each form, piece by piece ---------------------------------------------------------

DATA = bytes(range(256)) * 3
TEXTS = {
    "plain": (DATA.hex(), PlainHexReader, parse_plain_hex),
    "spaced": (DATA.hex(" "), PlainHexReader, parse_plain_hex),
    "0x": (",".join(f"0x{b:02x}" for b in DATA), PlainHexReader, parse_plain_hex),
    "escapes": ("".join(f"\\x{b:02x}" for b in DATA), PlainHexReader, parse_plain_hex),
    "xxd": (xxd(DATA), HexDumpReader, parse_dump),
    "base64": (base64.b64encode(DATA).decode(), Base64Reader, parse_base64),
    "base64 lines": (base64.encodebytes(DATA).decode(), Base64Reader, parse_base64),
    "base64url": (base64.urlsafe_b64encode(DATA).decode().rstrip("="), Base64Reader,
                  parse_base64),
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_a_reader_reads_any_split_as_the_whole_input_reads(name: str) -> None:
    text, reader_type, parse = TEXTS[name]
    raw = text.encode()
    assert parse(text) == DATA
    for size in (1, 2, 3, 5, 7, 64, 1000):
        reader = reader_type()
        got = b"".join(reader.feed(raw[i:i + size]) for i in range(0, len(raw), size))
        assert got + reader.close() == DATA, size


def test_open_reader_reads_the_form_detect_format_says() -> None:
    for name, (text, _, _) in TEXTS.items():
        raw = text.encode()
        reader, form, first = open_reader(raw[:500])
        assert form == detect_format(raw), name
        assert first + reader.feed(raw[500:]) + reader.close() == DATA, name
    reader, form, first = open_reader(b"\x00\x53\x77" + bytes(600))
    assert (form, first) == ("raw", b"\x00\x53\x77" + bytes(600))


def test_detect_kind_prefix() -> None:
    assert detect_kind_prefix(b"\x41" * 4000) == "values"
    assert detect_kind_prefix(transfers(40)[:-7]) == "frames"
    assert detect_kind_prefix(MESSAGE * 40) == "values"  # messages one after the other
    body = Message([Data(b"y" * 100_000)]).encode()
    assert detect_kind_prefix(body[:4000]) is None  # a message, or not: its end tells
    assert detect_kind_prefix((b"\x00\x53\x75\xa0\x01z" * 1000)[:-3]) is None
    # a message's first four bytes are a frame size past 5 MB: read on to more than that,
    # its bytes chain as frames; the frame rule is for the first MiB alone
    big = Message([Data(b"y" * (9 * MiB))], header=Header(durable=True)).encode()
    assert detect_kind_prefix(big[:_LOOKAHEAD]) is None
    assert detect_kind_prefix(big[:8 * MiB]) == "frames"
    assert detect_kind_prefix(big[:8 * MiB], chain=False) is None
