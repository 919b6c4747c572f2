"""Filters that pick records inside connections and links (--state, --performative,
--since, --until): the end views keep to the connections and links those records belong
to, and the summary's link lines count those deliveries, so the summary agrees with
itself and with the lines."""

from __future__ import annotations

import json

from tests.cli.test_pcap_dump import run
from tests.paths import REPO_ROOT

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
