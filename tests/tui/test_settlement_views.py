"""What the TUI says of a delivery's settlement is what `amqp pcap-dump` says of it: a
delivery nothing settled (abandoned when its connection closed) is not called settled;
`settled after` runs to the first frame that settled it, as pcap-dump's latency does."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from tests.dissect.helpers import Script, dissect, presettled_capture, second_mode_capture, write
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


def _summaries(path: Path) -> dict[bytes, str]:
    src = replayed(path)
    out = {}
    for tag in (b"t0", b"t1"):
        d = _delivery(src, tag)
        if d is not None:
            out[tag] = d.summary  # type: ignore[attr-defined]
    return out


def test_settled_after_runs_to_the_first_frame_that_settled_it(tmp_path: Path) -> None:
    """As pcap-dump's latency (the frame `settled by` names): in receiver-settle-mode
    second the sender's settlement (20 ms), not the receiver's final one (50 ms)."""
    path = second_mode_capture(tmp_path / "second.pcapng")
    (rec,) = dissect(path).deliveries
    assert rec.latency is not None and abs(rec.latency - 0.020) < 1e-6
    assert _summaries(path)[b"t0"] == (
        "[settled] outcome accepted  settled after 20.0 ms by client")


def test_a_receiver_that_settles_mid_transfer_settles_it_then(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.at(1.0).c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                           more=True), payload=b"\x00Sw\xa1\x05hel")
    s.at(1.010).dispose(0, c.Accepted())
    s.at(1.030).c(c.Transfer(handle=0, more=False), payload=b"lo")
    path = write(tmp_path / "early.pcapng", s.at(2.0).close())
    (rec,) = dissect(path).deliveries
    assert rec.latency is not None and abs(rec.latency - 0.010) < 1e-6
    assert _summaries(path)[b"t0"] == (
        "[settled] outcome accepted  settled after 10.0 ms by server")


def test_presettled_in_several_frames_is_settled_at_its_first_transfer(
        tmp_path: Path) -> None:
    """0 ms, as pcap-dump's `presettled 0.000 ms [3 frames]` (it said 20.0 ms)."""
    path = presettled_capture(tmp_path / "pre.pcapng")
    assert [r.latency for r in dissect(path).deliveries] == [0.0, 0.0]
    assert _summaries(path) == {
        b"t0": "[settled] outcome settled  settled after 0.0 ms by client",
        b"t1": "[settled] outcome settled  settled after 0.0 ms by client"}


def test_an_abandon_by_the_close_is_no_sides(tmp_path: Path) -> None:
    """The client closes (frame 11), the server answers (frame 12): the connection's end
    abandoned #1, not the server (it said `server  abandon  connection closed  c1 frame
    12`); pcap-dump's JSON timeline has the same step, with no side."""
    from amqpcli.render.deliveries import delivery_json

    s = Script().open().sender_link()
    s.at(1.0).transfer(0)
    s.at(1.1).transfer(1)
    s.at(1.2).dispose(0, c.Accepted())
    path = write(tmp_path / "closed.pcapng", s.at(2.0).close())
    d1 = _delivery(replayed(path), b"t1")
    assert d1 is not None
    last = d1.timeline[-1]  # type: ignore[attr-defined]
    assert (last.side, last.what, last.detail) == (
        "-", "abandon", "connection closed  c1 frame 12")
    recs = {r.delivery_id: r for r in dissect(path).deliveries}
    step = delivery_json(recs[1])["timeline"][-1]
    assert (step["kind"], step["side"], step["frame"]) == ("abandon", None, 12)
