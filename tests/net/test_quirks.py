"""Peer quirks are decided from open.properties (symbol keys) and nothing else."""

from __future__ import annotations

from amqpcli.codec.types import Symbol
from amqpcli.net.quirks import peer_info


def test_old_rabbitmq_cannot_drain() -> None:
    p = peer_info({Symbol("product"): "RabbitMQ", Symbol("version"): "3.10.8"})
    assert p.version == (3, 10, 8) and not p.drain_works


def test_others_drain() -> None:
    assert peer_info({Symbol("product"): "RabbitMQ", Symbol("version"): "4.0.2"}).drain_works
    assert peer_info({Symbol("product"): "qpid-proton"}).drain_works
    assert peer_info(None).drain_works
    # plain-string keys are not the spec's symbols: not recognised
    assert peer_info({"product": "RabbitMQ", "version": "3.10.8"}).drain_works
