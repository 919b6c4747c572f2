"""Filters that pick records inside connections and links (--state, --performative,
--since, --until): the end views keep to the connections and links those records belong
to, and the summary's link lines count those deliveries, so the summary agrees with
itself and with the lines. Filters that choose links (--address, --link) choose the
connections that have them: --connections and the summary keep to those."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import Script
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
    start = 1_700_000_000_000_000_000
    with CaptureWriter(path) as w:
        for i, (name, address) in enumerate(links):
            t0 = start + i * 1_000_000_000
            conv = TcpConversation(w, client=("10.0.0.1", 40000 + i),
                                   server=("10.0.0.2", 5672), start_ns=t0)
            conv.handshake()
            s = Script().open().sender_link(name=name, address=address)
            s.transfer(0).dispose(0, c.Accepted()).close()
            for d, data, t in s.steps:
                conv.send(d, data, time_ns=t0 + int(t * 1e9))
            conv.close()
    return str(path)


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
