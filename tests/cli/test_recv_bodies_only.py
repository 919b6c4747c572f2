"""`recv --bodies-only`: each body alone on one line, for pipelines — text as it is with
what would break the line escaped, binary as the text view shows it, values on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.net.clirun import amqp, amqp_in_process
from tests.net.servepeer import ServePeers
from tests.peers.net import free_port

BODIES = [
    ({"data": [{"binary-text": "plain text, é"}]}, "plain text, é"),
    ({"data": [{"binary-text": "two\nlines\\n and \x1b[31m"}]}, "two\\nlines\\\\n and \\x1b[31m"),
    ({"data": [{"binary-text": "sev"}, {"binary-text": "eral"}]}, "several"),
    ({"data": [{"binary": "AP/+"}]}, "0x00fffe"),  # not UTF-8
    ({"data": [{"binary-text": ""}]}, ""),
    ({"value": {"int": 5}}, "int:5"),
    ({"value": "a string\tvalue"}, "a string\\tvalue"),
    ({"value": {"symbol": "sym"}}, ":sym"),
    ({"value": {"list": [1, "a", None]}}, '[long:1, "a", null]'),
    ({"sequence": [[1, "x"], [True]]}, '[long:1, "x"] [true]'),
]


def test_bodies_one_line_each(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps({"body": body}) + "\n" for body, _ in BODIES))
    r = amqp("send", q, "--from", str(src), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--drain", "--bodies-only")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "".join(line + "\n" for _, line in BODIES)
    assert f"received {len(BODIES)}, accept {len(BODIES)}" in r.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("--bodies-only", "--json"), "--bodies-only prints bodies alone: it takes no --json"),
    (("--bodies-only", "--out", "f.jsonl"),
     "--bodies-only prints bodies alone: it takes no --out"),
    (("--unsubscribe", "--subscription", "s", "--bodies-only"), "it takes no --bodies-only"),
])
def test_refused_before_connecting(args: tuple[str, ...], said: str) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries
    code, out, err = amqp_in_process("recv", url, *args)
    assert (code, out) == (2, ""), err
    assert said in err
