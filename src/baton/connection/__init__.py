"""The asyncio JSON-RPC connection to an agent, generic over a byte reader and a byte writer.

Process ownership (spawning, stderr, signals) belongs to :mod:`baton.runtime`; this layer only
turns a byte stream into correlated requests, responses and notifications, within budgets.
"""

from baton.connection.core import (
    Answer,
    BatchNotificationHandler,
    Connection,
    InboundRequest,
    NotificationHandler,
    RequestHandler,
    RpcError,
)
from baton.connection.streams import ByteReader, ByteWriter, memory_pipe
from baton.connection.tap import Mark, Tap

__all__ = [
    "Answer",
    "BatchNotificationHandler",
    "ByteReader",
    "ByteWriter",
    "Connection",
    "InboundRequest",
    "Mark",
    "NotificationHandler",
    "RequestHandler",
    "RpcError",
    "Tap",
    "memory_pipe",
]
