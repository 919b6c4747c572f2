"""`recv --txn-size`, `--rollback` and `--rate`: the combinations that cannot work are
usage errors before anything connects; the summary's transaction keys are send's."""

from __future__ import annotations

import pytest

from amqpcli.net.receiving import RecvSummary
from tests.net.clirun import amqp_in_process
from tests.peers.net import free_port


@pytest.mark.parametrize(("args", "said"), [
    (("--txn-size", "2", "--copy"), "--copy settles nothing"),
    (("--txn-size", "2", "--presettled"), "--presettled messages take no outcome"),
    # (released, a message the sender settled would be gone all the same: it consumed)
    (("--outcome", "release", "--presettled"), "--presettled messages take no --outcome"),
    (("--rollback",), "--rollback needs --txn-size"),
    (("--txn-size", "0"), "--txn-size must be at least 1"),
    (("--rate", "0"), "--rate must be a finite number more than 0"),
    (("--rate", "nan"), "--rate must be a finite number more than 0"),
    (("--unsubscribe", "--subscription", "s", "--txn-size", "2", "--rate", "1"),
     "it takes no --txn-size, --rate"),
])
def test_refused_before_connecting(args: tuple[str, ...], said: str) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries
    code, out, err = amqp_in_process("recv", url, *args)
    assert (code, out) == (2, ""), err
    assert said in err


def test_transaction_keys_in_the_json_summary_are_send_s() -> None:
    obj = RecvSummary(received=3, committed=1, rolled_back=1, rolled_back_messages=2,
                      in_doubt=1).to_json()
    assert obj["transactions"] == {"committed": 1, "rolled-back": 1,
                                   "rolled-back-messages": 2}
    assert obj["in-doubt"] == 1
    assert "transactions" not in RecvSummary(received=3).to_json()
