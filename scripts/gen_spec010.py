#!/usr/bin/env python3
"""Write `amqpcli/amqp010/spec.py` from the AMQP 0-10 type definitions.

Usage: python scripts/gen_spec010.py [SPEC_XML] [OUT_PY]

The qpid errata edition of the XML is the default source: it is the one the qpid brokers
and clients were built from, and it differs from the plain edition on the wire (the `xid`
struct carries a 4-octet size and a type code; see docs/amqp010.md).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_XML = ROOT.parent / "shared" / "specs" / "amqp-0-10" / "amqp.0-10-qpid-errata.stripped.xml"
DEFAULT_OUT = ROOT / "amqpcli" / "amqp010" / "spec.py"
NS = "{http://www.amqp.org/schema/amqp.xsd}"


def _int(text: str | None) -> int | None:
    return None if text is None else int(text, 0)


def _tag(el: ET.Element) -> str:
    return el.tag.removeprefix(NS)


def _children(el: ET.Element, tag: str) -> list[ET.Element]:
    return [c for c in el if _tag(c) == tag]


class Resolver:
    """Resolves a field's declared type to a primitive type or a struct."""

    def __init__(self, root: ET.Element) -> None:
        self.types = {t.get("name"): t for t in _children(root, "type")}
        self.domains: dict[str, ET.Element] = {}
        self.structs: dict[str, ET.Element] = {}
        for d in _children(root, "domain"):
            self.domains[str(d.get("name"))] = d
        for cls in _children(root, "class"):
            cname = cls.get("name")
            for d in _children(cls, "domain"):
                self.domains[f"{cname}.{d.get('name')}"] = d
            for s in cls.iter(f"{NS}struct"):
                self.structs[f"{cname}.{s.get('name')}"] = s

    def qualify(self, name: str, cls: str) -> str:
        if "." in name or name in self.types:
            return name
        local = f"{cls}.{name}"
        if local in self.domains or local in self.structs:
            return local
        if name in self.domains:
            return name
        raise KeyError(f"unresolved type {name!r} in class {cls!r}")

    def resolve(self, name: str, cls: str) -> tuple[str, str]:
        """(qualified declared name, primitive type or 'struct:<qualified struct>')."""
        q = self.qualify(name, cls)
        seen = q
        while True:
            if q in self.types:
                return seen, q
            if q in self.structs:
                return seen, f"struct:{q}"
            d = self.domains[q]
            q = self.qualify(str(d.get("type")), q.split(".")[0] if "." in q else cls)


def _fields(el: ET.Element, cls: str, r: Resolver) -> tuple[tuple[Any, ...], ...]:
    out = []
    for f in _children(el, "field"):
        declared, prim = r.resolve(str(f.get("type")), cls)
        out.append(
            (f.get("name"), declared, prim, f.get("required") == "true", f.get("default"))
        )
    return tuple(out)


def build(xml_path: Path) -> dict[str, Any]:
    root = ET.parse(xml_path).getroot()
    r = Resolver(root)
    types = tuple(
        (t.get("name"), _int(t.get("code")), _int(t.get("fixed-width")),
         _int(t.get("variable-width")))
        for t in _children(root, "type")
    )
    constants = tuple((c.get("name"), _int(c.get("value"))) for c in _children(root, "constant"))
    domains = []
    for qname, d in r.domains.items():
        cls = qname.split(".")[0] if "." in qname else ""
        _, prim = r.resolve(str(d.get("type")), cls) if cls else (None, d.get("type"))
        choices = tuple(
            (c.get("name"), _int(c.get("value")))
            for e in _children(d, "enum") for c in _children(e, "choice")
        )
        domains.append((qname, d.get("type"), prim, choices))
    classes, structs, methods = [], [], []
    for cls in _children(root, "class"):
        cname = str(cls.get("name"))
        classes.append((cname, _int(cls.get("code"))))
        for s in cls.iter(f"{NS}struct"):
            structs.append((cname, s.get("name"), _int(s.get("code")), _int(s.get("size")),
                            _int(s.get("pack")), _fields(s, cname, r)))
        for kind in ("control", "command"):
            for m in _children(cls, kind):
                result = None
                for res in _children(m, "result"):
                    if res.get("type"):
                        result = r.qualify(str(res.get("type")), cname)
                    else:
                        result = f"{cname}.{_children(res, 'struct')[0].get('name')}"
                header: tuple[str, ...] = ()
                body = False
                for seg in _children(m, "segments"):
                    for h in _children(seg, "header"):
                        header = tuple(
                            r.qualify(str(e.get("type")), cname) for e in _children(h, "entry")
                        )
                    body = bool(_children(seg, "body"))
                methods.append((kind, cname, m.get("name"), _int(m.get("code")),
                                _fields(m, cname, r), result, header, body))
    return {
        "MAJOR": int(str(root.get("major"))),
        "MINOR": int(str(root.get("minor"))),
        "PORT": int(str(root.get("port"))),
        "TYPES": tuple(types),
        "CONSTANTS": constants,
        "DOMAINS": tuple(domains),
        "CLASSES": tuple(classes),
        "STRUCTS": tuple(structs),
        "METHODS": tuple(methods),
    }


HEADER = '''"""AMQP 0-10 definitions: types, domains, classes, structs, controls and commands.

Written by scripts/gen_spec010.py from {source}; do not edit by hand.
tests/amqp010/test_spec_tables.py holds these tables against the XML.

TYPES: (name, code, fixed width, size width of a variable-width type)
DOMAINS: (qualified name, declared type, primitive or 'struct:<name>', enum choices)
STRUCTS: (class, name, code, size width, pack width, fields)
METHODS: (kind, class, name, code, fields, result struct, header entries, has body)
field: (name, declared type, primitive type or 'struct:<class.struct>', required, default)
"""

from __future__ import annotations

from typing import Any

SOURCE = {source!r}
'''


def render(tables: dict[str, Any], source: str) -> str:
    out = [HEADER.format(source=source)]
    for key, value in tables.items():
        if isinstance(value, tuple):
            out.append(f"{key}: tuple[Any, ...] = (")
            for item in value:
                out.append(f"    {item!r},")
            out.append(")\n")
        else:
            out.append(f"{key} = {value!r}\n")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    xml_path = Path(argv[1]) if len(argv) > 1 else DEFAULT_XML
    out_path = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUT
    out_path.write_text(render(build(xml_path), xml_path.name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
