"""`amqp serve`'s anonymous relay sends a message to its properties' `to`, which only a
message of the AMQP format (0) has: a vendor's format is bytes the peer cannot read, so
such a message is unroutable (rejected, amqp:not-found), even when its bytes happen to
decode as an AMQP message with a `to`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration

FORMAT = 0x80013700  # a vendor's format


def test_the_relay_does_not_read_a_vendor_format_message(serve: Callable[..., Any],
                                                          tmp_path: Path) -> None:
    served = serve()
    queue = queue_name()
    lines = [{"properties": {"to": queue}, "body": {"value": fmt}, "message-format": fmt}
             for fmt in (FORMAT, 0)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = amqp("send", served.url, "--from", str(path), "--json")
    (summary,) = json_lines(r.stdout)
    assert (summary["rejected"], summary["accepted"]) == (1, 1), (summary, r.stderr)
    (detail,) = summary["outcome-details"]
    assert detail["messages"] == [1], detail
    assert "a message of format 2147563264 has no properties" in json.dumps(detail), detail
    r = amqp("recv", f"{served.url}/{queue}", "--drain", "--json", "-q")
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == [0], r.stdout
