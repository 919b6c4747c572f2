"""`amqp decode` on hex dumps: each tool's lines read by their layout, whatever their text
column holds; `*` lines (repeated lines left out) spelled out; dumps in little-endian groups
refused with a clear error. The dumps below are the tools' own output (xxd 2022-01-14,
hexdump of util-linux, od of coreutils) for the bytes they name; Wireshark's is built in
the layout of its "Copy as Hex Dump"."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest

from amqpcli.cli.decode_input import (
    DumpError,
    HexDumpReader,
    InputError,
    open_reader,
    parse_dump,
    parse_input,
)
from amqpcli.codec.composites import Open
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.render.items import item_bytes_from_json
from tests.net.clirun import amqp, json_lines

# An open frame whose container-id puts '|' in every text column
BARS = AMQP_HEADER + encode_frame(Open(container_id="c|" * 35))

XXD_BARS = """\
00000000: 414d 5150 0001 0000 0000 0056 0200 0000  AMQP.......V....
00000010: 0053 10c0 4901 a146 637c 637c 637c 637c  .S..I..Fc|c|c|c|
00000020: 637c 637c 637c 637c 637c 637c 637c 637c  c|c|c|c|c|c|c|c|
00000030: 637c 637c 637c 637c 637c 637c 637c 637c  c|c|c|c|c|c|c|c|
00000040: 637c 637c 637c 637c 637c 637c 637c 637c  c|c|c|c|c|c|c|c|
00000050: 637c 637c 637c 637c 637c 637c 637c       c|c|c|c|c|c|c|
"""

XXD_G1_C32_BARS = """\
00000000: 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00 00 53 10 c0 49 01 a1 46 63 7c 63 7c 63 7c 63 7c  AMQP.......V.....S..I..Fc|c|c|c|
00000020: 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c  c|c|c|c|c|c|c|c|c|c|c|c|c|c|c|c|
00000040: 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c        c|c|c|c|c|c|c|c|c|c|c|c|c|c|c|
"""

XXD_G4_BARS = """\
00000000: 414d5150 00010000 00000056 02000000  AMQP.......V....
00000010: 005310c0 4901a146 637c637c 637c637c  .S..I..Fc|c|c|c|
00000020: 637c637c 637c637c 637c637c 637c637c  c|c|c|c|c|c|c|c|
00000030: 637c637c 637c637c 637c637c 637c637c  c|c|c|c|c|c|c|c|
00000040: 637c637c 637c637c 637c637c 637c637c  c|c|c|c|c|c|c|c|
00000050: 637c637c 637c637c 637c637c 637c      c|c|c|c|c|c|c|
"""

OD_BARS = """\
000000 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00  >AMQP.......V....<
000010 00 53 10 c0 49 01 a1 46 63 7c 63 7c 63 7c 63 7c  >.S..I..Fc|c|c|c|<
000020 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c  >c|c|c|c|c|c|c|c|<
000030 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c  >c|c|c|c|c|c|c|c|<
000040 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c  >c|c|c|c|c|c|c|c|<
000050 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c 63 7c        >c|c|c|c|c|c|c|<
00005e
"""

WIRESHARK_BARS = "".join(
    f"{r:04x}   {BARS[r:r + 16].hex(' '):<47}   "
    + "".join(chr(b) if 32 <= b < 127 else "." for b in BARS[r:r + 16]) + "\n"
    for r in range(0, len(BARS), 16))

BAR_DUMPS = {
    "xxd": XXD_BARS,
    "xxd -g1 -c 32": XXD_G1_C32_BARS,
    "xxd -g4": XXD_G4_BARS,
    "od -A x -t x1z -v": OD_BARS,
    "wireshark": WIRESHARK_BARS,
}


@pytest.mark.parametrize("name", list(BAR_DUMPS))
def test_a_text_column_holding_bars_is_no_matter(name: str) -> None:
    text = BAR_DUMPS[name]
    assert parse_dump(text) == BARS
    assert parse_input(text.encode()) == (BARS, "hex")
    for size in (1, 7, 100):
        reader = HexDumpReader()
        raw = text.encode()
        got = b"".join(reader.feed(raw[i:i + size]) for i in range(0, len(raw), size))
        assert got + reader.close() == BARS, size


def test_a_text_column_that_is_not_of_the_bytes_is_no_xxd_line() -> None:
    # xxd -b writes bits, which are hex digits too: its text column says they are not bytes
    assert parse_dump("00000000: 4142 4344  ABCD\n00000004: 45  E\n") == b"ABCDE"
    assert parse_dump("00000000: 4142 4344  ABC\n00000004: 45  E\n") is None
    # the text column's own spaces (a byte 0x20 at either end) are no matter
    assert parse_dump("00000000: 2041 4220   AB \n00000004: 45  E\n") == b" AB E"


LITTLE_ENDIAN = {
    "xxd -e": """\
