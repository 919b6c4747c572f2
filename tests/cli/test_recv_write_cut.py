"""A write that fails part way through a message (a full disk, a file size limit) cuts the
part line off again: the file keeps only whole messages (it ended in half a JSON line,
which neither a reader nor `send --from` takes), and what was not written stays on the
node."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env

pytestmark = pytest.mark.integration

LIMIT = 2048  # bytes the recv process may write to a file


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _recv(url: str, out: Path, to_stdout: bool) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "amqpcli", "recv", url, "--json", "--timeout", "3"]
    if not to_stdout:
        return subprocess.run([*args, "--out", str(out)], check=False, capture_output=True,
                              text=True,
                              env=cli_env(), preexec_fn=_limited, timeout=120)
    with out.open("w") as f:
        return subprocess.run(args, check=False, stdout=f, stderr=subprocess.PIPE, text=True,
                              env=cli_env(), preexec_fn=_limited, timeout=120)


@pytest.mark.parametrize("to_stdout", [False, True], ids=["out", "stdout-file"])
def test_a_message_cut_by_a_failed_write_is_cut_off(serve: ServePeers, tmp_path: Path,
                                                   to_stdout: bool) -> None:
    url = serve("-q") + "/cut"
    assert amqp("send", url, "x" * 400, "-c", "10", "-q").returncode == 0
    out = tmp_path / "got.jsonl"
    r = _recv(url, out, to_stdout)
    assert r.returncode == 2 and "File too large" in r.stderr, r.stderr
    data = out.read_bytes()
    assert data.endswith(b"\n"), data[-40:]
    kept = [json.loads(line) for line in data.splitlines()]
    assert 0 < len(kept) < 10
    rest = json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout)
    assert len(kept) + len(rest) == 10  # written and settled, or still on the node
    # the file replays
    assert amqp("send", url, "--from", str(out), "-q").returncode == 0
