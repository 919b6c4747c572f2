"""`amqp browse` takes recv's output options that fit a listing (--bodies-only, --out,
--save-bodies, --json-summary, and --duration), defined once for both commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main

from amqpcli.cli.app import _register, app
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers
from tests.peers.net import free_port

SHARED = ("--bodies-only", "--out", "--save-bodies", "--json-summary", "--duration")


def _send(q: str) -> None:
    for body in ("one", "two\tlines\n"):
        assert amqp("send", q, body, "--message-id", body[:3], "-q").returncode == 0


def _still_there(q: str) -> list[str]:
    r = amqp("recv", q, "--drain", "--json", "-q")
    assert r.returncode == 0, r.stderr
    return [m["properties"]["message-id"] for m in json_lines(r.stdout)]


def test_browse_bodies_only(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    _send(q)
    r = amqp("browse", q, "--bodies-only")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "one\ntwo\\tlines\\n\n"
    assert "2 messages on 'q'" in r.stderr
    assert _still_there(q) == ["one", "two"]


def test_browse_out_and_json_summary(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    _send(q)
    out = tmp_path / "snapshot.jsonl"
    r = amqp("browse", q, "--out", str(out), "--json-summary")
    assert r.returncode == 0, r.stderr
    assert [m["properties"]["message-id"] for m in json_lines(out.read_text())] == ["one", "two"]
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["received"] == 2 and summary["held-and-released"] == 2
    assert _still_there(q) == ["one", "two"]


def test_one_definition_for_both_commands() -> None:
    _register()
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    for option in SHARED:
        recv, browse = ([p for p in commands[name].params if option in p.opts]
                        for name in ("recv", "browse"))
        assert len(recv) == len(browse) == 1, option
        assert (recv[0].help, recv[0].default) == (browse[0].help, browse[0].default), option


@pytest.mark.parametrize("args", [("--json",), ("--out", "f.jsonl")])
def test_browse_bodies_only_refuses_the_lossless_lines(args: tuple[str, ...]) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries
    code, out, err = amqp_in_process("browse", url, "--bodies-only", *args)
    assert (code, out) == (2, ""), err
    assert f"--bodies-only prints bodies alone: it takes no {args[0]}" in err
