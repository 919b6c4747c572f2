"""`amqp browse` and `amqp recv --copy`: look without consuming, and say so when a peer
that agreed to copy consumed anyway (RabbitMQ 3.10)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message

from tests.net.clirun import amqp, json_lines, queue_name
from tests.peers import Broker

pytestmark = pytest.mark.integration


def test_browse_leaves_the_messages(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    broker.put("q", *[Message(body=f"m{i}", properties={"n": i}) for i in range(5)])
    r = amqp("browse", f"{broker.url}/q", "--json")
    assert r.returncode == 0, r.stderr
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == [f"m{i}" for i in range(5)]
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["received"] == 5 and summary["copy-consumed"] == 0
    assert "warning" not in r.stderr
    assert broker.queue_bodies("q") == [f"m{i}" for i in range(5)]
    # twice: still there
    r = amqp("browse", f"{broker.url}/q", "--selector", "n >= 3")
    assert r.returncode == 0 and "2 messages on 'q'" in r.stderr
    assert broker.queue_bodies("q") == [f"m{i}" for i in range(5)]


def test_browse_count_and_empty(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    r = amqp("browse", f"{broker.url}/empty")
    assert r.returncode == 0 and "0 messages" in r.stderr
    broker.put("q", *[Message(body=i) for i in range(10)])
    r = amqp("browse", f"{broker.url}/q", "--count", "3", "--json")
    assert r.returncode == 0 and len(json_lines(r.stdout)) == 3


def test_recv_copy_does_not_consume(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    broker.put("q", Message(body="a"), Message(body="b"))
    r = amqp("recv", f"{broker.url}/q", "--copy", "-c", "2", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 2
    assert broker.queue_bodies("q") == ["a", "b"]


def test_browse_on_rabbitmq_detects_consuming_copy(rabbitmq_url: str) -> None:
    q = queue_name("browse")
    url = f"{rabbitmq_url}//queue/{q}"
    assert amqp("send", url, "x", "--count", "4", "--message-id", "{n}").returncode == 0
    r = amqp("browse", url, "--json")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 4
    assert "warning: the peer accepted distribution-mode copy but" in r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["copy-consumed"] == 4
    # They were given back: a plain receive still finds all four.
    r = amqp("recv", url, "-c", "4", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(m["properties"]["message-id"] for m in json_lines(r.stdout)) == ["1", "2", "3", "4"]
