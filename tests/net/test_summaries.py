"""Outcome patterns, send/receive summaries and the exit codes they lead to."""

from __future__ import annotations

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.errors import Exit, UserError
from amqpcli.net.receiving import Outcome, RecvPlan, parse_outcomes, source_for
from amqpcli.net.sending import SendSummary, summary_exit, summary_text


def test_parse_outcomes() -> None:
    got = parse_outcomes("accept, release,reject:amqp:link:detach-forced=go away,modify:failed")
    assert [o.name for o in got] == ["accept", "release", "reject", "modify"]
    assert got[2].condition == "amqp:link:detach-forced" and got[2].description == "go away"
    assert got[3].delivery_failed and not got[3].undeliverable_here
    st = got[2].state()
    assert isinstance(st, c.Rejected) and st.error.condition == Symbol("amqp:link:detach-forced")
    assert got[0].state() is Outcome("accept").state()  # shared: one disposition per run
    assert isinstance(parse_outcomes("reject")[0].state(), c.Rejected)
    m = parse_outcomes("modify:undeliverable")[0].state()
    assert m.undeliverable_here is True and m.delivery_failed is None


@pytest.mark.parametrize("bad", ["nope", "modify:sideways", "", "release:x", "accept:"])
def test_parse_outcomes_errors(bad: str) -> None:
    with pytest.raises(UserError):
        parse_outcomes(bad)


def test_source_for() -> None:
    s = source_for(RecvPlan(address="q", selector="a = 1", copy=True))
    assert s.address == "q" and s.distribution_mode == Symbol("copy")
    (key, val), = s.filter.items()
    assert key == Symbol("jms-selector")
    assert val.descriptor == Symbol("apache.org:selector-filter:string")
    assert val.value == "a = 1"
    d = source_for(RecvPlan(address=None, dynamic=True))
    assert d.dynamic is True and d.address is None
    sub = source_for(RecvPlan(address="t", subscription="s1"))
    assert sub.durable == 2 and sub.expiry_policy == Symbol("never")


def test_summary_exit_priorities() -> None:
    assert summary_exit(SendSummary(sent=3, accepted=3)) == (Exit.OK, "")
    code, why = summary_exit(SendSummary(sent=3, accepted=1, rejected=1, released=1))
    assert code == Exit.REJECTED and "1 rejected, 1 released" in why
    s = SendSummary(sent=3, accepted=1, rejected=1, in_doubt=[(3, "m3")],
                    failure=UserError("lost", Exit.CONNECTION))
    code, why = summary_exit(s)
    assert code == Exit.IN_DOUBT and "1 message(s) in doubt: lost" == why
    assert summary_exit(SendSummary(failure=UserError("x", Exit.REFUSED)))[0] == Exit.REFUSED


def test_summary_text_and_json() -> None:
    s = SendSummary(sent=5, accepted=4, in_doubt=[(5, b"\x01")], resent=2, reconnects=1,
                    elapsed=2.0)
    text = summary_text(s)
    assert text.startswith("sent 5, accepted 4, in doubt 1, resent 2, 1 reconnect(s)")
    assert "in doubt: message 5 (message-id '01')" in text
    j = s.to_json()
    assert j["in-doubt-messages"] == [{"number": 5, "message-id": "01"}] and j["rate"] == 2.5


def test_text_summary_says_settled_without_outcome() -> None:
    # the JSON had "other": 3, the text left it out and read as "accepted 0, all fine"
    s = SendSummary(sent=3, messages=3, other=3, elapsed=1.0)
    assert "settled without outcome 3" in summary_text(s)
    assert "settled without outcome" not in summary_text(SendSummary(sent=1, accepted=1))


def test_settled_without_outcome_is_not_accepted() -> None:
    # exit 0 says every message sent was accepted: a settlement with no outcome leaves
    # what became of the message unknown (Part 2 §2.6.12), so it is exit 6, not 0
    from amqpcli.errors import Exit
    from amqpcli.net.sending import summary_exit

    s = SendSummary(sent=3, messages=3, other=3, elapsed=1.0)
    assert summary_exit(s) == (Exit.REJECTED, ("3 message(s) not accepted (0 rejected, 0 "
                               "released, 0 modified, 3 settled without an outcome)"))
    assert s.to_json()["exit"] == Exit.REJECTED
    s = SendSummary(sent=3, messages=3, accepted=2, rejected=1, elapsed=1.0)
    assert summary_exit(s)[1] == ("1 message(s) not accepted (1 rejected, 0 released, "
                                  "0 modified)")


def test_a_failure_before_the_first_send_counts_the_body_not_sent() -> None:
    from tests.net.clirun import amqp, json_lines

    r = amqp("send", "amqp://127.0.0.1:1/q", "hi", "--json")
    summary = json_lines(r.stdout)[-1]
    assert r.returncode == 3 and summary["not-sent"] == 1, r.stdout
