"""A typed value on `send`'s command line that does not parse (`-P k:int=abc`,
`--creation-time garbage`, `--group-sequence abc`, …) is a one-line usage error, before
connecting, that says in the project's words what is wrong and what is taken. They used to
end in Python's own exception text: `invalid literal for int() with base 10: 'abc'`,
`Invalid isoformat string: 'garbage'`, `badly formed hexadecimal UUID string`, and for a
5000-digit number `Exceeds the limit (4300 digits) for integer string conversion … use
sys.set_int_max_str_digits() to increase the limit`."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp_in_process

NOWHERE = "amqp://127.0.0.1:1/q"  # (nothing listens: an error after connecting would say so)

NOT_INTEGER = "not an integer (decimal, or 0x hex, 0o octal, 0b binary; no _ separators)"
NOT_NUMBER = "not a number (decimal as in 2.5 or -1e-3, or inf, -inf, nan)"
NOT_TIME = ("not a time: give ISO 8601 (2024-05-01T12:00:00Z, 2024-05-01T14:00:00+02:00, "
            "2024-05-01), milliseconds since the epoch, now, or now+DURATION / "
            "now-DURATION (now+60s, now-5m; units ms, s, m, h)")
NOT_UUID = "not a UUID: 32 hex digits, hyphens optional (123e4567-e89b-12d3-a456-426614174000)"
NOT_HEX = "not hex: after hex:, pairs of hex digits (hex:00ff)"
NOT_BOOLEAN = "not a boolean (true, false, yes, no, 1 or 0)"

LONG = "9" * 5000  # more digits than Python reads as a decimal (and than any AMQP integer)
LONG_SHOWN = "'" + "9" * 50 + "…(4900 characters)…" + "9" * 50 + "'"

# Python's texts that must not reach the user.
PYTHONS = ("invalid literal", "could not convert string", "badly formed hexadecimal",
           "non-hexadecimal", "isoformat", "set_int_max_str_digits", "exceeds the limit",
           "fromhex", "base 10", "base 0")

CASES = [
    # integers, by every option that takes one
    (["-P", "k:int=abc"], f"--property 'k': bad int value 'abc': {NOT_INTEGER}"),
    (["-P", "k:int="], f"--property 'k': bad int value '': {NOT_INTEGER}"),
    (["-P", "k:int=1.5"], f"--property 'k': bad int value '1.5': {NOT_INTEGER}"),
    (["-P", "k:int=1e3"], f"--property 'k': bad int value '1e3': {NOT_INTEGER}"),
    (["-P", "k:int=0xzz"], f"--property 'k': bad int value '0xzz': {NOT_INTEGER}"),
    (["-P", "k:int=0x"], f"--property 'k': bad int value '0x': {NOT_INTEGER}"),
    (["-P", "k:int=--1"], f"--property 'k': bad int value '--1': {NOT_INTEGER}"),
    (["-P", "k:int=1_000"], f"--property 'k': bad int value '1_000': {NOT_INTEGER}"),
    (["-P", "k:int=99999999999"],
     ("--property 'k': bad int value '99999999999': out of range for int "
      "(-2147483648 to 2147483647)")),
    (["-P", f"k:long={LONG}"],
     (f"--property 'k': bad long value {LONG_SHOWN}: out of range for long "
      "(-9223372036854775808 to 9223372036854775807)")),
    (["-P", f"k:long=-{LONG}"],
     (f"--property 'k': bad long value '-{'9' * 49}…(4901 characters)…{'9' * 50}': out of "
      "range for long (-9223372036854775808 to 9223372036854775807)")),
    (["-P", f"k:ulong={LONG}"],
     (f"--property 'k': bad ulong value {LONG_SHOWN}: out of range for ulong "
      "(0 to 18446744073709551615)")),
    (["-P", "k:ulong=" + "9" * 21],
     (f"--property 'k': bad ulong value '{'9' * 21}': out of range for ulong "
      "(0 to 18446744073709551615)")),
    (["-P", "k:ubyte=x"], f"--property 'k': bad ubyte value 'x': {NOT_INTEGER}"),
    (["-P", "k:ushort=-1"],
     "--property 'k': bad ushort value '-1': out of range for ushort (0 to 65535)"),
    (["-P", "k:byte=abc"], f"--property 'k': bad byte value 'abc': {NOT_INTEGER}"),
    (["-P", "k:short=1.0"], f"--property 'k': bad short value '1.0': {NOT_INTEGER}"),
    (["-A", "x-k:uint=abc"], f"--annotation 'x-k': bad uint value 'abc': {NOT_INTEGER}"),
    (["--group-sequence", "abc"], f"--group-sequence: bad uint value 'abc': {NOT_INTEGER}"),
    (["--group-sequence", "0x"], f"--group-sequence: bad uint value '0x': {NOT_INTEGER}"),
    (["--group-sequence", LONG],
     f"--group-sequence: bad uint value {LONG_SHOWN}: out of range for uint (0 to 4294967295)"),
    (["--message-id", "ulong:abc"], f"--message-id: bad ulong value 'abc': {NOT_INTEGER}"),
    (["--correlation-id", "ulong:abc"],
     f"--correlation-id: bad ulong value 'abc': {NOT_INTEGER}"),
    (["--footer", "f:long=abc"], f"--footer 'f': bad long value 'abc': {NOT_INTEGER}"),
    (["--delivery-annotation", "d:int=abc"],
     f"--delivery-annotation 'd': bad int value 'abc': {NOT_INTEGER}"),
    # float and double
    (["-P", "k:float=abc"], f"--property 'k': bad float value 'abc': {NOT_NUMBER}"),
    (["-P", "k:float=1,5"], f"--property 'k': bad float value '1,5': {NOT_NUMBER}"),
    (["-P", "k:double="], f"--property 'k': bad double value '': {NOT_NUMBER}"),
    (["-P", "k:double=0x10"], f"--property 'k': bad double value '0x10': {NOT_NUMBER}"),
    # timestamps
    (["--creation-time", "garbage"], f"--creation-time: bad timestamp value 'garbage': {NOT_TIME}"),
    (["--absolute-expiry-time", "1.5"],
     f"--absolute-expiry-time: bad timestamp value '1.5': {NOT_TIME}"),
    (["-P", "k:timestamp=bad"], f"--property 'k': bad timestamp value 'bad': {NOT_TIME}"),
    (["-P", "k:timestamp=2024-05-01T12:00+25:00"],
     f"--property 'k': bad timestamp value '2024-05-01T12:00+25:00': {NOT_TIME}"),
    (["--creation-time", "2024-13-01"],
     "--creation-time: bad timestamp value '2024-13-01': not a time: month must be in 1..12"),
    (["--creation-time", LONG],
     (f"--creation-time: bad timestamp value {LONG_SHOWN}: out of range for timestamp "
      "(-9223372036854775808 to 9223372036854775807)")),
    # uuid, binary, boolean, char, null, json
    (["-P", "k:uuid=zz"], f"--property 'k': bad uuid value 'zz': {NOT_UUID}"),
    (["--correlation-id", "uuid:1234"], f"--correlation-id: bad uuid value '1234': {NOT_UUID}"),
    (["-P", "k:binary=hex:zz"], f"--property 'k': bad binary value 'hex:zz': {NOT_HEX}"),
    (["-P", "k:binary=hex:123"], f"--property 'k': bad binary value 'hex:123': {NOT_HEX}"),
    (["-P", "k:bool=maybe"], f"--property 'k': bad bool value 'maybe': {NOT_BOOLEAN}"),
    (["-P", "k:boolean="], f"--property 'k': bad boolean value '': {NOT_BOOLEAN}"),
    (["-P", "k:char=ab"], "--property 'k': bad char value 'ab': a char is one character"),
    (["-P", "k:null=x"],
     "--property 'k': bad null value 'x': null takes no value (write null: or KEY:null=)"),
    (["-A", "x-k:json={"],
     ("--annotation 'x-k': bad json value '{': not JSON: Expecting property name enclosed in "
      "double quotes at column 2")),
    # a body given as a typed value
    (["--body-type", "value", "--", "int:abc"], f"body: bad int value 'abc': {NOT_INTEGER}"),
    # values inside json: (the lossless JSON format, as --json-body and --from read it)
    (["-P", 'k:json={"uuid":"zz"}'],
     ("--property 'k': bad json value '{\"uuid\":\"zz\"}': .uuid: expected a UUID (32 hex "
      "digits, hyphens optional), found 'zz'")),
    (["-P", 'k:json={"timestamp":"bad"}'],
     ("--property 'k': bad json value '{\"timestamp\":\"bad\"}': .timestamp: expected an ISO "
      "8601 time (2024-05-01T12:00:00Z) or milliseconds, found 'bad'")),
    (["-P", 'k:json={"decimal64":"zz"}'],
     ("--property 'k': bad json value '{\"decimal64\":\"zz\"}': .decimal64: expected the "
      "decimal64's bytes in hex, found 'zz'")),
]


@pytest.mark.parametrize(("args", "said"), CASES, ids=[" ".join(a)[:40] for a, _ in CASES])
def test_a_bad_value_says_what_is_wrong_and_what_is_taken(args: list[str], said: str) -> None:
    body = [] if "--body-type" in args else ["hi"]
    code, out, err = amqp_in_process("send", NOWHERE, *body, *args)
    assert (code, out) == (2, ""), err
    assert err == f"amqp: error: {said}\n"
    assert not [p for p in PYTHONS if p in err.lower()]


@pytest.mark.parametrize("value", ["0x1f", "-0x10", "+7", " 5 ", "0o17", "0b101", "007"])
def test_the_integer_forms_the_message_names_are_taken(value: str) -> None:
    from amqpcli.cli.options import typed_value

    assert typed_value("long", value, "-P") == int(value, 0 if "x" in value or "o" in value
                                                   or "b" in value else 10)
