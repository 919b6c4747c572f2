"""Ctrl-C or SIGTERM while `amqp send --lines` / `--from -` waits for its input (a pipe):
the run's task is cancelled in `_Sender._input_ready`, which also watches the link for a
lost connection. That watch was left running: the close that follows ended it with the
peer's close as its error, which nothing retrieved — asyncio printed "Task exception was
never retrieved" and a traceback before `amqp: error: interrupted`. The end-to-end case
is in tests/cli/test_send_waiting_input.py."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Client, SenderLink
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.sending import PulledInThread, SendPlan, _Sender


def test_an_interrupted_wait_for_input_leaves_no_task_behind() -> None:
    go_on = threading.Event()

    def lines() -> Iterator[OutgoingMessage]:
        go_on.wait(10)  # a pipe whose next line has not come
        yield OutgoingMessage(number=1, payload=b"x")

    async def main() -> list[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        reported: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: reported.append(context))
        client = Client(ConnectionConfig())
        sender = SenderLink(client, SimpleNamespace(detach={}), "q")
        client._links[id(sender.link)] = sender
        s = _Sender(ConnectionConfig(), SendPlan(address="q"))
        s.sender = sender
        s.offering.more = False  # (nothing to say to an engine there is not)
        s.pulled = PulledInThread(lines())
        run = asyncio.ensure_future(s._input_ready(loop.time()))
        for _ in range(5):  # its waits started: for the input, and on the link
            await asyncio.sleep(0)
        run.cancel()  # Ctrl-C
        try:
            await run
        except asyncio.CancelledError:
            pass
        # the close after the interrupt: the connection ends, every wait on it is woken
        client.error = UserError("the peer closed the connection", Exit.REFUSED)
        client._fail_all()
        for _ in range(5):
            await asyncio.sleep(0)
        del run
        gc.collect()  # (a task's unretrieved exception is reported as it is collected)
        go_on.set()
        return reported

    reported = asyncio.run(main())
    assert reported == []
