"""Session-wide fixtures: paths, free ports, the RabbitMQ node and the proton peers.

The peers' API is described in ``tests/peers/__init__.py``.
"""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from proton import Message

from tests.net.servepeer import ServePeers
from tests.paths import REPO_ROOT, SCRIPTS_DIR, SHARED_DIR, TESTDATA_DIR
from tests.peers.broker import Broker
from tests.peers.direct import DirectReceiver, DirectSender
from tests.peers.net import PeerThread
from tests.peers.net import free_port as _free_port
from tests.peers.tls import Certs, make_certs, server_domain

RABBITMQ_URL_ENV = "AMQP_TEST_RABBITMQ_URL"


@pytest.fixture(autouse=True)
def _no_secrets_left_over() -> Iterator[None]:
    """The secrets a command registers (its password) are the process's: a test that runs
    commands in this process must not have a later test's output masked by them."""
    yield
    from amqpcli.errors import clear_secrets

    clear_secrets()


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
    (``scripts/rabbitmq.sh stop`` stops it), and the session holds ``.run/rabbitmq/in-use``
    (shared) while it runs, so that scripts/test.sh does not empty or stop the node under
    it. Never skips: no node is a failure.
    """
    url = os.environ.get(RABBITMQ_URL_ENV)
    if url:
        if not _reachable(url):
            pytest.fail(f"{RABBITMQ_URL_ENV}={url} but nothing accepts connections there")
        yield url
        return
    in_use = REPO_ROOT / ".run" / "rabbitmq" / "in-use"
    in_use.parent.mkdir(parents=True, exist_ok=True)
    with open(in_use, "a") as hold:  # (not inherited by what the tests start)
        fcntl.flock(hold, fcntl.LOCK_SH)
        yield from _start_rabbitmq()


def _start_rabbitmq() -> Iterator[str]:
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


@pytest.fixture
def rabbitmq_queue(rabbitmq_url: str, request: pytest.FixtureRequest) -> str:
    """A queue address on the node no other test uses: ``/queue/<test name>-<random>``."""
    name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    return f"/queue/{name}-{uuid.uuid4().hex[:8]}"


# --- proton peers (API in tests/peers/__init__.py) ---------------------------------------


@pytest.fixture
def peers() -> Iterator[Callable[[PeerThread], Any]]:
    """Start any peer and stop it at teardown: ``peers(Broker(credit_window=5))``.
    A peer whose thread crashed fails the test at teardown."""
    started: list[PeerThread] = []

    def start(peer: PeerThread) -> Any:
        started.append(peer.start())
        return peer

    yield start
    errors = []
    for peer in reversed(started):
        try:
            peer.stop()
        except RuntimeError as exc:
            errors.append(str(exc))
    if errors:
        pytest.fail("; ".join(errors))


@pytest.fixture
def broker(peers: Callable[[PeerThread], Any]) -> Broker:
    """A fresh broker on 127.0.0.1 (``broker.url``), empty, per test."""
    return peers(Broker())  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A test CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    return make_certs(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_broker(peers: Callable[[PeerThread], Any], tls_certs: Certs) -> Broker:
    """A broker speaking TLS (``amqps://127.0.0.1:PORT``); client certificates optional."""
    return peers(Broker(ssl_domain=server_domain(tls_certs)))  # type: ignore[no-any-return]


@pytest.fixture
def tls_broker_client_auth(peers: Callable[[PeerThread], Any], tls_certs: Certs) -> Broker:
    """A TLS broker that requires a client certificate signed by the test CA."""
    domain = server_domain(tls_certs, require_client_cert=True)
    return peers(Broker(ssl_domain=domain))  # type: ignore[no-any-return]


@pytest.fixture
def direct_receiver(peers: Callable[[PeerThread], Any]) -> Callable[..., DirectReceiver]:
    """Factory: ``direct_receiver(outcome=Reject("amqp:x"), credit=1, replenish=False)``."""

    def make(**kwargs: Any) -> DirectReceiver:
        return peers(DirectReceiver(**kwargs))  # type: ignore[no-any-return]

    return make


@pytest.fixture
def direct_sender(peers: Callable[[PeerThread], Any]) -> Callable[..., DirectSender]:
    """Factory: ``direct_sender([Message(body="x"), raw_bytes], presettle=None)``."""

    def make(messages: Sequence[Message | bytes], **kwargs: Any) -> DirectSender:
        return peers(DirectSender(messages, **kwargs))  # type: ignore[no-any-return]

    return make


@pytest.fixture
def serve() -> Iterator[ServePeers]:
    """`amqp serve` processes for a test (tests/net/servepeer.py), stopped after it. The
    peer tests (tests/peer/conftest.py) have their own in-process `serve`."""
    peers = ServePeers()
    yield peers
    peers.close()
