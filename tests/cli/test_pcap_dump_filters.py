"""`amqp pcap-dump` shows a receiver's source filters on the attach's frame line, and
`--links` shows what the sender's answer did to them: a filter it left out (a broker that
does not support it, Part 3 §3.5.8), one it answered null for (not applied), one it
changed — requested beside granted, the filter named. A filter granted as asked is no
difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Described, Symbol, ULong
from tests.dissect.helpers import RECEIVER, SENDER, Script, write_connections
from tests.net.clirun import amqp_in_process as run

SELECTOR = ULong(0x0000468C00000004)
NO_LOCAL = Symbol("apache.org:no-local-filter:list")
RED = "color = 'red' AND n > 4"


def _receiver(name: str, asked: dict[Symbol, object],
              granted: dict[Symbol, object] | None) -> Script:
    s = Script().open()
    s.c(c.Attach(name=name, handle=0, role=RECEIVER,
                 source=c.Source(address="sel", distribution_mode=Symbol("copy"),
                                 filter=asked), target=None))
    s.s(c.Attach(name=name, handle=0, role=SENDER,
                 source=c.Source(address="sel", distribution_mode=Symbol("copy"),
                                 filter=granted), target=None, initial_delivery_count=0))
    return s.close()


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> str:
    """c1 granted as asked; c2 the selector left out; c3 the selector answered null and
    no-local kept; c4 the selector changed."""
    sel = {Symbol("selector"): Described(SELECTOR, RED)}
    both = {**sel, Symbol("no-local"): Described(NO_LOCAL, [])}
    return write_connections(tmp_path_factory.mktemp("filters") / "filters.pcapng", [
        _receiver("as-asked", sel, sel),
        _receiver("dropped", sel, None),
        _receiver("skipped", both, {Symbol("selector"): None,
                                    Symbol("no-local"): Described(NO_LOCAL, [])}),
        _receiver("changed", sel, {Symbol("selector"): Described(SELECTOR, "n > 4")}),
    ])


def _ok(*args: str) -> str:
    code, out, err = run("pcap-dump", *args)
    assert code == 0, err
    return out


def test_attach_lines_show_the_filter_asked_for_and_granted(capture: str) -> None:
    asked = f"""role=receiver source=("sel" copy filter.selector=selector("{RED}"))"""
    lines = [ln for ln in _ok(capture, "--performative", "attach").splitlines()
             if " attach " in ln]
    assert len(lines) == 8
    c1, c2, c3, c4 = (lines[i:i + 2] for i in range(0, 8, 2))
    assert all(ln.endswith(asked) for ln in (c1[0], c2[0], c4[0]))
    assert c1[1].endswith(asked.replace("receiver", "sender") + " initial-delivery-count=0")
    assert c2[1].endswith(' role=sender source=("sel" copy) initial-delivery-count=0')
    assert c3[0].endswith(f"""source=("sel" copy filter.selector=selector("{RED}")"""
                          " filter.no-local=no-local)")
    assert c3[1].endswith(' source=("sel" copy filter.selector=not-applied'
                          " filter.no-local=no-local) initial-delivery-count=0")
    assert c4[1].endswith(' source=("sel" copy filter.selector=selector("n > 4"))'
                          " initial-delivery-count=0")


def _links(out: str) -> dict[str, list[str]]:
    by_conn: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("c"):
            by_conn[line.split()[0]] = [line]
        else:
            by_conn[list(by_conn)[-1]].append(line)
    return by_conn


def test_links_say_what_the_answer_did_to_the_filter(capture: str) -> None:
    links = _links(_ok(capture, "--links"))
    sel = f'filter.selector=selector("{RED}")'
    assert f' source="sel" {sel} target=null state=' in links["c1"][0]
    assert not links["c1"][1].startswith("    source:")  # granted as asked
    assert ' source="sel" target=null state=' in links["c2"][0]  # the link's: granted
    assert links["c2"][1] == (
        f'    source: requested "sel" {sel}, granted "sel"; filter.selector dropped')
    assert links["c3"][1] == (
        f'    source: requested "sel" {sel} filter.no-local=no-local, granted "sel"'
        " filter.selector=not-applied filter.no-local=no-local;"
        " filter.selector not applied")
    assert links["c4"][1] == (
        f'    source: requested "sel" {sel}, granted "sel"'
        ' filter.selector=selector("n > 4"); filter.selector changed')


def test_links_compare_long_filters_whole(tmp_path: Path) -> None:
    """Two selectors that differ only past the cut are drawn alike, and still differ."""
    long = "a = 1 AND " * 10
    path = write_connections(tmp_path / "long.pcapng", [_receiver(
        "long", {Symbol("selector"): Described(SELECTOR, long + "b = 1")},
        {Symbol("selector"): Described(SELECTOR, long + "b = 2")})])
    first, diff = _links(_ok(path, "--links"))["c1"][:2]
    cut = f'filter.selector=selector("{long[:60]}"…(105 chars))'
    assert cut in first
    assert diff == (f'    source: requested "sel" {cut}, granted "sel" {cut};'
                    " filter.selector changed")
