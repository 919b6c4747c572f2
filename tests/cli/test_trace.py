"""`--trace` on send, recv and browse: every frame both ways on stderr as it happens, one
line each in the frame-line format of `pcap-dump`, SASL passwords masked; stdout keeps
only what the command prints there."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import ServePeers
from tests.peers import DirectSender

pytestmark = pytest.mark.integration

LINE = re.compile(r"^\d\d:\d\d:\d\d\.\d{6} (c\d+) (->|<-) (.*)$")


def _frames(stderr: str) -> list[tuple[str, str, str]]:
    return [m.groups() for m in map(LINE.match, stderr.splitlines()) if m]  # type: ignore[misc]


def test_send_trace_shows_both_ways_and_masks_the_password(serve: ServePeers) -> None:
    url = serve("-q", "--user", "alice", "--password", "hunter2")
    base = url.replace("amqp://", "amqp://alice:hunter2@")
    r = amqp("send", f"{base}/tq", "hello", "--trace")
    assert r.returncode == 0, r.stderr
    assert "hunter2" not in r.stderr + r.stdout
    frames = _frames(r.stderr)
    said = [(arrow, text.split()[0] if not text.startswith("[") else text.split()[1])
            for _, arrow, text in frames]
    assert said[:2] == [("->", "AMQP"), ("<-", "AMQP")]  # the SASL headers
    for step in [("->", "sasl-init"), ("<-", "sasl-outcome"), ("->", "open"), ("<-", "open"),
                 ("->", "attach"), ("<-", "attach"), ("<-", "flow"), ("->", "transfer"),
                 ("<-", "disposition"), ("->", "close"), ("<-", "close")]:
        assert step in said, (step, said)
    init = next(t for _, a, t in frames if "sasl-init" in t)
    assert "mechanism=PLAIN" in init and "***" in init
    assert {c for c, _, _ in frames} == {"c1"}
    assert r.stdout.startswith("sent 1, accepted 1")  # the summary, as without --trace


def test_recv_trace_leaves_stdout_to_the_messages(serve: ServePeers) -> None:
    url = serve("-q") + "/tr"
    assert amqp("send", url, "one", "-c", "2").returncode == 0
    r = amqp("recv", url, "-c", "2", "--json", "--trace")
    assert r.returncode == 0, r.stderr
    assert [m["body"]["data"][0]["binary-text"] for m in json_lines(r.stdout)] == ["one"] * 2
    said = [t for _, a, t in _frames(r.stderr) if a == "->"]
    assert any("flow" in t and "link-credit=2" in t for t in said), said
    assert any("disposition" in t and "state=accepted" in t for t in said), said


def test_trace_labels_each_connection_of_a_reconnecting_run(serve: ServePeers) -> None:
    url = serve("-q", "--close-after", "2") + "/tc"
    assert amqp("send", url, "m", "-c", "3", "--reconnect", "5").returncode == 0
    r = amqp("recv", url, "-c", "3", "--credit", "1", "--reconnect", "5", "--json",
             "--trace")
    assert r.returncode == 0, r.stderr
    labels = list(dict.fromkeys(c for c, _, _ in _frames(r.stderr)))
    assert labels[:2] == ["c1", "c2"], labels
    assert any(c == "c1" and a == "<-" and "amqp:connection:forced" in t
               for c, a, t in _frames(r.stderr))


def test_trace_against_rabbitmq(rabbitmq_url: str) -> None:
    q = f"{rabbitmq_url}/{queue_name('trace')}"
    r = amqp("send", q, "x", "--trace")
    assert r.returncode == 0, r.stderr
    assert "guest:guest" not in r.stderr and "\\x00guest\\x00guest" not in r.stderr
    frames = _frames(r.stderr)
    peer_open = next(t for _, a, t in frames if a == "<-" and t.split()[1:2] == ["open"])
    assert "container-id=" in peer_open and "idle-time-out=" in peer_open, peer_open
    r = amqp("browse", q, "--trace", "--json")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 1
    # the browse asks for a copy: its source says so
    assert any(" copy) target=null" in t for _, a, t in _frames(r.stderr)
               if a == "->" and "attach" in t), r.stderr


def _seconds(line: str) -> float:
    """A trace line's time of day in seconds."""
    h, m, s = line[:15].split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def test_frames_we_send_on_our_own_have_their_own_time(
        direct_sender: Callable[..., DirectSender]) -> None:
    # The peer attaches and sends nothing: our detach goes when the timeout has passed, a
    # second after the peer last spoke, and its line says so (not the time of the last
    # frame the peer sent).
    snd = direct_sender([])
    r = amqp("recv", f"{snd.url}/src", "-t", "1", "--trace")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if LINE.match(ln)]
    ours = next(i for i, ln in enumerate(lines) if " -> [0]  detach" in ln)
    heard = max(_seconds(ln) for ln in lines[:ours] if " <- " in ln)
    waited = (_seconds(lines[ours]) - heard) % 86400  # (midnight between them)
    assert waited >= 0.9, lines
