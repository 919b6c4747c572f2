"""`recv --duration S` / `browse --duration S`: the run stops taking messages S seconds
after it started, as --count stops it: what was written is settled, what was not taken
stays on the node, the summary is printed, exit 0."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from proton import Message

from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers
from tests.peers import DirectSender
from tests.peers.net import free_port


def _received(stderr: str) -> int:
    m = re.search(r"amqp: received (\d+),", stderr)
    assert m, stderr
    return int(m[1])


def _ids(stdout: str) -> list[str]:
    return [m["properties"]["message-id"] for m in json_lines(stdout)]


def test_a_paced_run_stops_at_its_duration_and_leaves_the_rest(serve: ServePeers,
                                                               tmp_path: Path) -> None:
    trace = tmp_path / "serve.trace"
    q = f"{serve('--trace', stdout=trace)}/q"
    assert amqp("send", q, "x", "--count", "10", "--message-id", "{n}", "-q").returncode == 0
    # at 2 a second, the turns that come before 1.5 s are at most 3 (0, 0.5, 1.0 s after
    # the first message, which comes after the start)
    r = amqp("recv", q, "--duration", "1.5", "--rate", "2", "--json")
    assert r.returncode == 0, r.stderr
    taken = _ids(r.stdout)
    assert len(taken) <= 3
    assert _received(r.stderr) == len(taken)
    assert "error" not in r.stderr
    # the rest is still on the node, and what was written is not: it was accepted
    r = amqp("recv", q, "--drain", "--json", "-q")
    assert r.returncode == 0, r.stderr
    rest = _ids(r.stdout)
    assert sorted(taken + rest, key=int) == [str(n) for n in range(1, 11)]
    # those here and waiting for their turn at the end were released, never seen (not
    # left with the link, which a peer may count as a failed delivery attempt)
    recv_lines = [ln for ln in trace.read_text().splitlines() if " c2 -> " in ln]
    assert any(" disposition " in ln and "released" in ln for ln in recv_lines), recv_lines


def test_the_duration_ends_a_wait_for_messages(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    # --timeout far off: only the duration can end the run in time (exit 0, not 5)
    r = amqp("recv", q, "--duration", "1", "--timeout", "1000", "--json-summary", timeout=60)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])["recv"]
    assert summary["received"] == 0
    assert summary["duration-over"] is True


def test_count_or_duration_whichever_comes_first(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    assert amqp("send", q, "x", "--count", "2", "-q").returncode == 0
    r = amqp("recv", q, "--count", "5", "--duration", "1", timeout=60)
    assert r.returncode == 0, r.stderr  # fewer than --count is no timeout here
    assert _received(r.stderr) == 2
    assert amqp("send", q, "x", "--count", "3", "-q").returncode == 0
    r = amqp("recv", q, "--count", "2", "--duration", "1000", timeout=60)
    assert r.returncode == 0, r.stderr
    assert _received(r.stderr) == 2


def test_presettled_messages_already_here_are_written(
        direct_sender: Callable[..., DirectSender]) -> None:
    # Pre-settled messages exist nowhere else: those that came before the end are written,
    # not dropped with the link. At 3 a second the credit is 3, each window comes at once
    # and its messages wait for their turns: the window the end falls in has some waiting
    # then (unless the first message came over 0.6 s after the start).
    snd = direct_sender([Message(id=str(n), body="x") for n in range(1, 21)], presettle=True)
    r = amqp("recv", f"{snd.url}/src", "--presettled", "--rate", "3", "--duration", "1.6",
             "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "lost" not in r.stderr
    assert len(_ids(r.stdout)) == _received(r.stderr)


def test_browse_stops_at_its_duration(direct_sender: Callable[..., DirectSender]) -> None:
    # A peer that never answers the drain: without --duration the listing would wait for
    # --timeout, then exit 5.
    snd = direct_sender([Message(id=str(n), body="x") for n in range(3)], answer_drain=False)
    r = amqp("browse", f"{snd.url}/src", "--timeout", "1000", "--duration", "1", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "3 messages seen on 'src' in the --duration (the node may hold more)" in r.stderr
    assert "not checked whether the peer copied" in r.stderr


def test_bad_durations_are_usage_errors() -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"
    for command in ("recv", "browse"):
        for value in ("0", "-1", "nan"):
            code, out, err = amqp_in_process(command, url, "--duration", value)
            assert (code, out) == (2, ""), err
            assert "--duration must be a finite number of seconds" in err
    code, _, err = amqp_in_process("recv", url, "--unsubscribe", "--subscription", "s",
                                   "--duration", "1")
    assert code == 2 and "it takes no --duration" in err
