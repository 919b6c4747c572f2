"""`amqp pcap-dump` of a sender that died inside a frame (its connection reset there), in
every view: the frame cut short is a notice, not a violation nor a frame error (exit
status 0), and its delivery is incomplete."""

from __future__ import annotations

from pathlib import Path

from amqpcli.capture.tcp import C2S
from tests.dissect.helpers import write
from tests.dissect.test_cut_frames import CUT, _interrupted
from tests.net.clirun import amqp, json_lines
from tests.pipeline.helpers import rows


def test_a_connection_reset_inside_a_frame(tmp_path: Path) -> None:
    s, size, seen = _interrupted()
    cap = str(write(tmp_path / "rst.pcapng", s, rst=C2S))
    notice = f"the connection was reset (RST) inside frame 11 from the client (transfer, " \
             f"{CUT} of {size} bytes)"

    r = amqp("pcap-dump", cap)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines()[-1].endswith(f" c1 !! client: {notice}")
    assert "frame error" not in r.stdout and "violation" not in r.stdout

    r = amqp("pcap-dump", cap, "--deliveries", "--connections", "--summary")
    assert (r.returncode, r.stderr) == (0, "")
    lines = r.stdout.splitlines()
    [d1] = [x for x in lines if " #1 " in x]
    assert f"≥{seen} B abandoned" in d1 and d1.endswith("- [bytes missing]")
    assert f"    note: {notice}" in lines
    assert "    tcp: client rst, server reset-by-peer" in lines  # (the client reset it)
    for line in ("violations: 0", "notices: truncated 1",
                 "  incomplete (message not seen whole): 1"):
        assert line in lines

    r = amqp("pcap-dump", cap, "--json", "--deliveries", "--summary", "--connections")
    assert r.returncode == 0
    objs = json_lines(r.stdout)
    [c] = [o for o in objs if o["record"] == "connection"]
    assert c["tcp-closed"] == {"client": "rst", "server": "reset-by-peer"}
    assert [o for o in objs if o["record"] in ("violation", "frame")] == []
    [n] = [o for o in objs if o["record"] == "notice"]
    assert (n["kind"], n["side"], n["text"]) == ("truncated", "client", notice)
    [d] = [o for o in objs if o["record"] == "delivery" and o["delivery-id"] == 1]
    assert (d["outcome"], d["incomplete"], d["latency"]) == ("abandoned", True, None)
    [summ] = [o for o in objs if o["record"] == "summary"]
    assert (summ["incomplete"], summ["violations"]) == (1, [])

    out = tmp_path / "tables"
    r = amqp("pcap-dump", cap, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert [(x["delivery_id"], x["incomplete"]) for x in rows(out, "deliveries")] == [
        (0, False), (1, True)]
    assert rows(out, "violations") == []
    [conn] = rows(out, "connections")
    assert conn["frame_errors"] == 0 and conn["notes"] == [notice]
    assert (conn["closed_client"], conn["closed_server"]) == ("rst", "reset-by-peer")
