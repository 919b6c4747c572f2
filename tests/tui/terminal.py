"""Keys as a terminal sends them: the names Textual's own input parser gives the bytes of
a key press, so a test presses what a user can press (`.` is `full_stop`, not `period`)."""

from __future__ import annotations

from textual._xterm_parser import XTermParser
from textual.events import Key

# What a terminal sends for the keys the docs write by name.
BYTES = {
    "ctrl+c": "\x03", "ctrl+p": "\x10", "ctrl+q": "\x11",
    "↑": "\x1b[A", "↓": "\x1b[B", "Enter": "\r", "Tab": "\t", "Esc": "\x1b",
}


def terminal_keys(typed: str) -> list[str]:
    """The key names of `typed` (literal characters, or one name of BYTES) as the terminal's
    bytes are parsed into key events."""
    data = BYTES.get(typed, typed)
    parser = XTermParser()
    events = [e for e in parser.feed(data) if isinstance(e, Key)]
    if data == "\x1b":  # a lone escape is told from a sequence's start by a pause
        events += [e for e in parser.feed("") if isinstance(e, Key)]
    return [e.key for e in events]
