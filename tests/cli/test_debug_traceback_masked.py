"""`--debug` shows an error's traceback; the passwords its one-line error masks are masked
in the traceback too (docs/config.md: "not in `--debug` tracebacks"). The traceback
repeats the exception's text as raised, which quotes what was typed: a URL given where
a file was expected, with its password."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.net.clirun import amqp, cli_env
from tests.paths import REPO_ROOT

URL = "amqp://u:Zq9Secret@127.0.0.1:1/q"


@pytest.mark.parametrize("args", [
    ["pcap-dump", URL],
    ["decode", "-f", URL],
    ["tui", "--pcap", URL],
], ids=["capture", "decode-file", "tui-capture"])
def test_a_usage_errors_traceback_masks_the_password(args: list[str]) -> None:
    r = amqp("--debug", *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback (most recent call last)" in r.stderr, r.stderr
    assert "Zq9Secret" not in r.stderr, r.stderr
    assert "u:***@" in r.stderr.splitlines()[-1], r.stderr


def test_an_internal_errors_traceback_masks_the_password() -> None:
    # a bug of ours whose text quotes the URL typed: --debug lets the exception through,
    # and the interpreter's traceback of it is masked as the one line would be
    script = textwrap.dedent(f"""
        import sys
        from amqpcli.net import url
        def resolve_endpoint(text, **kw):
            raise RuntimeError("cannot take " + text)
        url.resolve_endpoint = resolve_endpoint
        from amqpcli.cli.app import main
        main(["--debug", "send", {URL!r}, "x"])
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60, cwd=REPO_ROOT, env=cli_env(), check=False)
    assert r.returncode == 1, r.stderr
    assert "RuntimeError: cannot take amqp://u:***@127.0.0.1:1/q" in r.stderr, r.stderr
    assert "Zq9Secret" not in r.stderr, r.stderr
