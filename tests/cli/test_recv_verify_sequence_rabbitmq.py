"""`recv --verify-sequence --bodies-only` against RabbitMQ 3.10 (AMQP 1.0 plugin)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.net.clirun import amqp, queue_name

pytestmark = pytest.mark.integration


def test_a_gap_and_a_duplicate_with_bodies_only(rabbitmq_url: str, tmp_path: Path) -> None:
    q = f"{rabbitmq_url}//queue/{queue_name()}"
    src = tmp_path / "m.jsonl"
    src.write_text("".join(
        json.dumps({"application-properties": {"sn": {"ulong": n}},
                    "body": {"data": [{"binary-text": f"body {n}\nnext"}]}}) + "\n"
        for n in (1, 2, 2, 4)))
    r = amqp("send", q, "--from", str(src), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--count", "4", "--timeout", "10", "--verify-sequence",
             "--bodies-only")
    assert r.returncode == 6, r.stderr
    assert r.stdout == "body 1\\nnext\nbody 2\\nnext\nbody 2\\nnext\nbody 4\\nnext\n"
    assert "amqp: sequence sn 1-4: missing 3 (1), duplicates 2 (1)\n" in r.stderr
    assert r.stderr.endswith("amqp: error: sequence sn: missing 3 (1)\n")
