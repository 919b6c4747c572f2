"""An internal error in the middle of a run (a step of ours that raises while the client
drives the connection) ends the run as a lost connection does as far as its report goes:
the summary (text or JSON), the sends whose outcome never came in doubt and listed, the
messages written. Then exit 7 when anything is in doubt, else 1 with the internal-error
line. Before, the run said only that line: no summary, no in-doubt list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from amqpcli.engine import events as ev
from amqpcli.net import client as client_module
from tests.net.clirun import amqp, amqp_in_process, queue_name
from tests.net.servepeer import ServePeers

BOOM = "a step of ours failed"
ONE_LINE = f"amqp: internal error: RuntimeError: {BOOM} (rerun with --debug)\n"


def _fails_on_call(monkeypatch: pytest.MonkeyPatch, events: tuple[type, ...], n: int) -> None:
    """The client's handlers of `events` raise on their `n`th call (counted together)."""
    calls = [0]
    for event in events:
        handler = client_module._HANDLERS[event]

        def failing(client: Any, e: Any, handler: Any = handler) -> None:
            calls[0] += 1
            if calls[0] >= n:
                raise RuntimeError(BOOM)
            handler(client, e)

        monkeypatch.setitem(client_module._HANDLERS, event, failing)


def _settlements_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # the third batch of outcomes: those sent and not yet settled stay without one
    _fails_on_call(monkeypatch, (ev.DeliverySettled, ev.DeliveriesSettled), 3)


@pytest.mark.integration
def test_send_json_lists_the_sends_in_doubt(serve: ServePeers,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"{serve()}/{queue_name()}"
    _settlements_fail(monkeypatch)
    code, out, err = amqp_in_process("send", url, "x", "-c", "2000", "--json")
    assert code == 7, err
    s = json.loads(out)
    assert s["exit"] == 7 and s["error"] == f"internal error: RuntimeError: {BOOM}", s
    assert s["accepted"] > 0 and s["in-doubt"] > 0, s
    assert s["accepted"] + s["in-doubt"] == s["sent"], s  # every send in one bucket
    assert len(s["in-doubt-messages"]) == s["in-doubt"]
    assert s["not-sent"] == 2000 - s["sent"]
    assert err == (f"amqp: error: {s['in-doubt']} message(s) in doubt: internal error: "
                   f"RuntimeError: {BOOM}\n"), err


@pytest.mark.integration
def test_send_text_summary_and_in_doubt_list(serve: ServePeers,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"{serve()}/{queue_name()}"
    _settlements_fail(monkeypatch)
    code, out, err = amqp_in_process("send", url, "x", "-c", "2000")
    assert code == 7, err
    lines = out.splitlines()
    assert lines[0].startswith("sent ") and ", in doubt " in lines[0], out
    assert lines[1].startswith("in doubt: message "), out
    assert "message(s) in doubt: internal error: RuntimeError" in err, err


@pytest.mark.integration
@pytest.mark.parametrize("summary", ["text", "json"])
def test_recv_writes_what_came_and_its_summary(serve: ServePeers,
                                               monkeypatch: pytest.MonkeyPatch,
                                               summary: str) -> None:
    url = f"{serve()}/{queue_name()}"
    r = amqp("send", url, "m", "-c", "10")
    assert r.returncode == 0, r.stderr
    _fails_on_call(monkeypatch, (ev.MessageReceived,), 6)  # on the 6th message
    how = ["--json-summary"] if summary == "json" else []
    # credit 1: each message comes in a read of its own, after the one before was written
    # (those that come with the end are not written, as after a drop: they come again)
    code, out, err = amqp_in_process("recv", url, "-c", "10", "-t", "20", "--credit", "1",
                                     "--json", *how)
    assert code == 1, err
    assert len([json.loads(line) for line in out.splitlines()]) == 5, out  # written
    first, second = err.splitlines(keepends=True)
    assert second == ONE_LINE, err  # nothing in doubt: the internal error's line, exit 1
    if summary == "json":
        s = json.loads(first)["recv"]
        assert s["received"] == 5 and s["exit"] == 1, s
        assert s["error"] == f"internal error: RuntimeError: {BOOM} (after 5 message(s))", s
    else:
        assert first.startswith("amqp: received 5, accept 5 in "), err


@pytest.mark.integration
def test_request_lists_the_requests_in_doubt(serve: ServePeers,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    url = serve()
    _fails_on_call(monkeypatch, (ev.DeliverySettled, ev.DeliveriesSettled), 1)
    code, _out, err = amqp_in_process("request", f"{url}/{queue_name()}", "x", "-c", "3",
                                      "--concurrency", "3", "--reply-to", queue_name(),
                                      "--json")
    assert code == 7, err
    summary, line = err.splitlines()
    s = json.loads(summary)["request"]
    assert s["exit"] == 7 and s["in-doubt"] == 3 and len(s["in-doubt-messages"]) == 3, s
    assert line == f"amqp: error: 3 message(s) in doubt: internal error: RuntimeError: {BOOM}"
