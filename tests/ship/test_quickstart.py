"""The README's first command, `scripts/quickstart.sh`, runs through and exits 0 (it
exited 130: the stopped peer's status leaked out of its exit trap)."""

from __future__ import annotations

import subprocess

from tests.paths import REPO_ROOT


def test_quickstart_runs_through() -> None:
    r = subprocess.run([str(REPO_ROOT / "scripts" / "quickstart.sh")], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "sent 3, accepted 3" in r.stdout + r.stderr
    assert r.stdout.count("qs-") >= 3  # the three message-ids, received
    assert "\033[" not in r.stderr  # (bold only on a terminal: here stderr is a pipe)
