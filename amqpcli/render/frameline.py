"""One line per frame: time, connection, direction, channel, performative, key fields, body.

    00:04:07.123456 c1 -> [0] transfer    handle=0 delivery-id=3 tag=0x00000003 settled  data "hi"

Used by `decode`, `pcap-dump`, the proxy and the TUI's trace, so it lives in one place.
Only the fields that tell a frame apart are shown; the tree view has the rest.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import islice
from typing import Any

from amqpcli.codec.composites import (
    Accepted,
    Released,
    SaslChallenge,
    SaslInit,
    SaslMechanisms,
    SaslOutcome,
    SaslResponse,
)
from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
from amqpcli.codec.types import Composite, DecodeError, Described, MapKey, Symbol
from amqpcli.render.invalid import NotAMessage
from amqpcli.render.redact import is_secret, redact
from amqpcli.render.text import format_binary, format_field, format_value
from amqpcli.render.types import (
    _CHOICE_NAMES,
    _TYPE_NAMES,
    INTEGER_TYPES,
    WELL_KNOWN_DESCRIPTORS,
    capabilities_text,
    choice_of,
    field_type,
    plain_or_quoted,
    quoted,
)

__all__ = ["KEY_FIELDS", "filter_key_text", "filter_texts", "filter_value_text", "frame_line",
           "item_line", "summarize_payload"]

# Per performative, the fields worth a place on the line, in order.
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "open": ("container-id", "hostname", "max-frame-size", "channel-max", "idle-time-out"),
    "begin": (
        "remote-channel",
        "next-outgoing-id",
        "incoming-window",
        "outgoing-window",
        "handle-max",
    ),
    "attach": (
        "name",
        "handle",
        "role",
        "snd-settle-mode",
        "rcv-settle-mode",
        "source",
        "target",
        "unsettled",
        "incomplete-unsettled",
        "initial-delivery-count",
    ),
    "flow": (
        "handle",
        "delivery-count",
        "link-credit",
        "available",
        "drain",
        "echo",
        "next-incoming-id",
        "incoming-window",
        "next-outgoing-id",
        "outgoing-window",
    ),
    "transfer": (
        "handle",
        "delivery-id",
        "delivery-tag",
        "message-format",
        "settled",
        "more",
        "state",
        "resume",
        "aborted",
    ),
    "disposition": ("role", "first", "last", "settled", "state"),
    "detach": ("handle", "closed", "error"),
    "end": ("error",),
    "close": ("error",),
    "sasl-mechanisms": ("sasl-server-mechanisms",),
    "sasl-init": ("mechanism", "initial-response", "hostname"),
    "sasl-challenge": ("challenge",),
    "sasl-response": ("response",),
    "sasl-outcome": ("code", "additional-data"),
}
_FLAGS = frozenset(("settled", "more", "drain", "echo", "closed", "resume", "aborted",
                    "incomplete-unsettled"))
_SHORT = {"delivery-tag": "tag", "delivery-id": "id", "message-format": "format"}
_NAME_WIDTH = 11
_CHANNEL_WIDTH = 4  # "[0]" to "[99]" line up; busier connections push the line right


_clock_cache: dict[int, str] = {}
_last_clock: list[Any] = [None, ""]  # the last time asked for and its text


def clock(t: float | None) -> str:
    """HH:MM:SS.ffffff (UTC), the microsecond rounded from `t * 1e6` (as the proxy's
    recording stores it: `amqpcli.proxy.record`); the part up to the second is formatted
    once per second. Every frame line's time is made here."""
    if t is None:
        return ""
    if t == _last_clock[0]:  # the frames of one packet share its time
        return _last_clock[1]
    us = round(t * 1_000_000)
    sec, frac = divmod(us, 1_000_000)
    hms = _clock_cache.get(sec)
    if hms is None:
        if len(_clock_cache) > 4096:
            _clock_cache.clear()
        hms = _clock_cache[sec] = datetime.fromtimestamp(sec, tz=UTC).strftime("%H:%M:%S.")
    text = f"{hms}{frac:06d}"
    _last_clock[0] = t
    _last_clock[1] = text
    return text



