"""`--trace`: every frame of a connection as one line (`render.frameline`), written as it
happens: `amqp serve --trace` on stdout, send, recv and browse on stderr (their stdout
holds messages)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

Tracer = Callable[[str, str, Any, float], None]


def frame_tracer(stream: Callable[[], TextIO | None], show_secrets: bool = False) -> Tracer:
    """A tap writing each frame (connection label, arrow, frame reader item, time) to the
    stream `stream()` returns at the time (looked up each time: tests and redirections
    swap sys.stdout and sys.stderr). SASL credentials are masked unless `show_secrets`.
    A stream that cannot be written ends the tracing quietly."""
    from amqpcli.codec.composites import Close
    from amqpcli.errors import mask_secrets
    from amqpcli.render.frameline import item_line
    from amqpcli.render.items import TransferAssembler

    gone = [False]
    # deliveries in several frames, joined as pcap-dump joins them: the last frame's line
    # shows the whole message. Fed transfers only, and a stream is let go at its close,
    # so what is kept is the deliveries under way; one a peer dropped in the middle of (no
    # close) is kept until the process ends (the tap sees frames, not the socket's end).
    whole = TransferAssembler()

    def joined(conn: str, arrow: str, item: Any) -> Any:
        if getattr(item, "body", None).__class__ is Close:
            whole.forget((conn, arrow))
            return None
        return whole.offer(item, (conn, arrow), (conn, "<-" if arrow == "->" else "->"))

    def trace(conn: str, arrow: str, item: Any, t: float) -> None:
        if gone[0]:
            return
        out = stream()
        try:
            if out is None:  # started with that stream closed
                raise OSError("closed")
            # (every frame of the connection is traced from its first: a payload that is
            # no valid message is one, not the tail of a delivery begun before)
            line = item_line(item, time=t, connection=conn, direction=arrow,
                             show_secrets=show_secrets, message=joined(conn, arrow, item),
                             say_invalid=True)
            if not show_secrets:  # (a peer's frame that quotes our password)
                line = mask_secrets(line)
            out.write(line + "\n")
            out.flush()
        except (OSError, ValueError):
            # diagnostics only: a stream that cannot take them (closed, full, a reader
            # gone) ends the tracing, never the run
            gone[0] = True
    return trace
