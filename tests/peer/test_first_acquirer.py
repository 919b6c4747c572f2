"""`amqp serve`: a message acquired by a link and given back (released, rolled back, its
link gone) no longer says first-acquirer (Part 3 §3.2.1: true means no other link
acquired it); its bare message keeps its bytes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("give_back", [["--outcome", "release"],
                                       ["--txn-size", "1", "--rollback"]])
def test_first_acquirer_is_false_once_acquired(serve: Callable[..., Any],
                                                give_back: list[str]) -> None:
    url = f"{serve().url}/{queue_name()}"
    r = amqp("send", url, "m", "--first-acquirer")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json", *give_back)
    assert r.returncode == 0, r.stderr
    (first,) = json_lines(r.stdout)
    assert first["header"]["first-acquirer"] is True
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    (again,) = json_lines(r.stdout)
    assert again["header"].get("first-acquirer", False) is False
    assert again["bare-sha256"] == first["bare-sha256"]
