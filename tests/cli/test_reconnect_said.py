"""`--reconnect`: each lost connection is said on stderr, with why and which attempt of
how many comes next, and in the JSON summary's warnings; each attempt of that reconnect
that fails and is tried again is said alike (docs/send-recv.md, `--reconnect`). Before,
a run that reconnected said nothing of it until its summary's "N reconnect(s)".

The drops are `amqp serve --close-after` (each connection closed with
amqp:connection:forced after 3 deliveries) or a proxy cutting the connection."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.cutproxy import CutProxy
from tests.net.servepeer import ServePeers, cli_env

pytestmark = pytest.mark.integration

FORCED = ("connection lost (the peer closed the connection: amqp:connection:forced: closed "
          "after 3 deliveries (--close-after)); reconnecting (1 of 3)")


def _said(stderr: str, text: str) -> int:
    return stderr.splitlines().count(f"amqp: warning: {text}")


def _filled(serve: ServePeers, address: str, count: int = 8) -> str:
    """A serve that closes each connection after 3 deliveries, holding `count` messages
    on `address`; its URL."""
    url = serve("-q", "--close-after", "3")
    r = amqp("send", f"{url}/{address}", "x", "--message-id", "{n}", "--count", str(count),
             "--reconnect", "10")
    assert r.returncode == 0, r.stderr
    return url


@pytest.mark.parametrize("quiet", [False, True])
def test_send_says_each_lost_connection(serve: ServePeers, quiet: bool) -> None:
    url = serve("-q", "--close-after", "3")
    r = amqp("send", f"{url}/s", "x", "--count", "8", "--reconnect", "3", "--json",
             *(["-q"] if quiet else []))
    assert r.returncode == 0, r.stderr
    # a warning as the others are: said under -q too (which drops only the summary)
    drops = _said(r.stderr, FORCED)
    assert drops >= 2, r.stderr
    if not quiet:
        summary = json.loads(r.stdout)
        assert summary["accepted"] == 8 and summary["reconnects"] == drops, summary
        assert summary["warnings"] == [FORCED] * drops
    else:
        assert r.stdout == ""


def test_recv_says_each_lost_connection(serve: ServePeers) -> None:
    url = _filled(serve, "r")
    r = amqp("recv", f"{url}/r", "--count", "8", "--credit", "1", "--reconnect", "3",
             "--json", "--json-summary", "-t", "10")
    assert r.returncode == 0, r.stderr
    # (at least once: one the drop caught unsettled may come twice)
    ids = {m["properties"]["message-id"] for m in json_lines(r.stdout)}
    assert ids == {str(n) for n in range(1, 9)}, ids
    summary = json.loads(r.stderr.splitlines()[-1])["recv"]
    drops = _said(r.stderr, FORCED)
    assert drops >= 2 and summary["reconnects"] == drops, r.stderr
    assert summary["warnings"].count(FORCED) == drops
    # said before what the drop did to the messages in flight
    lines = r.stderr.splitlines()
    first = lines.index(f"amqp: warning: {FORCED}")
    assert "came with the end" in lines[first + 1], r.stderr


def test_browse_says_the_lost_connection_before_what_it_skipped(serve: ServePeers) -> None:
    # As tests/cli/test_browse_reconnect.py: --credit 2, the proxy cuts the first
    # connection inside the third message (4 kB each).
    url = serve("-q")
    r = amqp("send", f"{url}/b", "x" * 4000, "--count", "10")
    assert r.returncode == 0, r.stderr
    with CutProxy("127.0.0.1", int(url.rsplit(":", 1)[1]), cuts=[10_500],
                  direction="down") as proxy:
        r = amqp("browse", f"amqp://127.0.0.1:{proxy.port}/b", "--credit", "2",
                 "--reconnect", "3", "--json", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 10
    lost = (f"connection lost (cannot keep the connection to 127.0.0.1:{proxy.port}: "
            "connection reset by peer); reconnecting (1 of 3)")
    warnings = json.loads(r.stderr.splitlines()[-1])["browse"]["warnings"]
    assert len(warnings) == 2 and warnings[0] == lost, warnings
    assert re.fullmatch(r"reconnected: skipped \d+ messages already shown", warnings[1])
    assert r.stderr.splitlines()[:2] == [f"amqp: warning: {w}" for w in warnings]


@pytest.mark.parametrize(("command", "direction"), [
    (["send", "x", "--count", "20"], "up"),  # (the transfers count)
    (["recv", "--count", "20", "--credit", "1"], "down"),
])
def test_a_reconnect_of_several_attempts_says_each(serve: ServePeers, command: list[str],
                                                   direction: str) -> None:
    # The first connection is cut a few messages in; the next two at their first bytes
    # (our protocol header, or the peer's answer); the fourth goes through.
    url = serve("-q")
    assert amqp("send", f"{url}/m", "x", "--count", "20").returncode == 0
    port = int(url.rsplit(":", 1)[1])
    with CutProxy("127.0.0.1", port, cuts=[600, 0, 0], direction=direction) as proxy:
        target = f"amqp://someone:sekrit@127.0.0.1:{proxy.port}/m"
        r = amqp(command[0], target, *command[1:], "--reconnect", "3", "-t", "10")
    assert r.returncode == 0, r.stderr
    assert proxy.connections == 4
    said = [line for line in r.stderr.splitlines() if "reconnecting" in line]
    assert len(said) == 3, r.stderr
    hostport = f"127.0.0.1:{urlsplit(target).port}"
    assert re.fullmatch(rf"amqp: warning: connection lost \(.*{re.escape(hostport)}.*\); "
                        r"reconnecting \(1 of 3\)", said[0]), said
    for k, line in enumerate(said[1:], 2):
        assert line.startswith(f"amqp: warning: cannot connect to {hostport}: "), said
        assert line.endswith(f"; reconnecting ({k} of 3)"), said
    assert "sekrit" not in r.stderr


def test_send_says_it_when_it_happens(serve: ServePeers) -> None:
    """A long send says a lost connection then, not in its summary at the end: here the
    line about the drop is out while the run waits for its third line (the drop is met
    sending the second)."""
    url = serve("-q", "--close-after", "1")
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "send", f"{url}/live", "--lines",
                             "--reconnect", "3"], stdin=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cli_env())
    assert proc.stdin is not None and proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
    try:
        proc.stdin.write("one\ntwo\n")
        proc.stdin.flush()
        first = lines.get(timeout=30)  # (a hang guard: before, it came only at the end)
        assert first.startswith("amqp: warning: connection lost (the peer closed the connection: "
                                "amqp:connection:forced"), first
        assert proc.poll() is None  # said while the run waits for its input
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
