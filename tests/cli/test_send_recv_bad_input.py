"""Bad option values and a closed stdout: one-line usage errors (exit 2), nothing sent or
consumed. Every duration is a finite number of seconds above 0; `--count` is at least 1
for send as for recv; `recv --copy` takes no `--outcome`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _one_line_error(r: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["send", "x", "--timeout", "-1"], "--timeout must be"),
        (["send", "x", "--timeout", "0"], "--timeout must be"),
        (["send", "x", "--timeout", "nan"], "--timeout must be"),
        (["send", "x", "--timeout", "inf"], "--timeout must be"),
        (["send", "x", "--duration", "-1"], "--duration must be"),
        (["send", "x", "--duration", "nan"], "--duration must be"),
        (["send", "x", "--rate", "nan"], "--rate must be"),
        (["send", "x", "--rate", "inf"], "--rate must be"),
        (["send", "x", "--count", "0"], "--count must be at least 1"),
        (["send", "x", "--connect-timeout", "nan"], "--connect-timeout must be"),
        (["send", "x", "--idle-timeout", "-3"], "--idle-timeout must be"),
        (["recv", "--timeout", "nan"], "--timeout must be"),
        (["recv", "--timeout", "-1"], "--timeout must be"),
        (["recv", "--connect-timeout", "inf"], "--connect-timeout must be"),
        (["recv", "--copy", "--outcome", "reject"], "--copy holds and releases"),
        (["recv", "--copy", "--outcome", "release"], "--copy holds and releases"),
        (["browse", "--timeout", "nan"], "--timeout must be"),
        (["browse", "--timeout", "0"], "--timeout must be"),
    ],
)
def test_bad_values_are_usage_errors(args: list[str], text: str) -> None:
    cmd, *rest = args
    r = amqp(cmd, "amqp://127.0.0.1:1/q", *rest)
    _one_line_error(r, 2, text)


def test_recv_with_stdout_closed_consumes_nothing(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/cl", "x").returncode == 0
    p = subprocess.run(
        [sys.executable, "-m", "amqpcli", "recv", f"{url}/cl", "-t", "1"],
        stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(), timeout=60,
        preexec_fn=lambda: os.close(1), check=False,
    )
    _one_line_error(p, 2, "standard output")
    assert "closed" in p.stderr
    r = amqp("recv", f"{url}/cl", "-t", "2", "-c", "1", "--json", "-q")
    assert r.returncode == 0 and len(json_lines(r.stdout)) == 1, r.stderr


@pytest.mark.parametrize("how", [["-f"], ["--lines", "-f"], ["--from"]])
def test_send_input_that_fails_to_read_is_one_line_and_sends_nothing(
        serve: ServePeers, how: list[str]) -> None:
    # /proc/self/mem opens but every read of it fails (EIO): a read error, not an open error
    url = serve()
    r = amqp("send", f"{url}/rd", *how, "/proc/self/mem")
    _one_line_error(r, 2, "cannot read '/proc/self/mem': Input/output error")
    r = amqp("recv", f"{url}/rd", "--drain", "-t", "2", "--json", "-q")
    assert r.returncode == 0 and r.stdout == "", r.stderr


BAD = "a\udcffb"  # the argument bytes 61 ff 62: not UTF-8


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["send", "amqp://127.0.0.1:1/q", "x", "--message-id", BAD], "--message-id is not UTF-8 text (byte 0xff at offset 1)"),
        (["send", "amqp://127.0.0.1:1/q", "x", "-P", f"k={BAD}"], "--property is not UTF-8 text"),
        (["send", "amqp://127.0.0.1:1/q", "x", "--subject", BAD], "--subject is not UTF-8 text"),
        (["send", f"amqp://127.0.0.1:1/{BAD}", "x"], "the URL is not UTF-8 text"),
        (["send", "amqp://127.0.0.1:1/q", BAD, "--body-type", "value"], "the body is not UTF-8 text (byte 0xff at offset 1)"),
        (["recv", "amqp://127.0.0.1:1/q", "--selector", BAD], "--selector is not UTF-8 text"),
        (["browse", "amqp://127.0.0.1:1/q", "--address", BAD], "--address is not UTF-8 text"),
    ],
)
def test_text_that_is_not_utf8_is_a_usage_error(args: list[str], text: str) -> None:
    _one_line_error(amqp(*args), 2, text)


def test_stdin_that_is_not_utf8_text_is_a_usage_error_unless_data() -> None:
    for extra in (["--body-type", "value"], ["--json-body"], ["--body-type", "sequence"]):
        r = amqp("send", "amqp://127.0.0.1:1/q", "-f", "-", *extra, input=b"a\xffb")
        _one_line_error(r, 2, "the body is not UTF-8 text (byte 0xff at offset 1)")


def test_a_data_body_argument_goes_as_the_bytes_given(serve: ServePeers) -> None:
    url = serve("-q") + "/nb"
    r = amqp("send", url, BAD)
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "--json")
    assert json_lines(r.stdout)[0]["body"] == {"data": [{"binary": "Yf9i"}]}  # 61 ff 62


def test_a_bad_line_deep_in_from_stops_the_input_after_what_was_sent_is_confirmed(
        serve: ServePeers) -> None:
    # Before: the run stopped at once, reporting the messages in flight as in doubt
    # (exit 7) though the peer had them all. (From a pipe: a regular file is checked
    # whole before connecting, and nothing of it is sent.)
    url = serve("-q") + "/fb"
    assert amqp("send", url, "m").returncode == 0
    one = amqp("recv", url, "-c", "1", "--json").stdout
    r = amqp("send", url, "--from", "-", "--json", input=(one * 1500 + "{bad\n").encode())
    assert r.returncode == 2, r.stderr
    summary = json_lines(r.stdout)[-1]
    assert (summary["sent"], summary["accepted"], summary["in-doubt"]) == (1500, 1500, 0)
    assert "line 1501 of standard input: not a message" in summary["error"]
    got = amqp("recv", url, "--drain", "--json", "-q")
    assert len(json_lines(got.stdout)) == 1500


@pytest.mark.parametrize("args", [["--from", "EMPTY"], ["--lines", "-f", "EMPTY"]])
def test_input_with_nothing_in_it_is_a_usage_error(serve: ServePeers, tmp_path: object,
                                                   args: list[str]) -> None:
    from pathlib import Path

    empty = Path(str(tmp_path)) / "empty"
    empty.write_bytes(b"")
    r = amqp("send", serve("-q") + "/e", *[str(empty) if a == "EMPTY" else a for a in args])
    _one_line_error(r, 2, "nothing to send")


@pytest.mark.parametrize("opts", [
    ["--message-id", "X"], ["--property", "a=b"], ["--annotation", "x-y=z"], ["--durable"],
    ["--no-durable"],
    ["--priority", "7"], ["--ttl", "5"], ["--to", "elsewhere"], ["--body-type", "value"],
    ["--footer", "k=v"],
])
def test_message_options_with_from_are_usage_errors(serve: ServePeers, tmp_path: object,
                                                    opts: list[str]) -> None:
    # --from sends recorded messages as they are: an option that would change them was
    # accepted and left out, exit 0
    from pathlib import Path

    url = serve("-q") + "/fo"
    assert amqp("send", url, "m").returncode == 0
    path = Path(str(tmp_path)) / "one.jsonl"
    path.write_text(amqp("recv", url, "-c", "1", "--json").stdout)
    r = amqp("send", url, "--from", str(path), *opts)
    _one_line_error(r, 2, "--from sends the messages as recorded")
    assert opts[0] in r.stderr
    got = amqp("recv", url, "--drain", "--json", "-q")
    assert json_lines(got.stdout) == [], got.stdout  # nothing was sent
