"""`--connection` takes a frame-trace log's own connection id, as the log's lines write it
(`[C3]` of a router, `0x5581…` of proton, bare or in brackets): the id people grep for.
It matched nothing (`C3`) or was a usage error (`0x5581…`)."""

from __future__ import annotations

from pathlib import Path

from tests.net.clirun import amqp

LINE = "2023-05-01 10:00:00.{us:06d} +0000 PROTOCOL (trace) [{cid}]:0 {way} @{frame}"
OPEN = 'open(16) [container-id="{who}"]'


def _router_log(path: Path) -> None:
    lines = []
    us = 0
    for cid in ("C3", "C7"):
        for way, what in (("<-", "AMQP"), ("->", "AMQP")):
            us += 1
            lines.append(f"2023-05-01 10:00:00.{us:06d} +0000 PROTOCOL (trace) [{cid}]: {way} "
                         f"{what}")
        for way, who in (("<-", "client"), ("->", "router")):
            us += 1
            lines.append(LINE.format(us=us, cid=cid, way=way,
                                     frame=OPEN.format(who=f"{who}-{cid}")))
    path.write_text("\n".join(lines) + "\n")


def _proton_log(path: Path) -> None:
    path.write_text("[0x5581c0a3e2a0]: AMQP:FRAME:  -> AMQP\n"
                    "[0x5581c0a3e2a0]: AMQP:FRAME:  <- AMQP\n"
                    '[0x5581c0a3e2a0]: AMQP:FRAME:0 -> @open(16) [container-id="p"]\n'
                    '[0x5581c0a3e2a0]: AMQP:FRAME:0 <- @open(16) [container-id="q"]\n')


def test_a_router_logs_connection_by_its_id(tmp_path: Path) -> None:
    log = tmp_path / "router.log"
    _router_log(log)
    r = amqp("pcap-dump", str(log), "-C", "[C7]", "--frames-only")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and all(" c2 " in ln for ln in lines), r.stdout
    assert 'container-id="client-C7"' in r.stdout and "C3" not in r.stdout


def test_a_proton_logs_connection_by_its_pointer(tmp_path: Path) -> None:
    log = tmp_path / "client.trace"
    _proton_log(log)
    for value in ("0x5581c0a3e2a0", "[0x5581c0a3e2a0]"):
        r = amqp("pcap-dump", str(log), "-C", value, "--frames-only")
        assert r.returncode == 0, r.stderr
        assert len(r.stdout.splitlines()) == 4, r.stdout
    r = amqp("pcap-dump", str(log), "-C", "0x1234", "--frames-only")
    assert (r.returncode, r.stdout) == (0, "")
