"""`amqp send --lines`: a line that makes no message is an error naming it (`line 3 of
standard input: …`, of the file, of the BODY argument); the input stops there, and what
was sent before it is sent, reported and on the node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def _bodies(url: str) -> list[object]:
    r = amqp("recv", url, "-t", "1", "--json")
    assert r.returncode in (0, 5), r.stderr
    return [m["body"] for m in json_lines(r.stdout)]


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
     "line 2 of {file}: body: bad int value '99999999999': 99999999999 out of range for int"),
    (["-b", "sequence"], b"[1]\n[2]\n3\n",
     "line 3 of {file}: --body-type sequence needs a JSON array body"),
    (["-b", "value"], b"float:1\r\n\r\nfloat:1e39\r\n",
     "line 3 of {file}: body: 1e+39 is out of range for float"),
])
def test_a_bad_line_of_a_file_is_named(serve: ServePeers, tmp_path: Path, args: list[str],
                                       content: bytes, said: str) -> None:
    url = serve("-q") + "/bad-line-file"
    f = tmp_path / "in.txt"
    f.write_bytes(content)
    r = amqp("send", url, "--lines", "--file", str(f), "--json", *args)
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert summary["sent"] == summary["accepted"] == content.count(b"\n") - 1
    assert summary["error"].startswith(said.format(file=repr(str(f)))), summary["error"]
    assert len(_bodies(url)) == summary["sent"]


def test_a_bad_first_line_sends_nothing(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-first"
    r = amqp("send", url, "--lines", "-b", "value", input=b"int:x\nint:1\n")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("amqp: error: line 1 of standard input: body: bad int value "
                                "'x': invalid literal for int() with base 10: 'x'")
    assert _bodies(url) == []


def test_a_bad_line_of_the_body_argument_is_named(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-arg"
    r = amqp("send", url, "int:{n}\nint:x{n}", "--lines", "-b", "value", "--expand",
             "--json")
    assert r.returncode == 2, r.stderr
    summary = json.loads(r.stdout)
    assert summary["sent"] == 1
    assert summary["error"].startswith("line 2 of the BODY argument: body: bad int value 'x2'")


def test_lines_past_the_count_are_not_read(serve: ServePeers) -> None:
    url = serve("-q") + "/bad-after"
    r = amqp("send", url, "--lines", "--json-body", "-c", "2", input=b"1\n2\nnope\n")
    assert r.returncode == 0, r.stderr
    assert _bodies(url) == [{"value": 1}, {"value": 2}]
