"""A damaged frame with a list or a map where the spec says a choice (a disposition whose
role is a list): drawn as it is in every text view, the reading going on past it. Looking
the value up among the choice's names raised TypeError (unhashable), an internal error
that ended `decode` and `pcap-dump` at that frame."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from amqpcli.capture.tcp import C2S
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run

ROLE_IS_A_LIST = "00 53 15 c0 02 01 45"  # disposition(role=[])


def test_decode_tree_and_brief() -> None:
    code, out, err = run("decode", ROLE_IS_A_LIST)
    assert code == 0, err
    assert "role  (list, 0 items)" in out
    frame = struct.pack(">IBBH", 15, 2, 0, 0) + bytes.fromhex(ROLE_IS_A_LIST)
    code, out, err = run("decode", "--brief", frame.hex())
    assert code == 0, err
    assert "[0]  disposition role=[]\n" in out


@pytest.mark.parametrize("view", [[], ["--frames-only"], ["-C", "c1"]])
def test_pcap_dump_reads_on(tmp_path: Path, view: list[str]) -> None:
    s = Script().open().sender_link()
    s.raw(C2S, struct.pack(">IBBH", 15, 2, 0, 0) + bytes.fromhex(ROLE_IS_A_LIST))
    s.close()
    code, out, err = run("pcap-dump", str(write(tmp_path / "role.pcapng", s)), *view)
    assert code == 0, err
    lines = out.splitlines()
    assert any("disposition role=[]" in line for line in lines)
    assert lines[-1].endswith(" close")  # what came after it was read too
