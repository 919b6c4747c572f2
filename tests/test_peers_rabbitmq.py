"""RabbitMQ (the node started by scripts/rabbitmq.sh) answers AMQP 1.0 as PEERS.md says."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from proton import Message
from proton.utils import BlockingConnection

pytestmark = pytest.mark.integration


def _hostport(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}"


@pytest.mark.parametrize(
    ("mech", "userinfo"), [("PLAIN", "guest:guest@"), ("ANONYMOUS", "")]
)
def test_rabbitmq_send_receive(
    rabbitmq_url: str, rabbitmq_queue: str, mech: str, userinfo: str
) -> None:
    address = rabbitmq_queue
    body = f"hello over {mech}"
    conn = BlockingConnection(
        f"amqp://{userinfo}{_hostport(rabbitmq_url)}", allowed_mechs=mech, timeout=30
    )
    try:
        sender = conn.create_sender(address)
        sender.send(Message(body=body, properties={"k": 1}))
        receiver = conn.create_receiver(address, credit=1)
        msg = receiver.receive(timeout=30)
        receiver.accept()
        assert msg.body == body
        assert msg.properties == {"k": 1}
    finally:
        conn.close()


def test_rabbitmq_refuses_wrong_password(rabbitmq_url: str) -> None:
    from proton import ConnectionException

    with pytest.raises(ConnectionException, match="unauthorized-access"):
        BlockingConnection(
            f"amqp://guest:wrong@{_hostport(rabbitmq_url)}", allowed_mechs="PLAIN", timeout=30
        )
