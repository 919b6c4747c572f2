"""`amqp send --lines`: a line that makes no message is an error naming it (`line 3 of
standard input: …`, of the file, of the BODY argument). What is there before the
connection is checked before it, and a mistake in it sends nothing: every line of a
regular file (named or on stdin) and of the BODY argument, with the values ({n}) of as
many messages; of a pipe only the first line, if it has come. A later line of a pipe that
fails stops the input there, and what was sent before it is sent, reported and on the
node.

Errors found before connecting are told apart from those after by a URL that nothing
listens on: the old code connected first and said `cannot connect` (exit 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


@pytest.fixture
def nowhere(free_port: int) -> str:
    """A URL nothing listens on: an error found there was found before connecting."""
    return f"amqp://127.0.0.1:{free_port}/q"


def _bodies(url: str) -> list[object]:
    r = amqp("recv", url, "-t", "1", "--json")
    assert r.returncode in (0, 5), r.stderr
    return [m["body"] for m in json_lines(r.stdout)]


def _send_reading(stdin: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`amqp send ARGS` with its standard input the file descriptor `stdin`."""
    return subprocess.run([sys.executable, "-m", "amqpcli", "send", *args], stdin=stdin,
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                          env=cli_env(), check=False)


def _filled_pipe(data: bytes) -> int:
    """The reading end of a pipe holding `data`, its writer gone (a here-string)."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


def test_a_bad_line_of_stdin_is_named_and_the_lines_before_it_sent(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-line"
    lines = b'{"int": 1}\n{"int": 2}\nnope\n{"int": 4}\n'
    r = amqp("send", url, "--lines", "--json-body", "--json", input=lines)
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["sent"], summary["accepted"]) == (2, 2)
    said = "line 3 of standard input: body is not lossless JSON: Expecting value at column 1"
    assert summary["error"] == said
    assert r.stderr.strip() == f"amqp: error: {said}"
    assert _bodies(url) == [{"value": {"int": 1}}, {"value": {"int": 2}}]
    # the summary in text too
    r = amqp("send", url, "--lines", "--json-body", input=lines)
    assert r.returncode == 2 and r.stdout.startswith("sent 2, accepted 2"), r.stdout
    assert r.stderr.strip() == f"amqp: error: {said}"


@pytest.mark.parametrize(("args", "content", "said"), [
    (["-b", "value"], b"a\nb\n\xff\n", "line 3 of {file}: the body is not UTF-8 text"),
    (["-b", "value"], b"int:1\nint:99999999999\n",
     ("line 2 of {file}: body: bad int value '99999999999': out of range for int "
      "(-2147483648 to 2147483647)")),
    (["-b", "sequence"], b"[1]\n[2]\n3\n",
     "line 3 of {file}: --body-type sequence needs a JSON array body"),
    (["-b", "value"], b"float:1\r\n\r\nfloat:1e39\r\n",
     "line 3 of {file}: body: 1e+39 is out of range for float"),
    (["-b", "value"], b"int:x\nint:1\n", "line 1 of {file}: body: bad int value 'x'"),
    (["--json-body"], b"", "{file} has no lines: nothing to send"),
])
def test_every_line_of_a_file_is_checked_before_connecting(
        nowhere: str, tmp_path: Path, args: list[str], content: bytes, said: str) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(content)
    # (--reconnect: a run that connected first would wait here, then fail to connect)
    r = amqp("send", nowhere, "--lines", "--file", str(f), "--json", "--reconnect", "3", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("amqp: error: " + said.format(file=repr(str(f)))), r.stderr


def test_a_bad_line_of_a_file_sends_nothing(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/bad-line-file"
    f = tmp_path / "in.txt"
    f.write_bytes(b"int:1\nint:2\nint:x\nint:4\n")
    r = amqp("send", url, "--lines", "--file", str(f), "-b", "value", "--json")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"amqp: error: line 3 of {str(f)!r}: body: bad int value 'x'")
    assert _bodies(url) == []
    # the lines past --count are not read
    r = amqp("send", url, "--lines", "--file", str(f), "-b", "value", "-c", "2")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": {"int": 1}}, {"value": {"int": 2}}]


def test_stdin_from_a_regular_file_is_checked_then_sent_from_where_it_stood(
        serve: ServePeers, nowhere: str, tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"int:0\nint:1\nint:x\n")
    with open(f, "rb") as stdin:
        r = _send_reading(stdin.fileno(), nowhere, "--lines", "-b", "value")
    assert r.returncode == 2 and r.stderr.startswith(
        "amqp: error: line 3 of standard input: body: bad int value 'x'"), r.stderr
    # read twice (checked, then sent): the second time from where the input stood
    url = serve("-q") + "/stdin-file"
    f.write_bytes(b"int:0\nint:1\nint:2\nint:3\n")
    with open(f, "rb") as stdin:
        stdin.seek(len(b"int:0\n"))
        r = _send_reading(stdin.fileno(), url, "--lines", "-b", "value")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": {"int": n}} for n in (1, 2, 3)]


def test_the_first_line_of_a_pipe_is_checked_before_connecting_when_it_has_come(
        nowhere: str) -> None:
    r = _send_reading(_filled_pipe(b"int:x\nint:1\n"), nowhere, "--lines", "-b", "value",
                      "--reconnect", "3")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.strip() == ("amqp: error: line 1 of standard input: body: bad int value "
                                "'x': not an integer (decimal, or 0x hex, 0o octal, 0b binary; "
                                "no _ separators)")
    r = _send_reading(_filled_pipe(b""), nowhere, "--lines")
    assert r.returncode == 2 and r.stderr.strip() == (
        "amqp: error: standard input has no lines: nothing to send"), r.stderr
    # past the first line a pipe is read as it is sent, not before connecting
    r = _send_reading(_filled_pipe(b"int:1\nint:x\n"), nowhere, "--lines", "-b", "value")
    assert r.returncode == 3 and "cannot connect" in r.stderr, r.stderr


def test_a_pipe_with_nothing_in_it_yet_is_not_waited_for(nowhere: str) -> None:
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "send", nowhere, "--lines"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=REPO_ROOT, env=cli_env())
    assert p.stdin is not None and p.stderr is not None
    try:
        # the producer has written nothing and keeps its end open: the run connects
        # (and fails to) without waiting for a line
        assert p.wait(60) == 3
        assert "cannot connect" in p.stderr.read()
    finally:
        p.stdin.close()
        p.kill()
        p.wait()


def test_a_bad_first_line_sends_nothing(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-first"
    r = amqp("send", url, "--lines", "-b", "value", input=b"int:x\nint:1\n")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("amqp: error: line 1 of standard input: body: bad int value "
                                "'x': not an integer (decimal, or 0x hex, 0o octal, 0b binary; "
                                "no _ separators)")
    assert _bodies(url) == []


@pytest.mark.parametrize(("lines", "said"), [
    # the values of as many messages as the file has lines, before connecting (with
    # --count alone it is the most the lines may make)
    ([f"{n}" for n in range(200)], "message 128: --property 'k': bad byte value '128'"),
    # whichever of a line and a value fails first
    ([f"int:{n}" for n in range(149)] + ["int:x"] + ["int:1"] * 9,
     "message 128: --property 'k': bad byte value '128'"),
    ([f"int:{n}" for n in range(99)] + ["int:x"] + ["int:1"] * 100,
     "line 100 of {file}: body: bad int value 'x'"),
])
def test_the_values_of_every_line_of_a_file_are_checked(nowhere: str, tmp_path: Path,
                                                       lines: list[str], said: str) -> None:
    f = tmp_path / "in.txt"
    f.write_text("".join(f"{line}\n" for line in lines))
    r = amqp("send", nowhere, "--lines", "--file", str(f), "-b", "value", "-P", "k:byte={n}")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("amqp: error: " + said.format(file=repr(str(f)))), r.stderr


def test_the_values_are_checked_for_the_lines_there_are(nowhere: str, tmp_path: Path) -> None:
    # 100 lines: --count 300 is not reached, and message 128's value is never made
    f = tmp_path / "in.txt"
    f.write_text("x\n" * 100)
    r = amqp("send", nowhere, "--lines", "--file", str(f), "-c", "300", "-P", "k:byte={n}")
    assert r.returncode == 3 and "cannot connect" in r.stderr, r.stderr


def test_a_missing_file_is_an_error_before_connecting(nowhere: str, tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    r = amqp("send", nowhere, "--lines", "--file", str(missing))
    assert r.returncode == 2 and r.stderr.strip() == (
        f"amqp: error: cannot read {str(missing)!r}: No such file or directory"), r.stderr


def test_a_bad_line_of_the_body_argument_sends_nothing(nowhere: str) -> None:
    r = amqp("send", nowhere, "int:{n}\nint:x{n}", "--lines", "-b", "value", "--expand")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.startswith(
        "amqp: error: line 2 of the BODY argument: body: bad int value 'x2'"), r.stderr


def test_request_checks_a_file_before_connecting(nowhere: str, tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(b"int:1\nint:x\n")
    r = amqp("request", nowhere, "--lines", "--file", str(f), "-b", "value")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"amqp: error: line 2 of {str(f)!r}: body: bad int value 'x'")


def test_lines_past_the_count_are_not_read(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-after"
    r = amqp("send", url, "--lines", "--json-body", "-c", "2", input=b"1\n2\nnope\n")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": 1}, {"value": 2}]
