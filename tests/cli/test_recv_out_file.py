"""`amqp recv --out FILE` keeps messages whole: the file gets the lossless JSON lines (the
text view cuts long binary values), so it replays with `send --from`. Text written to a file
standard output was redirected to says, once, that it cuts."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT
from tests.peers import DirectReceiver

pytestmark = pytest.mark.integration


def test_out_file_holds_messages_whole_and_replays(
    serve: ServePeers, direct_receiver: Callable[..., DirectReceiver], tmp_path: Path,
) -> None:
    url = f"{serve('-q')}/q"
    data = os.urandom(200_000)
    (tmp_path / "body").write_bytes(data)
    assert amqp("send", url, "--file", str(tmp_path / "body")).returncode == 0
    text = "long text " * 100
    assert amqp("send", url, "--body-type", "value", text).returncode == 0
    out = tmp_path / "kept"
    r = amqp("recv", url, "--out", str(out), "--count", "2")
    assert r.returncode == 0, r.stderr
    objs = json_lines(out.read_text())
    assert len(objs) == 2
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/dst", "--from", str(out))
    assert r.returncode == 0, r.stderr
    got = rcv.wait_for_messages(2)
    assert bytes(got[0].message.body) == data
    assert got[1].message.body == text
    assert [hashlib.sha256(g.bare).hexdigest() for g in got] == [o["bare-sha256"] for o in objs]


def test_text_to_a_redirected_file_says_it_cuts(serve: ServePeers, tmp_path: Path) -> None:
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "x" * 1000, "-c", "2").returncode == 0  # a data body
    out = tmp_path / "view.txt"

    def recv(*args: str) -> subprocess.CompletedProcess[str]:
        with out.open("w") as f:
            return subprocess.run(
                [sys.executable, "-m", "amqpcli", "recv", url, "-c", "1", *args], stdout=f,
                stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(), timeout=120,
                check=False)

    r = recv()
    assert r.returncode == 0, r.stderr
    assert "…" in out.read_text()  # the text view, cut
    assert ("amqp: note: standard output is a file, and the text view cuts long binary values "
            "(data bodies): it does not replay with send --from (--json or --out FILE write "
            "messages whole)") in r.stderr
    r = recv("--json")
    assert r.returncode == 0, r.stderr
    assert "note:" not in r.stderr
    assert json_lines(out.read_text())[0]["body"] == {"data": [{"binary-text": "x" * 1000}]}


def test_no_note_when_nothing_is_written(serve: ServePeers, tmp_path: Path) -> None:
    """The note is about the messages in the file: a run that wrote none (an empty node,
    a peer that is not there) does not say it."""
    url = f"{serve('-q')}/empty"
    out = tmp_path / "view.txt"
    for target, code in ((url, 0), ("amqp://127.0.0.1:1/q", None)):
        with out.open("w") as f:
            r = subprocess.run(
                [sys.executable, "-m", "amqpcli", "recv", target, "-t", "0.5"], stdout=f,
                stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(), timeout=120,
                check=False)
        assert code is None or r.returncode == code, r.stderr
        assert "note:" not in r.stderr, r.stderr


def test_a_line_left_unfinished_by_an_earlier_run_is_cut_off(
        serve: ServePeers, tmp_path: Path) -> None:
    """A run killed while writing a message leaves part of its line (the message was not
    settled: the node still holds it). The next run cuts that part off before appending,
    and says so: glued onto it, the next message's line would not replay either."""
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "one", "-c", "2").returncode == 0
    out = tmp_path / "kept.jsonl"
    assert amqp("recv", url, "--out", str(out), "-c", "1").returncode == 0
    whole = out.read_bytes()
    partial = b'{"body":{"data":[{"binary-text":"on' + b"e" * 70_000  # more than a block
    out.write_bytes(whole + partial)
    r = amqp("recv", url, "--out", str(out), "-c", "1")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"amqp: note: {out}: cut off the last {len(partial)} byte(s), a line left unfinished "
        "by an earlier run (its message was not settled: the node delivers it again)")
    assert out.read_bytes() == whole * 2
    r = amqp("send", f"{url}-again", "--from", str(out))
    assert r.returncode == 0, r.stderr


def test_a_file_that_is_not_of_out_lines_is_refused(serve: ServePeers, tmp_path: Path) -> None:
    """A file whose last line is unfinished and no message's is left as it is, and nothing
    is received."""
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "kept").returncode == 0
    out = tmp_path / "notes.txt"
    out.write_bytes(b"some notes\nno line end")
    r = amqp("recv", url, "--out", str(out), "-c", "1")
    assert (r.returncode, r.stderr) == (2, (
        f"amqp: error: cannot append to '{out}': it does not end with a line end, and its "
        "last line is not a message's (give a file of --out lines, or a new one)\n"))
    assert out.read_bytes() == b"some notes\nno line end"
    assert json_lines(amqp("recv", url, "--json", "-c", "1").stdout)[0]["body"] == {
        "data": [{"binary-text": "kept"}]}
