"""`amqp send` against a peer that releases some messages (`amqp serve --release
every:3`, counted per sender link): the summary names the released ones (it gave only
their count: `recv --verify-sequence` later found them missing), and `--reconnect` leaves
them alone (released is an outcome, not a failure)."""

from __future__ import annotations

import json

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def test_released_messages_are_named(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--sequence", "--timeout", "20")
    assert r.returncode == 6, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("sent 10, accepted 7, released 3, in doubt 0 in ")
    assert lines[1].startswith("released 3 (messages 3, 6, 9): not delivered")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--message-id", "id-{n}", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 6 and s["exit"] == 6 and s["released"] == 3
    assert s["released-messages"] == [{"number": n, "message-id": f"id-{n}"}
                                      for n in (3, 6, 9)]


def test_reconnect_does_not_send_released_messages_again(serve: ServePeers) -> None:
    url = serve("-q", "--release", "every:3")
    r = amqp("send", f"{url}/q", "x", "-c", "10", "--reconnect", "3", "--json",
             "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 6, r.stderr
    assert (s["sent"], s["accepted"], s["released"], s["resent"]) == (10, 7, 3, 0)
    assert [m["number"] for m in s["released-messages"]] == [3, 6, 9]


