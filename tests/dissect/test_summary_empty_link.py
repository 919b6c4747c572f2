"""The summary's line of a link that carried no delivery says so once."""

from __future__ import annotations

from pathlib import Path

from amqpcli.dissect.stats import Summary
from amqpcli.render.summary import summary_lines
from tests.dissect.helpers import Script, dissect, write


def test_a_link_with_no_deliveries_says_so_once(tmp_path: Path) -> None:
    s = Script().open().sender_link().close()
    r = dissect(write(tmp_path / "idle.pcapng", s))
    summary = Summary()
    summary.finish(r.dissector.conns)
    (line,) = [x for x in summary_lines(summary) if x.startswith("  c1 ")]
    assert line == "  c1 'sender' (q1) client sends: no deliveries"
