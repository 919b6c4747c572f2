"""A selector reads nothing of a message of a vendor's format (message-format not 0): its
bytes are not an AMQP message, so `amqp serve` takes it as a message with no sections.
Every property is missing there, so a comparison with one is unknown and does not select
it; the header's defaults stand (JMSPriority 4). The old store decoded the bytes as an
AMQP message, and a selector chose the message by the header and properties they seemed
to hold."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import UByte
from amqpcli.peer.store import Queue
from amqpcli.selector import compile_selector
from tests.net.clirun import amqp, json_lines, queue_name

FORMAT = 0x80013700  # a vendor's format (Azure's batch format)
# bytes that decode as an AMQP message whose header and application-properties a
# selector could read
LOOKALIKE = Message("vendor", header=c.Header(durable=True, priority=UByte(9)),
                    application_properties={"colour": "red"}).encode()


@pytest.mark.parametrize(("selector", "vendor", "in_amqp_format"), [
    ("colour = 'red'", False, True),
    ("colour IS NOT NULL", False, True),
    ("NOT (colour = 'blue')", False, True),  # unknown, negated, is still unknown
    ("colour IS NULL", True, False),
    ("JMSPriority = 4", True, False),  # the default of a message with no header
    ("JMSDeliveryMode = 'NON_PERSISTENT'", True, False),
])
def test_a_vendor_format_message_reads_as_one_with_no_sections(selector: str, vendor: bool,
                                                               in_amqp_format: bool) -> None:
    sel = compile_selector(selector)
    for message_format, chosen in ((FORMAT, vendor), (0, in_amqp_format)):
        q = Queue("q")
        q.put(LOOKALIKE, message_format)
        assert (q.take("k", sel) is not None) is chosen, message_format


@pytest.mark.integration
def test_serve_selects_a_vendor_format_message_by_no_property(serve: Callable[..., Any],
                                                              tmp_path: Path) -> None:
    url = f"{serve().url}/{queue_name()}"
    lines = [{"application-properties": {"colour": "red"}, "body": {"value": "vendor"},
              "message-format": FORMAT},
             {"application-properties": {"colour": "red"}, "body": {"value": "amqp"}}]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = amqp("send", url, "--from", str(path), "-q")
    assert r.returncode == 0, r.stderr
    # the vendor's message is first in the queue: the selector passes over it
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "-q", "--selector", "colour = 'red'")
    assert r.returncode == 0, r.stderr
    (got,) = json_lines(r.stdout)
    assert got["body"] == {"value": "amqp"} and "message-format" not in got
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", "-q", "--selector", "colour IS NULL")
    assert r.returncode == 0, r.stderr
    (got,) = json_lines(r.stdout)
    assert got["body"] == {"value": "vendor"} and got["message-format"] == FORMAT
