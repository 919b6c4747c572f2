"""The generated 0-10 tables against the spec XML, read here independently."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from amqpcli.amqp010 import model, spec
from tests.paths import SPECS_DIR, require

NS = "{http://www.amqp.org/schema/amqp.xsd}"
ERRATA = SPECS_DIR / "amqp-0-10" / "amqp.0-10-qpid-errata.stripped.xml"
PLAIN = SPECS_DIR / "amqp-0-10" / "amqp.0-10.stripped.xml"


def _root(path: Path) -> ET.Element:
    return ET.parse(require(path)).getroot()


def _num(s: str | None) -> int | None:
    return None if s is None else int(s, 0)


def _fields(el: ET.Element) -> list[tuple[str | None, str | None, bool]]:
    return [(f.get("name"), f.get("type"), f.get("required") == "true")
            for f in el.findall(f"{NS}field")]


def test_source_is_the_errata() -> None:
    assert spec.SOURCE == ERRATA.name
    root = _root(ERRATA)
    assert (spec.MAJOR, spec.MINOR, spec.PORT) == (0, 10, 5672)
    assert (root.get("major"), root.get("minor")) == ("0", "10")


def test_types() -> None:
    xml = [(t.get("name"), _num(t.get("code")), _num(t.get("fixed-width")),
            _num(t.get("variable-width"))) for t in _root(ERRATA).findall(f"{NS}type")]
    assert list(spec.TYPES) == xml
    assert len(xml) == 45


def test_classes_and_codes() -> None:
    xml = [(c.get("name"), _num(c.get("code"))) for c in _root(ERRATA).findall(f"{NS}class")]
    assert list(spec.CLASSES) == xml
    assert [n for n, _ in xml] == ["connection", "session", "execution", "message", "tx", "dtx",
                                   "exchange", "queue", "file", "stream"]


def _methods(kind: str) -> list[tuple[str | None, str | None, int | None, list]]:
    return [(c.get("name"), m.get("name"), _num(m.get("code")), _fields(m))
            for c in _root(ERRATA).findall(f"{NS}class") for m in c.findall(f"{NS}{kind}")]


@pytest.mark.parametrize("kind", ["control", "command"])
def test_methods_codes_fields_types_order(kind: str) -> None:
    xml = _methods(kind)
    ours = [(m[1], m[2], m[3], [(f[0], f[1].split(".")[-1], f[3]) for f in m[4]])
            for m in spec.METHODS if m[0] == kind]
    expected = [(c, n, code, [(fn, ft.split(".")[-1], req) for fn, ft, req in fs])
                for c, n, code, fs in xml]
    assert ours == expected
    table = model.CONTROLS if kind == "control" else model.COMMANDS
    assert len(table) == len(xml)  # no (class, code) collisions
    assert len(xml) == (25 if kind == "control" else 59)


def test_structs_codes_sizes_packs_fields() -> None:
    xml = [(c.get("name"), s.get("name"), _num(s.get("code")), _num(s.get("size")),
            _num(s.get("pack")), _fields(s))
           for c in _root(ERRATA).findall(f"{NS}class") for s in c.iter(f"{NS}struct")]
    ours = [(c, n, code, size, pack, [(f[0], f[1].split(".")[-1], f[3]) for f in fs])
            for c, n, code, size, pack, fs in spec.STRUCTS]
    assert ours == [(c, n, code, size, pack, [(fn, ft.split(".")[-1], r) for fn, ft, r in fs])
                    for c, n, code, size, pack, fs in xml]
    # every codeable struct is reachable by its 16-bit type code, without collisions
    assert len(model.STRUCTS_BY_CODE) == sum(1 for s in xml if s[2] is not None)


def test_domains_and_enums() -> None:
    root = _root(ERRATA)
    xml = {}
    for d in root.findall(f"{NS}domain"):
        xml[d.get("name")] = d
    for c in root.findall(f"{NS}class"):
        for d in c.findall(f"{NS}domain"):
            xml[f"{c.get('name')}.{d.get('name')}"] = d
    assert [d[0] for d in spec.DOMAINS] == list(xml)
    for qname, declared, _prim, choices in spec.DOMAINS:
        d = xml[qname]
        assert declared == d.get("type")
        assert choices == tuple((ch.get("name"), int(ch.get("value"), 0))
                                for ch in d.iter(f"{NS}choice"))


def test_field_types_resolve_to_primitives_or_structs() -> None:
    prims = {t[0] for t in spec.TYPES}
    for m in spec.METHODS:
        for f in m[4]:
            assert f[2] in prims or f[2][7:] in model.STRUCTS, (m[1], m[2], f)
    # spot checks of domain resolution through other classes
    transfer = model.METHODS["message.transfer"]
    assert [(f.name, f.type) for f in transfer.fields] == [
        ("destination", "str8"), ("accept-mode", "uint8"), ("acquire-mode", "uint8")]
    accept = model.METHODS["message.accept"].fields[0]
    assert (accept.declared, accept.type) == ("session.commands", "sequence-set")
    assert model.METHODS["dtx.start"].fields[0].type == "struct:dtx.xid"
    # a bare name resolves in the field's own class first
    assert model.METHODS["queue.declare"].fields[0].declared == "queue.name"
    assert model.METHODS["exchange.bind"].fields[1].declared == "exchange.name"
    assert model.METHODS["session.attach"].fields[0].type == "vbin16"
    assert model.STRUCTS["message.delivery-properties"].fields[3].choices[4] == "medium"
    assert model.METHODS["message.transfer"].header == (
        "message.delivery-properties", "message.fragment-properties",
        "message.message-properties")
    assert model.METHODS["queue.query"].result == "queue.queue-query-result"
    assert model.METHODS["dtx.commit"].result == "dtx.xa-result"


def test_errata_differs_from_plain_only_where_documented() -> None:
    """The plain edition gives xid no code and a 2-octet size; the errata (what qpid peers
    put on the wire) gives it code 0x4 and a 4-octet size. Nothing else that affects the
    wire differs."""
    def wire(root: ET.Element) -> list:
        out = []
        for c in root.findall(f"{NS}class"):
            for el in c.iter():
                if el.tag in (f"{NS}struct", f"{NS}control", f"{NS}command"):
                    out.append((c.get("name"), el.tag, el.get("name"), el.get("code"),
                                el.get("size"), el.get("pack"), _fields(el)))
        return out

    plain, errata = wire(_root(PLAIN)), wire(_root(ERRATA))
    diff = [(p, e) for p, e in zip(plain, errata, strict=True) if p != e]
    assert diff == [(("dtx", f"{NS}struct", "xid", None, "2", "2", diff[0][0][6]),
                     ("dtx", f"{NS}struct", "xid", "0x4", "4", "2", diff[0][0][6]))]
    assert model.STRUCTS["dtx.xid"].type_code == 0x0604


def test_committed_module_is_what_the_generator_writes() -> None:
    import importlib.util

    from tests.paths import SCRIPTS_DIR

    spec_ = importlib.util.spec_from_file_location("gen_spec010", SCRIPTS_DIR / "gen_spec010.py")
    assert spec_ is not None and spec_.loader is not None
    gen = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(gen)
    committed = Path(spec.__file__).read_text()
    assert gen.render(gen.build(require(ERRATA)), ERRATA.name) == committed
