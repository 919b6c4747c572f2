"""The AMQP 1.0 message (Part 3 §3.2): sections, lazily decoded, re-encoded byte for byte.

`Message.decode(buf)` only finds the sections' boundaries (from sizes, building nothing);
each section is decoded the first time its attribute is read. `encode()` writes sections
that were never read as the bytes they arrived in, and read ones through the codec, which
re-emits a composite's original bytes until one of its fields is assigned. `bare_bytes` is
the bare message exactly as it arrived: properties, application-properties and the body.

Body rule for the constructor: `bytes`-like → one `Data` section; a `Data`, an
`AmqpSequence`, an `AmqpValue` or a non-empty list of `Data`/`AmqpSequence` sections → used
as given; `None` → no body; anything else (`str`, numbers, lists, dicts...) → `AmqpValue`.
"""

from __future__ import annotations

import struct
from typing import Any

from .composites import (
    BY_SYMBOL,
    AmqpSequence,
    AmqpValue,
    ApplicationProperties,
    Data,
    DeliveryAnnotations,
    Footer,
    Header,
    MessageAnnotations,
    Properties,
)
from .decode import DecodeError, decode, skip
from .encode import _unchanged, encode_into
from .types import Composite, Symbol

__all__ = ["SECTION_NAMES", "Body", "Message"]

Body = list[Data | AmqpSequence] | AmqpValue | None

# Section descriptor code → (rank in the message, section class, format codes its value may use)
_LIST = frozenset((0x45, 0xC0, 0xD0))
_MAP = frozenset((0xC1, 0xD1))
_SECTIONS: dict[int, tuple[int, type[Composite], frozenset[int] | None]] = {
    0x70: (0, Header, _LIST),
    0x71: (1, DeliveryAnnotations, _MAP),
    0x72: (2, MessageAnnotations, _MAP),
    0x73: (3, Properties, _LIST),
    0x74: (4, ApplicationProperties, _MAP),
    0x75: (5, Data, frozenset((0xA0, 0xB0))),
    0x76: (5, AmqpSequence, _LIST),
    0x77: (5, AmqpValue, None),
    0x78: (6, Footer, _MAP),
}
# A message's sections by their attribute names, in the order the spec puts them.
SECTION_NAMES = (
    "header",
    "delivery_annotations",
    "message_annotations",
    "properties",
    "application_properties",
    "body",
    "footer",
)
_BODY = 5
_RANKS = {name: rank for rank, name in enumerate(SECTION_NAMES)}
_SLOTS = tuple("_" + name for name in SECTION_NAMES)
_u64 = struct.Struct(">Q").unpack_from
_u32 = struct.Struct(">I").unpack_from
_VBIN = {0xA0: 5, 0xB0: 8}  # a data section's binary: its format code -> where the bytes start
_SIZE8 = frozenset((0xA0, 0xA1, 0xA3, 0xC0, 0xC1, 0xE0))
_SIZE32 = frozenset((0xB0, 0xB1, 0xB3, 0xD0, 0xD1, 0xF0))
# The first four bytes of a section written the usual way (0x00 0x53 code, then a value
# with a one- or four-byte size) -> (rank, descriptor code, whether the size is one byte,
# the section class)
_PREFIXES: dict[bytes, tuple[int, int, bool, type[Composite]]] = {
    bytes((0x00, 0x53, code, vc)): (rank, code, vc in _SIZE8, cls)
    for code, (rank, cls, codes) in _SECTIONS.items()
    for vc in sorted(_SIZE8 | _SIZE32)
    if codes is None or vc in codes
}
_BY_SYMBOL = {Symbol(k): c for k, c in BY_SYMBOL.items()}


