"""A send that ends before its input's end says so: how far it read and what is left (a
regular file: the lines after the last one read, to resume from), or that the rest of a
pipe was not read, and the messages read ahead from it and never sent. It used to stop
reading without a word: `amqp recv … --json | amqp send … --from -` against a peer that
detached after 3 gave `sent 49, accepted 3, in doubt 46`, the 51 lines never read
unmentioned."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.cli.send import _lines_left
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

LINES = 100
# sent before the peer's detach is heard; the run reads one more, which it never sends: a
# resume must start at it (it used to be counted as taken, and its line skipped)
WINDOW = 10


def _recorded(n: int) -> str:
    return "".join(json.dumps({"body": {"data": [{"binary-text": f"m{i}"}]}}) + "\n"
                   for i in range(n))


@pytest.mark.parametrize("replay", [False, True])
def test_a_file_not_read_to_its_end_says_what_is_left(serve: ServePeers, tmp_path: Path,
                                                      replay: bool) -> None:
    url = serve("-q", "--detach-after", "3") + "/left"
    path = tmp_path / "in.txt"
    path.write_text(_recorded(LINES) if replay else "".join(f"{i}\n" for i in range(LINES)))
    how = ["--from", str(path)] if replay else ["--lines", "--file", str(path)]
    r = amqp("send", url, *how, "--window", str(WINDOW))
    assert r.returncode == 7, r.stderr
    assert r.stdout.startswith(f"sent {WINDOW}, accepted 3, in doubt {WINDOW - 3}, not sent 1 ")
    taken = WINDOW
    assert (f"{str(path)!r} not read to its end: {taken} message(s) taken from it, up to "
            f"line {taken}; {LINES - taken} line(s) after it not sent") in r.stdout.splitlines()
    r = amqp("send", url, *how, "--window", str(WINDOW), "--json")
    obj = json.loads(r.stdout)
    assert obj["input"] == {"name": str(path), "read-to-end": False, "messages-taken": taken,
                            "last-line-read": taken, "lines-not-read": LINES - taken}


@pytest.mark.parametrize("replay", [False, True])
def test_a_pipe_not_read_to_its_end_says_the_rest_was_not_read(serve: ServePeers,
                                                               replay: bool) -> None:
    url = serve("-q", "--detach-after", "3") + "/left-pipe"
    how = ["--from", "-"] if replay else ["--lines"]
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, *how, "--window", str(WINDOW),
         "--json"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=REPO_ROOT, env=cli_env())
    assert p.stdin is not None
    try:
        p.stdin.write(_recorded(LINES) if replay else "x\n" * LINES)
        p.stdin.close()
    except BrokenPipeError:  # (it may be gone before the last lines went)
        pass
    assert p.stdout is not None and p.stderr is not None
    out, err = p.stdout.read(), p.stderr.read()
    assert p.wait(60) == 7, err
    obj = json.loads(out)
    note = obj["input"]
    assert note["name"] == "standard input" and note["read-to-end"] is False
    # (how many the run took before the detach came, and how far its thread read
    # ahead, depend on when the lines came)
    assert note["messages-taken"] == obj["sent"] <= WINDOW
    assert "lines-not-read" not in note
    assert note["messages-taken"] + note.get("read-not-sent", 0) < LINES
    assert note.get("read-not-sent", 0) >= obj["messages"] - obj["sent"]


def test_an_input_read_to_its_end_has_no_note(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/whole"
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nc\n")
    r = amqp("send", url, "--lines", "--file", str(path), "--json")
    assert r.returncode == 0 and "input" not in json.loads(r.stdout)
    r = amqp("send", url, "--lines", "--file", str(path), "--count", "2", "--json")
    assert r.returncode == 0 and "input" not in json.loads(r.stdout)  # (--count is its end)


def test_lines_left_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"1\n2\n3")  # (a last line with no line ending is a line)
    assert _lines_left(str(path), 1) == 2
    assert _lines_left(str(path), 3) == 0
    path.write_bytes(b"")
    assert _lines_left(str(path), 0) == 0
    assert _lines_left(str(tmp_path), 0) is None  # (not a regular file)


def test_nothing_taken_names_no_line(tmp_path: Path) -> None:
    """A run that sent none of what it read: no "up to line 0"."""
    from amqpcli.cli.send import InputRead

    path = tmp_path / "in.txt"
    path.write_text("a\nb\nc\n")
    read = InputRead(iter([object(), object()]), str(path))  # type: ignore[list-item]
    next(read)
    text, obj = read.unread(0)  # type: ignore[misc]
    assert text == f"{str(path)!r} not read to its end: no message taken from it; 3 line(s) not sent"
    assert obj == {"name": str(path), "read-to-end": False, "messages-taken": 0,
                   "last-line-read": 0, "lines-not-read": 3}
