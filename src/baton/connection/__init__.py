"""The asyncio JSON-RPC connection to an agent, generic over a byte reader and a byte writer.

Process ownership (spawning, stderr, signals) belongs to :mod:`baton.runtime`; this layer only
turns a byte stream into correlated requests, responses and notifications, within budgets.
"""

from baton.connection.core import (
    Connection,
    InboundRequest,
    NotificationHandler,
    RequestHandler,
    RpcError,
)
from baton.connection.streams import ByteReader, ByteWriter, memory_pipe
from baton.connection.tap import Tap, TapFrame

__all__ = [
    "ByteReader",
    "ByteWriter",
    "Connection",
    "InboundRequest",
    "NotificationHandler",
    "RequestHandler",
    "RpcError",
    "Tap",
    "TapFrame",
    "memory_pipe",
]
