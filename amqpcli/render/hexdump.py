"""A small hex window around a byte, for decode errors: where it went wrong, and what is there."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["hex_window"]


def hex_window(
    data: bytes, offset: int, before: int = 16, after: int = 16, width: int = 16,
    masked: Sequence[tuple[int, int]] = (), base: int = 0,
) -> list[str]:
    """Lines of hex around `offset`, the byte there in [brackets] with a mark under it.

    An offset at the end of the input (a truncation) is shown as `[..]` after the last byte.
    Bytes inside a `masked` range `[start, stop)` (a secret) are shown as `**`. `data` may
    be a part of a longer input that starts at offset `base` (offsets and ranges are the
    input's); nothing before it is shown.
    """
    end = base + len(data)

    def byte(i: int) -> str:
        if any(start <= i < stop for start, stop in masked):
            return "**"
        return f"{data[i - base]:02x}"

    offset = max(base, offset)
    start = max(base, (offset - before) // width * width)
    stop = min(end, offset + after + 1)
    lines: list[str] = []
    row = start
    while row < max(stop, offset + 1):
        text = ""
        mark = -1
        for i in range(row, row + width):
            if i == offset:
                mark = len(text)
                text += f"[{byte(i)}]" if i < end else "[..]"
            elif i < stop:
                sep = "" if (i == offset + 1 or not text) else " "
                text += f"{sep}{byte(i)}"
            else:
                break
        prefix = f"{row:08x}  "
        lines.append(prefix + text)
        if mark >= 0:
            lines.append(" " * (len(prefix) + mark) + "^^^^")
        row += width
    return lines