00000000: 50514d41 00000100 56000000 00000002  AMQP.......V....
00000010: c0105300 46a10149 63636363 63636363  .S..I..Fcccccccc
""",
    # the last line of xxd -e sets a short group apart: the text tells
    "xxd -e, last line": """\
00000050: 63636363 63636363 63636363     6363  cccccccccccccc
""",
    "hexdump": """\
0000000 4d41 5051 0100 0000 0000 5600 0002 0000
0000010 5300 c010 0149 46a1 6363 6363 6363 6363
""",
    "xxd -b": """\
00000000: 01000001 01001101 01010001 01010000 00000000 00000001  AMQP..
00000006: 00000000 00000000 00000000 00000000 00000000 01010110  .....V
""",
}


@pytest.mark.parametrize("name", list(LITTLE_ENDIAN))
def test_dumps_whose_bytes_would_come_out_swapped_are_refused(name: str) -> None:
    text = LITTLE_ENDIAN[name]
    with pytest.raises(DumpError, match="is not read"):
        parse_input(text.encode())
    with pytest.raises(DumpError, match="is not read"):
        open_reader(text.encode())
    done = amqp("decode", "-", input=text.encode())
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("amqp: error: stdin: a") and "is not read" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_an_xxd_dump_with_bars_decodes_on_stdin() -> None:
    done = amqp("decode", "--brief", "-", input=XXD_BARS.encode())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"a frame stream: 1 protocol header, 1 frame (detected); {len(BARS)} bytes from hex "
        "input (stdin)")
    assert 'container-id="' + "c|" * 35 + '"' in done.stdout
    done = amqp("decode", "--json", "-", input=XXD_BARS.encode())
    assert b"".join(item_bytes_from_json(i) for i in json_lines(done.stdout)) == BARS
    assert json.loads(done.stdout.splitlines()[1])["performative"]["open"][
        "container-id"] == "c|" * 35


# -- '*' lines -------------------------------------------------------------------------------

# An open frame whose container-id repeats one 16-byte line
CS = AMQP_HEADER + encode_frame(Open(container_id="c" * 70))
# Ends in lines of zeros: hexdump's '*' is then followed by its end offset alone
ZEROS = b"AB" + bytes(94)

STARRED = {
    "hexdump -C": ("""\
00000000  41 4d 51 50 00 01 00 00  00 00 00 56 02 00 00 00  |AMQP.......V....|
00000010  00 53 10 c0 49 01 a1 46  63 63 63 63 63 63 63 63  |.S..I..Fcccccccc|
00000020  63 63 63 63 63 63 63 63  63 63 63 63 63 63 63 63  |cccccccccccccccc|
*
00000050  63 63 63 63 63 63 63 63  63 63 63 63 63 63        |cccccccccccccc|
0000005e
""", CS),
    "hexdump -C, ending in copies": ("""\
00000000  41 42 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |AB..............|
00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000060
""", ZEROS),
    "od -A x -t x1z": ("""\
000000 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00  >AMQP.......V....<
000010 00 53 10 c0 49 01 a1 46 63 63 63 63 63 63 63 63  >.S..I..Fcccccccc<
000020 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63  >cccccccccccccccc<
*
000050 63 63 63 63 63 63 63 63 63 63 63 63 63 63        >cccccccccccccc<
00005e
""", CS),
    "od -A x -t x1": ("""\
000000 41 42 00 00 00 00 00 00 00 00 00 00 00 00 00 00
000010 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
*
000060
""", ZEROS),
    # od's default offsets are octal
    "od -t x1": ("""\
0000000 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00
0000020 00 53 10 c0 49 01 a1 46 63 63 63 63 63 63 63 63
0000040 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63
*
0000120 63 63 63 63 63 63 63 63 63 63 63 63 63 63
0000136
""", CS),
    "od -t x1z": ("""\
0000000 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00  >AMQP.......V....<
0000020 00 53 10 c0 49 01 a1 46 63 63 63 63 63 63 63 63  >.S..I..Fcccccccc<
0000040 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63  >cccccccccccccccc<
*
0000120 63 63 63 63 63 63 63 63 63 63 63 63 63 63        >cccccccccccccc<
0000136
""", CS),
    "xxd -a": ("""\
