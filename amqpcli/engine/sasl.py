"""SASL for the endpoint roles (Part 5 §5.3): ANONYMOUS, PLAIN, EXTERNAL.

The client picks a mechanism from the server's list (a forced one, or the first of its
preference that it can use); the peer offers a list and checks what it gets. Passwords
live only in `SaslConfig` and in the SASL-INIT bytes; nothing here prints them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

OK, AUTH, SYS, SYS_PERM, SYS_TEMP = 0, 1, 2, 3, 4

# A peer's check: (mechanism, initial response) -> sasl-code.
Authenticator = Callable[[str, bytes | None], int]


@dataclass
class SaslConfig:
    """How an endpoint authenticates (client) or what it accepts (peer)."""

    mechanism: str | None = None  # force this mechanism (client)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    authzid: str | None = None
    hostname: str | None = None
    external: bool = False  # the transport carries a client certificate
    preference: tuple[str, ...] = ("EXTERNAL", "PLAIN", "ANONYMOUS")
    # peer side
    offer: tuple[str, ...] = ("PLAIN", "ANONYMOUS")
    authenticate: Authenticator | None = field(default=None, repr=False)

    def usable(self, mechanism: str) -> bool:
        if mechanism == "PLAIN":
            return self.username is not None and self.password is not None
        if mechanism == "EXTERNAL":
            return self.external
        return mechanism == "ANONYMOUS"

    def choose(self, offered: tuple[str, ...]) -> str | None:
        """The mechanism to use, or None when the server offers nothing we can use."""
        if self.mechanism is not None:
            return self.mechanism if self.mechanism in offered else None
        for m in self.preference:
            if m in offered and self.usable(m):
                return m
        return None

    def initial_response(self, mechanism: str) -> bytes | None:
        if mechanism == "PLAIN":
            authz = (self.authzid or "").encode()
            return authz + b"\0" + (self.username or "").encode() + b"\0" + (
                self.password or "").encode()
        if mechanism == "ANONYMOUS":
            return (self.username or "anonymous").encode()
        if mechanism == "EXTERNAL":
            return (self.authzid or "").encode()
        return None

    def check(self, mechanism: str, response: bytes | None) -> int:
        """Peer side: the sasl-code for this SASL-INIT."""
        if mechanism not in self.offer:
            return AUTH
        if self.authenticate is not None:
            return self.authenticate(mechanism, response)
        if mechanism == "PLAIN" and (response is None or response.count(b"\0") != 2):
            return AUTH
        return OK


class CredentialsNotText(ValueError):
    """PLAIN credentials that are not UTF-8 text (RFC 4616 §2): a login to refuse. Its
    text says nothing of their bytes (which byte, where: clues to a password)."""


def plain_credentials(response: bytes) -> tuple[str, str, str]:
    """(authzid, username, password) from a PLAIN initial response of three fields;
    `CredentialsNotText` when one is not UTF-8."""
    authz, user, password = response.split(b"\0", 2)
    try:
        return authz.decode(), user.decode(), password.decode()
    except UnicodeDecodeError:
        raise CredentialsNotText("the SASL PLAIN credentials are not UTF-8 text") from None
