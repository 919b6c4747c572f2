"""`--json-body` with no `--body-type` sends the value as an amqp-value section (it was a
data section, so the documented `--json-body '{"map": …}'` was refused); an explicit
`--body-type` still decides, and `-b data` still wants a binary value."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers


@pytest.mark.integration
def test_json_body_is_a_value_unless_told(serve: ServePeers) -> None:
    url = serve("-q") + "/jb"
    sends = [
        ("--json-body", '{"map": {"a": {"uint": 1}}}'),
        ("--json-body", '{"binary-text": "hi"}'),
        ("--json-body", '{"binary-text": "hi"}', "-b", "data"),
        ("--json-body", '[1, {"uint": 2}]', "-b", "sequence"),
    ]
    for args in sends:
        r = amqp("send", url, *args, "-q")
        assert r.returncode == 0, (args, r.stderr)
    r = amqp("recv", url, "--count", str(len(sends)), "--json", "-q")
    assert r.returncode == 0, r.stderr
    assert [m["body"] for m in json_lines(r.stdout)] == [
        {"value": {"map": {"a": {"uint": 1}}}},
        {"value": {"binary-text": "hi"}},
        {"data": [{"binary-text": "hi"}]},
        {"sequence": [[1, {"uint": 2}]]},
    ]


def test_data_with_a_json_body_still_needs_a_binary_value() -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1/q", "-b", "data",
                                   "--json-body", '{"map": {"a": {"uint": 1}}}')
    assert (code, err) == (2, ("amqp: error: --body-type data with --json-body needs a binary "
                              "value\n"))
