"""An echo agent built on the official Python ACP SDK's current stable release
(``agent-client-protocol`` 0.12.1, the shape of the SDK's own echo example): initialize answers
the offered ``protocolVersion`` in the v1 layout, session/new opens a session, a prompt's text
comes back as one agent message chunk and the turn ends ``end_turn``. Issue 29 found that such
agents failed every Baton run while Baton offered 2 by default.

Run it with the SDK's interpreter: ``python py_sdk_echo_agent.py`` serves stdio until EOF;
``--version`` and ``--help`` print one line each (Baton's version command and launch-contract
probe of the qualification profile).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
import uuid
from typing import Any

#: What ``--help`` prints; the qualification profile's probe pattern matches it.
USAGE = "usage: py_sdk_echo_agent.py: an ACP echo agent on the official Python SDK"


class EchoAgent:
    """The SDK's ``Agent`` protocol, the methods an echo needs."""

    def __init__(self) -> None:
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> Any:
        from acp import InitializeResponse

        # What the SDK's example does: echo the offered version, in the SDK's (v1) layout.
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **_: Any) -> Any:
        from acp import NewSessionResponse

        return NewSessionResponse(session_id=f"echo-{uuid.uuid4().hex[:12]}")

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        from acp import PromptResponse, text_block, update_agent_message

        text = "".join(getattr(block, "text", "") for block in prompt)
        await self.conn.session_update(session_id, update_agent_message(text_block(text)))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


def main(argv: list[str]) -> int:
    if argv[1:] == ["--version"]:
        print(f"py-sdk-echo-agent {importlib.metadata.version('agent-client-protocol')}")
        return 0
    if argv[1:] == ["--help"]:
        print(USAGE)
        return 0
    from acp import run_agent

    asyncio.run(run_agent(EchoAgent()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
