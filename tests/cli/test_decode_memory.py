"""`amqp decode` holds what its items need, not what its errors' hex windows read: the
SASL secrets masked in a window are looked for around the error, not in all of the input
(1 MiB of zero bytes, one error, took 85 MB there: a zero run is a candidate 0-10 frame
header at every offset), and an input of many errors is searched once, not once per
error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.codec.composites import SaslInit
from amqpcli.codec.frames import SASL_HEADER, encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.render.hexdump import hex_window
from amqpcli.render.redact import secret_spans
from tests.cli.test_decode import run
from tests.paths import REPO_ROOT

# `python -m amqpcli ARGS`, its allocations traced: the peak is written on stderr's last line
_TRACED = """\
import runpy, sys, tracemalloc
tracemalloc.start()
sys.argv = ["amqpcli", *sys.argv[1:]]
try:
    runpy.run_module("amqpcli", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
sys.stderr.write(f"peak {tracemalloc.get_traced_memory()[1]}\\n")
sys.exit(code)
"""


def _peak(*args: str) -> tuple[int, int]:
    """(exit status, the peak of memory allocated) of `amqp ARGS`."""
    done = subprocess.run([sys.executable, "-c", _TRACED, *args], capture_output=True,
                          cwd=REPO_ROOT, check=False)
    last = done.stderr.decode().splitlines()[-1]
    assert last.startswith("peak "), done.stderr
    return done.returncode, int(last.split()[1])


@pytest.mark.parametrize("mib", [1, 5])
def test_zero_bytes_take_little_memory_however_many(mib: int, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_bytes(bytes(100))
    zeros = tmp_path / "zeros"
    zeros.write_bytes(bytes(mib << 20))
    code, base = _peak("decode", "--file", str(small))
    assert code == 8
    code, peak = _peak("decode", "--file", str(zeros))
    assert code == 8
    # the first MiB read before deciding what the input is, a copy or two of it, and the
    # search for secrets around the error (before: 85 MB)
    assert peak - base < 32 << 20, (peak, base)


def test_an_input_of_many_errors_is_searched_for_secrets_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # frames whose body does not decode, each an error, a sasl-init among them: every
    # window shows what a search of the whole input masks, and the input is searched once
    bad = bytes.fromhex("0000000c02000000005310ff")
    sasl = encode_frame(SaslInit(mechanism=Symbol("PLAIN"),
                                 initial_response=b"\x00alice\x00s3cr3t"), type=1)
    data = SASL_HEADER + bad * 2000 + sasl + bad * 3000
    searched = []

    def counted(part: bytes) -> list[tuple[int, int]]:
        searched.append(len(part))
        return secret_spans(part)

    monkeypatch.setattr("amqpcli.render.redact.secret_spans", counted)
    code, _, err = run("decode", "--brief", "-", stdin=data)
    assert code == 8
    assert sum(searched) <= 2 * len(data), (len(searched), sum(searched))
    masked = secret_spans(data)
    assert masked
    lines = err.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("decode error at offset ")]
    assert len(at) == 5000
    for i, j in zip(at, [*at[1:], len(lines) - 1]):
        offset = int(lines[i].split()[4].rstrip(":"))
        assert lines[i + 1:j] == ["  " + ln for ln in hex_window(data, offset, masked=masked)]
    assert b"s3cr3t".hex(" ") not in err
