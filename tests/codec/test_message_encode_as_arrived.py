"""`Message.encode` of a decoded message whose sections were read: its bytes as they
arrived while every section is the one decoded there and unchanged; any change (a field
set, a section replaced, removed or added, a body list changed) is encoded."""

from __future__ import annotations

from amqpcli.codec import composites as _c
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UInt

SECTIONS = ("header", "delivery_annotations", "message_annotations", "properties",
            "application_properties", "body", "footer")


def _wire(body: object = b"payload" * 40) -> bytes:
    return Message(body, header=_c.Header(durable=True),
                   message_annotations={Symbol("x-opt"): "v"},
                   properties=_c.Properties(message_id="m1", to="q"),
                   application_properties={"k": UInt(5)},
                   footer={Symbol("f"): UInt(1)}).encode()


def _read(raw: bytes) -> Message:
    m = Message.decode(raw)
    for name in SECTIONS:
        getattr(m, name)
    return m


def _sections_encoded(m: Message) -> bytes:
    """What the sections encode to one by one (the reference)."""
    out = b""
    for name in SECTIONS:
        v = getattr(m, name)
        if v is None:
            continue
        for s in v if isinstance(v, list) else [v]:
            out += encode(s)
    return out


def test_read_and_unchanged_is_the_bytes_as_they_arrived() -> None:
    for body in (b"payload" * 40, [_c.Data(b"a"), _c.Data(b"b" * 300)], _c.AmqpValue("text"),
                 [_c.AmqpSequence([UInt(1)]), _c.AmqpSequence(["x"])]):
        raw = _wire(body)
        m = _read(raw)
        assert m.encode() is m._buf and m.encode() == raw == _sections_encoded(m)


def test_every_change_is_encoded() -> None:
    raw = _wire([_c.Data(b"a"), _c.Data(b"b")])

    def changed(edit: object, differs: bool = True) -> None:
        m = _read(raw)
        edit(m)  # type: ignore[operator]
        assert m.encode() is not m._buf
        assert m.encode() == _sections_encoded(m)
        assert (m.encode() != raw) == differs

    changed(lambda m: setattr(m.header, "durable", False))
    changed(lambda m: setattr(m.properties, "to", "other"))
    changed(lambda m: setattr(m, "header", _c.Header(durable=False)))
    changed(lambda m: setattr(m, "properties", None))
    changed(lambda m: setattr(m, "footer", None))
    changed(lambda m: m.body.append(_c.Data(b"c")))
    changed(lambda m: m.body.pop())
    changed(lambda m: m.body.__setitem__(0, _c.Data(b"z")))
    changed(lambda m: setattr(m, "body", b"new body"))
    changed(lambda m: setattr(m, "delivery_annotations", {Symbol("d"): UInt(1)}))
    changed(lambda m: m.application_properties.touch(), differs=False)  # encoded anew
    other = _read(_wire())
    m = _read(raw)
    m.header = other.header  # decoded elsewhere, same bytes: still the right bytes
    assert m.encode() == _sections_encoded(m) == raw


def test_sections_not_read_stay_as_they_arrived() -> None:
    raw = _wire()
    m = Message.decode(raw)
    assert m.header is not None and m.encode() == raw
    m.properties.subject = "s"  # type: ignore[union-attr]
    assert m.encode() == _sections_encoded(m) != raw
