"""Session-wide fixtures: paths, free ports, the RabbitMQ node and the proton peers.

The peers' API is described in ``tests/peers/__init__.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.paths import REPO_ROOT, SCRIPTS_DIR, SHARED_DIR, TESTDATA_DIR
from tests.peers.net import free_port as _free_port

RABBITMQ_URL_ENV = "AMQP_TEST_RABBITMQ_URL"


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so a run with another ini file still knows it.
    config.addinivalue_line(
        "markers", "integration: talks to a real peer that the test setup starts"
    )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``<repo>/../shared`` (or ``$AMQP_TEST_SHARED_DIR``); fails if it is missing."""
    if not SHARED_DIR.is_dir():
        pytest.fail(f"shared directory missing: {SHARED_DIR}")
    return SHARED_DIR


@pytest.fixture(scope="session")
def testdata(shared_dir: Path) -> Path:
    """``../shared/testdata``: proton codec vectors, fuzz corpora, captures."""
    if not TESTDATA_DIR.is_dir():
        pytest.fail(f"test data missing: {TESTDATA_DIR}")
    return TESTDATA_DIR


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    return _free_port()


def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5672), 5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def rabbitmq_url() -> Iterator[str]:
    """URL of a running RabbitMQ node with AMQP 1.0: ``amqp://guest:guest@127.0.0.1:PORT``.

    Taken from ``$AMQP_TEST_RABBITMQ_URL`` (set by scripts/test.sh); otherwise the node is
    started with ``scripts/rabbitmq.sh start`` and left running for the next session
    (``scripts/rabbitmq.sh stop`` stops it). Never skips: no node is a failure.
    """
    url = os.environ.get(RABBITMQ_URL_ENV)
    if url:
        if not _reachable(url):
            pytest.fail(f"{RABBITMQ_URL_ENV}={url} but nothing accepts connections there")
        yield url
        return
    proc = subprocess.run(
        [str(SCRIPTS_DIR / "rabbitmq.sh"), "start"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"scripts/rabbitmq.sh start failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}"
        )
    url = proc.stdout.strip().splitlines()[-1]
    if not _reachable(url):
        pytest.fail(f"RabbitMQ started but {url} does not accept connections")
    yield url
