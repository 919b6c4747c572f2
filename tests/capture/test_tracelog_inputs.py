"""Frame-trace logs as pcap-dump's inputs, and lines that do not parse: what is taken for
a log (NULs of a rotated log, a named pipe, logs beside captures, text that is neither),
and the warnings of lines that do not parse (no password quoted, no Python text, no
crash of a value nested deep)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from amqpcli.capture.tcp import Data
from amqpcli.capture.tracelog import (
    TraceReader,
    TraceSyntaxError,
    is_trace_log,
    parse_frame_line,
    parse_value,
)
from amqpcli.codec.decode import MAX_DEPTH
from amqpcli.codec.types import Symbol
from tests.capture.test_tracelog import ROUTER_LOG

CAPTURE = Path(__file__).parent.parent.parent / "amqpcli/examples/serve-session.pcapng"

PROTON_LOG = """\
[0x1]: SASL:FRAME:  -> SASL
[0x1]: SASL:FRAME:  <- SASL
[0x1]: AMQP:FRAME:0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00bob\\x00pw"]
[0x1]: AMQP:FRAME:0 <- @sasl-outcome(68) [code=0x0]
[0x1]: AMQP:FRAME:  -> AMQP
[0x1]: AMQP:FRAME:  <- AMQP
[0x1]: AMQP:FRAME:0 -> @open(16) [container-id="a", channel-max=0x7fff]
[0x1]: AMQP:FRAME:0 <- @open(16) [container-id="b", channel-max=0x7fff]
"""


def _pcap_dump(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", *args],
                          check=False, capture_output=True, text=True, timeout=120)


def _read(text: str, tmp_path: Path) -> tuple[int, list[str]]:
    """(bytes read, warnings) of a log."""
    log = tmp_path / "t.log"
    log.write_text(text)
    warnings: list[str] = []
    events = TraceReader([str(log)], warn=warnings.append).events()
    return sum(len(e.data) for e in events if isinstance(e, Data)), warnings


# --- warnings ---------------------------------------------------------------------------


@pytest.mark.parametrize("init", [
    '@sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00bob\\x00ab", hunter2"]',
    '@sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00bob\\x00ab"]hunter2"]',
    '@sasl-response(67) [response=b"ab"]hunter2"]',
    '@0x41 [:PLAIN, b"\\x00bob\\x00ab", hunter2"]'])
def test_a_sasl_line_that_does_not_parse_quotes_nothing_of_it(tmp_path: Path,
                                                               init: str) -> None:
    """An older proton left a quote in a password bare: the warning quoted the rest of
    the password. Of a SASL frame it says where only."""
    text = PROTON_LOG.replace(PROTON_LOG.splitlines()[2], f"[0x1]: AMQP:FRAME:0 -> {init}")
    _, warnings = _read(text, tmp_path)
    assert len(warnings) == 1 and ":3: a SASL frame line that does not parse at column" in (
        warnings[0]), warnings
    assert "hunter2" not in warnings[0] and "bob" not in warnings[0]
    # (another frame's problem is quoted, as it says what is wrong)
    _, warnings = _read(PROTON_LOG.replace('"b", channel', '"b", hunter2 channel'), tmp_path)
    assert "hunter2" in warnings[0]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 150, 400])
def test_a_value_nested_too_deep_is_a_warning(tmp_path: Path, depth: int) -> None:
    """Nested 400 deep was an internal error (RecursionError); 100 to 200 a frame the
    decoder refused. The codec's bound is the parser's: a warning, the line skipped."""
    deep = "[" * depth + "]" * depth
    for value in (deep, "{:a=" * depth + "1" + "}" * depth, "@0x1 " * depth + "1"):
        line = f"[0x1]: AMQP:FRAME:0 -> @open(16) [container-id=\"a\", properties={{:a={value}}}]"
        with pytest.raises(TraceSyntaxError, match=f"nested more than {MAX_DEPTH} deep"):
            parse_frame_line(line)
    text = (PROTON_LOG + "[0x1]: AMQP:FRAME:0 -> @open(16) [container-id=\"a\", "
            f"properties={{:a={deep}}}]\n")
    log = tmp_path / "deep.log"
    log.write_text(text)
    r = _pcap_dump(str(log), "--summary")
    assert r.returncode == 0, r.stderr
    assert (f"deep.log:9: a frame line that does not parse (a value nested more than "
            f"{MAX_DEPTH} deep at column") in r.stderr, r.stderr
    assert "could not be decoded" not in r.stdout + r.stderr


def test_the_deepest_value_the_codec_takes_reads() -> None:
    """As deep as the decoder decodes: the frame reads, and decodes."""
    from amqpcli.codec.frames import FrameReader

    for depth in range(MAX_DEPTH - 3, MAX_DEPTH + 2):
        value = "[" * depth + "]" * depth
        line = f"[0x1]: AMQP:FRAME:0 -> @open(16) [container-id=\"a\", properties={{:a={value}}}]"
        try:
            data = parse_frame_line(line).data
        except TraceSyntaxError:
            parsed = False
        else:
            parsed = True
            frames = list(FrameReader().feed(data))
            assert frames, depth
        assert parsed == (depth <= MAX_DEPTH - 2), depth


@pytest.mark.parametrize("number", ["9" * 5000, "-" + "9" * 30, "0x1" + "0" * 16,
                                    "1" + "0" * 20],
                         ids=["5000 digits", "30 digits", "65 bits", "21 digits"])
def test_a_number_too_long_is_said_in_our_words_at_its_column(number: str) -> None:
    """Python's text ('Exceeds the limit (4300 digits) ... sys.set_int_max_str_digits()')
    at column 1 was the warning."""
    body = f"@open(16) [container-id=\"a\", max-frame-size={number}]"
    with pytest.raises(TraceSyntaxError) as ei:
        parse_frame_line(f"[0x1]: AMQP:FRAME:0 -> {body}")
    assert str(ei.value) == (f"a number too long for any AMQP type at column "
                             f"{body.index(number) + 1}")
    with pytest.raises(TraceSyntaxError, match="a number too long for any AMQP type"):
        parse_value(f"[{number}]")


def test_digits_beyond_any_number_elsewhere_are_no_python_error() -> None:
    for line in ("[0x1]: AMQP:FRAME:" + "7" * 5000 + " -> @close(24) []",
                 "[0x1]: AMQP:FRAME:0 -> @transfer(20) [handle=0x0] (" + "9" * 5000 + ") ab",
                 "[0x1]: AMQP:FRAME:0 -> @open(" + "1" * 5000 + ") []"):
        with pytest.raises(TraceSyntaxError) as ei:
            parse_frame_line(line)
        assert "4300" not in str(ei.value) and "sys." not in str(ei.value)


def test_quoted_map_keys_stay_strings() -> None:
    """proton prints `info={"why"="test"}` for string keys, `:why` for symbol ones: the
    string keys were encoded as symbols (the field's keys are symbols when plain)."""
    from amqpcli.codec.frames import FrameReader

    line = ('[0x1]: AMQP:FRAME:0 -> @detach(22) [handle=0x1, closed=true, error=@error(29) '
            '[condition=:"amqp:internal-error", info={"why"="test", :how="sym"}]]')
    (frame,) = FrameReader().feed(parse_frame_line(line).data)
    info = frame.body.error.info  # type: ignore[union-attr]
    assert [(type(k), str(k)) for k in info] == [(str, "why"), (Symbol, "how")]
    assert len(parse_value('{"a"=1, :a=2}')) == 2  # (equal in Python, not in AMQP)


# --- inputs -----------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["leading", "inside", "junk"])
def test_nul_bytes_and_junk_do_not_hide_a_log(tmp_path: Path, damage: str) -> None:
    """A log rotated with copytruncate starts with NULs; one NUL in the first 4 KiB made
    the whole log 'not a capture file'."""
    data = ROUTER_LOG.encode()
    if damage == "leading":
        data = b"\x00" * 8192 + data
    elif damage == "inside":
        at = data.index(b"PROTOCOL", 500)
        data = data[:at] + b"\x00" * 3 + data[at:]
    else:
        lines = data.splitlines(True)
        data = b"".join(lines[:5]) + bytes(range(256)) * 4 + b"\n" + b"".join(lines[5:])
    log = tmp_path / "rotated.log"
    log.write_bytes(data)
    assert is_trace_log(str(log))
    got = _pcap_dump(str(log), "--deliveries")
    assert got.returncode == 0, got.stderr
    clean = tmp_path / "clean.log"
    clean.write_text(ROUTER_LOG)
    assert got.stdout == _pcap_dump(str(clean), "--deliveries").stdout


def test_a_capture_with_frame_text_is_no_log(tmp_path: Path) -> None:
    cap = tmp_path / "c.pcapng"
    cap.write_bytes(CAPTURE.read_bytes() + ROUTER_LOG.encode())
    assert not is_trace_log(str(cap))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", ["log", "capture"])
def test_a_named_pipe_is_peeked_at_once(tmp_path: Path, kind: str) -> None:
    """A named pipe (or `<(...)`) was read as a capture whatever it held: it can be opened
    once, so its first bytes are held for the reader it turns out to be for."""
    data = ROUTER_LOG.encode() if kind == "log" else CAPTURE.read_bytes()
    plain = tmp_path / "plain"
    plain.write_bytes(data)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def write() -> None:
        with open(pipe, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    r = _pcap_dump(str(pipe), "--summary")
    writer.join()
    assert r.returncode == 0, r.stderr
    assert r.stdout == _pcap_dump(str(plain), "--summary").stdout


@pytest.mark.parametrize("order", ["log first", "capture first"])
def test_a_log_beside_a_capture_is_the_same_usage_error_either_way(
        tmp_path: Path, order: str) -> None:
    """A capture then a log read the log as a damaged capture (exit 8)."""
    log = tmp_path / "r.log"
    log.write_text(ROUTER_LOG)
    files = [str(log), str(CAPTURE)] if order == "log first" else [str(CAPTURE), str(log)]
    r = _pcap_dump(*files, "--summary")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"amqp: error: {log} is a frame-trace log, {CAPTURE} is not: trace "
                        "logs and captures are read apart, not together\n")


@pytest.mark.parametrize(("content", "what"), [
    ("hello world\nsome other log text\n" * 150,
     "text with no frame line in its first 200 lines"),
    ("", "empty")], ids=["text", "empty"])
def test_text_that_is_no_log_is_said_to_be_neither(tmp_path: Path, content: str,
                                                   what: str) -> None:
    f = tmp_path / "notes.trace"
    f.write_text(content)
    r = _pcap_dump(str(f))
    assert r.returncode == 8
    assert r.stderr.startswith(f"amqp: error: {f}: not a capture file or frame-trace log: "
                               f"{what}") and r.stderr.count("\n") == 1, r.stderr
    assert "magic" not in r.stderr


def test_a_capture_still_reads() -> None:
    r = _pcap_dump(str(CAPTURE), "--json", "--summary")
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[-1]), r.stderr
