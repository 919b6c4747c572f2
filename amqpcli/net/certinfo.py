"""What a TLS error line says about the peer's certificate: its validity dates and the
names it is for, read from the DER bytes (`ssl` parses a certificate only when it was
verified, and the error lines are about ones that were not)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["CertInfo", "cert_info"]

_SAN = b"\x55\x1d\x11"  # 2.5.29.17 subjectAltName
_CN = b"\x55\x04\x03"  # 2.5.4.3 commonName


@dataclass(frozen=True)
class CertInfo:
    not_before: datetime | None
    not_after: datetime | None
    names: tuple[str, ...]  # DNS names and IP addresses of subjectAltName, else the CN


def cert_info(der: bytes) -> CertInfo | None:
    """The dates and names of an X.509 certificate (DER), or None when it does not parse."""
    try:
        return _parse(der)
    except (IndexError, ValueError, UnicodeDecodeError):
        return None


def _tlv(buf: bytes, i: int) -> tuple[int, int, int]:
    """(tag, start of the content, end of the content) of the DER element at `i`."""
    tag = buf[i]
    n = buf[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        if not 0 < k <= 4:
            raise ValueError("bad length")
        n = int.from_bytes(buf[i:i + k], "big")
        i += k
    if i + n > len(buf):
        raise ValueError("cut short")
    return tag, i, i + n


def _children(buf: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out = []
    while start < end:
        tag, s, e = _tlv(buf, start)
        out.append((tag, s, e))
        start = e
    return out


def _parse(der: bytes) -> CertInfo:
    tag, s, e = _tlv(der, 0)
    if tag != 0x30:
        raise ValueError("not a certificate")
    tag, s, e = _tlv(der, s)  # tbsCertificate
    if tag != 0x30:
        raise ValueError("not a certificate")
    fields = _children(der, s, e)
    if fields and fields[0][0] == 0xA0:  # [0] version
        fields = fields[1:]
    # serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, ...
    _vt, vs, ve = fields[3]
    times = [_time(der[a:b], t) for t, a, b in _children(der, vs, ve)]
    names: list[str] = []
    for t, a, b in fields[6:]:
        if t == 0xA3:  # [3] extensions
            names = _san(der, *_tlv(der, a)[1:])
    if not names:
        names = _common_names(der, fields[4][1], fields[4][2])
    return CertInfo(times[0], times[1], tuple(names))


def _time(raw: bytes, tag: int) -> datetime | None:
    text = raw.decode("ascii")
    if tag == 0x17:  # UTCTime: YYMMDDHHMMSSZ
        year = int(text[:2])
        text = f"{1900 + year if year >= 50 else 2000 + year}{text[2:]}"
    elif tag != 0x18:  # GeneralizedTime: YYYYMMDDHHMMSSZ
        return None
    return datetime.strptime(text, "%Y%m%d%H%M%SZ").replace(tzinfo=UTC)


def _san(der: bytes, start: int, end: int) -> list[str]:
    for _t, a, b in _children(der, start, end):  # each Extension
        parts = _children(der, a, b)
        if not parts or der[parts[0][1]:parts[0][2]] != _SAN:
            continue
        _ot, os_, _oe = parts[-1]  # extnValue: OCTET STRING holding GeneralNames
        _gt, gs, ge = _tlv(der, os_)
        names = []
        for gt, x, y in _children(der, gs, ge):
            if gt == 0x82:  # dNSName
                names.append(der[x:y].decode("utf-8", "replace"))
            elif gt == 0x87:  # iPAddress
                names.append(str(ipaddress.ip_address(der[x:y])))
        return names
    return []


def _common_names(der: bytes, start: int, end: int) -> list[str]:
    names = []
    for _st, a, b in _children(der, start, end):  # each RDN (a SET)
        for _at, x, y in _children(der, a, b):  # AttributeTypeAndValue
            parts = _children(der, x, y)
            if len(parts) == 2 and der[parts[0][1]:parts[0][2]] == _CN:
                names.append(der[parts[1][1]:parts[1][2]].decode("utf-8", "replace"))
    return names
