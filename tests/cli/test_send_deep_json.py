"""JSON input nested without end (`--json-body`, `--from`) is a usage error naming the
depth, not an internal RecursionError."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.cli.options import JSON_DEPTH, json_within_depth
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers


def _nested(n: int) -> str:
    return "[" * n + "]" * n


def test_json_within_depth() -> None:
    assert json_within_depth(_nested(JSON_DEPTH)) is not None
    assert json_within_depth('{"a": [1, {"b": [2]}], "c": 3}') == {"a": [1, {"b": [2]}], "c": 3}
    for n in (JSON_DEPTH + 1, 5000, 200_000):
        with pytest.raises(ValueError, match=f"nested more than {JSON_DEPTH} deep"):
            json_within_depth(_nested(n))


@pytest.mark.parametrize("depth", [900, 100_000])
def test_a_deep_json_body_is_a_usage_error(tmp_path: Path, depth: int) -> None:
    body = tmp_path / "deep.json"
    body.write_text(_nested(depth))
    r = amqp("send", "amqp://127.0.0.1:1/q", "--json-body", "-b", "value", "--file", str(body))
    assert (r.returncode, r.stderr) == (
        2, f"amqp: error: body is not lossless JSON: nested more than {JSON_DEPTH} deep\n")


@pytest.mark.integration
def test_a_deep_replayed_message_is_a_usage_error(serve: ServePeers, tmp_path: Path) -> None:
    value = '{"list": [' * 600 + "]}" * 600  # (too deep for json.dumps itself)
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"body": {"amqp-value": ' + value + "}}\n")
    r = amqp("send", serve("-q") + "/deep", "--from", str(lines))
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (
        f"amqp: error: {lines}:1: not a message in the JSON format: nested more than "
        f"{JSON_DEPTH} deep")
