"""`amqp recv -c N --reconnect`: a message written out whose acceptance never reached the
peer (the connection was cut as it went) comes again after the reconnect. It is written
again (at least once: nothing the peer still holds is settled unwritten) but it is the
same message: --count N is N distinct messages, and the summary says how many came again
("1 redelivered"). Before, the redelivery counted as one of the N: the run stopped a
message short, and the output held N lines, not N different messages.

The cut is at a protocol step (tests/net/framecut.py): with --credit 1 every message has a
disposition of its own, and the third one never reaches `amqp serve`, which puts the
third message back when the connection goes."""

from __future__ import annotations

import json

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.framecut import FrameCut
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def _summary(stderr: str) -> dict:  # type: ignore[type-arg]
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith('{"recv"')]
    return json.loads(line)["recv"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("first_acquirer", "taken", "redelivered", "left"), [
    # the header says which delivery is a first one; serve clears it on the message that
    # comes back: the third twice, not counted, then on to the fifth
    (True, ["1", "2", "3", "3", "4", "5"], 1, ["6"]),
    # no header: a redelivery looks like a new message (released: its delivery-count
    # may not grow, Part 3 §3.4.4), so it counts, and no more than 5 are taken
    (False, ["1", "2", "3", "3", "4"], 0, ["5", "6"]),
])
def test_a_redelivery_is_written_again_and_counted_by_its_header(
        serve: ServePeers, first_acquirer: bool, taken: list[str], redelivered: int,
        left: list[str]) -> None:
    url = serve("-q")
    marked = ["--first-acquirer"] if first_acquirer else []
    r = amqp("send", f"{url}/rd", "x", "--count", "6", "--message-id", "{n}", *marked)
    assert r.returncode == 0, r.stderr
    port = int(url.rsplit(":", 1)[1])
    with FrameCut("127.0.0.1", port, direction="up", nth=3) as cut:
        r = amqp("recv", f"amqp://127.0.0.1:{cut.port}/rd", "--count", "5", "--credit", "1",
                 "--reconnect", "3", "--json", "--json-summary", "--timeout", "10")
    assert cut.cut.is_set()
    assert r.returncode == 0, r.stderr
    ids = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert ids == taken, ids  # (the third written twice: its acceptance was lost)
    s = _summary(r.stderr)
    assert (s["received"], s.get("redelivered", 0), s["outcomes"], s["reconnects"]) == (
        5, redelivered, {"accept": len(taken)}, 1), s
    # nothing written went unsettled, and no more was taken than --count asked for
    rest = amqp("recv", f"{url}/rd", "--timeout", "2", "--json")
    assert [m["properties"]["message-id"] for m in json_lines(rest.stdout)] == left


def test_the_summary_line_says_it(serve: ServePeers) -> None:
    url = serve("-q")
    # (the header marks the one that comes back: serve clears its first-acquirer)
    r = amqp("send", f"{url}/rt", "x", "--count", "3", "--message-id", "{n}",
             "--first-acquirer")
    assert r.returncode == 0, r.stderr
    port = int(url.rsplit(":", 1)[1])
    with FrameCut("127.0.0.1", port, direction="up", nth=2) as cut:
        r = amqp("recv", f"amqp://127.0.0.1:{cut.port}/rt", "--count", "3", "--credit", "1",
                 "--reconnect", "3", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    last = r.stderr.splitlines()[-1]
    assert last.startswith("amqp: received 3, accept 4, 1 redelivered (written again, not "
                           "counted), 1 reconnect(s) in "), r.stderr
