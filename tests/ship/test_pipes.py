"""Output for pipes and for people: no escape codes when piped, no colour under NO_COLOR
even on a terminal, a reader that goes away is no error, and --version."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli import __version__
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
# SGR colour parameters: 30-39, 40-49, 90-97, 100-107 (bold and dim are not colour).
COLOUR = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


def _commands() -> list[list[str]]:
    return [
        ["decode", "--example", "client-session"],
        ["pcap-dump", str(require(CAPTURE))],
        ["pcap-dump", str(CAPTURE), "--summary"],
        ["send", "--help"],
        ["--help"],
    ]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "AMQP_URL")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100", **extra}


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """Run `amqp ARGS` with stdout and stderr on a pseudo-terminal; everything it wrote."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert proc.wait(timeout=120) == 0, out[-2000:]
    return out


@pytest.mark.parametrize("args", _commands(), ids=" ".join)
def test_piped_output_has_no_escape_codes(args: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT, env=_env(),
                       capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout and b"\x1b" not in r.stdout + r.stderr


@pytest.mark.parametrize("args", _commands(), ids=" ".join)
def test_no_color_on_a_terminal(args: list[str]) -> None:
    coloured = _on_a_terminal(args, _env())
    plain = _on_a_terminal(args, _env(NO_COLOR="1"))
    assert not COLOUR.search(plain), COLOUR.findall(plain)[:5]
    if args[0] in ("decode", "pcap-dump") and "--summary" not in args:  # views that colour
        assert COLOUR.search(coloured), "no colour on a terminal: the test proves nothing"


def test_reader_going_away_is_not_an_error() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "pcap-dump", str(require(CAPTURE)),
                             "--json"], cwd=REPO_ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"{")
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert err == b""


def _big_frame_stream(path: Path) -> Path:
    # a header and 300,000 empty frames: megabytes of lines, far more than a pipe holds
    path.write_bytes(b"AMQP\x00\x01\x00\x00" + b"\x00\x00\x00\x08\x02\x00\x00\x00" * 300_000)
    return path


def _big_capture(path: Path) -> Path:
    subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "gen_capture.py"), str(path),
                    "--connections", "3", "--links", "2", "--messages", "300"],
                   check=True, capture_output=True, timeout=120)
    return path.with_suffix(".pcapng")


@pytest.mark.parametrize("command", ["decode", "pcap-dump"])
def test_reader_going_away_mid_output_exits_0(command: str, tmp_path: Path) -> None:
    # Typer catches the broken pipe itself and exits 1 (an internal error by our table)
    # unless `main` takes it back: only output larger than the pipe shows it.
    target = (_big_frame_stream(tmp_path / "big.bin") if command == "decode"
              else _big_capture(tmp_path / "big"))
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", command, str(target)],
                            cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert err == b""


def test_version() -> None:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "--version"], cwd=REPO_ROOT, env=_env(),
                       capture_output=True, text=True, timeout=60, check=False)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"amqp {__version__}\n", "")
