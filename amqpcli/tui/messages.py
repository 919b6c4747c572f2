"""Custom Textual messages, in one place: what widgets tell the app and sources tell the UI."""

from __future__ import annotations

from textual.message import Message

from amqpcli.errors import UserError


class LinkSelected(Message):
    """The tree's cursor moved: `key` is the link under it (None on a connection or
    session), `conn` the connection it belongs to."""

    def __init__(self, key: str | None, conn: str | None = None) -> None:
        super().__init__()
        self.key = key
        self.conn = conn


class DeliverySelected(Message):
    """A delivery was picked in the unsettled table; `open` asks to show its detail tab."""

    def __init__(self, key: str | None, open: bool = False) -> None:
        super().__init__()
        self.key = key
        self.open = open


class SourceNotice(Message):
    """A source has something to say once (connected, closed, refused, end of capture)."""

    def __init__(self, text: str, severity: str = "information") -> None:
        super().__init__()
        self.text = text
        self.severity = severity


class SourceFailed(Message):
    """A source stopped for good: `error` is the one line a user can act on, and the
    command's exit status once the screen closes (`amqpcli.tui.app.exit_as`)."""

    def __init__(self, error: UserError) -> None:
        super().__init__()
        self.error = error

    @property
    def text(self) -> str:
        return str(self.error)
