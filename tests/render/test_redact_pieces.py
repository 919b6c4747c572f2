"""A delivery sent in several transfer frames whose message holds a SASL performative:
every view that gives a frame's payload bytes (`decode` trees and JSON, `pcap-dump
--json`, `proxy --json`) hides each piece from the one where the performative begins,
wherever the frames cut the message (`ChunkSecrets`); `--show-secrets` gives them all.
A piece that continues a delivery is not read as a message of its own."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.composites import AmqpValue, Data, Footer, Properties, SaslInit
from amqpcli.codec.frames import Frame, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import item_tree, transfer_message
from amqpcli.render.redact import ChunkSecrets
from amqpcli.render.text import plain_lines
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp, json_lines
from tests.render.leaks import shows_a_piece

PASSWORD = b"Vq7pLm2x"
INIT = SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\x00user\x00" + PASSWORD)


def _ulong_form(msg: bytes) -> bytes:
    """The same message with the sasl-init's descriptor as a ulong."""
    return msg.replace(b"\x00\x53\x41", b"\x00\x80" + (0x41).to_bytes(8, "big"), 1)


def _symbol_form(msg: bytes) -> bytes:
    """... and as its symbol, sym32 (the longest form)."""
    name = b"amqp:sasl-init:list"
    return msg.replace(b"\x00\x53\x41", b"\x00\xb3" + len(name).to_bytes(4, "big") + name, 1)


_PLAIN = Message(AmqpValue([INIT]), properties=Properties(message_id="m-1"),
                 footer=Footer({Symbol("x-f"): 1})).encode()
MESSAGES = {"smallulong": _PLAIN, "ulong": _ulong_form(_PLAIN), "symbol": _symbol_form(_PLAIN)}


