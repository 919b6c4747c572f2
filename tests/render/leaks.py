"""Whether a view's output gives away a password, or any piece of it: the tests of
secrets."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any


def shows(text: str, password: bytes) -> bool:
    """The whole password: as text, as hex (spaced or not), or inside any base64 string
    of a JSON line."""
    if password.decode() in text or password.hex() in text.replace(" ", ""):
        return True
    return any(password in raw for raw in _base64_in_json(text))


def shows_a_piece(text: str, password: bytes) -> bool:
    """Three bytes of `password` in a row: as text, as hex (spaced, a mark's brackets
    aside, or not), or inside any base64 string of a JSON line."""
    grams = {password[i:i + 3] for i in range(len(password) - 2)}
    flat = re.sub(r"\s+", " ", re.sub(r"[\[\]]", " ", text))
    if any(g.hex(" ") in flat or g.hex() in text or g.decode() in text for g in grams):
        return True
    return any(g in raw for raw in _base64_in_json(text) for g in grams)


def _base64_in_json(text: str) -> Iterator[bytes]:
    """The bytes of every string (member name or value) of the JSON lines in `text` that
    reads as base64."""
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        for s in _strings(obj):
            try:
                yield base64.b64decode(s, validate=True)
            except ValueError:
                continue


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
