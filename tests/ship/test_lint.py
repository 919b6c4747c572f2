"""The tree passes its own linters: ruff over everything Python in the repository, mypy over
the package (settings in pyproject.toml). A change that breaks either fails here, not in a
later reader's editor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.paths import REPO_ROOT


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False,
                          cwd=REPO_ROOT)


def test_ruff() -> None:
    r = _run([sys.executable, "-m", "ruff", "check", "--no-cache",
              "amqpcli", "tests", "bench", "scripts"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy(tmp_path: Path) -> None:
    r = _run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "amqpcli"])
    assert r.returncode == 0, r.stdout + r.stderr
