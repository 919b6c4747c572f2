"""Whether a view's output gives away any piece of a password: the tests of secrets."""

from __future__ import annotations

import base64
import json
import re
from typing import Any


def shows_a_piece(text: str, password: bytes) -> bool:
    """Three bytes of `password` in a row: as text, as hex (spaced, a mark's brackets
    aside, or not), or inside any base64 string of a JSON line."""
    grams = {password[i:i + 3] for i in range(len(password) - 2)}
    flat = re.sub(r"\s+", " ", re.sub(r"[\[\]]", " ", text))
    if any(g.hex(" ") in flat or g.hex() in text or g.decode() in text for g in grams):
        return True
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        for s in _strings(obj):
            try:
                raw = base64.b64decode(s, validate=True)
            except ValueError:
                continue
            if any(g in raw for g in grams):
                return True
    return False


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
