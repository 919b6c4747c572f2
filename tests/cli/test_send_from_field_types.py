"""`amqp send --from` a JSON message whose header field holds a value of another type
(`"durable": {"string": "no"}`) is refused before connecting, in words that name the
field's type: it was sent as durable true, or failed with Python's own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.net.clirun import amqp_in_process


@pytest.mark.parametrize(("header", "said"), [
    ({"durable": {"string": "no"}}, "a boolean field cannot hold str 'no'"),
    ({"priority": {"string": "high"}}, "a ubyte field cannot hold str 'high'"),
])
def test_a_header_field_of_another_type_is_refused(tmp_path: Path, header: dict[str, object],
                                                   said: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"header": header, "body": {"value": "x"}}) + "\n")
    # nothing listens on port 1: the message is judged before any connection is tried
    code, _out, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "--from", str(path))
    assert code == 2, err
    assert err == f"amqp: error: {path}:1: not a message in the JSON format: {said}\n"
