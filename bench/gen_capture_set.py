"""Capture sets for the pipeline: generated captures that do not collide, and big sets.

    python bench/gen_capture_set.py one OUT [--site N] -- [gen_capture.py options]
    python bench/gen_capture_set.py copies DIR BASE... [--files 40] [--large 1] [--size-gb 2]

`one` runs `gen_capture.py` with its addresses moved to 10.N.x.x and its clock moved N
hours on, so several generated captures in one set are distinct conversations (the
generator always starts at the same time with the same addresses, which a capture set
would take for one conversation seen twice).

`copies` builds a large set from a few generated captures: each copy of a base capture
gets its own site (addresses and clock shifted as above), so every copy is a set of new
connections. `--files` files of copies one after another, then `--large` files that each
hold as many copies as one of them and the large file's share of the size (a single
big capture with many connections); stops at `--size-gb` in total. Files that are already
there are kept (a set is reused).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HOUR_NS = 3_600_000_000_000


def one(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="gen_capture_set.py one")
    ap.add_argument("out")
    ap.add_argument("--site", type=int, default=1)
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    rest = argv[cut + 1:]
    if not 0 < a.site < 256:
        ap.error("--site is 1..255")
    sys.path.insert(0, str(Path(__file__).parent))
    import gen_capture as g

    base = g.TcpConversation
    site = a.site

    class Shifted(base):  # type: ignore[misc, valid-type]
        def __init__(self, w: object, client: tuple[str, int], server: tuple[str, int],
                     **kw: object) -> None:
            c = client[0].split(".")
            s = server[0].split(".")
            kw["start_ns"] = int(kw.get("start_ns", 1_700_000_000_000_000_000)) + site * HOUR_NS  # type: ignore[call-overload]
            super().__init__(w, client=(f"10.{site}.{c[2]}.{c[3]}", client[1]),  # type: ignore[arg-type]
                             server=(f"10.{site}.{s[2]}.{s[3]}", server[1]), **kw)

    g.TcpConversation = Shifted  # type: ignore[misc]
    sys.argv = ["gen_capture.py", a.out, *rest]
    g.main()


def _copy(base: str, copy: int, writer: object) -> int:
    """Packets of `base` with IPv4 addresses moved to 10.S.x.x (S: 1..250 by `copy`) and
    times `copy` hours on (Ethernet captures, as gen_capture writes them)."""
    from amqpcli.capture import read_packets

    n = 0
    write = writer.write  # type: ignore[attr-defined]
    shift = copy * HOUR_NS
    site = copy % 250 + 1
    for ts, linktype, data in read_packets(base):
        b = bytearray(data)
        if linktype == 1 and len(b) >= 34 and b[12:14] == b"\x08\x00":
            b[27] = site  # source 10.x: second octet
            b[31] = site  # destination
        write(ts + shift, bytes(b))
        n += 1
    return n


def copies(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="gen_capture_set.py copies")
    ap.add_argument("dir", type=Path)
    ap.add_argument("base", nargs="+")
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--large", type=int, default=1)
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--large-share", type=float, default=0.3,
                    help="share of the size in the large files")
    a = ap.parse_args(argv)
    from amqpcli.capture.writer import CaptureWriter

    a.dir.mkdir(parents=True, exist_ok=True)
    total = a.size_gb * 1e9
    base_sizes = [os.path.getsize(b) for b in a.base]
    avg = sum(base_sizes) / len(base_sizes)
    small_each = total * (1 - a.large_share) / a.files
    large_each = total * a.large_share / max(1, a.large)
    site = 1
    plan = [(a.dir / f"part-{i + 1:04d}.pcapng", small_each) for i in range(a.files)]
    plan += [(a.dir / f"large-{i + 1}.pcapng", large_each) for i in range(a.large)]
    for path, size in plan:
        n_copies = max(1, round(size / avg))
        if path.exists() and path.stat().st_size > 0.5 * size:
            site += n_copies
            continue
        tmp = path.with_suffix(".tmp")
        with CaptureWriter(tmp) as w:
            for k in range(n_copies):
                _copy(a.base[k % len(a.base)], site, w)
                site += 1
        tmp.rename(path)
        print(f"{path} {path.stat().st_size / 1e6:.0f} MB", flush=True)
    sizes = sum(p.stat().st_size for p, _s in plan)
    print(f"{len(plan)} files, {sizes / 1e9:.2f} GB in {a.dir}")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("one", "copies"):
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    (one if sys.argv[1] == "one" else copies)(sys.argv[2:])


if __name__ == "__main__":
    main()
