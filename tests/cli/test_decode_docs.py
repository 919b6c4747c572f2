"""docs/decode.md's examples, and README.md's on decoding, are what `amqp decode`
prints: every `$ command` of their code blocks is run (in bash, `amqp` being this
checkout's CLI) and its output, stdout and stderr as a terminal shows them, compared with
the lines under it. A line `…` alone stands for any number of lines left out.

The files the examples name are made here: `echo-client.bin` is the client's bytes of
the qpid-python 0-10 echo capture, `big-capture.bin` a sender's connection of more than
a MiB."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.capture import C2S, Data, read_capture
from amqpcli.codec.composites import Attach, Begin, Close, Detach, End, Open, Target, Transfer
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import UInt
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

DOC = REPO_ROOT / "docs" / "decode.md"
README = REPO_ROOT / "README.md"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("AMQP_")} | {
    "NO_COLOR": "1", "COLUMNS": "200", "LC_ALL": "C.UTF-8"}
ELIDED = "…"


def _blocks(text: str) -> list[tuple[int, list[tuple[str, list[str]]]]]:
    """The code blocks that show commands and their output: (the line of the block's
    first command, [(command, its output's lines)])."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        start = i + 1
        end = start
        while not lines[end].startswith("```"):
            end += 1
        runs: list[tuple[str, list[str]]] = []
        for n in range(start, end):
            if lines[n].startswith("$ "):
                runs.append((lines[n][2:], []))
            elif runs:
                runs[-1][1].append(lines[n])
        for _, shown in runs:  # a blank line sets one command's output apart
            while shown and not shown[-1]:
                shown.pop()
        if runs:
            first = next(n for n in range(start, end) if lines[n].startswith("$ "))
            out.append((first + 1, runs))
        i = end + 1
    return out


def _readme_decode_part() -> str:
    """README.md's section on decoding, blank lines in its place (lines keep numbers)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("### Decode bytes")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("#"))
    return "\n".join("" if not start <= i < end else line for i, line in enumerate(lines))


BLOCKS = ([("docs/decode.md", n, runs) for n, runs in _blocks(DOC.read_text(encoding="utf-8"))]
          + [("README.md", n, runs) for n, runs in _blocks(_readme_decode_part())])


def _echo_client() -> bytes:
    data = bytearray()
    for ev in read_capture([require(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")]):
        if isinstance(ev, Data) and ev.direction == C2S:
            data += ev.data
    return bytes(data)


def _big_capture() -> bytes:
    """A client sending 25000 messages on one link: past the first MiB."""
    parts = [AMQP_HEADER,
             encode_frame(Open(container_id="c1", hostname="broker")),
             encode_frame(Begin(next_outgoing_id=UInt(0), incoming_window=UInt(65536),
                                outgoing_window=UInt(65536))),
             encode_frame(Attach(name="orders-sender", handle=UInt(0), role=False,
                                 target=Target(address="orders"),
                                 initial_delivery_count=UInt(0)))]
    for i in range(25000):
        parts.append(encode_frame(
            Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=i.to_bytes(4, "big"),
                     settled=True),
            payload=Message(f'{{"order": {i}}}'.encode()).encode()))
    parts += [encode_frame(Detach(handle=UInt(0), closed=True)), encode_frame(End()),
              encode_frame(Close())]
    return b"".join(parts)


def _expected(lines: list[str]) -> re.Pattern[str]:
    return re.compile("".join("(?:.*\n)*?" if line == ELIDED else re.escape(line) + "\n"
                              for line in lines))


def test_the_docs_have_examples_to_check() -> None:
    commands = [cmd for _, _, runs in BLOCKS for cmd, _ in runs]
    assert len(commands) >= 11 and all("amqp decode" in c or c == "echo $?" for c in commands)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("decode-doc")
    (where / "echo-client.bin").write_bytes(_echo_client())
    (where / "big-capture.bin").write_bytes(_big_capture())
    return where


@pytest.mark.parametrize(("doc", "line", "runs"), BLOCKS,
                         ids=[f"{doc} line {n}" for doc, n, _ in BLOCKS])
def test_an_example_block_is_what_the_commands_print(
        doc: str, line: int, runs: list[tuple[str, list[str]]], files: Path) -> None:
    status = 0
    for command, lines in runs:
        script = (f'amqp() {{ "{sys.executable}" -m amqpcli "$@"; }}\n'
                  f"(exit {status}); {command}")
        done = subprocess.run(["bash", "-c", script], cwd=files,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                              env=ENV)
        status = done.returncode
        shown = done.stdout.decode("utf-8")
        if not _expected(lines).fullmatch(shown):
            got = shown.splitlines()
            if len(got) > 40:  # its first lines and its last
                got = [*got[:30], ELIDED, *got[-5:]]
            pytest.fail(f"{doc} line {line}: `{command}` printed\n" + "\n".join(got))
