"""Python classes for the AMQP 1.0 primitive types (Part 1 §1.6) and the composite base.

Integers, floats and strings are thin subclasses of the Python builtins, so they compare and
hash like the builtins while keeping the AMQP type an encoder needs. Plain `int`, `float`,
`str` and `bytes` encode as long, double, string and binary.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    import decimal

__all__ = [
    "UUID",
    "AmqpList",
    "AmqpMap",
    "Array",
    "Byte",
    "Char",
    "Composite",
    "Decimal32",
    "Decimal64",
    "Decimal128",
    "DecodeError",
    "Described",
    "EncodeError",
    "Field",
    "Float",
    "Int",
    "Long",
    "MapKey",
    "Short",
    "Symbol",
    "Timestamp",
    "UByte",
    "UInt",
    "ULong",
    "UShort",
    "add_map_entry",
    "bid_decimal",
    "key_value",
]

UUID = uuid.UUID


class DecodeError(ValueError):
    """Input that is not valid AMQP 1.0: where, what was expected, what was found."""

    def __init__(self, offset: int, expected: str, found: str) -> None:
        super().__init__(offset, expected, found)
        self.offset = offset
        self.expected = expected
        self.found = found

    def __str__(self) -> str:
        return f"at offset {self.offset}: expected {self.expected}, found {self.found}"

    def moved(self, by: int) -> DecodeError:
        """This error, found in bytes that start `by` bytes into the input, with the
        input's offsets: its own and those its text holds ("end of input at 11")."""
        if not by:
            return self

        def shifted(m: re.Match[str]) -> str:
            return str(int(m.group()) + by)

        return DecodeError(self.offset + by, _OFFSET_IN_TEXT.sub(shifted, self.expected),
                           _OFFSET_IN_TEXT.sub(shifted, self.found))


# Where a decode error's text holds an offset in the bytes decoded (or their length).
_OFFSET_IN_TEXT = re.compile(
    r"(?<=ending at )\d+|(?<=end of input at )\d+|(?<=^at most )\d+(?= zero-width elements$)")


class EncodeError(ValueError):
    """A Python value that has no AMQP encoding (wrong type, out of range)."""


def _int_repr(self: int) -> str:
    return f"{type(self).__name__}({int(self)})"


# repr() names the type; str() and f-strings give the plain number, as an error
# description or a log line built from a handle or a delivery-id should show it
_int_str = int.__repr__