00000000: 4142 0000 0000 0000 0000 0000 0000 0000  AB..............
00000010: 0000 0000 0000 0000 0000 0000 0000 0000  ................
*
00000050: 0000 0000 0000 0000 0000 0000 0000 0000  ................
""", ZEROS),
}


@pytest.mark.parametrize("name", list(STARRED))
def test_a_star_line_stands_for_copies_of_the_line_before_it(name: str) -> None:
    text, data = STARRED[name]
    assert parse_dump(text) == data
    assert parse_input(text.encode()) == (data, "hex")
    raw = text.encode()
    for size in (1, 5, 64, 1000):
        reader = HexDumpReader()
        got = b"".join(reader.feed(raw[i:i + size]) for i in range(0, len(raw), size))
        assert got + reader.close() == data, size


LINE = "00000000  41 42 43 44 45 46 47 48  49 4a 4b 4c 4d 4e 4f 50  |ABCDEFGHIJKLMNOP|\n"


@pytest.mark.parametrize(("text", "error"), [
    (LINE + "*\n", "line 2: a '*' line ends the dump: no offset after it says how far"),
    (LINE + "*\n00000038\n", ("line 3: offset 0x38 after the '*' line 2 is no whole number "
                              "of copies of the 16-byte line before it (from 0x10)")),
    (LINE + "*\n00000010\n", "line 3: offset 0x10 after the '*' line 2"),
    (LINE + "*\n*\n00000030\n", "line 3: a '*' line with no line of bytes before it"),
    (LINE + "*\n10000000000\n", "line 2: a '*' line standing for more than 4 GiB"),
], ids=["last", "no whole number", "no copies", "two", "more than 4 GiB"])
def test_a_star_line_that_says_no_count_is_an_error(text: str, error: str) -> None:
    with pytest.raises(DumpError, match=re.escape(error)):
        parse_input(text.encode())
    reader = HexDumpReader()
    with pytest.raises(DumpError, match=re.escape(error)):
        reader.feed(text.encode())
        reader.close()
    done = amqp("decode", "-", input=text.encode())
    assert done.returncode == 2 and done.stderr.startswith(f"amqp: error: stdin: {error}")
    assert len(done.stderr.splitlines()) == 1


# od's layouts other than one hex byte a column, and od -A d's decimal offsets: read as
# plain hex they gave garbage (the offsets taken for bytes), and exit 8
OD_NOT_READ = {
    "od": """\
0000000 046501 050121 000400 000000 000000 053000 000002 000000
0000020 051400 140020 000511 043241 061543 061543 061543 061543
0000040 061543 061543 061543 061543 061543 061543 061543 061543
*
0000120 061543 061543 061543 061543 061543 061543 061543
0000136
""",
    "od, one line": "0000000 051400 120567 064002 000151\n0000007\n",
    "od -x": """\
0000000 4d41 5051 0100 0000 0000 5600 0002 0000
0000020 5300 c010 0149 46a1 6363 6363 6363 6363
0000040 6363 6363 6363 6363 6363 6363 6363 6363
*
0000120 6363 6363 6363 6363 6363 6363 6363
0000136
""",
    "od -x, one line": "0000000 5300 a177 6802 0069\n0000007\n",
    "od -c": """\
0000000   A   M   Q   P  \\0 001  \\0  \\0  \\0  \\0  \\0   V 002  \\0  \\0  \\0
0000020  \\0   S 020 300   I 001 241   F   c   c   c   c   c   c   c   c
0000040   c   c   c   c   c   c   c   c   c   c   c   c   c   c   c   c
*
0000120   c   c   c   c   c   c   c   c   c   c   c   c   c   c
0000136
""",
    "od -A d -t x1": """\
