"""The composite tables against the spec XML: fails when composites.py drifts from it."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from amqpcli.codec import Symbol, UByte, UInt, UShort, composites
from tests.paths import SCRIPTS_DIR, SPECS_DIR, require

SPEC = SPECS_DIR / "amqp-1.0"
NS = "{http://www.amqp.org/schema/amqp.xsd}"
FILES = ("transport", "messaging", "security", "transactions")


def _types() -> list[ET.Element]:
    out: list[ET.Element] = []
    for f in FILES:
        out.extend(ET.parse(require(SPEC / f"{f}.bare.xml")).getroot().iter(NS + "type"))
    return out


TYPES = _types()
BY_NAME = {t.get("name"): t for t in TYPES}
DESCRIBED = [t for t in TYPES if t.find(NS + "descriptor") is not None]
PY = {"boolean": bool, "ubyte": UByte, "ushort": UShort, "uint": UInt, "symbol": Symbol}


def primitive(name: str) -> str:
    while name in BY_NAME and BY_NAME[name].get("class") == "restricted":
        name = BY_NAME[name].get("source", "")
    return name


def typed(text: str, type_name: str) -> Any:
    """A spec value (default or choice) as the Python value the tables must hold."""
    t = BY_NAME.get(type_name)
    if t is not None:
        for c in t.iter(NS + "choice"):
            if c.get("name") == text:
                text = c.get("value", "")
    prim = primitive(type_name)
    if prim == "boolean":
        return {"true": True, "false": False}[text]
    cls = PY[prim]
    return cls(text) if cls is Symbol else cls(int(text))


def test_every_described_type_has_a_class() -> None:
    assert len(DESCRIBED) == 40
    names = {t.get("name") for t in DESCRIBED}
    assert set(composites.BY_NAME) == names
    assert len(composites.ALL) == len(names)
    assert len(composites.BY_CODE) == len(names) and len(composites.BY_SYMBOL) == len(names)


@pytest.mark.parametrize("t", DESCRIBED, ids=lambda t: t.get("name"))
def test_class_matches_xml(t: ET.Element) -> None:
    name = t.get("name", "")
    cls = composites.BY_NAME[name]
    assert cls.__name__ == "".join(p.capitalize() for p in name.split("-"))
    assert getattr(composites, cls.__name__) is cls
    d = t.find(NS + "descriptor")
    assert d is not None
    hi, lo = d.get("code", "").split(":")
    code = (int(hi, 16) << 32) | int(lo, 16)
    assert cls.CODE == code and composites.BY_CODE[code] is cls
    assert cls.SYMBOL == d.get("name") and composites.BY_SYMBOL[d.get("name", "")] is cls
    assert cls.NAME == name
    provides = tuple(p.strip() for p in t.get("provides", "").split(",") if p.strip())
    assert cls.PROVIDES == provides  # type: ignore[attr-defined]
    fields = list(t.iter(NS + "field"))
    if t.get("class") == "composite":
        assert cls.SOURCE == "list" and not cls.HAS_VALUE
        want_slots = tuple(f.get("name", "").replace("-", "_") for f in fields)
    else:
        assert cls.SOURCE == primitive(t.get("source", "")) and cls.HAS_VALUE
        assert not fields
        want_slots = ("value",)
    assert cls.__slots__ == want_slots
    assert cls._SLOTS == want_slots
    assert len(cls.FIELDS) == len(fields)
    for got, f in zip(cls.FIELDS, fields, strict=True):
        assert got.name == f.get("name")
        assert got.attr == f.get("name", "").replace("-", "_")
        assert got.type == f.get("type")
        assert got.mandatory is (f.get("mandatory") == "true")
        assert got.multiple is (f.get("multiple") == "true")
        default = f.get("default")
        if default is None:
            assert got.default is None
        else:
            want = typed(default, f.get("type", ""))
            assert type(got.default) is type(want) and got.default == want, got


def test_restricted_types_and_choices() -> None:
    restricted = {
        t.get("name"): t.get("source")
        for t in TYPES
        if t.get("class") == "restricted" and t.find(NS + "descriptor") is None
    }
    assert composites.RESTRICTED == restricted
    for t in TYPES:
        choices = list(t.iter(NS + "choice"))
        if not choices:
            continue
        got = composites.CHOICES[t.get("name", "")]
        assert list(got) == [c.get("name") for c in choices]
        for c in choices:
            want = typed(c.get("value", ""), t.get("source", ""))
            assert type(got[c.get("name", "")]) is type(want)
            assert got[c.get("name", "")] == want


def test_primitive_list_matches_types_xml() -> None:
    root = ET.parse(require(SPEC / "types.bare.xml")).getroot()
    assert composites.PRIMITIVES == tuple(t.get("name") for t in root.iter(NS + "type"))


def test_composites_module_is_what_the_generator_writes() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS_DIR / "gen_spec.py"), str(SPEC), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_spec_defaults_through_get() -> None:
    a = composites.Attach(name="l", handle=0, role=False)
    assert a.snd_settle_mode is None
    assert a.get("snd_settle_mode") == UByte(2)
    assert a.get("rcv_settle_mode") == UByte(0)
    assert a.get("snd-settle-mode") == UByte(2)
    assert composites.Source().get("expiry_policy") == Symbol("session-end")
    assert composites.Open(container_id="c").get("max_frame_size") == UInt(0xFFFFFFFF)
