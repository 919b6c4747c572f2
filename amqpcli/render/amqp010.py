"""AMQP 0-10 items (protocol header, assemblies, stream errors) as a readable tree.

One line per item and JSON live in `render.traffic` (`line_010`, `json_010`), next to the
1.0 frame lines they sit among in `pcap-dump`; this is the tree `amqp decode` prints.
Credentials in `connection.start-ok` (the PLAIN response: authzid NUL user NUL password)
are masked here unless asked, as they are for 1.0's sasl-init.
"""

from __future__ import annotations

from typing import Any

from amqpcli.render.redact import redact_010_fields
from amqpcli.render.text import format_binary
from amqpcli.render.traffic import plain_010


def _value(v: Any) -> str:
    if isinstance(v, (bytes, bytearray)):
        return format_binary(bytes(v), 60)
    if isinstance(v, str):
        return repr(v) if v == "" or not v.isprintable() else f'"{v}"'
    plain = plain_010(v)
    return str(plain) if not isinstance(plain, str) else plain


def _field_lines(fields: dict[str, Any], indent: str) -> list[str]:
    lines: list[str] = []
    for name, v in fields.items():
        if isinstance(v, dict) and v:
            lines.append(f"{indent}{name}:  (map, {len(v)} entries)")
            lines += [f"{indent}  {k!s}: {_value(x)}" for k, x in v.items()]
        else:
            lines.append(f"{indent}{name}: {_value(v)}")
    return lines


def tree_010(item: Any, show_secrets: bool = False) -> list[str]:
    """Plain text lines for one item; the first names it, the rest are its fields."""
    method = getattr(item, "method", None)
    if method is None:
        err = getattr(item, "error", None)
        if err is not None:
            return [f"decode error at offset {item.offset}: {err}"]
        return [f"AMQP 0-10 protocol header  (@{item.offset}: {bytes(item.raw[4:]).hex(' ')})"]
    kind = type(method).__name__.lower()  # control / command
    flags = ", sync" if getattr(method, "sync", False) else ""
    frames = f"{item.frames} frame{'s' * (item.frames != 1)}"
    lines = [f"[{item.channel}] {method.qname}  ({kind}{flags}, @{item.offset}, {frames})"]
    lines += _field_lines(redact_010_fields(method, show_secrets), "  ")
    for struct in item.header:
        lines.append(f"  header {struct.qname}")
        lines += _field_lines(dict(struct.fields), "    ")
    if item.body is not None:
        lines.append(f"  body: {_value(item.body)}  ({len(item.body)} bytes)")
    return lines
