"""A transfer whose handle is not a number (a damaged or hostile frame) is shown as any
other: the views that follow deliveries in several frames key them by the handle, and
one that is not a number is one shared key (`handle_key`), never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.render.items import TransferAssembler
from amqpcli.render.redact import ChunkSecrets
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run


def odd(did: int, payload: bytes = b"abc", more: bool = True, handle: object = None) -> bytes:
    return encode_frame(c.Transfer(handle=[1, 2] if handle is None else handle,
                                   delivery_id=did, delivery_tag=b"t", more=more),
                        0, payload=payload)


def test_handle_key() -> None:
    from amqpcli.render.redact import handle_key

    assert handle_key(3) == 3
    assert handle_key([1, 2]) == handle_key("x") == handle_key(None) == -1
    # a boolean is an int to Python, and a signed field may be negative: neither may join
    # the deliveries of handle 1, nor take a number a handle can have
    assert handle_key(True) == handle_key(-1) == handle_key(-5) == -1


def test_decode_views() -> None:
    frames = odd(1) + odd(1, b"def", more=False)
    for args in ([], ["--brief"], ["--json"]):
        code, out, err = run("decode", *args, frames.hex())
        assert code == 0, err
        assert "internal error" not in err and "Traceback" not in err
    assert out.count('"item": "frame"') == 2


def test_pcap_dump_views(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.raw(0, odd(1))
    s.raw(0, odd(1, b"def", more=False))
    s.close()
    cap = str(write(tmp_path / "odd.pcapng", s))
    for args in ([], ["--json"], ["--json", "--show-secrets"], ["--deliveries"]):
        code, _, err = run("pcap-dump", *args, cap)
        assert code in (0, 8) and "internal error" not in err and "Traceback" not in err, err
    lines = [json.loads(x) for x in run("pcap-dump", "--json", cap)[1].splitlines()]
    t = [o for o in lines if "transfer" in (o.get("performative") or {})]
    assert len(t) == 2


def test_the_trackers_agree_on_the_key() -> None:
    """A handle that is not a number shares one key with every other such handle: the
    assembler joins the pieces, and the secrets tracker follows the same delivery."""
    from amqpcli.codec.frames import FrameReader

    frames = list(FrameReader().feed(odd(1, b"\x00Su", handle=[1])
                                     + odd(1, b"\xa0\x01x", more=False, handle=[7])))
    whole = TransferAssembler()
    assert whole.feed(frames[0]) is None
    assert whole.feed(frames[1]) is not None
    secrets = ChunkSecrets()
    secrets.hides(None, frames[0])
    assert secrets.pending_any()
    secrets.hides(None, frames[1])
    assert not secrets.pending_any()
