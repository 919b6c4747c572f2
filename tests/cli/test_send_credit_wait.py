"""A send stalled for want of credit says so while it waits (the progress line), and a
credit timeout ends with the text summary before the error, as other failures do."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers
from tests.peers import DirectReceiver

pytestmark = pytest.mark.integration


def _drawn(stderr: str) -> list[str]:
    """The progress lines drawn on stderr (each starts with a carriage return)."""
    return [part.removesuffix("\x1b[K") for part in stderr.split("\r")[1:]
            if part.startswith("send ")]


def test_no_credit_at_all(serve: ServePeers) -> None:
    url = serve("--credit", "0") + "/q"
    r = amqp("send", url, "hi", "-c", "5", "--timeout", "2", "--progress")
    assert r.returncode == 5, r.stderr
    drawn = _drawn(r.stderr)
    assert drawn, repr(r.stderr)
    assert all(re.fullmatch(r"send \[-{30}\] 0/5 0 msg/s, waiting for credit \d+s", line)
               for line in drawn), drawn
    # the summary on stdout, then the error, its one line
    assert r.stdout.startswith("sent 0, accepted 0, in doubt 0, not sent 5 in "), r.stdout
    assert r.stderr.rsplit("\r\x1b[K", 1)[1] == "amqp: error: no credit from the peer for 2s\n"


def test_credit_that_stops_coming(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver(credit=5, replenish=False)
    r = amqp("send", f"{rcv.url}/q", "x", "-c", "20", "--timeout", "2", "--progress")
    assert r.returncode == 5, r.stderr
    drawn = _drawn(r.stderr)
    assert drawn and all(line.startswith("send [#######") and " 5/20 " in line
                         and re.search(r", waiting for credit \d+s$", line)
                         for line in drawn), drawn
    assert r.stdout.startswith("sent 5, accepted 5, in doubt 0, not sent 15 in "), r.stdout


def test_no_note_while_credit_flows(serve: ServePeers) -> None:
    # paced, so the run lasts past the second before the line is drawn
    r = amqp("send", serve() + "/q", "x", "-c", "8", "--rate", "4", "--progress")
    assert r.returncode == 0, r.stderr
    drawn = _drawn(r.stderr)
    assert drawn and not any("waiting" in line for line in drawn), drawn