def _cuts(msg: bytes, pieces: int) -> list[list[bytes]]:
    """`msg` in `pieces` pieces, at every first cut (the others evenly after it)."""
    out = []
    for first in range(1, len(msg) - pieces + 2):
        rest = msg[first:]
        step = max(1, len(rest) // (pieces - 1))
        cut = [msg[:first]] + [rest[i * step:(i + 1) * step] for i in range(pieces - 2)]
        cut.append(rest[(pieces - 2) * step:])
        out.append(cut)
    return out


def _frames(parts: list[bytes], handle: int = 0) -> list[Frame]:
    frames = []
    for i, part in enumerate(parts):
        more = i < len(parts) - 1
        perf = (c.Transfer(handle=handle, delivery_id=0, delivery_tag=b"t", message_format=0,
                           more=more) if i == 0 else c.Transfer(handle=handle, more=more))
        frames.append(Frame(0, 0, 2, 0, 0, b"", perf, part))
    return frames


def _secret_pieces(msg: bytes, parts: list[bytes]) -> list[bool]:
    """Which pieces hold a byte of the password."""
    start = msg.index(PASSWORD)
    end = start + len(PASSWORD)
    out, at = [], 0
    for part in parts:
        out.append(at < end and at + len(part) > start)
        at += len(part)
    return out


@pytest.mark.parametrize("form", MESSAGES)
@pytest.mark.parametrize("pieces", [2, 3, 5])
def test_every_piece_with_a_byte_of_the_secret_is_hidden(form: str, pieces: int) -> None:
    msg = MESSAGES[form]
    for parts in _cuts(msg, pieces):
        scan = ChunkSecrets()
        hidden = [scan.hides("c1", f) for f in _frames(parts)]
        needed = _secret_pieces(msg, parts)
        assert all(h for h, n in zip(hidden, needed, strict=True) if n), (parts, hidden)
        # and nothing before the performative begins
        begins = msg.index(b"\x00", msg.index(b"\x00\x53\x77") + 3)
        at = 0
        for part, h in zip(parts, hidden, strict=True):
            if at + len(part) <= begins:
                assert not h, (parts, hidden)
            at += len(part)


def test_deliveries_are_told_apart_and_forgotten_at_their_end() -> None:
    scan = ChunkSecrets()
    secret, plain = _frames([_PLAIN[:30], _PLAIN[30:]]), _frames([b"\x00Sw", b"\xa1\x01x"], 1)
    assert [scan.hides("c1", secret[0]), scan.hides("c1", plain[0]),
            scan.hides("c1", secret[1]), scan.hides("c1", plain[1])] == [True, False, True, False]
    # another connection's pieces, and the next delivery on the same link, start clean
    assert [scan.hides("c2", f) for f in plain] == [False, False]
    assert [scan.hides("c1", f) for f in _frames([b"\x00Sw", b"\xa1\x01x"])] == [False, False]
    assert scan._open == {}


def test_an_ordinary_large_delivery_hides_nothing() -> None:
    body = bytes(range(256)) * 64  # every byte value, none a described SASL performative
    msg = Message(Data(body)).encode()
    scan = ChunkSecrets()
    assert not any(scan.hides("c1", f) for f in _frames([msg[i:i + 500]
                                                         for i in range(0, len(msg), 500)]))


def test_a_piece_that_continues_a_delivery_is_no_message() -> None:
    """The last piece of a message whose footer came alone read as "no body"."""
    cut = _PLAIN.index(b"\x00\x53\x78")  # the footer
    _, last = _frames([_PLAIN[:cut], _PLAIN[cut:]])
    assert transfer_message(last) is None
    assert frame_line(last).endswith(f"({len(_PLAIN) - cut} bytes)")
    assert "no body" not in frame_line(last)


def _stream(parts: list[bytes]) -> bytes:
    return b"".join(encode_frame(f.body, 0, f.payload) for f in _frames(parts))


def test_decode_tree_and_json(tmp_path: Path) -> None:
    for cut in (20, 30, _PLAIN.index(PASSWORD) + 3):
        data = _stream([_PLAIN[:cut], _PLAIN[cut:]])
        for view in (["--json"], [], ["--brief"]):
            r = amqp("decode", *view, data.hex())
            assert r.returncode == 0, r.stderr
            assert not _leaks(r.stdout), (cut, view, r.stdout)
        r = amqp("decode", "--json", "--show-secrets", data.hex())
        assert _leaks(r.stdout)
    # the tree of the last piece, given the whole message, says what it hides
    frames = _frames([_PLAIN[:30], _PLAIN[30:]])
    scan = ChunkSecrets()
    hidden = [scan.hides(None, f) for f in frames]
    text = "\n".join(plain_lines(item_tree(frames[1], message=Message.decode(_PLAIN),
                                           hidden=hidden[1])))
    assert "payload: *** (may hold a SASL secret)" in text and PASSWORD.decode() not in text


def _capture(path: Path, parts: list[bytes]) -> Path:
    s = Script().sasl_plain(b"guest", b"Other1pw").open().sender_link()
    for i, f in enumerate(_frames(parts)):
        s.c(f.body, payload=parts[i])
    s.dispose(0, c.Accepted())
    return write(path, s.close())


def test_pcap_dump_json(tmp_path: Path) -> None:
    at = _PLAIN.index(PASSWORD)
    for cut in (20, at - 2, at + 3):
        cap = _capture(tmp_path / f"cut{cut}.pcapng", [_PLAIN[:cut], _PLAIN[cut:]])
        r = amqp("pcap-dump", str(cap), "--json")
        assert r.returncode == 0, r.stderr
        assert not _leaks(r.stdout), (cut, r.stdout)
        transfers = [o for o in json_lines(r.stdout) if "transfer" in (o.get("performative") or {})]
        assert transfers[-1]["redacted"] is True
        assert transfers[-1]["payload-size"] == len(_PLAIN) - cut
        # a filter that leaves out the first piece does not forget what it held
        since = transfers[-1]["time"][11:].rstrip("Z")
        r = amqp("pcap-dump", str(cap), "--json", "--since", since)
        assert r.returncode == 0, r.stderr
        assert not _leaks(r.stdout) and "payload-size" in r.stdout, (cut, r.stdout)
        r = amqp("pcap-dump", str(cap), "--json", "--show-secrets")
        assert _leaks(r.stdout) and "payload-size" not in r.stdout


def test_proxy_json(capsys: pytest.CaptureFixture[str]) -> None:
    from amqpcli.cli.proxy import LinePrinter

    printer = LinePrinter(as_json=True, show_secrets=False)
    conn = SimpleNamespace(key="p1", frame_no=1)
    for f in _frames([_PLAIN[:30], _PLAIN[30:]]):
        printer.on_item(conn, "client", f, 0.0, [])
    out = capsys.readouterr().out
    assert not _leaks(out) and out.count('"payload-size"') == 2, out


def _leaks(text: str) -> bool:
    return shows_a_piece(text, PASSWORD)
