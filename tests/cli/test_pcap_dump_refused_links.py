"""A link refused (its attach answered with a null terminus, then a detach with an error,
as `amqp serve --refuse` and a broker refusing a bad selector do) is a link to the
address its attach asked for: --address shows its frames and its notice, and
--connections, --links and the summary list its connection and itself, as the lines do;
no note says the address matched no link. A link note is judged by its link: one about
a link --address does not choose is not shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from tests.cli.test_pcap_dump import run
from tests.dissect.helpers import Script, write_connections


def _capture(path: Path) -> str:
    """c1 sends to bad1, c2 receives from bad2 (both refused: amqp:not-found), c3
    receives from good with a bad selector (refused: amqp:invalid-field), c4 sends one
    message to good (accepted)."""
    return write_connections(path, [
        Script().open().refused_link("to-bad1", "bad1").close(),
        Script().open().refused_link("from-bad2", "bad2", sender=False).close(),
        Script().open().refused_link("from-good", "good", sender=False,
                                     condition="amqp:invalid-field").close(),
        Script().open().sender_link(name="to-good", address="good").transfer(0)
        .dispose(0, c.Accepted()).close(),
    ])


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _capture(tmp_path_factory.mktemp("refused") / "refused.pcapng")


def test_the_capture_refuses_three_links(refused: str) -> None:
    code, out, err = run("pcap-dump", refused)
    assert code == 0, err
    assert [ln.split(": ", 1)[1] for ln in out.splitlines() if " !! " in ln] == [
        "link 'to-bad1' refused by server: amqp:not-found",
        "link 'from-bad2' refused by server: amqp:not-found",
        "link 'from-good' refused by server: amqp:invalid-field"]


@pytest.mark.parametrize(("args", "links"), [
    (["--address", "bad*"], [("c1", "to-bad1", "bad1"), ("c2", "from-bad2", "bad2")]),
    (["-a", "good"], [("c3", "from-good", "good"), ("c4", "to-good", "good")]),
    (["-a", "bad2", "-a", "good", "-C", "c2", "-C", "c3"],
     [("c2", "from-bad2", "bad2"), ("c3", "from-good", "good")]),
    (["--link", "from-*"], [("c2", "from-bad2", "bad2"), ("c3", "from-good", "good")]),
    # records inside the links: what passed chooses (the refusal is in the range)
    (["-a", "good", "--until", "2.5"], [("c3", "from-good", "good")]),
    (["-a", "bad*", "--since", "1"], [("c2", "from-bad2", "bad2")]),
])
def test_lines_and_end_views_agree_on_refused_links(
        refused: str, args: list[str], links: list[tuple[str, str, str]]) -> None:
    conns = sorted({conn for conn, _, _ in links})
    names = [name for _, name, _ in links]
    code, out, err = run("pcap-dump", refused, "--frames", "--summary", "--connections",
                         "--links", *args)
    assert code == 0 and err == "", err  # no "matched no link"
    lines = out.splitlines()
    frames = [ln for ln in lines if ln[:1].isdigit() and " !! " not in ln]
    notices = [ln for ln in lines if " !! " in ln]
    refused_here = [n for n in names if n != "to-good"]
    # every frame of each refused link: both attaches and both detaches
    assert sum(" attach " in ln for ln in frames) == 2 * len(links)
    assert sum(" detach " in ln for ln in frames) == 2 * len(refused_here)
    assert sorted({ln.split()[1] for ln in frames}) == conns
    assert [ln.split("'")[1] for ln in notices] == refused_here
    assert [ln.split()[0] for ln in lines if " link '" in ln and " s1 " in ln] == [
        conn for conn, _, _ in links]
    assert [ln.split()[0] for ln in lines if " -> 10.0.0.2:5672 " in ln] == conns
    assert f"connections: {len(conns)} (amqp-1.0 {len(conns)})" in lines
    assert f"notices: link {len(refused_here)}" in lines
    assert [ln.split()[:3] for ln in lines if ln.startswith("  c")] == [
        [conn, repr(name), f"({address})"] for conn, name, address in links]
    code, out, err = run("pcap-dump", refused, "--summary", "--connections", "--links",
                         "--json", *args)
    assert code == 0 and err == ""
    objs = [json.loads(ln) for ln in out.splitlines()]
    assert [(o["connection"], o["name"]) for o in objs if o["record"] == "link"] == [
        (conn, name) for conn, name, _ in links]
    assert [o["connection"] for o in objs if o["record"] == "connection"] == conns
    s = objs[-1]
    assert s["connections"] == len(conns) and s["notices"] == (
        {"link": len(refused_here)} if refused_here else {})
    assert [(x["connection"], x["name"], x["address"]) for x in s["links"]] == links
    assert s["frames"] == 4 * len(refused_here) + 5 * (len(links) - len(refused_here))


def test_an_address_only_refused_links_had_is_no_typo(refused: str) -> None:
    code, _, err = run("pcap-dump", refused, "-a", "bad1")
    assert code == 0 and err == ""
    code, _, err = run("pcap-dump", refused, "-a", "bad3")
    assert code == 0
    assert err.startswith("amqp: note: --address bad3 matched no link (did you mean ")
