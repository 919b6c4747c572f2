"""`amqp serve` numeric options that make no sense are usage errors (one line, exit 2)
before anything listens: `--idle-timeout` must be a finite number of seconds above 0,
`--settle-delay` a finite number of milliseconds, `--max-frame-size` and `--credit` in the
ranges `amqp send`/`recv` take (a uint of at least 512; credit the serial-number
arithmetic can count)."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp

_HANG_GUARD = 20.0  # a value that is accepted starts a server that never exits


_CASES = [
    (["--idle-timeout", "-1"], "--idle-timeout must be a finite number of seconds, more than 0 (got -1)"),
    (["--idle-timeout", "nan"], "--idle-timeout must be a finite number of seconds, more than 0 (got nan)"),
    (["--idle-timeout", "inf"], "--idle-timeout must be a finite number of seconds, more than 0 (got inf)"),
    (["--idle-timeout", "0"], "--idle-timeout must be a finite number of seconds, more than 0 (got 0)"),
    (["--idle-timeout", "1e10"], "--idle-timeout must be at most 4000000 seconds (got 1e+10)"),
    (["--settle-delay", "nan"], "--settle-delay must be a finite number of milliseconds, 0 or more (got nan)"),
    (["--settle-delay", "inf"], "--settle-delay must be a finite number of milliseconds, 0 or more (got inf)"),
    (["--settle-delay", "-5"], "--settle-delay must be a finite number of milliseconds, 0 or more (got -5)"),
    # above a uint our open could not be encoded: every connection failed, unexplained
    (["--max-frame-size", "4294967296"], "--max-frame-size must be between 512 and 4294967295"),
    (["--max-frame-size", "511"], "--max-frame-size must be between 512 and 4294967295"),
    (["--credit", "2147483648"], "--credit must be between 0 and 2147483647"),
    (["--credit", "-1"], "--credit must be between 0 and 2147483647"),
    (["--detach-after", "0"], "--detach-after must be at least 1"),
    (["--close-after", "-3"], "--close-after must be at least 1"),
    # an empty rule was no rule at all, an empty number in `at:` was skipped
    (["--reject", ""], "--reject: expected a share (0.1), every:N, first:N, after:N, at:N,M…, all or none, got ''"),
    (["--release", "at:1,,2"], "--release: expected a share (0.1), every:N, first:N, after:N, at:N,M…, all or none, got 'at:1,,2'"),
    # rules are tried in order: one after an `all` never picks a message
    (["--reject", "all", "--release", "all"], "--release all would never apply: --reject all answers every message first"),
    (["--release", "all", "--modify", "every:2"], "--modify every:2 would never apply: --release all answers every message first"),
    # an empty glob matched no address a client can attach to: a fault that never came
    (["--refuse", "orders", "--refuse", ""], "--refuse: the pattern is empty (a glob such as 'secret.*', or '*' for every address)"),
]


@pytest.mark.parametrize(("args", "text"), _CASES, ids=[" ".join(a) for a, _ in _CASES])
def test_bad_numbers_are_usage_errors(args: list[str], text: str) -> None:
    r = amqp("serve", "--listen", "127.0.0.1:0", *args, timeout=_HANG_GUARD)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"amqp: error: {text}\n"
    assert "listening" not in r.stderr
