"""`recv --verify-sequence`: the numbers `send --sequence` gives a run, checked as the
messages are written — gaps fail the run (exit 6), duplicates are counted (and fail it
only with --no-duplicates), a run that starts mid-sequence starts where it starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.net.sequence import Ranges, SequenceCheck
from tests.net.clirun import amqp, amqp_in_process
from tests.net.servepeer import ServePeers
from tests.peers.net import free_port


def _numbered(path: Path, key: str, numbers: list[int | None]) -> str:
    """JSON lines for send --from: one message per number, None for one without it."""
    lines = []
    for i, n in enumerate(numbers):
        msg: dict[str, object] = {"body": {"data": [{"binary-text": f"m{i}"}]}}
        if n is not None:
            msg["application-properties"] = {key: {"ulong": n}}
        lines.append(json.dumps(msg))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _summary(stderr: str) -> dict[str, object]:
    return json.loads(stderr.strip().splitlines()[0])["recv"]  # type: ignore[no-any-return]


def test_a_clean_run_a_gap_and_a_run_that_starts_mid_sequence(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    r = amqp("send", q, "x", "--count", "10", "--sequence", "-q")
    assert r.returncode == 0, r.stderr
    # --copy leaves the messages on the node for the next receive
    r = amqp("recv", q, "--copy", "--drain", "--verify-sequence")
    assert r.returncode == 0, r.stderr
    assert "amqp: sequence sn 1-10: no gap\n" in r.stderr
    # a selector takes 4, 6 and 7 out on the way: a gap, said as ranges, exit 6
    r = amqp("recv", q, "--copy", "--drain", "--verify-sequence",
             "--selector", "sn NOT IN (4, 6, 7)")
    assert r.returncode == 6, r.stderr
    assert "amqp: sequence sn 1-10: missing 4, 6-7 (3)\n" in r.stderr
    assert r.stderr.endswith("amqp: error: sequence sn: missing 4, 6-7 (3)\n")
    # starting at 3 is where this run starts, unless the user says it starts at 1
    r = amqp("recv", q, "--copy", "--drain", "--verify-sequence", "--selector", "sn > 2")
    assert r.returncode == 0, r.stderr
    assert "amqp: sequence sn 3-10: no gap\n" in r.stderr
    r = amqp("recv", q, "--drain", "--selector", "sn > 2", "--sequence-start", "1",
             "--json-summary")
    assert r.returncode == 6, r.stderr
    seq = _summary(r.stderr)["sequence"]
    assert seq == {"key": "sn", "first": 1, "last": 10, "missing": 2,
                   "missing-ranges": [[1, 2]], "duplicates": 0, "duplicate-ranges": [],
                   "out-of-order": 0, "unnumbered": 0}


def test_duplicates_out_of_order_and_unnumbered(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    # 3 comes late (out of order) and twice, one message carries no number; 4, 6, 7 never
    numbers = [1, 2, 5, 3, 3, 8, 9, None]
    r = amqp("send", q, "--from", _numbered(tmp_path / "m.jsonl", "seq", numbers), "-q")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--copy", "--drain", "--sequence-key", "seq")
    assert r.returncode == 6, r.stderr
    assert ("amqp: sequence seq 1-9: missing 4, 6-7 (3), duplicates 3 (1), out of order 1, "
            "without seq 1\n") in r.stderr
    assert r.stderr.endswith(
        "amqp: error: sequence seq: missing 4, 6-7 (3); 1 message(s) without seq\n")
    r = amqp("recv", q, "--drain", "--sequence-key", "seq", "--json-summary", "--json")
    assert r.returncode == 6, r.stderr
    assert len(r.stdout.splitlines()) == 8  # every message written, duplicates too
    s = _summary(r.stderr)
    assert s["sequence"] == {"key": "seq", "first": 1, "last": 9, "missing": 3,
                             "missing-ranges": [[4, 4], [6, 7]], "duplicates": 1,
                             "duplicate-ranges": [[3, 3]], "out-of-order": 1,
                             "unnumbered": 1}
    why = "sequence seq: missing 4, 6-7 (3); 1 message(s) without seq"
    assert (s["exit"], s["error"]) == (6, why)


def test_duplicates_alone_pass_unless_no_duplicates(serve: ServePeers) -> None:
    q = f"{serve()}/q"
    for _ in range(2):  # the same run twice: every number seen twice
        r = amqp("send", q, "x", "--count", "3", "--sequence", "-q")
        assert r.returncode == 0, r.stderr
    r = amqp("recv", q, "--copy", "--drain", "--verify-sequence")
    assert r.returncode == 0, r.stderr
    assert "amqp: sequence sn 1-3: no gap, duplicates 1-3 (3)\n" in r.stderr
    r = amqp("recv", q, "--drain", "--no-duplicates", "-q")
    assert r.returncode == 6, r.stderr
    assert r.stderr == "amqp: error: sequence sn: duplicates 1-3 (3)\n"


@pytest.mark.parametrize(("args", "said"), [
    (("--sequence-key", ""), "--sequence-key needs a name"),
    (("--sequence-start", "-1"), "--sequence-start must be 0 or more"),
    (("--unsubscribe", "--subscription", "s", "--verify-sequence", "--no-duplicates"),
     "it takes no --verify-sequence, --no-duplicates"),
])
def test_refused_before_connecting(args: tuple[str, ...], said: str) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries
    code, out, err = amqp_in_process("recv", url, *args)
    assert (code, out) == (2, ""), err
    assert said in err


def test_ranges_not_every_number() -> None:
    ranges = Ranges()
    for n in range(1, 100_001):
        ranges.add(n)
    assert ranges.pairs() == [(1, 100_000)]  # a long run in order: one range
    for n in (100_005, 100_003, 100_004, 100_002):  # late ones fill the gaps, then merge
        ranges.add(n)
    assert ranges.pairs() == [(1, 100_000), (100_002, 100_005)]
    assert not ranges.add(100_003)  # seen before: a duplicate


def test_nothing_numbered_is_no_gap_but_said() -> None:
    check = SequenceCheck("sn")
    assert check.failure() is None and check.text() == "sequence sn: no numbered message"
