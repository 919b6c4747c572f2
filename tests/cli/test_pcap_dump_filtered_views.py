"""Filters that pick records inside connections and links (--state, --performative,
--since, --until): the end views keep to the connections and links those records belong
to, and the summary's link lines count those deliveries, so the summary agrees with
itself and with the lines. Filters that choose links (--address, --link) choose the
connections that have them: --connections and the summary keep to those."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import Script, write, write_connections
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

SESSION = str(REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng")


def _summary(*args: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run("pcap-dump", SESSION, "--summary", "--json", *args)
    assert code == 0, err
    return json.loads(out.splitlines()[-1])  # type: ignore[no-any-return]


def test_state_filter_summary_counts_only_the_matching_deliveries() -> None:
    whole = _summary()
    s = _summary("--state", "rejected")
    assert s["by-outcome"] == {"rejected": s["deliveries"]} and s["deliveries"] > 0
    assert sum(ls["deliveries"] for ls in s["links"]) == s["deliveries"]
    assert all(set(ls["outcomes"]) == {"rejected"} for ls in s["links"])
    assert s["connections"] < whole["connections"]
    assert len(s["links"]) < len(whole["links"])


def test_time_filter_summary_agrees_with_itself() -> None:
    whole = _summary()
    s = _summary("--since", "1")
    assert 0 < s["deliveries"] < whole["deliveries"]
    assert sum(ls["deliveries"] for ls in s["links"]) == s["deliveries"]
    nothing = _summary("--since", "2099-01-01T00:00:00Z")
    assert (nothing["frames"], nothing["connections"], nothing["links"]) == (0, 0, [])


def test_links_and_connections_views_keep_to_what_passed() -> None:
    code, out, _ = run("pcap-dump", SESSION, "--connections", "--state", "rejected")
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines() if ln.startswith("c")] == ["c1"]
    code, whole, _ = run("pcap-dump", SESSION, "--links")
    code, some, _ = run("pcap-dump", SESSION, "--links", "--state", "rejected")
    heads = [ln for ln in some.splitlines() if ln.startswith("c")]
    assert len(heads) == 1 and heads[0] in whole  # the link itself, shown whole
    code, out, _ = run("pcap-dump", SESSION, "--links", "--performative", "flow")
    assert code == 0 and len([ln for ln in out.splitlines() if ln.startswith("c")]) >= 1


# --- --address and --link choose connections too ----------------------------------------

def _links_capture(path: Path) -> str:
    """Four connections, one link each: c1 and c2 to `other` (links `amqp-a`, `amqp-b`),
    c3 and c4 to `orders` (links `o3`, `o4`)."""
    links = [("amqp-a", "other"), ("amqp-b", "other"), ("o3", "orders"), ("o4", "orders")]
    return write_connections(path, [
        Script().open().sender_link(name=name, address=address)
        .transfer(0).dispose(0, c.Accepted()).close() for name, address in links])


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _links_capture(tmp_path_factory.mktemp("links") / "four.pcapng")


def _heads(out: str) -> list[str]:
    return [ln.split()[0] for ln in out.splitlines() if ln[:1] == "c"]


@pytest.mark.parametrize(("args", "chosen"), [
    (["-a", "orders"], ["c3", "c4"]),
    (["--address", "oth*"], ["c1", "c2"]),
    (["--link", "amqp-*"], ["c1", "c2"]),
    (["--link", "o4"], ["c4"]),
    (["-a", "orders", "-C", "c1", "-C", "c3"], ["c3"]),
])
def test_address_and_link_filters_choose_the_connections_too(
        four: str, args: list[str], chosen: list[str]) -> None:
    code, out, err = run("pcap-dump", four, "--connections", *args)
    assert code == 0 and err == ""
    assert _heads(out) == chosen
    code, out, _ = run("pcap-dump", four, "--links", *args)
    assert [ln.split()[0] for ln in out.splitlines() if " link " in ln] == chosen
    code, out, _ = run("pcap-dump", four, "--summary", "--json", *args)
    s = json.loads(out)
    assert s["connections"] == len(chosen) and s["protocols"] == {"amqp-1.0": len(chosen)}
    assert [ls["connection"] for ls in s["links"]] == chosen
    code, out, _ = run("pcap-dump", four, "--summary", *args)
    assert out.startswith(f"connections: {len(chosen)} (amqp-1.0 {len(chosen)})\n")


def test_address_filter_chooses_amqp010_connections_by_destination() -> None:
    echo = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")
    require(Path(echo))
    code, out, _ = run("pcap-dump", echo, "--connections", "-a", "echo")
    assert code == 0 and _heads(out) == ["c1"]
    code, out, err = run("pcap-dump", echo, "--connections", "--summary", "--json",
                         "-a", "nosuch")
    assert code == 0 and [json.loads(ln)["record"] for ln in out.splitlines()] == ["summary"]
    assert json.loads(out)["connections"] == 0
    assert "--address nosuch matched no link" in err


def test_an_address_or_link_that_names_nothing_says_so(four: str) -> None:
    for args, notes in [
        (["-a", "ordrs"], ["--address ordrs matched no link (did you mean 'orders'?)"]),
        (["--link", "zz*", "--link", "o3"], ["--link zz* matched no link"]),
        (["-a", "orders", "-a", "nothing-like-it"],
         ["--address nothing-like-it matched no link"]),
        (["-a", "orders", "-C", "c1"],
         ["--address orders matched no link of the connections --connection chose"]),
        (["-a", "orders", "--link", "amqp-a"], []),  # each names a link (not the same one)
        # not a note about -a as well
        (["-C", "c9", "-a", "orders"],
         ["--connection c9 matched no connection (there are c1 to c4)"]),
    ]:
        code, _, err = run("pcap-dump", four, *args)
        assert code == 0
        assert err.splitlines() == [f"amqp: note: {n}" for n in notes], args


# --- notices and violations do not choose connections for --state, --selector, ... ------

def _asides_capture(path: Path) -> str:
    """Three connections: c1 sends a red message (accepted) and a blue one (rejected) on
    link `orders-link`; on c2 the server refuses link `refused-link` (a link notice); on
    c3 the client detaches a handle it never attached (a violation). Only c1 has frames
    or deliveries that --state, --selector or --performative transfer can choose."""
    s1 = Script().open().sender_link(name="orders-link", address="orders")
    for did, colour in ((0, "red"), (1, "blue")):
        s1.c(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t%d" % did,
                        message_format=0),
             payload=Message(body="m", application_properties={"colour": colour}).encode())
    s1.dispose(0, c.Accepted()).dispose(1, c.Rejected()).close()
    s2 = Script().open().refused_link("refused-link", "nosuch", source="client").close()
    s3 = Script().open().c(c.Detach(handle=5, closed=True)).close()
    return write_connections(path, [s1, s2, s3])


@pytest.fixture(scope="module")
def asides(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _asides_capture(tmp_path_factory.mktemp("asides") / "asides.pcapng")


def test_the_capture_has_a_link_notice_and_a_violation_outside_c1(asides: str) -> None:
    code, out, err = run("pcap-dump", asides)
    assert code == 0, err
    assert "c2 !! server: link 'refused-link' refused by server: amqp:not-found" in out
    assert "c3 !! violation unknown-handle by client" in out


@pytest.mark.parametrize(("args", "chosen", "links"), [
    (["--selector", "colour = 'red'"], ["c1"], ["orders-link"]),
    (["-s", "colour = 'red'", "-a", "*"], ["c1"], ["orders-link"]),
    (["--state", "rejected"], ["c1"], ["orders-link"]),
    (["--state", "accepted", "--link", "*"], ["c1"], ["orders-link"]),
    (["--performative", "transfer"], ["c1"], ["orders-link"]),
    (["--selector", "colour = 'green'"], [], []),
    # a time range judges every record by its time: what is in it chooses
    (["--since", "1"], ["c2", "c3"], ["refused-link"]),
])
def test_notices_and_violations_choose_no_connection_filters_do_not_judge_them_by(
        asides: str, args: list[str], chosen: list[str], links: list[str]) -> None:
    """A link notice or a violation passes --state, --selector and --performative (it has
    no state, message or performative to judge) and is shown, but its connection is not
    one those filters chose: --connections, --links and the summary leave it out."""
    code, out, err = run("pcap-dump", asides, "--connections", *args)
    assert code == 0 and err == ""
    assert _heads(out) == chosen
    code, out, _ = run("pcap-dump", asides, "--connections", "--json", *args)
    assert code == 0
    objs = [json.loads(ln) for ln in out.splitlines()]
    assert [o["connection"] for o in objs if o["record"] == "connection"] == chosen
    code, out, _ = run("pcap-dump", asides, "--links", *args)
    assert code == 0
    assert [ln.split()[3] for ln in out.splitlines() if ln[:1] == "c"] == [
        repr(x) for x in links]
    code, out, _ = run("pcap-dump", asides, "--links", "--json", *args)
    assert code == 0
    objs = [json.loads(ln) for ln in out.splitlines()]
    assert [o["name"] for o in objs if o["record"] == "link"] == links
    code, out, _ = run("pcap-dump", asides, "--summary", "--json", *args)
    assert code == 0
    s = json.loads(out.splitlines()[-1])
    assert s["connections"] == len(chosen)
    assert s["protocols"] == ({"amqp-1.0": len(chosen)} if chosen else {})
    assert [ls["name"] for ls in s["links"]] == links
    code, out, _ = run("pcap-dump", asides, "--summary", *args)
    assert code == 0
    head = f"connections: {len(chosen)}" + (f" (amqp-1.0 {len(chosen)})" if chosen else "")
    assert out.splitlines()[0] == head


def test_the_notice_and_the_violation_are_still_shown_and_counted(asides: str) -> None:
    """Notices are filtered by connection and time only, violations by connection, time
    and link: the lines and the summary's counts of them keep them."""
    code, out, _ = run("pcap-dump", asides, "--state", "rejected")
    assert code == 0
    assert "refused by server" in out and "violation unknown-handle" in out
    code, out, _ = run("pcap-dump", asides, "--state", "rejected", "--summary", "--json")
    assert code == 0
    s = json.loads(out.splitlines()[-1])
    assert s["notices"] == {"link": 1} and s["by-violation"] == {"unknown-handle": 1}


def test_a_notice_chooses_no_connection_for_a_link_filter(tmp_path: Path) -> None:
    """With --address or --link a notice passes unjudged (it names no link a filter can
    match): in a time range where the chosen link did nothing, the connection is not
    chosen by another link's notice."""
    s = Script().open().sender_link(name="orders-link", address="orders")
    s.transfer(0).dispose(0, c.Accepted())
    s.at(5.0).refused_link("refused-link", "nosuch", handle=1, source="client").close()
    path = str(write(tmp_path / "late.pcapng", s))
    for args, chosen in ((["--since", "4"], ["c1"]),
                         (["--since", "4", "--link", "refused-link"], ["c1"]),
                         (["--since", "4", "--link", "orders-link"], []),
                         (["--until", "4", "--link", "orders-link"], ["c1"])):
        code, out, err = run("pcap-dump", path, "--connections", "--summary", "--json", *args)
        assert code == 0 and err == "", args
        objs = [json.loads(ln) for ln in out.splitlines()]
        assert [o["connection"] for o in objs if o["record"] == "connection"] == chosen, args
        assert objs[-1]["connections"] == len(chosen), args