class UByte(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class UShort(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class UInt(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class ULong(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Byte(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Short(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Int(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Long(int):
    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Timestamp(int):
    """Milliseconds since the Unix epoch (signed 64 bit)."""

    __slots__ = ()
    __repr__ = _int_repr
    __str__ = _int_str


class Float(float):
    """A 32-bit IEEE 754 float (plain `float` is double)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Float({float(self)!r})"

    __str__ = float.__repr__


class Char(str):
    """One UTF-32 code point."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Char({str(self)!r})"


class Symbol(str):
    """An ASCII symbolic value; distinct from `str` as a map key's AMQP type."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str(self)!r})"

    # A Symbol and a str with the same text are different AMQP map keys.
    def __eq__(self, other: object) -> bool:
        if type(other) is str:
            return False
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return str.__hash__(self) ^ 0x5A5A


# IEEE 754-2008 §3.5 parameters by width in bytes: (digits of precision p, exponent
# continuation bits w); the combination field is w + 5 bits, the trailing significand the rest.
_BID_FORMATS = {4: (7, 6), 8: (16, 8), 16: (34, 12)}


def bid_decimal(raw: bytes) -> decimal.Decimal:
    """The exact value of a decimal32/64/128 in its Binary Integer Decimal encoding
    (IEEE 754-2008 §3.5.2; AMQP 1.0 uses BID), as a `decimal.Decimal`: signed zeros,
    infinities, quiet and signalling NaNs with their payload, and the digits as encoded
    (1.00 is not 1)."""
    from decimal import Decimal  # loaded when a decimal is shown, not with the codec

    bits = 8 * len(raw)
    digits, w = _BID_FORMATS[len(raw)]
    t = bits - w - 6
    n = int.from_bytes(raw, "big")
    sign = "-" if n >> (bits - 1) else ""
    g = (n >> t) & ((1 << (w + 5)) - 1)  # the combination field G0..G(w+4)
    trailing = n & ((1 << t) - 1)
    if g >> w == 0b11111:  # NaN; G5 says signalling; a payload above p-1 digits is 0
        payload = trailing if trailing < 10 ** (digits - 1) else 0
        return Decimal(f"{sign}{'s' if g >> (w - 1) & 1 else ''}NaN{payload or ''}")
    if g >> w == 0b11110:
        return Decimal(f"{sign}Infinity")
    if g >> (w + 3) == 0b11:  # the large form: the coefficient is 100, G(w+4), then T
        exponent = (g >> 1) & ((1 << (w + 2)) - 1)
        coefficient = (0b1000 | (g & 1)) << t | trailing
    else:
        exponent = g >> 3
        coefficient = (g & 0b111) << t | trailing
    if coefficient >= 10**digits:  # non-canonical: the standard reads it as zero
        coefficient = 0
    bias = 3 * 2 ** (w - 1) + digits - 2  # emax + p - 2
    return Decimal(f"{sign}{coefficient}E{exponent - bias}")


class _Decimal:
    """IEEE 754 decimal kept as its raw big-endian bytes (no arithmetic)."""

    __slots__ = ("raw",)
    WIDTH: ClassVar[int] = 0

    def __init__(self, raw: bytes) -> None:
        raw = bytes(raw)
        if len(raw) != self.WIDTH:
            raise ValueError(f"{type(self).__name__} needs {self.WIDTH} bytes, got {len(raw)}")
        self.raw = raw

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.raw == self.raw  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.raw))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"

    def to_decimal(self) -> decimal.Decimal:
        """The exact value (see `bid_decimal`)."""
        return bid_decimal(self.raw)


class Decimal32(_Decimal):
    __slots__ = ()
    WIDTH = 4


class Decimal64(_Decimal):
    __slots__ = ()
    WIDTH = 8


class Decimal128(_Decimal):
    __slots__ = ()
    WIDTH = 16


class AmqpList(list):  # type: ignore[type-arg]
    """A list decoded from a wider encoding than needed; `code` keeps it (0x45/0xc0/0xd0)."""

    __slots__ = ("code",)

    def __init__(self, items: Any = (), code: int = 0xD0) -> None:
        super().__init__(items)
        self.code = code


class AmqpMap(dict):  # type: ignore[type-arg]
    """A map decoded from a wider encoding than needed; `code` keeps it (0xc1/0xd1)."""

    __slots__ = ("code",)

    def __init__(self, items: Any = (), code: int = 0xD1) -> None:
        super().__init__(items)
        self.code = code


class MapKey:
    """A map key that Python would merge with an earlier key of the same map, or could not
    use as a dict key at all, although it is a distinct AMQP value (Part 1 §1.6.23):
    `Long(1)` after `Int(1)`, `True` after `UByte(1)`, `Char("a")` after `"a"`, a list, a
    map or an array as a key. The map holds it wrapped so that no entry is lost; it encodes,
    renders and converts to JSON as its `value`. The first key of a kind stays plain, so
    lookups (`m.get(Symbol("x"))`) find it as before.

    Two MapKeys are equal when their values encode alike (same AMQP type and value) and
    their `n` (0, or 1, 2, … for repeats of the same AMQP value in one map) is the same.
    """

    __slots__ = ("_bytes", "n", "value")

    def __init__(self, value: Any, n: int = 0) -> None:
        self.value = value
        self.n = n
        self._bytes: bytes | None = None

    def _key(self) -> bytes:
        b = self._bytes
        if b is None:
            from .encode import encode

            try:
                b = encode(self.value)
            except (ValueError, TypeError):  # no AMQP encoding: told apart by its repr
                b = repr(self.value).encode("utf-8", "surrogatepass")
            self._bytes = b
        return b

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is MapKey
            and (self is other or (self.n == other.n and self._key() == other._key()))
        )

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self._key(), self.n))

    def __repr__(self) -> str:
        n = f", n={self.n}" if self.n else ""
        return f"MapKey({self.value!r}{n})"

    def __str__(self) -> str:  # (a caller that names keys as text names the value)
        return str(self.value)

    def __reduce__(self) -> Any:
        return (MapKey, (self.value, self.n))


def key_value(key: Any) -> Any:
    """A map key as the AMQP value it is (a `MapKey` unwrapped)."""
    return key.value if type(key) is MapKey else key


def add_map_entry(out: dict[Any, Any], key: Any, value: Any) -> None:
    """Add one decoded (or read) entry to the map `out`, keeping it when its key collides
    with an earlier one under Python equality or is unhashable (wrapped in a `MapKey`)."""
    if type(key) is not MapKey:
        try:
            if key not in out:
                out[key] = value
                return
        except TypeError:  # unhashable: a list, a map, an array, a value holding one
            pass
        wrapped = MapKey(key)
    else:
        wrapped = key
    while wrapped in out:
        wrapped = MapKey(wrapped.value, wrapped.n + 1)
    out[wrapped] = value


class Array(list):  # type: ignore[type-arg]
    """An AMQP array: elements of one type.

    `type` is the AMQP type name of the elements ("int", "symbol", "list", ...), `code` the
    element format code as decoded (None: the encoder picks the smallest that fits every
    element), `descriptor` the descriptor of an array of described values (the elements are
    then the undescribed values). `fmt` is 0xe0/0xf0 as decoded (None: smallest).
    """

    __slots__ = ("code", "descriptor", "fmt", "type")

    def __init__(
        self,
        items: Any = (),
        type: str | None = None,
        code: int | None = None,
        descriptor: Any = None,
        fmt: int | None = None,
    ) -> None:
        super().__init__(items)
        self.type = type
        self.code = code
        self.descriptor = descriptor
        self.fmt = fmt

    def __repr__(self) -> str:
        d = f", descriptor={self.descriptor!r}" if self.descriptor is not None else ""
        return f"Array({list.__repr__(self)}, type={self.type!r}{d})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Array):
            return (
                self.type == other.type
                and self.descriptor == other.descriptor
                and list.__eq__(self, other)
            )
        return list.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class Described:
    """A described value whose descriptor is not a composite this codec knows."""

    __slots__ = ("descriptor", "value")

    def __init__(self, descriptor: Any, value: Any) -> None:
        self.descriptor = descriptor
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Described
            and self.descriptor == other.descriptor
            and type(self.descriptor) is type(other.descriptor)
            and self.value == other.value
        )

    def __hash__(self) -> int:
        return hash((self.descriptor, self.value))

    def __repr__(self) -> str:
        return f"Described({self.descriptor!r}, {self.value!r})"


class Field(NamedTuple):
    """One field of a composite, as in the spec XML (`type` is the spec's type name)."""

    name: str
    type: str
    mandatory: bool
    multiple: bool
    default: Any

    @property
    def attr(self) -> str:
        """The Python attribute name (snake_case)."""
        return self.name.replace("-", "_")


class Composite:
    """Base of the spec's composite types (`composites.py` holds the generated classes).

    A decoded composite keeps the bytes it was decoded from, with the values it decoded, in
    `_raw`; it re-encodes to those bytes while every field still holds the very object that
    was decoded (so assigning a field is seen at encode time, and decoding pays nothing for
    it). Changing a decoded list or map in place is not seen: assign the field again or call
    `touch()`.
    """

    __slots__ = ("_raw",)
    _raw: tuple[bytes, Any] | None

    NAME: ClassVar[str] = ""
    CODE: ClassVar[int] = -1
    SYMBOL: ClassVar[str] = ""
    SOURCE: ClassVar[str] = "list"  # the spec's encoding: list, map, binary or *
    # True for restricted types with a descriptor (sections such as data, amqp-value,
    # amqp-sequence): one slot, `value`, holding the described value itself.
    HAS_VALUE: ClassVar[bool] = False
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    # Filled in by encode.py: one encoder per field, resolved from the field's type.
    _FIELD_ENCODERS: ClassVar[tuple[Any, ...]] = ()
    _SLOTS: ClassVar[tuple[str, ...]] = ()
    _N: ClassVar[int] = 0
    _DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if not cls.HAS_VALUE:
            cls._SLOTS = tuple(f.name.replace("-", "_") for f in cls.FIELDS)
        else:
            cls._SLOTS = ("value",)
        cls._N = len(cls._SLOTS)
        cls._DEFAULTS = {f.name.replace("-", "_"): f.default for f in cls.FIELDS}

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set the fields from a decoded list (generated per class; none here)."""

    def touch(self) -> None:
        """Forget the bytes this value was decoded from: encode it from its fields."""
        self._raw = None

    def get(self, name: str) -> Any:
        """The field's value, or the spec's default when it is absent (either spelling)."""
        name = name.replace("-", "_")
        v = getattr(self, name)
        if v is None:
            return self._DEFAULTS.get(name)
        return v

    def as_list(self, name: str) -> list[Any]:
        """A `multiple` field as a list: [] when absent, [x] for a single value as sent."""
        v = getattr(self, name)
        if v is None:
            return []
        if isinstance(v, list):
            return list(v)
        return [v]

    def fields(self) -> dict[str, Any]:
        """Field name → value, every field in spec order (absent ones are None)."""
        return {n: getattr(self, n) for n in self._SLOTS}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._SLOTS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [f"{n}={getattr(self, n)!r}" for n in self._SLOTS if getattr(self, n) is not None]
        return f"{type(self).__name__}({', '.join(parts)})"

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), tuple(getattr(self, n) for n in self._SLOTS)))


def _rebuild(cls: type[Composite], values: tuple[Any, ...]) -> Composite:
    return cls(*values)  # type: ignore[call-arg]