class _Lazy:
    """Marks a section that was split out but not decoded yet."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not decoded>"

    def __reduce__(self) -> str:
        return "_LAZY"  # unpickles as the one marker, so `is _LAZY` still holds


_LAZY = _Lazy()
_oset = object.__setattr__


def _as_map_section(cls: type[Composite], v: Any) -> Any:
    if v is None or isinstance(v, cls):
        return v
    if isinstance(v, dict):
        return cls(v)  # type: ignore[call-arg]
    raise TypeError(f"{cls.__name__} takes a dict or a {cls.__name__}, got {type(v).__name__}")


def _as_body(v: Any) -> Body:
    if v is None or isinstance(v, AmqpValue):
        return v
    if isinstance(v, Data | AmqpSequence):
        return [v]
    if isinstance(v, bytes | bytearray | memoryview):
        return [Data(bytes(v))]
    if isinstance(v, list | tuple) and v and all(isinstance(x, Data | AmqpSequence) for x in v):
        kinds = {type(x) for x in v}
        if len(kinds) != 1:
            raise TypeError("a body is all Data sections or all AmqpSequence sections")
        return list(v)
    return AmqpValue(v)


class Message:
    """An AMQP 1.0 message. Sections are None when absent."""

    __slots__ = (
        "_application_properties",
        "_body",
        "_buf",
        "_delivery_annotations",
        "_footer",
        "_header",
        "_loaded",
        "_message_annotations",
        "_properties",
        "_spans",
    )
    # each section: its value, None when absent, or _LAZY until first read
    _header: Any
    _delivery_annotations: Any
    _message_annotations: Any
    _properties: Any
    _application_properties: Any
    _body: Any
    _footer: Any

    def __init__(
        self,
        body: Any = None,
        *,
        header: Header | None = None,
        delivery_annotations: DeliveryAnnotations | dict[Any, Any] | None = None,
        message_annotations: MessageAnnotations | dict[Any, Any] | None = None,
        properties: Properties | None = None,
        application_properties: ApplicationProperties | dict[Any, Any] | None = None,
        footer: Footer | dict[Any, Any] | None = None,
    ) -> None:
        self._buf: bytes | None = None
        self._spans: list[Any] | None = None
        self._loaded: list[Any] | None = None
        self.header = header
        self.delivery_annotations = delivery_annotations  # type: ignore[assignment]
        self.message_annotations = message_annotations  # type: ignore[assignment]
        self.properties = properties
        self.application_properties = application_properties  # type: ignore[assignment]
        self.body = body
        self.footer = footer  # type: ignore[assignment]

    # --- decoding -------------------------------------------------------------------------

    @classmethod
    def decode(cls, buf: bytes | bytearray | memoryview, head: bool = False) -> Message:
        """Split `buf` into sections (checking order and framing); decode them on access.

        `head`: only the sections before the body (header to application-properties), from
        the start of a message that may go on beyond `buf` (its first transfer frame):
        the split stops where the body begins, which `buf` must reach (a DecodeError
        otherwise: a section before the body may be in what follows)."""
        b = buf if type(buf) is bytes else bytes(buf)
        n = len(b)
        spans: list[Any] = [None] * 7
        body: list[tuple[int, int]] = []
        body_code = 0
        last = -1
        p = 0
        prefixes = _PREFIXES
        try:
            while p < n:
                hit = prefixes.get(b[p : p + 4])
                if hit is not None:  # the usual shape: a small descriptor and a sized value
                    rank, code, small, scls = hit
                    v = p + 3
                    end = v + 2 + b[p + 4] if small else v + 5 + _u32(b, p + 4)[0]
                else:
                    rank, code, scls, v, end = _section_at(b, p)
                if end > n:
                    if head and rank == _BODY:
                        break
                    raise DecodeError(
                        v, f"a {scls.NAME} section of {end - v} bytes", "end of input"
                    )
                if rank < last or (rank == last and rank != _BODY):
                    raise DecodeError(p, "message sections in order, each once", scls.NAME)
                if rank == _BODY:
                    if head:
                        break
                    if body_code and (code != body_code or code == 0x77):
                        raise DecodeError(
                            p, "one amqp-value, or data / amqp-sequence sections", scls.NAME
                        )
                    body_code = code
                    body.append((p, end))
                else:
                    spans[rank] = (p, end)
                last = rank
                p = end
        except (IndexError, struct.error):
            raise DecodeError(n, "more bytes", "end of input") from None
        if head and not (p < n or body):
            # (the loop ended at the end of `buf`, not at the body: more sections may follow)
            raise DecodeError(n, "the body section", "end of input")
        if body:
            spans[_BODY] = body
        m = _new(cls)
        m._buf = b
        m._spans = spans
        m._loaded = None
        m._header = _LAZY if spans[0] else None
        m._delivery_annotations = _LAZY if spans[1] else None
        m._message_annotations = _LAZY if spans[2] else None
        m._properties = _LAZY if spans[3] else None
        m._application_properties = _LAZY if spans[4] else None
        m._body = _LAZY if body else None
        m._footer = _LAZY if spans[6] else None
        return m

    def _load(self, rank: int) -> Any:
        spans = self._spans
        assert spans is not None and self._buf is not None
        span = spans[rank]
        if rank == _BODY:
            buf = self._buf
            parts = []
            for s, e in span:
                if buf[s + 1] == 0x53 and buf[s + 2] == 0x75 and buf[s + 3] in _VBIN:
                    # a data section (the usual body), built as the decoder builds it:
                    # the split has checked its framing
                    data = buf[s + _VBIN[buf[s + 3]] : e]
                    x = _new(Data)
                    x._raw = (buf[s:e], data)
                    x.value = data
                else:
                    x = decode(buf, s)[0]
                    if not isinstance(x, Data | AmqpSequence | AmqpValue):
                        raise DecodeError(span[0][0], "a body section", type(x).__name__)
                parts.append(x)
            value: Any = parts[0] if isinstance(parts[0], AmqpValue) else parts
            loaded: Any = (value, tuple(parts))
        else:
            value = decode(self._buf, span[0])[0]
            cls = _SECTIONS_BY_RANK[rank]
            if not isinstance(value, cls):
                raise DecodeError(span[0], f"a {cls.NAME} section", type(value).__name__)
            loaded = value
        # what was decoded, for `_as_arrived` to know the section is still that one
        if self._loaded is None:
            self._loaded = [None] * 7
        self._loaded[rank] = loaded
        _oset(self, _SLOTS[rank], value)
        return value

    def _as_arrived(self, vals: list[Any]) -> bool:
        """True when every section is still the one decoded from `_buf` (or never read),
        unchanged, and none was taken out: the message's bytes are `_buf` itself."""
        spans = self._spans
        loaded = self._loaded
        if spans is None:
            return False
        for rank, v in enumerate(vals):
            if v is _LAZY:
                continue
            if v is None:
                if spans[rank]:
                    return False
                continue
            if loaded is None:
                return False
            was = loaded[rank]
            if rank == _BODY:
                if was is None or v is not was[0]:
                    return False
                parts = was[1]
                if type(v) is list and len(v) != len(parts):
                    return False
                for x, y, (s, e) in zip(parts, v if type(v) is list else parts, spans[rank]):
                    if x is not y or not _unchanged(x) or len(x._raw[0]) != e - s:
                        return False
            elif (v is not was or not _unchanged(v)
                  or len(v._raw[0]) != spans[rank][1] - spans[rank][0]):
                return False
        return True

    # --- sections -------------------------------------------------------------------------

    @property
    def header(self) -> Header | None:
        v = self._header
        return self._load(0) if v is _LAZY else v

    @header.setter
    def header(self, v: Header | None) -> None:
        if v is not None and not isinstance(v, Header):
            raise TypeError(f"header takes a Header, got {type(v).__name__}")
        self._header = v

    @property
    def delivery_annotations(self) -> DeliveryAnnotations | None:
        v = self._delivery_annotations
        return self._load(1) if v is _LAZY else v

    @delivery_annotations.setter
    def delivery_annotations(self, v: DeliveryAnnotations | dict[Any, Any] | None) -> None:
        self._delivery_annotations = _as_map_section(DeliveryAnnotations, v)

    @property
    def message_annotations(self) -> MessageAnnotations | None:
        v = self._message_annotations
        return self._load(2) if v is _LAZY else v

    @message_annotations.setter
    def message_annotations(self, v: MessageAnnotations | dict[Any, Any] | None) -> None:
        self._message_annotations = _as_map_section(MessageAnnotations, v)

    @property
    def properties(self) -> Properties | None:
        v = self._properties
        return self._load(3) if v is _LAZY else v

    @properties.setter
    def properties(self, v: Properties | None) -> None:
        if v is not None and not isinstance(v, Properties):
            raise TypeError(f"properties takes a Properties, got {type(v).__name__}")
        self._properties = v

    @property
    def application_properties(self) -> ApplicationProperties | None:
        v = self._application_properties
        return self._load(4) if v is _LAZY else v

    @application_properties.setter
    def application_properties(self, v: ApplicationProperties | dict[Any, Any] | None) -> None:
        self._application_properties = _as_map_section(ApplicationProperties, v)

    @property
    def body(self) -> Body:
        """A list of `Data` or of `AmqpSequence` sections, one `AmqpValue`, or None."""
        v = self._body
        return self._load(_BODY) if v is _LAZY else v  # type: ignore[no-any-return]

    @body.setter
    def body(self, v: Any) -> None:
        self._body = _as_body(v)

    @property
    def footer(self) -> Footer | None:
        v = self._footer
        return self._load(6) if v is _LAZY else v

    @footer.setter
    def footer(self, v: Footer | dict[Any, Any] | None) -> None:
        self._footer = _as_map_section(Footer, v)

    @property
    def value(self) -> Any:
        """The body as one value: the bytes of all Data sections joined, the AmqpValue's
        value, the list of all AmqpSequence items, or None."""
        body = self.body
        if body is None:
            return None
        if isinstance(body, AmqpValue):
            return body.value
        if body and isinstance(body[0], Data):
            return b"".join(x.value for x in body) if len(body) != 1 else body[0].value
        return [item for seq in body for item in seq.value]

    # --- encoding -------------------------------------------------------------------------

    def _section_values(self) -> list[Any]:
        return [
            self._header,
            self._delivery_annotations,
            self._message_annotations,
            self._properties,
            self._application_properties,
            self._body,
            self._footer,
        ]

    def _encode_ranks(self, out: bytearray, lo: int, hi: int) -> None:
        vals = self._section_values()
        spans = self._spans
        buf = self._buf
        for rank in range(lo, hi):
            v = vals[rank]
            if v is None:
                continue
            if v is _LAZY:
                assert spans is not None and buf is not None
                span = spans[rank]
                if rank == _BODY:
                    out += buf[span[0][0] : span[-1][1]]
                else:
                    out += buf[span[0] : span[1]]
            elif rank == _BODY and type(v) is list:
                for s in v:
                    encode_into(out, s)
            else:
                encode_into(out, v)

    def encode(self) -> bytes:
        """The message's bytes: sections never read are copied as they arrived."""
        vals = self._section_values()
        if self._buf is not None and (
            all(v is _LAZY or v is None for v in vals) or self._as_arrived(vals)
        ):
            return self._buf
        out = bytearray()
        self._encode_ranks(out, 0, 7)
        return bytes(out)

    def encode_into(self, out: bytearray) -> None:
        """Append the message's bytes to `out`."""
        self._encode_ranks(out, 0, 7)

    def section_bytes(self, name: str) -> bytes:
        """The bytes `encode()` writes for one section, by its name in SECTION_NAMES (for
        the body, all its sections); b"" when the message has none. A section never read
        is copied as it arrived, without being decoded."""
        out = bytearray()
        self.encode_section_into(out, name)
        return bytes(out)

    def encode_section_into(self, out: bytearray, name: str) -> None:
        """Append `section_bytes(name)` to `out`."""
        rank = _RANKS[name]
        self._encode_ranks(out, rank, rank + 1)

    @property
    def bare_bytes(self) -> bytes:
        """The bare message (properties, application-properties, body) as it arrived
        (for a message built here: as it encodes)."""
        spans = self._spans
        if spans is not None:
            starts = [s[0] for s in spans[3:5] if s]
            ends = [s[1] for s in spans[3:5] if s]
            if spans[_BODY]:
                starts.append(spans[_BODY][0][0])
                ends.append(spans[_BODY][-1][1])
            assert self._buf is not None
            return self._buf[min(starts) : max(ends)] if starts else b""
        out = bytearray()
        self._encode_ranks(out, 3, 6)
        return bytes(out)

    # --- the rest -------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in SECTION_NAMES)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = []
        for n, v in zip(SECTION_NAMES, self._section_values(), strict=True):
            if v is not None:
                try:
                    parts.append(f"{n}={getattr(self, n)!r}")
                except DecodeError as e:  # a repr never raises: show what is wrong
                    parts.append(f"{n}=<{e}>")
        return f"Message({', '.join(parts)})"


