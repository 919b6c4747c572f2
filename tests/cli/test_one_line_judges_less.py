"""What the one-line views judge of a message (docs/decode.md, docs/pcap-dump.md): the
split of the payload into sections and the body, as their summary needs; the tree and
JSON decode every section. A message whose application-properties do not decode is
invalid to the tree and JSON, and summarised by its body on a line."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run

DOCS = Path(__file__).resolve().parents[2] / "docs"
# application-properties {"k": <boolean byte 0x05>}, then the body "hi"
PAYLOAD = bytes.fromhex("005374c10602a1016b5605" + "005377a1026869")


def transfer(did: int = 0) -> bytes:
    return encode_frame(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t",
                                   message_format=0, settled=True), 0, payload=PAYLOAD)


def test_decode_views() -> None:
    _, out, _ = run("decode", transfer().hex())
    assert "message: not a valid message at payload byte 10" in out
    _, out, _ = run("decode", "--json", transfer().hex())
    assert json.loads(out.splitlines()[0])["message-error"]["payload-offset"] == 10
    _, out, _ = run("decode", "--brief", transfer().hex())
    assert out.splitlines()[1].endswith(' value "hi" (18 bytes)')


def test_pcap_dump_views(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.raw(0, transfer())
    s.close()
    cap = str(write(tmp_path / "app-props.pcapng", s))
    _, out, _ = run("pcap-dump", cap)
    line = next(x for x in out.splitlines() if " transfer " in x)
    assert line.endswith(' value "hi" (18 bytes)')
    _, out, _ = run("pcap-dump", "--deliveries", "--bodies", cap)
    assert out.splitlines()[0].endswith(' value "hi" (18 bytes)')
    _, out, _ = run("pcap-dump", "--json", cap)
    t = [json.loads(x) for x in out.splitlines() if '"transfer"' in x]
    assert t[0]["message-error"]["payload-offset"] == 10


def test_the_docs_say_so() -> None:
    decode = " ".join((DOCS / "decode.md").read_text().split())
    assert ("a header, annotations, properties, application-properties or footer section "
            "that splits but whose value does not decode") in decode
    dump = " ".join((DOCS / "pcap-dump.md").read_text().split())
    assert "These lines judge only what they summarise" in dump
