"""What `amqp send`'s summary says of the rejected and modified outcomes beyond their counts:
the error a rejection carried (condition, description, info; Part 3 §3.4.3) and a
modification's flags and annotations (delivery-failed, undeliverable-here,
message-annotations; §3.4.5).

Messages answered alike are one group, so that 100,000 rejections of one kind are one
line: the JSON summary keeps every distinct outcome whole (the lossless JSON of
docs/message-format.md) with the numbers of its messages; the text summary gives one line
per condition (rejected) or set of flags (modified), worded from its first message's
outcome. The peer writes these values: the run's secrets are masked in every binary,
string and symbol of them, at any depth, before either form is made (a binary's base64,
or a value the text cuts short, hides a secret from a search of the text made), and in
the text made all the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import (
    AmqpList,
    AmqpMap,
    Array,
    Char,
    Composite,
    Described,
    Symbol,
    add_map_entry,
    key_value,
)
from amqpcli.errors import mask_secret_bytes, mask_secrets

__all__ = ["OutcomeDetails", "numbers_text"]

SHOWN_LINES = 20  # text lines at most (one per condition or set of flags)
SHOWN_RANGES = 5  # message numbers shown on a line, as runs (1-4, 9)


@dataclass
class _Group:
    """The messages answered with one and the same outcome."""

    state: dict[str, Any]  # the outcome in lossless JSON, the run's secrets masked
    heading: tuple[str, str]  # what the text summary groups it under
    text: str  # the outcome in words
    messages: list[int] = field(default_factory=list)


class OutcomeDetails:
    """The rejected and modified outcomes of a run, grouped as said above."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}
        # The engine decodes a disposition once for its range of deliveries: the group of
        # the last state object met is looked up once for all of them. An outcome's
        # encoded bytes (a decoded one keeps them) find its group without making its
        # JSON form again: one disposition per message costs a dict look-up.
        self._last: tuple[Any, _Group] | None = None
        self._by_bytes: dict[bytes, _Group] = {}

    def __bool__(self) -> bool:
        return bool(self._groups)

    def add(self, number: int, state: c.Rejected | c.Modified) -> None:
        last = self._last
        if last is not None and last[0] is state:
            last[1].messages.append(number)
            return
        raw = state._raw[0] if state._raw is not None else None
        group = self._by_bytes.get(raw) if raw is not None else None
        if group is None:
            group = self._group(state)
            if raw is not None:
                self._by_bytes[raw] = group
        group.messages.append(number)
        self._last = (state, group)

    def _group(self, state: c.Rejected | c.Modified) -> _Group:
        """The group of outcomes equal to `state` (its JSON form alike: whatever widths
        their encodings have), made if need be."""
        from amqpcli.render.jsonvalues import to_json

        state = _without_secrets(state)
        detail = _masked(to_json(state, exact=False))
        key = json.dumps(detail, sort_keys=True)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(detail, *_words(state))
        return group

    def to_json(self) -> list[dict[str, Any]]:
        """Each distinct outcome, with how many messages got it and which."""
        return [{"state": g.state, "count": len(g.messages), "messages": g.messages}
                for g in self._groups.values()]

    def lines(self) -> list[str]:
        """One line per condition (rejected) or set of flags (modified): how many, which
        messages, and the first one's outcome in words, with how many others differ."""
        by_heading: dict[tuple[str, str], list[_Group]] = {}
        for g in self._groups.values():
            by_heading.setdefault(g.heading, []).append(g)
        lines = []
        for (outcome, _), groups in list(by_heading.items())[:SHOWN_LINES]:
            numbers = sorted(n for g in groups for n in g.messages)
            first = min(groups, key=lambda g: min(g.messages))
            line = f"{outcome} {len(numbers)} ({numbers_text(numbers)}): {first.text}"
            if len(groups) > 1:
                line += f" (the first of {len(groups)} different ones: see --json)"
            lines.append(line)
        if len(by_heading) > SHOWN_LINES:
            lines.append(f"… and {len(by_heading) - SHOWN_LINES} other kind(s) of outcome "
                         "(see --json)")
        return lines


def _words(state: c.Rejected | c.Modified) -> tuple[tuple[str, str], str]:
    """The heading an outcome is grouped under in the text summary, and its words."""
    from amqpcli.net.client import describe_error
    from amqpcli.render.text import format_value

    if isinstance(state, c.Rejected):
        err = state.error
        text = describe_error(err)
        info = getattr(err, "info", None)
        if info:
            text += f" (info {mask_secrets(format_value(info))})"
        condition = getattr(err, "condition", None)
        return ("rejected", "" if condition is None else str(condition)), text
    flags = ",".join(name for name, on in (("delivery-failed", state.delivery_failed),
                                           ("undeliverable-here", state.undeliverable_here))
                     if on)
    text = flags or "neither delivery-failed nor undeliverable-here"
    if state.message_annotations:
        text += f", message-annotations {mask_secrets(format_value(state.message_annotations))}"
    return ("modified", flags), text


def _without_secrets(value: Any) -> Any:
    """An AMQP value with the run's secrets masked in every binary, string and symbol of
    it, at any depth (map keys, lists, arrays, described values, composites' fields): the
    very object when nothing in it holds one."""
    t = type(value)
    if t is bytes or t is bytearray or t is memoryview:
        data = bytes(value)
        masked = mask_secret_bytes(data)
        return value if masked == data else masked
    if isinstance(value, str):
        shown = mask_secrets(value)
        if shown == value or t is Char:  # (one character holds no secret)
            return value
        return Symbol(shown) if t is Symbol else shown
    if isinstance(value, Composite):
        fields = [getattr(value, slot) for slot in value._SLOTS]
        shown_fields = [_without_secrets(v) for v in fields]
        if all(a is b for a, b in zip(fields, shown_fields)):
            return value
        return t(*shown_fields)
    if isinstance(value, dict):
        entries = [(key_value(k), v) for k, v in value.items()]
        shown_entries = [(_without_secrets(k), _without_secrets(v)) for k, v in entries]
        if all(k is k2 and v is v2 for (k, v), (k2, v2) in zip(entries, shown_entries)):
            return value
        out: dict[Any, Any] = AmqpMap(code=value.code) if isinstance(value, AmqpMap) else {}
        for k, v in shown_entries:
            add_map_entry(out, k, v)  # (two keys masked alike stay two entries)
        return out
    if isinstance(value, list):
        items = [_without_secrets(x) for x in value]
        if all(a is b for a, b in zip(value, items)):
            return value
        if isinstance(value, Array):
            return Array(items, type=value.type, code=value.code,
                         descriptor=value.descriptor, fmt=value.fmt)
        return AmqpList(items, code=value.code) if isinstance(value, AmqpList) else items
    if t is Described:
        descriptor = _without_secrets(value.descriptor)
        inner = _without_secrets(value.value)
        if descriptor is value.descriptor and inner is value.value:
            return value
        return Described(descriptor, inner)
    return value


def _masked(value: Any) -> Any:
    """A JSON form with the run's secrets masked in every string of it (keys too): the
    text made of values that are no text (a uuid, a timestamp)."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, list):
        return [_masked(x) for x in value]
    if isinstance(value, dict):
        return {mask_secrets(k): _masked(v) for k, v in value.items()}
    return value


def numbers_text(numbers: list[int]) -> str:
    """`message 3`, `messages 1-4, 9`: the runs of consecutive numbers, the first
    `SHOWN_RANGES` of them."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:SHOWN_RANGES])
    if len(runs) > SHOWN_RANGES:
        shown += ", …"
    return f"message {shown}" if len(numbers) == 1 else f"messages {shown}"
