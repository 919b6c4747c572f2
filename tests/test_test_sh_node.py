"""scripts/test.sh runs on an empty RabbitMQ node: one already running is emptied first
(it was reused with the queues and messages of earlier runs), unless another run is
using it. Run on a copy of the scripts elsewhere, so the node is a private node of its
own (rabbitmq.sh names the node after the checkout's path), started and stopped here;
pytest in the copy runs one probe test that looks for what was left on the node."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net.clirun import queue_name
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

PROBE = '''\
import os
import subprocess
import sys


def test_nothing_is_left_on_the_node():
    url = os.environ["AMQP_TEST_RABBITMQ_URL"] + "//queue/" + os.environ["LEFT_OVER"]
    r = subprocess.run([sys.executable, "-m", "amqpcli", "recv", url, "--drain", "--json",
                        "-q"], capture_output=True, text=True, check=False)
    assert (r.returncode, r.stdout) == (0, ""), (r.returncode, r.stdout, r.stderr)
'''


def _copy(where: Path) -> Path:
    """A checkout with test.sh and rabbitmq.sh as they are here, this venv, no setup."""
    (where / "scripts").mkdir(parents=True)
    for name in ("test.sh", "rabbitmq.sh"):
        shutil.copy2(REPO_ROOT / "scripts" / name, where / "scripts" / name)
    setup = where / "scripts" / "setup.sh"
    setup.write_text("#!/bin/sh\nexit 0\n")
    setup.chmod(0o755)
    (where / ".venv").symlink_to(Path(sys.prefix))
    (where / "test_probe.py").write_text(PROBE)
    return where


def test_test_sh_empties_the_running_node_unless_another_run_uses_it(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "checkout")
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMQP_TEST_RABBITMQ_URL", "AMQP_TEST_RABBITMQ_PORT")}
    env["LEFT_OVER"] = queue_name("left-over")
    env["AMQP_TEST_WORKERS"] = "0"  # one probe test: no worker processes to start
    rabbitmq = [str(copy / "scripts" / "rabbitmq.sh")]
    test_sh = [str(copy / "scripts" / "test.sh"), "-q", "-p", "no:cacheprovider",
               "test_probe.py"]

    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=300, check=False)

    started = run([*rabbitmq, "start"])
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip().splitlines()[-1]
        sent = run([sys.executable, "-m", "amqpcli", "send", f"{url}//queue/{env['LEFT_OVER']}",
                    "left by an earlier run", "-q"])
        assert sent.returncode == 0, sent.stderr

        # another run holds the node: it is left as it is (the probe finds the message)
        in_use = copy / ".run" / "rabbitmq" / "in-use"
        with open(in_use, "a") as hold:
            fcntl.flock(hold, fcntl.LOCK_SH)
            r = run(test_sh)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "test.sh: another run is using the RabbitMQ node: not emptied" in r.stderr
        assert "left by an earlier run" in r.stdout

        # no other run: the node is emptied before pytest runs, and left running
        r = run(test_sh)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "not emptied" not in r.stderr
        assert run([*rabbitmq, "status"]).returncode == 0
    finally:
        run([*rabbitmq, "stop"])
