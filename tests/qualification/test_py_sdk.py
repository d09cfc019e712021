"""An echo agent built on the official Python ACP SDK's current stable release (issue 29), run
with Baton's defaults: no ``--protocol``, a config-file profile without a pin.

The SDK's agents answer ``initialize`` by echoing the offered version in the v1 layout; while
Baton offered 2 by default every such run failed. No model server is needed.
"""

from __future__ import annotations

from typing import Any

import pytest
from qualify_checks import aftermath, completed
from qualify_drivers import journal_messages
from qualify_installs import PY_SDK

ADAPTER = PY_SDK.key


@pytest.mark.qualify(ADAPTER, "text turn with default flags (offered 1, echoed 1, end_turn)")
def test_text_turn_with_defaults(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PY_SDK.profile)
    outcome = baton.run("Hello from the qualification run.")
    result = completed(outcome)
    assert outcome.text() == "Hello from the qualification run.", outcome.describe()
    records = baton.journal(baton.show(result["runId"])["serverInstanceId"])
    messages = journal_messages(records)
    offer = next(m for d, m in messages if d == "outbound" and m.get("method") == "initialize")
    assert offer["params"]["protocolVersion"] == 1, offer
    answer = next(m for d, m in messages if d == "inbound" and m.get("id") == offer["id"])
    assert answer["result"]["protocolVersion"] == 1, answer
    aftermath(baton, PY_SDK)


@pytest.mark.qualify(
    ADAPTER, "--protocol 2: echoes 2 in the v1 layout (AGENT_PROTOCOL_MISLABELLED, exit 5)"
)
def test_protocol_2_is_mislabelled(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PY_SDK.profile)
    outcome = baton.run("Hello under 2.", "--protocol", "2")
    result = outcome.result()
    assert result["errorCode"] == "AGENT_PROTOCOL_MISLABELLED", outcome.describe()
    assert "--protocol auto" in result["message"], outcome.describe()
    assert outcome.returncode == 5, outcome.describe()
    aftermath(baton, PY_SDK)
