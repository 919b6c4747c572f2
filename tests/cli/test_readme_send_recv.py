"""README.md's "Send, receive, browse" example is what its commands print: the block is
run in bash against a fresh `amqp serve` (standing in for the broker at
127.0.0.1:5672) and each command's output, stdout and stderr together, compared with
the lines under it. Timings (`in 0.09s (34 msg/s)`) may differ; a line `…` alone stands
for any number of lines left out (as in tests/cli/test_decode_docs.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_decode_docs import ELIDED, ENV, _blocks, _expected
from tests.net.servepeer import ServePeers
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

README = REPO_ROOT / "README.md"
TIMING = re.compile(r" in \d+\.\d\ds \(\d+ msg/s\)")


def _section(title: str) -> str:
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(title)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("#"))
    return "\n".join(lines[start:end])


def _untimed(text: str) -> str:
    return TIMING.sub(" in <time>", text)


def test_the_send_receive_browse_example_is_what_the_commands_print(
        serve: ServePeers, tmp_path: Path) -> None:
    blocks = _blocks(_section("### Send, receive, browse"))
    assert len(blocks) == 1
    _, runs = blocks[0]
    assert [cmd.split()[1] for cmd, _ in runs] == ["send", "browse", "recv", "send",
                                                     "pcap-dump", "send"]
    url = serve()
    for command, lines in runs:
        command = command.replace("amqp://127.0.0.1:5672", url).replace(
            "amqpcli/examples/", f"{REPO_ROOT}/amqpcli/examples/")
        script = f'amqp() {{ "{sys.executable}" -m amqpcli "$@"; }}\n{command}'
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False, env=ENV, timeout=120)
        shown = _untimed(done.stdout.decode("utf-8"))
        want = [line if line == ELIDED else _untimed(line) for line in lines]
        assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{shown}"
        assert _expected(want).fullmatch(shown), f"`{command}` printed\n{shown}"
