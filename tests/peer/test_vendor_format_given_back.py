"""`amqp serve` rewrites the header of a message given back (released: first-acquirer;
modified delivery-failed: delivery-count), and only in the AMQP message format: a
message of a vendor's format (message-format not 0) is bytes whose layout the peer does
not know, kept as they came. The old store rewrote those bytes as if they were an AMQP
message's whenever they decoded as one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration

FORMAT = 0x80013700  # a vendor's format (Azure's batch format)


@pytest.mark.parametrize("give_back", ["release", "modify:failed"])
def test_a_vendor_format_message_comes_back_as_it_went(serve: Callable[..., Any],
                                                       tmp_path: Path,
                                                       give_back: str) -> None:
    url = f"{serve().url}/{queue_name()}"
    # bytes that decode as an AMQP message with a header, so the old store rewrote them
    sent = {"header": {"first-acquirer": True, "delivery-count": 2},
            "body": {"value": "vendor"}, "message-format": FORMAT}
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(sent) + "\n")
    r = amqp("send", url, "--from", str(path), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "--outcome", give_back, "-q")
    assert r.returncode == 0, r.stderr
    (first,) = json_lines(r.stdout)
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "-q")
    assert r.returncode == 0, r.stderr
    (again,) = json_lines(r.stdout)
    # the lossless JSON of the very bytes sent, in the very format
    assert again == first
    assert again["header"] == {"first-acquirer": True, "delivery-count": 2}
    assert again["message-format"] == FORMAT


def test_the_amqp_format_is_still_rewritten(serve: Callable[..., Any]) -> None:
    url = f"{serve().url}/{queue_name()}"
    r = amqp("send", url, "m", "--first-acquirer")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "--outcome", "modify:failed", "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "-q")
    assert r.returncode == 0, r.stderr
    (again,) = json_lines(r.stdout)
    assert again["header"] == {"first-acquirer": False, "delivery-count": 1}
    assert "message-format" not in again