0000000 41 4d 51 50 00 01 00 00 00 00 00 56 02 00 00 00
0000016 00 53 10 c0 49 01 a1 46 63 63 63 63 63 63 63 63
0000032 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63 63
*
0000080 63 63 63 63 63 63 63 63 63 63 63 63 63 63
0000094
""",
}


@pytest.mark.parametrize("name", list(OD_NOT_READ))
def test_od_dumps_not_in_hex_bytes_are_refused(name: str) -> None:
    text = OD_NOT_READ[name]
    with pytest.raises(DumpError, match="od -t x1"):
        parse_input(text.encode())
    with pytest.raises(DumpError, match="od -t x1"):
        parse_input(text.encode(), "hex")
    with pytest.raises(DumpError, match="od -t x1"):  # the first lines of a longer input
        open_reader(text.encode())
    done = amqp("decode", "-", input=text.encode())
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("amqp: error: stdin: a dump in words or characters, or with "
                           "decimal offsets, is not read (od without -t x1, od -A d, hexdump "
                           "without -C): dump with od -t x1, od -A x -t x1z, hexdump -C or "
                           "xxd\n")


def test_the_od_dumps_above_are_od(tmp_path: Path) -> None:
    (tmp_path / "cs.bin").write_bytes(CS)
    for name, text in [*((n, STARRED[n][0]) for n in ("od -t x1", "od -t x1z")),
                       *((n, OD_NOT_READ[n]) for n in OD_NOT_READ if "one line" not in n)]:
        done = subprocess.run([*name.split(), "cs.bin"], cwd=tmp_path, capture_output=True,
                              text=True, check=True)
        assert done.stdout == text, name


def test_a_star_line_of_od_says_its_offsets_in_octal() -> None:
    text = STARRED["od -t x1"][0].replace("0000120", "0000130", 1)
    with pytest.raises(DumpError, match=re.escape(
            "line 5: offset 0000130 (octal) after the '*' line 4 is no whole number of "
            "copies of the 16-byte line before it (from 0000060 (octal))")):
        parse_input(text.encode())


def test_a_star_line_first_is_no_dump() -> None:
    with pytest.raises(InputError, match="not hex"):
        parse_input(b"*\n" + LINE.encode(), "hex")


def test_the_copies_of_a_star_line_come_in_parts() -> None:
    # a GiB of copies from three lines: given as they are read, 64 KiB (and a line) at a time
    text = (LINE + "*\n40000000\n").encode()
    parts = HexDumpReader().pieces(text)
    for part in itertools.islice(parts, 5):
        assert 0 < len(part) <= (1 << 16) + 16 and part == b"ABCDEFGHIJKLMNOP" * (len(part) // 16)


def hexdump_c(data: bytes) -> str:
    """`hexdump -C`'s output, repeated lines left out."""
    rows = []
    before = None
    for r in range(0, len(data), 16):
        c = data[r : r + 16]
        if c == before and len(c) == 16:
            if rows[-1] != "*":
                rows.append("*")
            continue
        before = c
        left = " ".join(f"{b:02x}" for b in c[:8])
        right = " ".join(f"{b:02x}" for b in c[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in c)
        rows.append(f"{r:08x}  {left:<23}  {right:<23}  |{text}|")
    return "\n".join([*rows, f"{len(data):08x}"]) + "\n"


def test_the_hexdump_c_above_is_hexdump_c() -> None:
    assert hexdump_c(CS) == STARRED["hexdump -C"][0]
    assert hexdump_c(ZEROS) == STARRED["hexdump -C, ending in copies"][0]


def test_a_short_dump_that_stands_for_more_than_a_mib_is_decoded_as_it_is_read() -> None:
    from amqpcli.codec.composites import Transfer
    from amqpcli.codec.message import Message
    from amqpcli.codec.types import UInt

    data = AMQP_HEADER + b"".join(
        encode_frame(Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=bytes([i])),
                     payload=Message(bytes([0x61 + i]) * (3 << 19)).encode())
        for i in range(2))
    text = hexdump_c(data)
    assert len(text) < 2000
    done = amqp("decode", "--brief", "-", input=text.encode())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("a frame stream (detected); hex input (stdin) decoded as it is read: "
                        "its counts come at the end")
    assert lines[-1] == (f"a frame stream: 1 protocol header, 2 frames (detected); {len(data)} "
                         "bytes from hex input (stdin)")
    done = amqp("decode", "--json", "-", input=text.encode())
    assert done.returncode == 0, done.stderr
    assert b"".join(item_bytes_from_json(i) for i in json_lines(done.stdout)) == data


@pytest.mark.parametrize(("edit", "says"), [
    (lambda ls: ls[:4] + ls[5:],  # a line left out
     ("line 5: offset 0x50 where the line before ended at 0x40: a line missing or out of "
     "order, or a second dump")),
    (lambda ls: ls[:3] + [ls[4], ls[3]] + ls[5:],  # two lines swapped
     ("line 4: offset 0x40 where the line before ended at 0x30: a line missing or out of "
     "order, or a second dump")),
    (lambda ls: [*ls, "user@host:~$ "],  # a prompt pasted after it
     "line 7: not a line of the hex dump (an offset where the line before ended, then hex)"),
])
def test_a_dump_with_a_line_out_of_place_is_refused_by_that_line(edit: object,
                                                                   says: str) -> None:
    """Not read as the bytes of its text (`found 0x30` at offset 0)."""
    text = "\n".join(edit(XXD_BARS.splitlines())) + "\n"  # type: ignore[operator]
    with pytest.raises(DumpError, match=re.escape(says)):
        parse_input(text.encode())
    done = amqp("decode", "-", input=text.encode())
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"amqp: error: stdin: {says}\n"


def test_a_dump_that_does_not_follow_on_after_its_first_mib_is_refused_there() -> None:
    # 2 MiB of binary values, 16 bytes each, none the same
    text = hexdump_c(b"".join(b"\xa0\x0e" + i.to_bytes(14, "big") for i in range(1 << 17)))
    lines = text.splitlines()
    cut = "\n".join(lines[:100_000] + lines[100_001:]) + "\n"
    done = amqp("decode", "--brief", "-", input=cut.encode())
    assert done.returncode == 2
    assert done.stderr == ("amqp: error: stdin: line 100001: offset 0x186a10 where the line "
                           "before ended at 0x186a00: a line missing or out of order, or a "
                           "second dump\n")
