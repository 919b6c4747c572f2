"""Where the test suite finds things: one place for every path the tests use.

Import as ``from tests.paths import TESTDATA_DIR`` (the repository root is on ``sys.path``
through ``pythonpath`` in pyproject.toml). The shared directory is the checkout's sibling
``../shared``; ``AMQP_TEST_SHARED_DIR`` points elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT: Path = Path(__file__).resolve().parent.parent
SCRIPTS_DIR: Path = REPO_ROOT / "scripts"
RUN_DIR: Path = REPO_ROOT / ".run"
SHARED_DIR: Path = Path(os.environ.get("AMQP_TEST_SHARED_DIR", REPO_ROOT.parent / "shared"))
TESTDATA_DIR: Path = SHARED_DIR / "testdata"
SPECS_DIR: Path = SHARED_DIR / "specs"
SEEDS_DIR: Path = SHARED_DIR / "seeds"
CAPTURES_DIR: Path = TESTDATA_DIR / "captures"
PROTON_VECTORS_DIR: Path = TESTDATA_DIR / "qpid-proton"


def require(path: Path) -> Path:
    """Return ``path``, failing with a clear message if it does not exist (never a skip)."""
    if not path.exists():
        raise FileNotFoundError(f"test input missing: {path}")
    return path
