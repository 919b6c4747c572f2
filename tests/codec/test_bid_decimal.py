"""decimal32/64/128 read as IEEE 754-2008 decimals in the Binary Integer Decimal encoding
(AMQP 1.0 Part 1 §1.6.18-20): `bid_decimal` against encodings published with BID
implementations, every special value, both coefficient forms, non-canonical coefficients
and payloads, a reference decoder written from the standard's text (§3.5.2) on any bytes,
and a test-side encoder round trip."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.codec.types import Decimal32, Decimal64, Decimal128, bid_decimal

# width in bytes: (precision p, exponent continuation bits w), IEEE 754-2008 Table 3.6
FORMATS = {4: (7, 6), 8: (16, 8), 16: (34, 12)}


def bias(width: int) -> int:
    p, w = FORMATS[width]
    return 3 * 2 ** (w - 1) + p - 2


def value(hex_text: str) -> str:
    return str(bid_decimal(bytes.fromhex(hex_text)))


# (encoding, coefficient and exponent it encodes): decimal64 rows as published for
# make_decimal64(coefficient, exponent) and as Intel's library constants (the largest
# finite numbers); the others follow from the format's bias.
PUBLISHED = [
    ("32800001", "1E0"),
    ("b2800000", "-0E0"),
    ("77f8967f", "9999999E90"),  # the largest decimal32: the large-coefficient form
    ("00000001", "1E-101"),  # the smallest subnormal
    ("31c0000000000001", "1E0"),
    ("308462d53c8abac0", "1234567890123456E-10"),
    ("31c000000000007b", "123E0"),
    ("318000000000007b", "123E-2"),
    ("320000000000007b", "123E2"),
    ("b1a000000000007b", "-123E-1"),
    ("31a000000000007d", "125E-1"),
    ("b180000000000591", "-1425E-2"),
    ("3e40000000000000", "0E100"),
    ("2540000000000000", "0E-100"),
    ("2fe38d7ea4c67fff", "999999999999999E-15"),
    ("6c7386f26fc0ffff", "9999999999999999E0"),  # large-coefficient form
    ("77fb86f26fc0ffff", "9999999999999999E369"),  # the largest decimal64
    ("600386f26fc0ffff", "9999999999999999E-398"),  # large form, the smallest exponent
    ("e00386f26fc0ffff", "-9999999999999999E-398"),
    ("5fe05af3107a4000", "100000000000000E369"),  # 1E383 as clamped: 15 digits kept
    ("0000000000000001", "1E-398"),
    ("30400000000000000000000000000001", "1E0"),
    ("30840000000000000000000000000001", "1E34"),
    ("5fffed09bead87c0378d8e63ffffffff", "9999999999999999999999999999999999E6111"),
]


@pytest.mark.parametrize(("encoding", "number"), PUBLISHED)
def test_published_encodings(encoding: str, number: str) -> None:
    raw = bytes.fromhex(encoding)
    want = Decimal(number).as_tuple()
    assert bid_decimal(raw).as_tuple() == want
    # and the test's encoder (below) writes these same bytes
    coefficient = int("".join(map(str, want.digits)))
    assert encode_bid(len(raw), want.sign, coefficient, int(want.exponent)) == raw


def test_shown_as_decimal_prints_the_exact_value() -> None:
    assert value("33e00000000004d2") == "1.234E+20"
    assert value("31a000000000007d") == "12.5"
    assert value("318000000000007b") == "1.23"
    assert value("31c0000000000064") == "100"
    assert value("3180000000000064") == "1.00"  # the digits as encoded: not 1
    assert value("b1c0000000000000") == "-0"
    assert value("77f8967f") == "9.999999E+96"
    assert value("5fe05af3107a4000") == "1.00000000000000E+383"
    assert value("3100000000000001") == "0.000001"
    assert value("5fffed09bead87c0378d8e63ffffffff") == "9." + "9" * 33 + "E+6144"


@pytest.mark.parametrize("width", [4, 8, 16])
def test_special_values(width: int) -> None:
    def special(top: int, low: int = 0) -> str:
        return str(bid_decimal((top << (8 * width - 8) | low).to_bytes(width, "big")))

    assert special(0x78) == "Infinity"
    assert special(0xF8) == "-Infinity"
    assert special(0x7A, 12) == "Infinity"  # the bits after G0..G4 = 11110 are ignored
    assert special(0x7C) == "NaN"
    assert special(0xFC) == "-NaN"
    assert special(0x7E) == "sNaN"
    assert special(0xFE) == "-sNaN"
    assert special(0x7D) == "NaN"  # G6.. are ignored in a NaN
    assert special(0x7C, 42) == "NaN42"  # the payload, in the trailing significand
    assert special(0x7E, 7) == "sNaN7"
    assert special(0x00) == f"0E-{bias(width)}"
    assert special(0x80) == f"-0E-{bias(width)}"


def test_nan_payload_above_p_minus_1_digits_is_zero() -> None:
    assert value("7c0f423f") == "NaN999999"
    assert value("7c0f4240") == "NaN"
    assert value("7c0fffff") == "NaN"
    assert value("7c038d7ea4c67fff") == "NaN999999999999999"
    assert value("7c038d7ea4c68000") == "NaN"
    assert value("fe03ffffffffffff") == "-sNaN"
    assert value("7c003fffffffffffffffffffffffffff") == "NaN"  # 2**110 - 1 > 10**33 - 1


def test_large_coefficient_form() -> None:
    # S 11 E(w+2) G(w+4) T: the coefficient is 100, G(w+4), then T
    assert value("6cb8967f") == "9999999"
    assert value("6ca00000") == "8388608"  # 2**23, the smallest large-form coefficient
    assert value("6cb00000") == "9437184"  # G(w+4) set: 0b1001 << 20
    assert value("ecb8967f") == "-9999999"
    assert value("6c70000000000000") == "9007199254740992"  # 2**53


def test_non_canonical_coefficients_are_zero() -> None:
    # above 9999999 / 10**16 - 1 / 10**34 - 1: zero, with the sign and exponent kept
    assert value("6cb89680") == "0"
    assert value("ecb89680") == "-0"
    assert value("6fffffff") == "0E+26"
    assert value("6c7386f26fc10000") == "0"
    assert value("6c73ffffffffffff") == "0"
    # decimal128's large form never holds a canonical coefficient (8 << 110 > 10**34)...
    assert value("6ffffffffffffffffffffffffffffffe") == "0E+2015"
    assert value("60000000000000000000000000000000") == "0E-6176"
    # ...and its small form can go over too
    over = (6176 << 113 | 10**34).to_bytes(16, "big")
    assert str(bid_decimal(over)) == "0"
    assert str(bid_decimal((6176 << 113 | 10**34 - 1).to_bytes(16, "big"))) == "9" * 34


def test_the_types_give_their_value() -> None:
    assert str(Decimal32(bytes.fromhex("32800001")).to_decimal()) == "1"
    assert str(Decimal64(bytes.fromhex("31a000000000007d")).to_decimal()) == "12.5"
    assert str(Decimal128(bytes.fromhex("30400000000000000000000000000001")).to_decimal()) == "1"


def reference(raw: bytes) -> Decimal:
    """IEEE 754-2008 §3.5.2 read word for word over the bit string: S, G0..G(w+4), T."""
    k = 8 * len(raw)
    p, w = FORMATS[len(raw)]
    bits = format(int.from_bytes(raw, "big"), f"0{k}b")
    s, g, t = int(bits[0]), bits[1 : w + 6], bits[w + 6 :]
    if g[:5] == "11111":
        payload = int(t, 2)
        if payload > 10 ** (p - 1) - 1:
            payload = 0
        digits = tuple(map(int, str(payload))) if payload else ()
        return Decimal((s, digits, "N" if g[5] == "1" else "n"))
    if g[:5] == "11110":
        return Decimal((s, (0,), "F"))
    if g[:2] == "11":
        e = int(g[2 : w + 4], 2)
        c = int("100" + g[w + 4] + t, 2)
    else:
        e = int(g[: w + 2], 2)
        c = int(g[w + 2 :] + t, 2)
    if c > 10**p - 1:
        c = 0
    return Decimal((s, tuple(map(int, str(c))), e - bias(len(raw))))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([4, 8, 16]).flatmap(lambda n: st.binary(min_size=n, max_size=n)))
def test_any_bytes_read_as_the_standard_says(raw: bytes) -> None:
    assert str(bid_decimal(raw)) == str(reference(raw))
    assert bid_decimal(raw).as_tuple() == reference(raw).as_tuple()


def encode_bid(width: int, sign: int, coefficient: int, exponent: int) -> bytes:
    """The one encoding of a finite decimal (a canonical coefficient): the small form
    when the coefficient fits in 3 + t bits, else the large one."""
    w = FORMATS[width][1]
    k = 8 * width
    t = k - w - 6
    e = exponent + bias(width)
    if coefficient < 1 << (t + 3):
        n = e << (t + 3) | coefficient
    else:
        n = 0b11 << (k - 3) | e << (t + 1) | (coefficient & ((1 << (t + 1)) - 1))
    return (sign << (k - 1) | n).to_bytes(width, "big")


@st.composite
def finite(draw: st.DrawFn) -> tuple[int, int, int, int]:
    width = draw(st.sampled_from([4, 8, 16]))
    p, w = FORMATS[width]
    big = st.integers(10**p - 10**3, 10**p - 1)  # the large form's end of the range
    coefficient = draw(st.integers(0, 10**p - 1) | big | st.integers(0, 1000))
    exponent = draw(st.integers(-bias(width), 3 * 2**w - 1 - bias(width)))
    return width, draw(st.integers(0, 1)), coefficient, exponent


@settings(max_examples=300, deadline=None)
@given(finite())
def test_encoded_decimals_read_back(case: tuple[int, int, int, int]) -> None:
    width, sign, coefficient, exponent = case
    want = Decimal((sign, tuple(map(int, str(coefficient))), exponent))
    got = bid_decimal(encode_bid(width, sign, coefficient, exponent))
    assert got.as_tuple() == want.as_tuple()
    assert str(got) == str(want)
