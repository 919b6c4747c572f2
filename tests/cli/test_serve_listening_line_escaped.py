"""`amqp serve`'s listening line names the faults it injects, --refuse's globs as typed:
a control character in one (an escape sequence) went to the terminal as it was, where a
client's names and addresses in the lines after it are escaped. It is escaped too."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.net.clirun import cli_env
from tests.paths import REPO_ROOT


def test_a_refuse_glob_is_shown_escaped() -> None:
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "serve", "--listen", "127.0.0.1:0",
         "--refuse", "sec\x1b[2Jret*", "--refuse", "\u202eevil"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env())
    try:
        assert p.stderr is not None
        line = p.stderr.readline()
    finally:
        p.terminate()
        p.wait(30)
    assert re.search(r"listening on 127\.0\.0\.1:\d+ ", line), line
    assert line.endswith("faults: --refuse sec\\x1b[2Jret* --refuse \\u202eevil)\n"), line
    assert "\x1b" not in line and "\u202e" not in line
