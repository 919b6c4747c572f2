"""What the TUI says of a delivery's settlement is what `amqp pcap-dump` says of it: a
delivery nothing settled (abandoned when its connection closed) is not called settled."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from tests.dissect.helpers import Script, dissect, write
from tests.tui.replaying import replayed

LINK = "c1|s0.0|client|sender"


def _delivery(src: object, tag: bytes) -> object:
    key = f"{LINK}|{tag.hex()}"
    return src.snapshot(LINK, key, src.now()).delivery  # type: ignore[attr-defined]


def _flow(src: object) -> dict[str, str]:
    return dict(src.snapshot(LINK, None, src.now()).link.flow)  # type: ignore[attr-defined]


def test_an_abandoned_delivery_is_not_settled(tmp_path: Path) -> None:
    """The receiver settles #0-#3 and leaves #4 unsettled; the connection closes. #4 was
    never settled: no `settled after … by -`, not counted as settled (it said `settled 5`
    and `settled after 501.5 ms by -`)."""
    s = Script().open().sender_link()
    for i in range(5):
        s.at(1.0 + i / 10).transfer(i)
    for i in range(4):
        s.at(1.5 + i / 10).dispose(i, c.Accepted())
    path = write(tmp_path / "abandoned.pcapng", s.at(2.0).close())
    src = replayed(path)
    d4 = _delivery(src, b"t4")
    assert d4 is not None
    assert d4.summary == "[abandoned] outcome abandoned"  # type: ignore[attr-defined]
    d0 = _delivery(src, b"t0")
    assert d0.summary == "[settled] outcome accepted  settled after 500.0 ms by server"  # type: ignore[attr-defined]
    flow = _flow(src)
    assert flow["deliveries"] == "5" and flow["settled"] == "4"
    assert flow["outcomes"] == "abandoned 1, accepted 4"
    # as pcap-dump has them
    recs = {r.delivery_id: r for r in dissect(path).deliveries}
    assert recs[4].outcome == "abandoned" and recs[4].latency is None
    assert recs[0].latency is not None and abs(recs[0].latency - 0.5) < 1e-6
