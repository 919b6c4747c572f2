"""A small hex window around a byte, for decode errors: where it went wrong, and what is there."""

from __future__ import annotations

__all__ = ["hex_window"]


def hex_window(
    data: bytes, offset: int, before: int = 16, after: int = 16, width: int = 16
) -> list[str]:
    """Lines of hex around `offset`, the byte there in [brackets] with a mark under it.

    An offset at the end of the input (a truncation) is shown as `[..]` after the last byte.
    """
    offset = max(0, offset)
    start = max(0, (offset - before) // width * width)
    stop = min(len(data), offset + after + 1)
    lines: list[str] = []
    row = start
    while row < max(stop, offset + 1):
        text = ""
        mark = -1
        for i in range(row, row + width):
            if i == offset:
                mark = len(text)
                text += f"[{data[i]:02x}]" if i < len(data) else "[..]"
            elif i < stop:
                sep = "" if (i == offset + 1 or not text) else " "
                text += f"{sep}{data[i]:02x}"
            else:
                break
        prefix = f"{row:08x}  "
        lines.append(prefix + text)
        if mark >= 0:
            lines.append(" " * (len(prefix) + mark) + "^^^^")
        row += width
    return lines
