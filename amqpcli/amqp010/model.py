"""Lookup tables over the generated 0-10 definitions (`spec.py`).

Definitions are small frozen dataclasses; instances of controls, commands and structs
(`Control`, `Command`, `Struct`) hold a definition and their present fields in spec order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpcli.amqp010 import spec


@dataclass(frozen=True, slots=True)
class FieldDef:
    name: str
    declared: str  # qualified domain or type name as the spec declares it
    type: str  # primitive type name, or "struct:<class>.<struct>"
    required: bool
    default: str | None
    index: int

    @property
    def struct(self) -> StructDef | None:
        return STRUCTS[self.type[7:]] if self.type.startswith("struct:") else None

    @property
    def choices(self) -> dict[int, str]:
        """Enum names by value, when the field's domain is an enum."""
        return ENUMS.get(self.declared, {})


@dataclass(frozen=True, slots=True)
class StructDef:
    klass: str
    name: str
    class_code: int
    code: int | None  # struct code within its class; None: not codeable as a struct32
    size: int  # width of the size prefix in octets (0: none)
    pack: int  # width of the packing flags in octets (0: every field present)
    fields: tuple[FieldDef, ...]

    @property
    def qname(self) -> str:
        return f"{self.klass}.{self.name}"

    @property
    def type_code(self) -> int | None:
        """The 16-bit code written before a struct32's fields: class code, struct code."""
        return None if self.code is None else (self.class_code << 8) | self.code


@dataclass(frozen=True, slots=True)
class MethodDef:
    kind: str  # "control" or "command"
    klass: str
    class_code: int
    name: str
    code: int
    fields: tuple[FieldDef, ...]
    result: str | None  # qualified struct name of an execution.result reply
    header: tuple[str, ...]  # struct names allowed in the header segment
    body: bool
    pack: int = 2  # controls and commands carry two octets of packing flags
    field_index: dict[str, FieldDef] = field(default_factory=dict, compare=False)

    @property
    def qname(self) -> str:
        return f"{self.klass}.{self.name}"


def _fields(raw: tuple[Any, ...]) -> tuple[FieldDef, ...]:
    return tuple(FieldDef(n, d, t, r, dflt, i) for i, (n, d, t, r, dflt) in enumerate(raw))


CLASS_CODES: dict[str, int] = {name: code for name, code in spec.CLASSES}
CLASS_NAMES: dict[int, str] = {code: name for name, code in spec.CLASSES}
ENUMS: dict[str, dict[int, str]] = {
    qname: {v: n for n, v in choices} for qname, _decl, _prim, choices in spec.DOMAINS if choices
}
TYPES_BY_NAME: dict[str, tuple[int | None, int | None, int | None]] = {
    name: (code, fixed, var) for name, code, fixed, var in spec.TYPES
}
TYPES_BY_CODE: dict[int, str] = {code: name for name, code, _f, _v in spec.TYPES if code is not None}

STRUCTS: dict[str, StructDef] = {}
STRUCTS_BY_CODE: dict[int, StructDef] = {}
for _cls, _name, _code, _size, _pack, _fs in spec.STRUCTS:
    _sd = StructDef(_cls, _name, CLASS_CODES[_cls], _code, _size, _pack, _fields(_fs))
    STRUCTS[_sd.qname] = _sd
    if _sd.type_code is not None:
        STRUCTS_BY_CODE[_sd.type_code] = _sd

CONTROLS: dict[tuple[int, int], MethodDef] = {}
COMMANDS: dict[tuple[int, int], MethodDef] = {}
METHODS: dict[str, MethodDef] = {}
for _kind, _cls, _name, _code, _fs, _result, _header, _body in spec.METHODS:
    _fd = _fields(_fs)
    _md = MethodDef(_kind, _cls, CLASS_CODES[_cls], _name, _code, _fd, _result, _header, _body,
                    field_index={f.name: f for f in _fd})
    (CONTROLS if _kind == "control" else COMMANDS)[(_md.class_code, _code)] = _md
    METHODS[_md.qname] = _md

SESSION_HEADER = STRUCTS["session.header"]


