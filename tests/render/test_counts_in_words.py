"""A tree says how many items a list or an array holds in words that agree with the
number (`1 item`, was `1 items`), as it says `1 entry` of a map."""

from __future__ import annotations

from amqpcli.codec.types import Array, Int
from amqpcli.render.text import value_tree


def test_one_item_and_many() -> None:
    assert value_tree([None], "v").type == "list, 1 item"
    assert value_tree([None, None], "v").type == "list, 2 items"
    assert value_tree([], "v").type == "list, 0 items"
    assert value_tree(Array([Int(1)], type="int"), "v").type == "array of int, 1 item"
    assert value_tree({"a": 1}, "v").type == "map, 1 entry"
