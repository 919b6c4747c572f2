"""Ctrl-C in the first tenth of a second, while the command's modules load: one line and
exit 130, as an interrupt later on, not a KeyboardInterrupt traceback."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import REPO_ROOT

# An import of the command's module that is interrupted, as a Ctrl-C during it is.
SCRIPT = """
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "amqpcli.cli.app":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["amqp", "--version"]
from amqpcli.__main__ import run
run()
"""


def test_an_interrupt_while_loading_is_one_line() -> None:
    r = subprocess.run([sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True,
                       cwd=REPO_ROOT, timeout=60)
    assert (r.returncode, r.stderr) == (130, "amqp: interrupted\n")