class _Body:
    """Shared behaviour of controls, commands and structs: named fields in spec order."""

    __slots__ = ("definition", "fields")
    definition: Any
    fields: dict[str, Any]

    def __init__(self, definition: Any, fields: dict[str, Any] | None = None, **kw: Any) -> None:
        self.definition = definition
        given = dict(fields or {})
        given.update({k.replace("_", "-"): v for k, v in kw.items()})
        names = [f.name for f in definition.fields]
        unknown = set(given) - set(names)
        if unknown:
            raise KeyError(f"{definition.qname} has no field {min(unknown)!r}")
        # only present fields, in spec order; a false bit is an absent bit
        self.fields = {
            n: given[n] for n in names if given.get(n) is not None and given.get(n) is not False
        }

    @classmethod
    def _decoded(cls, definition: Any, fields: dict[str, Any]) -> Any:
        """Build from a decoder's output (present fields already in spec order)."""
        obj = cls.__new__(cls)
        obj.definition = definition
        obj.fields = fields
        return obj

    @property
    def klass(self) -> str:
        return str(self.definition.klass)

    @property
    def name(self) -> str:
        return str(self.definition.name)

    @property
    def qname(self) -> str:
        return f"{self.definition.klass}.{self.definition.name}"

    def choice(self, name: str) -> str | None:
        """The enum name of a field's value ("medium" for priority 4), if its domain has one."""
        for f in self.definition.fields:
            if f.name == name:
                return f.choices.get(self.fields.get(name))  # type: ignore[arg-type]
        raise KeyError(name)

    def as_dict(self) -> dict[str, Any]:
        """{"class", "name", "kind", "fields"} with nested structs as dicts too; values are
        left as decoded (bytes, SequenceSet, Array...) for the renderer to format."""
        kind = "struct" if isinstance(self, Struct) else self.definition.kind
        out: dict[str, Any] = {"class": self.klass, "name": self.name, "kind": kind}
        if isinstance(self, Command):
            out["sync"] = self.sync
        out["fields"] = {k: _plain(v) for k, v in self.fields.items()}
        return out

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and other.definition is self.definition  # type: ignore[attr-defined]
            and other.fields == self.fields  # type: ignore[attr-defined]
            and self._extra() == other._extra()  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((self.qname,))

    def _extra(self) -> tuple[Any, ...]:
        return ()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"{self.qname}({args})"


class Struct(_Body):
    """A decoded struct (delivery-properties, a result, a reply-to inside properties…)."""

    __slots__ = ()
    definition: StructDef

    @classmethod
    def make(cls, qname: str, fields: dict[str, Any] | None = None, **kw: Any) -> Struct:
        return cls(STRUCTS[qname], fields, **kw)


class Control(_Body):
    """A decoded control (connection.*, session.*): no command id, no session header."""

    __slots__ = ()
    definition: MethodDef

    @classmethod
    def make(cls, qname: str, fields: dict[str, Any] | None = None, **kw: Any) -> Control:
        d = METHODS[qname]
        if d.kind != "control":
            raise KeyError(f"{qname} is a command")
        return cls(d, fields, **kw)


class Command(_Body):
    """A decoded command, with the session header's sync flag."""

    __slots__ = ("sync",)
    definition: MethodDef

    def __init__(self, definition: MethodDef, fields: dict[str, Any] | None = None,
                 sync: bool = False, **kw: Any) -> None:
        super().__init__(definition, fields, **kw)
        self.sync = sync

    @classmethod
    def make(cls, qname: str, fields: dict[str, Any] | None = None, sync: bool = False,
             **kw: Any) -> Command:
        d = METHODS[qname]
        if d.kind != "command":
            raise KeyError(f"{qname} is a control")
        return cls(d, fields, sync=sync, **kw)

    def _extra(self) -> tuple[Any, ...]:
        return (self.sync,)

    def __repr__(self) -> str:
        r = super().__repr__()
        return r[:-1] + (", sync=True)" if self.fields else "sync=True)") if self.sync else r


def _plain(v: Any) -> Any:
    if isinstance(v, _Body):
        return v.as_dict()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return type(v)(_plain(x) for x in v) if type(v) is list else v
    return v
