"""rabbitmqctl against the test suite's RabbitMQ node, and a vhost of a test's own on it
(tests that close connections or count queues stay out of each other's way)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

from tests.paths import SCRIPTS_DIR


def rabbitmqctl(*args: str) -> str:
    """rabbitmqctl against the test node (scripts/rabbitmq.sh knows its name and cookie)."""
    r = subprocess.run([str(SCRIPTS_DIR / "rabbitmq.sh"), "ctl", "-q", *args],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def own_vhost(prefix: str) -> Iterator[str]:
    """A vhost named `prefix`-RANDOM on the test node, guest allowed everything, for the
    length of a fixture; deleted after."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", name)
    try:
        rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
        yield name
    finally:
        rabbitmqctl("delete_vhost", name)
