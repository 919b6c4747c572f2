"""`amqp recv --out FILE` appending to a file whose last line is a whole message with no
line end (made or edited by hand): the message is kept, the line ended, not cut off."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def test_a_whole_last_message_without_a_line_end_is_kept(
        serve: ServePeers, tmp_path: Path) -> None:
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "order 3").returncode == 0
    out = tmp_path / "orders.jsonl"
    kept = b'{"body":{"value":"order 1"}}\n{"body":{"value":"order 2"}}'
    out.write_bytes(kept)
    r = amqp("recv", url, "--out", str(out), "-c", "1")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"amqp: note: {out}: its last line, a whole message, had no line end: one added")
    assert out.read_bytes().startswith(kept + b"\n")
    bodies = [o["body"] for o in json_lines(out.read_text())]
    assert bodies == [{"value": "order 1"}, {"value": "order 2"},
                      {"data": [{"binary-text": "order 3"}]}]


def test_a_last_line_cut_inside_a_message_is_still_cut_off(
        serve: ServePeers, tmp_path: Path) -> None:
    """A cut line that happens to end in a brace is no whole object: cut off as before."""
    url = f"{serve('-q')}/q"
    assert amqp("send", url, "kept").returncode == 0
    out = tmp_path / "kept.jsonl"
    out.write_bytes(b'{"body":{"value":"a"}}\n{"body":{"value":{"x":1}')
    r = amqp("recv", url, "--out", str(out), "-c", "1")
    assert r.returncode == 0, r.stderr
    assert "cut off the last" in r.stderr.splitlines()[0]
    assert [o["body"] for o in json_lines(out.read_text())] == [
        {"value": "a"}, {"data": [{"binary-text": "kept"}]}]
