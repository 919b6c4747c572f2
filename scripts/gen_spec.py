"""Write amqpcli/codec/composites.py from the AMQP 1.0 spec XML.

Usage: python scripts/gen_spec.py [SPEC_DIR] [-o OUTPUT] [--check]

SPEC_DIR defaults to ../shared/specs/amqp-1.0 beside the repository. Every type with a
descriptor becomes a class: composites (list encoded) get one slot per field; restricted
types with a descriptor (message sections such as application-properties or data) get one
slot, `value`. Restricted types without a descriptor become RESTRICTED (name → source type)
and CHOICES (name → {choice name: value}).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = REPO / ".." / "shared" / "specs" / "amqp-1.0"
DEFAULT_OUT = REPO / "amqpcli" / "codec" / "composites.py"
FILES = ("transport", "messaging", "security", "transactions")
NS = "{http://www.amqp.org/schema/amqp.xsd}"

# Python class of each primitive, to write typed defaults and choice values.
PRIMITIVE_CLASS = {
    "boolean": None,
    "ubyte": "UByte",
    "ushort": "UShort",
    "uint": "UInt",
    "ulong": "ULong",
    "byte": "Byte",
    "short": "Short",
    "int": "Int",
    "long": "Long",
    "symbol": "Symbol",
    "string": "str",
}


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("-"))


def snake(name: str) -> str:
    return name.replace("-", "_")


def parse_code(code: str) -> int:
    hi, lo = code.split(":")
    return (int(hi, 16) << 32) | int(lo, 16)


def load(spec_dir: Path) -> tuple[list[ET.Element], dict[str, ET.Element], list[str]]:
    types: list[ET.Element] = []
    primitives: list[str] = []
    for t in ET.parse(spec_dir / "types.bare.xml").getroot().iter(NS + "type"):
        primitives.append(t.get("name", ""))
    for f in FILES:
        root = ET.parse(spec_dir / f"{f}.bare.xml").getroot()
        types.extend(root.iter(NS + "type"))
    return types, {t.get("name", ""): t for t in types}, primitives


def resolve(name: str, by_name: dict[str, ET.Element]) -> str:
    """The primitive (or "*" or a composite name) a type name finally stands for."""
    seen = set()
    while name in by_name and by_name[name].get("class") == "restricted":
        if name in seen:
            raise ValueError(f"restricted type cycle at {name}")
        seen.add(name)
        name = by_name[name].get("source", "")
    return name


def literal(text: str, type_name: str, by_name: dict[str, ET.Element]) -> str:
    """Python source of a spec value (a default or a choice) of the given type."""
    t = by_name.get(type_name)
    if t is not None:
        for c in t.iter(NS + "choice"):
            if c.get("name") == text:
                text = c.get("value", "")
                break
    prim = resolve(type_name, by_name)
    if prim == "boolean":
        return {"true": "True", "false": "False"}[text]
    cls = PRIMITIVE_CLASS.get(prim)
    if cls is None:
        raise ValueError(f"no literal for {type_name} ({prim}) = {text!r}")
    if cls in ("Symbol", "str"):
        return f"{cls}({text!r})"
    return f"{cls}({int(text)})"


def generate(spec_dir: Path) -> str:
    types, by_name, primitives = load(spec_dir)
    out: list[str] = []
    w = out.append
    w('"""AMQP 1.0 composite types and restricted types, from the spec XML.')
    w("")
    w("Written by scripts/gen_spec.py from ../shared/specs/amqp-1.0/*.xml; change the script,")
    w("not this file. tests/codec/test_spec_tables.py holds these tables against the XML.")
    w('"""')
    w("")
    w("# Slots stay in spec order, the order of the encoded list.")
    w("# ruff: noqa: RUF023")
    w("from __future__ import annotations")
    w("")
    w("from typing import Any")
    w("")
    w("from .types import (")
    for n in ("Composite", "Field", "Symbol", "UByte", "UInt", "UShort"):
        w(f"    {n},")
    w(")")
    w("")
    w(f"PRIMITIVES: tuple[str, ...] = {tuple(primitives)!r}")
    w("")
    w("# Restricted types without a descriptor: name -> the type they restrict.")
    w("RESTRICTED: dict[str, str] = {")
    for t in types:
        if t.get("class") == "restricted" and t.find(NS + "descriptor") is None:
            w(f"    {t.get('name')!r}: {t.get('source')!r},")
    w("}")
    w("")
    w("# Named values of restricted types: type -> {choice name: value}.")
    w("CHOICES: dict[str, dict[str, Any]] = {")
    for t in types:
        choices = list(t.iter(NS + "choice"))
        if t.get("class") == "restricted" and choices:
            name = t.get("name", "")
            w(f"    {name!r}: {{")
            for c in choices:
                w(
                    f"        {c.get('name')!r}: {literal(c.get('value', ''), t.get('source', ''), by_name)},"
                )
            w("    },")
    w("}")
    w("")
    classes: list[str] = []
    for t in types:
        d = t.find(NS + "descriptor")
        if d is None:
            continue
        name = t.get("name", "")
        cls = camel(name)
        classes.append(cls)
        source = t.get("source", "") if t.get("class") == "restricted" else "list"
        if source != "list" and t.get("class") == "restricted":
            source = resolve(source, by_name)
        provides = tuple(p.strip() for p in t.get("provides", "").split(",") if p.strip())
        fields = list(t.iter(NS + "field"))
        w("")
        w(f"class {cls}(Composite):")
        if t.get("class") == "composite":
            slots = tuple(snake(f.get("name", "")) for f in fields)
        else:
            slots = ("value",)
        w(f"    __slots__ = {slots!r}")
        w(f"    NAME = {name!r}")
        w(f"    CODE = {parse_code(d.get('code', '')):#04x}")
        w(f"    SYMBOL = {d.get('name')!r}")
        w(f"    SOURCE = {source!r}")
        w(f"    PROVIDES = {provides!r}")
        if t.get("class") == "restricted":
            w("    HAS_VALUE = True")
        if fields:
            w("    FIELDS = (")
            for f in fields:
                default = f.get("default")
                lit = "None" if default is None else literal(default, f.get("type", ""), by_name)
                w(
                    f"        Field({f.get('name')!r}, {f.get('type')!r}, "
                    f"{f.get('mandatory') == 'true'}, {f.get('multiple') == 'true'}, {lit}),"
                )
            w("    )")
        else:
            w("    FIELDS = ()")
        w("")
        if slots:
            args = ", ".join(f"{s}: Any = None" for s in slots)
            w(f"    def __init__(self, {args}) -> None:")
            w("        self._raw = None")
            for s in slots:
                w(f"        self.{s} = {s}")
        else:
            w("    def __init__(self) -> None:")
            w("        self._raw = None")
        if t.get("class") == "composite" and slots:
            w("")
            w("    @staticmethod")
            w("    def _fill(o: Any, v: list[Any]) -> None:")
            w(f'        """Set every field from a decoded list of exactly {len(slots)} items."""')
            targets = ", ".join(f"o.{s}" for s in slots)
            w(f"        ({targets},) = v")
        w("")
    w("")
    w(f"ALL: tuple[type[Composite], ...] = ({', '.join(classes)},)")
    w("BY_CODE: dict[int, type[Composite]] = {c.CODE: c for c in ALL}")
    w("BY_SYMBOL: dict[str, type[Composite]] = {c.SYMBOL: c for c in ALL}")
    w("BY_NAME: dict[str, type[Composite]] = {c.NAME: c for c in ALL}")
    w("")
    return "\n".join(out)


def _format(text: str) -> str:
    """Run the project's formatter over the output when it is installed (else leave as is)."""
    beside = Path(sys.executable).parent / "ruff"  # the venv's, when PATH does not have it
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff is None:
        return text
    proc = subprocess.run(
        [ruff, "format", "--stdin-filename", str(DEFAULT_OUT), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    return proc.stdout if proc.returncode == 0 else text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec_dir", nargs="?", type=Path, default=DEFAULT_SPEC)
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    ap.add_argument(
        "--check", action="store_true", help="exit 1 if OUTPUT differs from what would be written"
    )
    ns = ap.parse_args(argv)
    text = _format(generate(ns.spec_dir))
    if ns.check:
        if not ns.output.exists() or ns.output.read_text() != text:
            print(f"{ns.output} is not what scripts/gen_spec.py writes", file=sys.stderr)
            return 1
        return 0
    if str(ns.output) == "-":
        sys.stdout.write(text)
    else:
        ns.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