def _time(t: float | str | None) -> str:
    if t is None:
        return ""
    if isinstance(t, str):
        return t
    return clock(t)


_PRINTABLE = bytes(range(32, 127))
_FIELDLESS_STATES = frozenset((Accepted, Released))


def _binary(data: bytes | bytearray | memoryview, limit: int) -> str:
    """`format_binary(data, limit)`, the same text, with the printable bytes counted by
    `bytes.translate` rather than byte by byte (tags and bodies of every transfer)."""
    if data.__class__ is not bytes:
        data = bytes(data)
    n = len(data)
    if n > limit:
        cut = data[:limit]
        more = f"…({n} bytes)"
    else:
        cut = data
        more = ""
    rest = cut.translate(None, _PRINTABLE)  # the bytes that are not printable
    k = len(cut)
    if not rest or (k - len(rest) >= k * 3 // 4 and rest.count(0) == len(rest)):
        text = cut.decode("latin-1")
        if "\\" in text:
            text = text.replace("\\", "\\\\")
        if '"' in text:
            text = text.replace('"', '\\"')
        if rest:
            text = text.replace("\x00", "\\x00")
        return 'b"' + text + '"' + more
    return "0x" + cut.hex() + more


def _terminus(v: Any) -> str:
    if isinstance(v, Composite) and hasattr(v, "address"):
        addr = v.address
        bits = [format_value(addr) if addr is not None else "null"]
        if getattr(v, "dynamic", None):
            bits.append("dynamic")
        mode = getattr(v, "distribution_mode", None)
        if mode is not None:
            bits.append(plain_or_quoted(mode))
        caps = getattr(v, "capabilities", None)  # (what routes a node: topic, queue, ...)
        if caps is not None:
            bits.append("caps=" + capabilities_text(caps))
        flt = getattr(v, "filter", None)  # (a source's: what it lets through)
        if flt is not None:
            bits.extend(filter_texts(flt))
        return "(" + " ".join(bits) + ")" if len(bits) > 1 else bits[0]
    return format_value(v)


# A source's filters (its filter-set, Part 3 §3.5.8): each `filter.KEY=KIND(VALUE)`, the
# key as the attach has it (`recv --selector` asks under `jms-selector`, `--filter KEY=`
# under KEY, proton's Selector under `selector`), the kind by the short name of the filter
# types Apache Qpid registered, else by the descriptor's symbol or code.
_FILTER_KINDS: dict[str, str] = {
    name: name.split(":")[1].removeprefix("legacy-amqp-").removesuffix("-filter")
    for name in WELL_KNOWN_DESCRIPTORS.values()
}  # selector, direct-binding, topic-binding, headers-binding, no-local, xquery
FILTER_TEXT_LIMIT = 60  # characters of a filter's text shown, as of a message body


def _filter_part(v: Any, limit: int | None) -> str:
    """A filter's value: a string quoted, the rest as `format_value` has it, either cut
    after `limit` characters (a string says its length: `"a…"…(200 chars)`)."""
    if v.__class__ is str:
        if limit is not None and len(v) > limit:
            return quoted(v[:limit]) + f"…({len(v)} chars)"
        return quoted(v)
    text = format_value(v)
    if limit is not None and len(text) > limit + 12:
        text = text[: limit + 11] + "…"
    return text


def filter_value_text(v: Any, limit: int | None = FILTER_TEXT_LIMIT) -> str:
    """One filter of a filter-set as the terminus text shows it (`limit=None`: whole):
    `selector("n > 3")`, `headers-binding({"x-match": "all"})`, `no-local` (its usual
    empty list), an unknown kind by its descriptor (`com.example:f("x")`, `0x1234(1)`), a
    value that is not described as it is, and null (the sender's answer: the filter is
    not applied) as `not-applied`."""
    if v is None:
        return "not-applied"
    if v.__class__ is not Described:
        return _filter_part(v, limit)
    d = v.descriptor
    if isinstance(d, int) and not isinstance(d, bool):
        name = WELL_KNOWN_DESCRIPTORS.get(d)
        kind = _FILTER_KINDS[name] if name is not None else f"0x{d:x}"
    elif isinstance(d, str):
        kind = _FILTER_KINDS.get(str(d)) or plain_or_quoted(d)
    else:
        kind = "@" + _filter_part(d, limit)
    inner = v.value
    if kind == "no-local" and inner.__class__ is list and not inner:
        return kind
    return f"{kind}({_filter_part(inner, limit)})"


def filter_key_text(key: Any) -> str:
    """A filter-set's key: a symbol as a name (`jms-selector`), else as a value is."""
    if key.__class__ is MapKey:
        key = key.value
    return plain_or_quoted(key) if isinstance(key, Symbol) else format_value(key)


def filter_texts(flt: Any, limit: int | None = FILTER_TEXT_LIMIT) -> list[str]:
    """A source's filter-set as terminus words, one per filter: `filter.KEY=KIND(VALUE)`;
    none for an empty one; one that is not a map as `filter=VALUE`."""
    if not isinstance(flt, dict):
        return ["filter=" + _filter_part(flt, limit)]
    return [f"filter.{filter_key_text(k)}={filter_value_text(v, limit)}"
            for k, v in flt.items()]


UNSETTLED_SHOWN = 3  # the entries of an attach's unsettled map its line shows


def _unsettled(v: Any) -> str:
    """An attach's unsettled map (a link resumed: the deliveries its end holds unsettled,
    Part 2 §2.6.13), its first entries, each tag with its state, as tags and states are
    shown on other lines: `{b"t1": accepted, b"t2": null, …}(5 entries)`."""
    if not isinstance(v, dict):
        return format_value(v)
    parts = []
    for k, state in islice(v.items(), UNSETTLED_SHOWN):
        if k.__class__ is MapKey:
            k = k.value
        tag = _binary(k, 32) if isinstance(k, (bytes, bytearray)) else format_value(k)
        parts.append(f"{tag}: {'null' if state is None else _state(state)}")
    if len(v) > UNSETTLED_SHOWN:
        return "{" + ", ".join(parts) + f", …}}({len(v)} entries)"
    return "{" + ", ".join(parts) + "}"


def _state(v: Any) -> str:
    if v.__class__ in _FIELDLESS_STATES:  # accepted, released: their name is all there is
        return v.NAME  # type: ignore[no-any-return]
    if not isinstance(v, Composite):
        return format_value(v)
    name = v.NAME
    err = getattr(v, "error", None)
    if name == "rejected" and err is not None:
        return f"rejected({_error(err)})"
    if name == "modified":
        flags = [f for f in ("delivery_failed", "undeliverable_here") if getattr(v, f)]
        return f"modified({','.join(f.replace('_', '-') for f in flags)})" if flags else "modified"
    if name == "received":
        return f"received({v.section_number},{v.section_offset})"  # type: ignore[attr-defined]
    if name == "transactional-state":
        out = getattr(v, "outcome", None)
        return f"txn({format_value(v.txn_id)}{', ' + _state(out) if out else ''})"  # type: ignore[attr-defined]
    return name


def _error(v: Any) -> str:
    if isinstance(v, Composite) and v.NAME == "error":
        cond = v.condition  # type: ignore[attr-defined]
        desc = v.description  # type: ignore[attr-defined]
        text = plain_or_quoted(cond) if cond is not None else "?"
        return f"{text} {quoted(desc)}" if desc else text
    return format_value(v)


def _field(perf: Composite, name: str) -> str | None:
    """One key field as `label=value` (None when absent): the general form, kept for
    callers outside the line fast path; `frame_line` uses the precomputed `_specs`."""
    slot = name.replace("-", "_")
    v = getattr(perf, slot, None)
    if v is None:
        return None
    label = _SHORT.get(name, name)
    if name in _FLAGS:
        if v is False and perf._DEFAULTS.get(slot) is False:
            return None  # written out but the default: nothing to see
        return label if v is True else f"{label}={format_value(v)}"
    if name in ("source", "target"):
        return f"{label}={_terminus(v)}"
    if name == "unsettled":
        return f"{label}={_unsettled(v)}" if v else None  # (an empty map says nothing)
    if name == "state":
        return f"state={_state(v)}"
    if name == "error":
        return f"error={_error(v)}"
    if isinstance(v, (bytes, bytearray)):
        return f"{label}={format_binary(v, 32)}"
    spec = next(f for f in type(perf).FIELDS if f.name == name)
    return f"{label}={format_field(spec.type, v)}"


# How a key field is drawn, worked out once per performative class (see `_specs`).
_K_FLAG, _K_TERMINUS, _K_STATE, _K_ERROR, _K_PLAIN, _K_UNSETTLED = range(6)
# (slot, "label=", kind, spec type, choice names or None, classes drawn as str(int(v)),
#  classes drawn as str(v), the spec's default is False)
_Spec = tuple[str, str, int, str, "dict[Any, str] | None", frozenset[type], frozenset[type], bool]
_SPECS: dict[type, tuple[_Spec, ...]] = {}


def _specs(cls: type) -> tuple[_Spec, ...]:
    """The key fields of a performative class, resolved once: the same text as `_field`
    (choice names, then bare integers and symbols of the field's own type, else
    `format_field`), without looking the spec up per field and frame."""
    specs = _SPECS.get(cls)
    if specs is not None:
        return specs
    by_name = {f.name: f for f in cls.FIELDS}  # type: ignore[attr-defined]
    out = []
    for name in KEY_FIELDS.get(cls.NAME, ()):  # type: ignore[attr-defined]
        f = by_name.get(name)
        if f is None:
            continue
        slot = name.replace("-", "_")
        if name in _FLAGS:
            kind = _K_FLAG
        elif name in ("source", "target"):
            kind = _K_TERMINUS
        elif name == "state":
            kind = _K_STATE
        elif name == "unsettled":
            kind = _K_UNSETTLED
        elif name == "error":
            kind = _K_ERROR
        else:
            kind = _K_PLAIN
        t = field_type(f.type)
        ints = frozenset(c for c, n in _TYPE_NAMES.items() if n == t and t in INTEGER_TYPES)
        syms = frozenset(c for c, n in _TYPE_NAMES.items() if n == t == "symbol")
        out.append((slot, _SHORT.get(name, name) + "=", kind, f.type,
                    _CHOICE_NAMES.get(f.type), ints, syms,
                    cls._DEFAULTS.get(slot) is False))  # type: ignore[attr-defined]
    specs = _SPECS[cls] = tuple(out)
    return specs


def _fields(body: Composite, parts: list[str]) -> None:
    """Append the key fields of a performative to `parts` (same text as `_field`)."""
    for slot, label, kind, spec_type, choices, ints, syms, false_default in _specs(
            body.__class__):
        v = getattr(body, slot, None)
        if v is None:
            continue
        if kind == _K_PLAIN:
            if isinstance(v, (bytes, bytearray)):
                parts.append(label + _binary(v, 32))
                continue
            vt = v.__class__
            if choices is not None:
                text = choice_of(choices, vt, v)
                if text is not None:
                    parts.append(label + text)
                    continue
            if vt in ints:
                parts.append(label + str(int(v)))
            elif vt in syms:
                parts.append(label + plain_or_quoted(v))
            else:
                parts.append(label + format_field(spec_type, v))
        elif kind == _K_FLAG:
            if v is True:
                parts.append(label[:-1])
            elif v is False:
                if not false_default:
                    parts.append(label + "false")
            elif not (v is False and false_default):
                parts.append(label + format_value(v))
        elif kind == _K_TERMINUS:
            parts.append(label + _terminus(v))
        elif kind == _K_STATE:
            parts.append(label + _state(v))
        elif kind == _K_UNSETTLED:
            if v:
                parts.append(label + _unsettled(v))
        else:
            parts.append(label + _error(v))


_DRAWERS: dict[type, Any] = {}


def _drawer(cls: type) -> Any:
    """A function `(body, chan)` returning the parts of one performative class's line —
    `chan`, the name, the key fields — generated from `_specs(cls)`: the same decisions as
    `_fields`, with the field's spec bound as constants (the line's hottest code, once per
    frame). A field the body does not have raises AttributeError (see `frame_line`)."""
    fn = _DRAWERS.get(cls)
    if fn is not None:
        return fn
    env: dict[str, Any] = {"_binary": _binary, "format_field": format_field,
                           "format_value": format_value, "_terminus": _terminus,
                           "_state": _state, "_error": _error, "_int": int.__repr__,
                           "_unsettled": _unsettled,
                           "_BYTES": (bytes, bytearray), "plain_or_quoted": plain_or_quoted}
    name = cls.NAME  # type: ignore[attr-defined]
    lines = ["def draw(body, chan):", f"    parts = [chan, {name.ljust(_NAME_WIDTH)!r}]"]
    if name not in KEY_FIELDS:
        lines.append(f"    parts.append(format_value(body)[{len(name) + 2}:])")
    else:
        lines.append("    a = parts.append")
    for i, (slot, label, kind, spec_type, choices, ints, syms, false_default) in enumerate(
            _specs(cls) if name in KEY_FIELDS else ()):
        env[f"L{i}"] = label
        env[f"T{i}"] = spec_type
        env[f"C{i}"] = choices
        env[f"I{i}"] = ints
        env[f"S{i}"] = syms
        lines.append(f"    v = body.{slot}")
        lines.append("    if v is not None:")
        if kind == _K_PLAIN:
            lines.append("        vt = v.__class__")
            if ints:
                # an integer class of the field's own type is never bytes: it is drawn
                # as a choice's name, else bare (the decisions below, in their order)
                lines.append(f"        if vt in I{i}:")
                if choices is not None:
                    lines.append(f"            t = C{i}.get((vt, v))")
                    lines.append(f"            a(L{i} + (_int(v) if t is None else t))")
                else:
                    lines.append(f"            a(L{i} + _int(v))")
                lines.append("        elif isinstance(v, _BYTES):")
            else:
                lines.append("        if isinstance(v, _BYTES):")
            lines.append(f"            a(L{i} + _binary(v, 32))")
            lines.append("        else:")
            ind = "            "
            if choices is not None:
                # (a damaged frame may hold a list or a map where the spec says a choice:
                # no name, drawn as it is)
                lines.append("            try:")
                lines.append(f"                t = C{i}.get((vt, v))")
                lines.append("            except TypeError:")
                lines.append("                t = None")
                lines.append("            if t is not None:")
                lines.append(f"                a(L{i} + t)")
                lines.append("            else:")
                ind += "    "
            lines.append(f"{ind}if vt in I{i}:")
            lines.append(f"{ind}    a(L{i} + _int(v))")
            lines.append(f"{ind}elif vt in S{i}:")
            lines.append(f"{ind}    a(L{i} + plain_or_quoted(v))")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    a(L{i} + format_field(T{i}, v))")
        elif kind == _K_FLAG:
            lines.append("        if v is True:")
            lines.append(f"            a({label[:-1]!r})")
            lines.append("        elif v is False:")
            lines.append("            pass" if false_default else f"            a({label + 'false'!r})")
            lines.append("        else:")
            lines.append(f"            a(L{i} + format_value(v))")
        elif kind == _K_UNSETTLED:
            lines.append("        if v:")  # (an empty map says nothing)
            lines.append(f"            a(L{i} + _unsettled(v))")
        else:
            fn_name = {_K_TERMINUS: "_terminus", _K_STATE: "_state"}.get(kind, "_error")
            lines.append(f"        a(L{i} + {fn_name}(v))")
    lines.append("    return parts")
    exec("\n".join(lines), env)  # noqa: S102 - code built above from the codec's field specs
    fn = _DRAWERS[cls] = env["draw"]
    return fn


def _one_data(msg: Any) -> bytes | None:
    """The bytes of a freshly split message's body when it is one data section in the
    usual encoding (0x00 0x53 0x75, vbin8 or vbin32): read from the span the message's
    split already checked, without decoding the section. None for anything else."""
    spans = msg._spans
    body = spans[5] if spans is not None else None
    if body is None or len(body) != 1:
        return None
    p, end = body[0]
    b = msg._buf
    if b[p + 1] != 0x53 or b[p + 2] != 0x75:
        return None
    vc = b[p + 3]
    if vc == 0xA0 and end == p + 5 + b[p + 4]:
        return b[p + 5 : end]  # type: ignore[no-any-return]
    if vc == 0xB0 and end == p + 8 + int.from_bytes(b[p + 4 : p + 8], "big"):
        return b[p + 8 : end]  # type: ignore[no-any-return]
    return None


_message_decode: Any = None  # Message.decode, imported on first use (not at start-up)


def _load_message_decode() -> Any:
    global _message_decode
    from amqpcli.codec.message import Message

    _message_decode = Message.decode
    return _message_decode


def summarize_payload(payload: bytes, limit: int = 60, message: Any = None,
                      invalid: bool = False) -> str:
    """A transfer's message in a few words: its body, cut short; or its size.

    `message`: the whole message when this payload ends a multi-frame delivery (the
    payload may then be empty: a last transfer that carries only `more=false`), or why
    the payloads joined are no valid message (a `NotAMessage`). `invalid`: `payload` is
    a whole delivery's, of the AMQP message format; when it is not a valid message (its
    sections do not split, or its body does not decode: the others are not decoded
    here), the summary says why (`NotAMessage.text`)."""
    if not payload and message is None:
        return ""
    if message.__class__ is NotAMessage:
        if message.error is None:
            return f"({len(payload)} bytes)"
        return f"{message.text()} ({message.size} bytes in all)"
    try:
        if message is None:
            msg = (_message_decode or _load_message_decode())(payload)
            data = _one_data(msg)
            if data is not None:
                text = "data " + _binary(data, limit)
                if len(text) > limit + 12:
                    text = text[: limit + 11] + "…"
                return f"{text} ({len(payload)} bytes)"
        else:
            msg = message
        body = msg.body
    except DecodeError as e:
        if invalid and message is None:
            return f"{NotAMessage(e, len(payload)).text()} ({len(payload)} bytes)"
        return f"({len(payload)} bytes)"
    except Exception:  # noqa: BLE001 - a summary never fails: the size is still true
        return f"({len(payload)} bytes)"
    if body is None:
        text = "no body"
    elif isinstance(body, list):
        if len(body) == 1 and getattr(body[0], "NAME", "") == "data":
            text = "data " + _binary(body[0].value, limit)
        elif body and getattr(body[0], "NAME", "") == "data":
            text = f"data ×{len(body)} " + _binary(b"".join(s.value for s in body), limit)
        else:
            text = "sequence " + " ".join(format_value(s.value) for s in body)
    else:
        text = "value " + format_value(body.value)
    if len(text) > limit + 12:
        text = text[: limit + 11] + "…"
    size = f"{len(payload)} bytes" if message is None else f"{len(message.encode())} bytes in all"
    return f"{text} ({size})"


_CHANNELS: dict[int, str] = {}
# a SASL frame of any type may hide a secret (a sasl-init damaged into another type)
_SASL = frozenset((SaslMechanisms, SaslInit, SaslChallenge, SaslResponse, SaslOutcome))
_HEARTBEAT = "heartbeat".ljust(_NAME_WIDTH)
# the SASL frames that carry a client's credentials, and the field that does
_SASL_ANSWERS = {SaslInit: "initial_response", SaslResponse: "response"}


def frame_line(
    frame: Frame,
    *,
    time: float | str | None = None,
    connection: str | None = None,
    direction: str | None = None,
    show_secrets: bool = False,
    payload: bool = True,
    message: Any = None,
    say_invalid: bool = False,
) -> str:
    """The one-line form of a frame. `direction` is an arrow ("->", "<-") or None;
    `message` is the whole message when `frame` ends a multi-frame delivery (or a
    `NotAMessage`: see `summarize_payload`). `say_invalid`: a transfer that is a whole
    delivery (the caller knows that none it did not see began in an earlier frame) and
    whose payload is not a valid message says why."""
    body = frame.body
    if not show_secrets and body.__class__ in _SASL and is_secret(body):  # what redact hides
        frame = redact(frame)
        body = frame.body
    chan = _CHANNELS.get(frame.channel)
    if chan is None:
        chan = f"[{frame.channel}]".ljust(_CHANNEL_WIDTH)
        if len(_CHANNELS) < 4096:
            _CHANNELS[frame.channel] = chan
    if body is None:
        parts = [chan, _HEARTBEAT]
    else:
        draw = _DRAWERS.get(body.__class__) or _drawer(body.__class__)
        try:
            parts = draw(body, chan)
        except AttributeError:  # a key field never set: the general loop copes
            if body.NAME not in KEY_FIELDS:
                raise
            parts = [chan, body.NAME.ljust(_NAME_WIDTH)]
            _fields(body, parts)
        if show_secrets and body.__class__ in _SASL_ANSWERS:
            # what the user asked to see is shown whole: a SASL response is not cut at
            # 32 bytes as other binaries are (an AMQPLAIN password is at its end)
            v = getattr(body, _SASL_ANSWERS[body.__class__], None)
            if v.__class__ is bytes and len(v) > 32:
                cut, whole = _binary(v, 32), _binary(v, len(v))
                parts = [p.replace(cut, whole, 1) if cut in p else p for p in parts]
        if (message is not None and message.__class__ is NotAMessage
                and message.error is None):
            # the payloads joined are opaque (a format other than 0): this one is shown as
            # a piece is, never judged alone
            message, say_invalid = None, False
        if payload and (frame.payload or message is not None):
            # a transfer without a delivery-id continues a delivery: no message of its own
            if body.NAME == "transfer" and not body.more and (  # type: ignore[attr-defined]
                    message is not None or body.delivery_id is not None):  # type: ignore[attr-defined]
                # (of the AMQP message format, 0 or left out: `amqp_format` inlined)
                parts.append(" " + summarize_payload(
                    frame.payload, message=message,
                    invalid=say_invalid and not body.message_format))  # type: ignore[attr-defined]
            else:
                parts.append(f" ({len(frame.payload)} bytes)")
    if frame.ext:
        parts.append(f"ext=0x{frame.ext.hex()}")
    if time is None and connection is None and direction is None:
        return " ".join(parts).rstrip()
    head = [p for p in (_time(time), connection, direction) if p]
    return " ".join(head + parts).rstrip()


def item_line(
    item: ProtocolHeader | Frame | FrameError,
    *,
    time: float | str | None = None,
    connection: str | None = None,
    direction: str | None = None,
    show_secrets: bool = False,
    message: Any = None,
    say_invalid: bool = False,
) -> str:
    """The one-line form of any frame reader item (`message`, `say_invalid`: see
    `frame_line`)."""
    if isinstance(item, Frame):
        return frame_line(
            item,
            time=time,
            connection=connection,
            direction=direction,
            show_secrets=show_secrets,
            message=message,
            say_invalid=say_invalid,
        )
    head = " ".join(p for p in (_time(time), connection, direction) if p)
    head = head + " " if head else ""
    if isinstance(item, ProtocolHeader):
        return f"{head}{item.name} protocol header ({item.raw[4:].hex(' ')})"
    return f"{head}frame error {item}"