_new = object.__new__
_SECTIONS_BY_RANK: dict[int, type[Composite]] = {
    r: c for r, c, _ in _SECTIONS.values() if r != _BODY
}


def _section_at(b: bytes, p: int) -> tuple[int, int, type[Composite], int, int]:
    """The section at `p` in any encoding: (rank, descriptor code, section class, where its
    value starts, where it ends), its descriptor and value format checked."""
    if b[p] != 0x00:
        raise DecodeError(p, "a message section (a described type)", f"0x{b[p]:02x}")
    c = b[p + 1]
    if c == 0x53:
        code = b[p + 2]
        v = p + 3
    elif c == 0x80:
        code = _u64(b, p + 2)[0]
        v = p + 10
    elif c == 0xA3 or c == 0xB3:
        sym, v = decode(b, p + 1)
        sc = _BY_SYMBOL.get(sym)
        code = sc.CODE if sc is not None else -1
    else:
        raise DecodeError(p + 1, "a section descriptor", f"0x{c:02x}")
    info = _SECTIONS.get(code)
    if info is None:
        raise DecodeError(p + 1, "a message section descriptor", f"{code:#x}")
    rank, scls, codes = info
    vc = b[v]
    if codes is not None and vc not in codes:
        raise DecodeError(v, f"{scls.NAME} section value", f"format code 0x{vc:02x}")
    # the usual section encodings inline; skip() knows them all
    if vc in _SIZE8:
        end = v + 2 + b[v + 1]
    elif vc in _SIZE32:
        end = v + 5 + _u32(b, v + 1)[0]
    else:
        end = skip(b, v)
    return rank, code, scls, v, end
