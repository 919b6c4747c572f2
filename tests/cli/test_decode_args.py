"""`amqp decode ARG`: an argument that names a missing file is a usage error (not its
text decoded as bytes), every documented input form still decodes; --max-frame-size out of
range is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_decode import run
from tests.net.clirun import amqp

EXAMPLES = Path(__file__).resolve().parents[2] / "amqpcli" / "examples"


@pytest.mark.parametrize("arg", ["/tmp/amqp-no-such-dir/nonexist.bin", "nonexist.bin",
                                 "frames.amqp", "dump.hex", "x.pcap", "./frames",
                                 "some/where"])
def test_a_missing_file_is_a_usage_error(arg: str) -> None:
    code, out, err = run("decode", arg)
    assert (code, out) == (2, ""), err
    assert err == f"amqp: error: {arg}: no such file\n"


def test_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("decode", str(tmp_path))
    assert code == 2 and err.startswith(f"amqp: error: cannot read {tmp_path}:"), err


@pytest.mark.parametrize("args", [
    ("00", "53", "77", "a1", "02", "68", "69"),
    ("0x00,0x53,0x77,0xa1,0x02,0x68,0x69",),
    ("AFN3oQJoaQ==",),
    ("00:53:77:a1:02:68:69",),
    (str(EXAMPLES / "message.amqp"),),
])
def test_documented_forms_still_decode(args: tuple[str, ...]) -> None:
    code, out, err = run("decode", *args)
    assert code == 0, err
    assert out


@pytest.mark.parametrize("b64", ["AFN3oAH/", "AFN3oAL8/w==", "oAP///8="])
def test_base64_with_a_slash_still_decodes(b64: str) -> None:
    code, out, err = run("decode", b64)
    assert code == 0 and "base64 input" in out, err


@pytest.mark.parametrize("value", ["-1", "0", "7", "4294967296"])
def test_max_frame_size_out_of_range(value: str) -> None:
    code, out, err = run("decode", "--max-frame-size", value, "00")
    assert code == 2 and out == "", err
    assert err.startswith("amqp: error: --max-frame-size must be at least 8")


def test_max_frame_size_in_range() -> None:
    code, _, err = run("decode", "--max-frame-size", "8", "--example", "client-session")
    assert code == 8 and "amqp: error: decode error" in err



@pytest.mark.parametrize("args", [("--file", ""), ("-f", ""), ("-f", "", "00"),
                                  ("--file=",)])
def test_an_empty_file_name_is_a_usage_error_naming_the_option(args: tuple[str, ...]) -> None:
    # Typer read '' as the path '.': 'cannot read .: Is a directory'
    r = amqp("decode", *args)
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", "amqp: error: --file: the file name is empty\n")


def test_an_empty_argument_has_no_bytes_to_decode() -> None:
    # an argument is bytes or a file name: empty, it is no file name and no bytes
    for args in (("",), ("", "")):
        r = amqp("decode", *args)
        assert (r.returncode, r.stdout, r.stderr) == (
            2, "", "amqp: error: argument: no bytes to decode\n")
