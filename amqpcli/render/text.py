"""AMQP values as text: a compact one-line form and a tree (rich on a terminal, plain else).

`Node` is the tree both outputs are drawn from, so the rich and the plain view always say
the same thing. Types are shown where Python's own spelling can't tell them apart (a uint
from a long, a symbol from a string); timestamps show their ISO time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec.types import Array, Composite, Described, MapKey
from amqpcli.render.redact import redact
from amqpcli.render.types import (
    DECIMAL_TYPES,
    INTEGER_TYPES,
    amqp_type,
    annotation_value_name,
    choice_name,
    field_type,
    format_descriptor,
    iso_time,
    plain_or_quoted,
    printable,
    quoted,
    shortest_float32,
)

__all__ = ["Node", "format_binary", "format_scalar", "format_value", "plain_lines", "printable",
           "value_tree"]

_MAX_INLINE_BINARY = 64
# Types whose one-line text alone could be another's (5, 1.5, NaN): `uint:5`, `decimal64:1.5`.
_PREFIXED_TYPES = INTEGER_TYPES | DECIMAL_TYPES | {"float", "double", "char"}

_ESCAPES = {0: "\\x00", 0x22: '\\"', 0x5C: "\\\\"}


def format_binary(data: bytes | bytearray | memoryview, limit: int = _MAX_INLINE_BINARY) -> str:
    """b"text" when printable, else hex; cut at `limit` bytes with the full length said."""
    data = bytes(data)
    cut = data[:limit]
    more = f"…({len(data)} bytes)" if len(data) > limit else ""
    printable = sum(32 <= b < 127 for b in cut)
    # Mostly text (a SASL PLAIN response, a tag like "tag-1"): escape the few other bytes.
    if (
        cut
        and printable == len(cut)
        or (printable >= len(cut) * 3 // 4 and cut.count(0) + printable == len(cut))
    ):
        return 'b"' + "".join(_ESCAPES.get(b, chr(b)) for b in cut) + '"' + more
    return ("0x" + cut.hex() if cut else 'b""') + more


def format_scalar(value: Any, t: str | None = None) -> tuple[str, str | None]:
    """(text, type annotation or None) for a non-container value."""
    t = t or amqp_type(value)
    if t == "null":
        return "null", None
    if t == "boolean":
        return ("true" if value else "false"), None
    if t == "string":
        return quoted(value), None
    if t == "symbol":  # (one that could read two ways in a list or a line is quoted)
        return plain_or_quoted(value), "symbol"
    if t in INTEGER_TYPES:
        return str(int(value)), t
    if t == "float":  # (its repr as a double has digits no float holds)
        return repr(shortest_float32(float(value))), t
    if t == "double":
        return repr(float(value)), t
    if t == "timestamp":
        iso = iso_time(int(value))
        return (iso if iso else str(int(value))), f"timestamp {int(value)}"
    if t == "binary":
        n = len(value)
        return format_binary(value), f"binary, {n} byte{'s' * (n != 1)}"
    if t == "char":
        return repr(str(value)), "char"
    if t == "uuid":
        return str(value), "uuid"
    if t in DECIMAL_TYPES:
        return str(value.to_decimal()), t
    return repr(value), t


def _key(k: Any) -> Any:
    """A map key as the AMQP value it is (one kept apart from an equal-in-Python key of
    the same map is held in a `MapKey`)."""
    return k.value if type(k) is MapKey else k


# A list or map key says what it is (an array's or a described value's text says it).
_CONTAINER_KEYS = {"list": "list", "map": "map"}


def format_value(value: Any, show_secrets: bool = False) -> str:
    """A compact one-line rendering: `@transfer [handle=0, delivery-id=3]`, `[1, "a"]`."""
    value = redact(value, show_secrets)
    if isinstance(value, Composite):
        cls = type(value)
        if cls.HAS_VALUE:
            return f"@{cls.NAME} {format_value(value.value, show_secrets)}"  # type: ignore[attr-defined]
        parts = []
        for spec, slot in zip(cls.FIELDS, cls._SLOTS):
            v = getattr(value, slot)
            if v is not None:
                parts.append(f"{spec.name}={format_field(spec.type, v, show_secrets)}")
        return f"@{cls.NAME} [{', '.join(parts)}]"
    t = amqp_type(value)
    if t == "list":
        return "[" + ", ".join(format_value(x, show_secrets) for x in value) + "]"
    if t == "map":
        return (
            "{"
            + ", ".join(
                f"{format_value(_key(k), show_secrets)}: {format_value(v, show_secrets)}"
                for k, v in value.items()
            )
            + "}"
        )
    if t == "array":
        desc = f" {format_descriptor(value.descriptor)}" if value.descriptor is not None else ""
        return (
            f"@array<{value.type}{desc}>["
            + ", ".join(
                format_scalar(x, value.type)[0]
                if value.type not in ("list", "map", "array")
                else format_value(x)
                for x in value
            )
            + "]"
        )
    if t == "described":
        return f"@({format_descriptor(value.descriptor)}) {format_value(value.value, show_secrets)}"
    text, ann = format_scalar(value, t)
    if ann and t in _PREFIXED_TYPES:
        return f"{t}:{text}"
    if t == "symbol":
        return f":{text}"
    return text


def format_field(spec_type: str, value: Any, show_secrets: bool = False) -> str:
    """A composite field's value: bare when it has the field's type, named choices spelt."""
    name = choice_name(spec_type, value)
    if name is not None:
        return name
    t = field_type(spec_type)
    vt = amqp_type(value) if not isinstance(value, Composite) else "described"
    if vt == t and vt in INTEGER_TYPES | {"symbol", "timestamp", "float", "double"}:
        return format_scalar(value, vt)[0]
    if vt == "array" and value.type == t and t in INTEGER_TYPES | {"symbol"}:
        # A multiple field (capabilities, mechanisms): the list of values is enough.
        return "[" + ", ".join(format_scalar(x, t)[0] for x in value) + "]"
    return format_value(value, show_secrets)


def terminus_field_text(field: str, value: Any) -> str:
    """A value of a field the engine compares between a link's attaches (`Difference.field`:
    `snd-settle-mode` of the attach, `source.durable`, `target.address`,
    `source.filter.KEY`) as the frame lines draw it: by its spec name where it has one
    (`unsettled`, `unsettled-state`, `never`), an address quoted, a filter as its
    described value. Our own attach holds a plain int where the wire has a ubyte (a
    settle mode): named all the same."""
    from amqpcli.codec import composites as c

    owner, _, name = field.rpartition(".")
    owners: dict[str, type[Composite]] = {"": c.Attach, "source": c.Source, "target": c.Target}
    composite = owners.get(owner)
    spec = None if composite is None else next(
        (f for f in composite.FIELDS if f.name == name), None)
    if spec is None:  # (a filter's value: source.filter.KEY), as a terminus shows it
        from amqpcli.render.frameline import filter_value_text

        return filter_value_text(value, None)
    if type(value) in (int, str):
        for choice, wire_value in c.CHOICES.get(spec.type, {}).items():
            if wire_value == value:
                return choice
    return format_field(spec.type, value)


@dataclass
class Node:
    """One line of a tree: `label: text  (type)`, then children."""

    label: str
    text: str = ""
    type: str | None = None
    children: list[Node] = field(default_factory=list)


def value_tree(value: Any, label: str = "", show_secrets: bool = False) -> Node:
    """The tree of an AMQP value (composites show their spec field names)."""
    value = redact(value, show_secrets)
    if isinstance(value, Composite):
        cls = type(value)
        text = cls.NAME if label and label != cls.NAME else ""
        node = Node(label or cls.NAME, text, f"0x{cls.CODE:x} = {cls.SYMBOL}")
        if cls.HAS_VALUE:
            inner = value.value  # type: ignore[attr-defined]
            child = value_tree(inner, "value", show_secrets)
            if (
                child.children
                or child.label != "value"
                or amqp_type(inner) in ("map", "list", "array")
            ):
                node.children = child.children
            else:  # a scalar: on the section's own line
                node.text = f"{text} {child.text}".strip()
            node.type = f"{node.type}, {child.type}" if child.type else node.type
            return node
        for spec, slot in zip(cls.FIELDS, cls._SLOTS):
            v = getattr(value, slot)
            if v is None:
                continue
            child = value_tree(v, spec.name, show_secrets)
            cname = choice_name(spec.type, v)
            if cname is not None:
                child.text = f"{cname} ({child.text})"
            node.children.append(child)
        raw = value._raw
        items = raw[1] if raw is not None else None
        if items.__class__ is list and len(items) > cls._N:
            # items on the wire beyond the spec's fields (a newer peer's, or damage): shown,
            # as JSON keeps them (`encoded`); a masked value has no `_raw`
            for i, x in enumerate(items[cls._N:], cls._N):
                child = value_tree(x, f"[{i}]", show_secrets)
                child.type = f"{child.type}; beyond its fields" if child.type else (
                    "beyond its fields")
                node.children.append(child)
        return node
    t = amqp_type(value)
    if t == "list":
        return Node(
            label,
            "",
            f"list, {_count(len(value), 'item')}",
            [value_tree(x, f"[{i}]", show_secrets) for i, x in enumerate(value)],
        )
    if t == "map":
        children = []
        for k, v in value.items():
            k = _key(k)
            kt, ka = (
                format_scalar(k)
                if not isinstance(k, (list, dict, Composite, Described))
                else (format_value(k, show_secrets), _CONTAINER_KEYS.get(amqp_type(k)))
            )
            child = value_tree(v, kt, show_secrets)
            if ka:
                child.label = f"{kt} ({ka})"
            meaning = annotation_value_name(k, v)
            if meaning:
                child.text = f"{child.text} = {meaning}"
            children.append(child)
        n = len(value)
        return Node(label, "", f"map, {n} {'entry' if n == 1 else 'entries'}", children)
    if t == "array":
        assert isinstance(value, Array)
        desc = (
            f", described by {format_descriptor(value.descriptor)}"
            if value.descriptor is not None
            else ""
        )
        return Node(
            label,
            "",
            f"array of {value.type}, {_count(len(value), 'item')}{desc}",
            [value_tree(x, f"[{i}]", show_secrets) for i, x in enumerate(value)],
        )
    if t == "described":
        node = Node(label, "", f"described by {format_descriptor(value.descriptor)}")
        inner = value_tree(value.value, "value", show_secrets)
        node.children = [inner]
        return node
    text, ann = format_scalar(value, t)
    return Node(label, text, ann)


def plain_lines(node: Node, indent: int = 0) -> list[str]:
    """The tree as indented plain text (for pipes and files)."""
    pad = "  " * indent
    head = node.label
    if node.text:
        head = f"{head}: {node.text}" if head else node.text
    if node.type:
        head = f"{head}  ({node.type})"
    lines = [pad + head]
    for c in node.children:
        lines.extend(plain_lines(c, indent + 1))
    return lines


def rich_tree(node: Node) -> Any:
    """The tree as a `rich.tree.Tree` (for terminals)."""
    from rich.text import Text
    from rich.tree import Tree

    def label(n: Node) -> Text:
        t = Text()
        t.append(n.label, style="bold cyan" if n.children else "cyan")
        if n.text:
            t.append(": " if n.label else "")
            t.append(n.text, style="green" if n.text.startswith('"') else "")
        if n.type:
            t.append(f"  {n.type}", style="dim")
        return t

    def add(tree: Tree, n: Node) -> None:
        for c in n.children:
            add(tree.add(label(c)), c)

    root = Tree(label(node))
    add(root, node)
    return root


def _count(n: int, noun: str) -> str:
    """`1 item`, `2 items`."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
