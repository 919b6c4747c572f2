"""An attach's unsettled map (a link resumed, Part 2 §2.6.13) on its frame line: its first
entries, each delivery-tag with its state as other lines show tags and states, and how
many there are when not all are shown (the line left it out); an empty map says nothing.
JSON keeps the map whole."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame, FrameReader, encode_frame
from amqpcli.codec.types import UInt, ULong
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import item_to_json


def _attach(unsettled: object, incomplete: bool | None = None) -> Frame:
    [f] = FrameReader().feed(encode_frame(c.Attach(
        name="l", handle=0, role=True, source=c.Source(address="q"), target=c.Target(),
        unsettled=unsettled, incomplete_unsettled=incomplete)))
    assert isinstance(f, Frame)
    return f


HEAD = '[0]  attach      name="l" handle=0 role=receiver source="q" target=null'


def test_the_entries_with_their_states() -> None:
    line = frame_line(_attach({b"t1": c.Accepted(), b"t2": None, b"\x00\x01": c.Received(
        section_number=UInt(0), section_offset=ULong(10))}))
    assert line == f'{HEAD} unsettled={{b"t1": accepted, b"t2": null, 0x0001: received(0,10)}}'


def test_a_long_map_says_how_many_entries_it_has() -> None:
    tags = {f"tag-{i}".encode(): c.Released() for i in range(40)}
    line = frame_line(_attach(tags, incomplete=True))
    assert line == (f'{HEAD} unsettled={{b"tag-0": released, b"tag-1": released, '
                    'b"tag-2": released, …}(40 entries) incomplete-unsettled')
    # the tags are cut as on a transfer's line
    line = frame_line(_attach({b"x" * 100: None}))
    assert line == f'{HEAD} unsettled={{b"{"x" * 32}"…(100 bytes): null}}'


def test_an_empty_map_says_nothing_and_json_keeps_all() -> None:
    assert frame_line(_attach({}, incomplete=False)) == HEAD
    tags = {bytes([i]) * 2: None for i in range(10)}
    perf = item_to_json(_attach(tags))["performative"]["attach"]
    assert len(perf["unsettled"]["map"]) == 10
