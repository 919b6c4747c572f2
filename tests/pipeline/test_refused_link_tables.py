"""A refused link (answered with a null terminus, then detached with an error) is a link
to what its attach asked for in the tables too: the links table's `address`,
`source_address` and `target_address` are those of the attach that asked (they were
null, the answer's null terminus), and the summary of the tables names the address as
the summary of the capture does."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from tests.dissect.helpers import SENDER, Script, write_connections
from tests.pipeline.helpers import rows, run_cli, without_shared_addresses


def refused_capture(path: Path) -> str:
    """c1 sends to bad1 from `me`, c2 receives from bad2 (both refused: amqp:not-found),
    c3's attach to gone is refused by its session's end (as RabbitMQ refuses), c4 sends
    one message to good (accepted)."""
    gone = Script().open()
    gone.c(c.Attach(name="to-gone", handle=0, role=SENDER, source=c.Source(address="me"),
                    target=c.Target(address="gone"), initial_delivery_count=0))
    gone.s(c.End(error=c.Error(condition="amqp:not-found"))).c(c.End())
    return write_connections(path, [
        Script().open().refused_link("to-bad1", "bad1", source="me").close(),
        Script().open().refused_link("from-bad2", "bad2", sender=False).close(),
        gone.close(),
        Script().open().sender_link(name="to-good", address="good").transfer(0)
        .dispose(0, c.Accepted()).close(),
    ])


@pytest.mark.parametrize("fmt", ["parquet", "ndjson"])
def test_refused_links_carry_the_addresses_they_asked_for(tmp_path: Path, fmt: str) -> None:
    cap = refused_capture(tmp_path / "refused.pcapng")
    out = tmp_path / "t"
    code, _stdout, err = run_cli("pcap-dump", cap, "--out", str(out), "--format", fmt)
    assert code == 0, err
    got = sorted((r["name"], r["refused"], r["address"], r["source_address"],
                  r["target_address"]) for r in rows(out, "links"))
    assert got == [("from-bad2", True, "bad2", "bad2", None),
                   ("to-bad1", True, "bad1", "me", "bad1"),
                   ("to-gone", True, "gone", "me", "gone"),
                   ("to-good", False, "good", "client", "good")]
    code, from_tables, err = run_cli("pcap-dump", "--summary", str(out))
    assert code == 0, err
    code, from_capture, err = run_cli("pcap-dump", cap, "--summary")
    assert code == 0, err
    assert "  c1 'to-bad1' (bad1) client sends: no deliveries\n" in from_capture
    assert "  c2 'from-bad2' (bad2) server sends: no deliveries\n" in from_capture
    assert without_shared_addresses(from_tables) == from_capture
