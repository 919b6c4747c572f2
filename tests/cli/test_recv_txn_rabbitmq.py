"""`recv --txn-size` on RabbitMQ 3.10, whose AMQP 1.0 plugin refuses the coordinator
link: one line, exit 4, before anything is received or written, or sent."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration


def test_no_coordinator_is_refused_before_any_message(rabbitmq_url: str) -> None:
    url = f"{rabbitmq_url}//queue/{queue_name()}"
    r = amqp("send", url, "kept", "--count", "2")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--txn-size", "2", "-t", "10", "--json")
    assert r.returncode == 4, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the coordinator" in lines[0], r.stderr
    r = amqp("recv", url, "-c", "2", "-t", "10", "--json")  # nothing was taken
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 2


def test_send_says_the_refusal_alone(rabbitmq_url: str) -> None:
    """As a refused link: one line, no summary of nothing sent (it printed `sent 0, …, not
    sent 2` before the error)."""
    url = f"{rabbitmq_url}//queue/{queue_name()}"
    r = amqp("send", url, "x", "--count", "2", "--txn-size", "2")
    assert r.returncode == 4, r.stderr
    assert r.stdout == ""
    assert r.stderr == ("amqp: error: the peer refused the link to the coordinator: "
                        "amqp:not-implemented: Transactions not supported\n")
