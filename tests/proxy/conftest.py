"""Fixtures for the proxy tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.proxy.relay import LoopThread


@pytest.fixture
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    yield lt
    lt.stop()
