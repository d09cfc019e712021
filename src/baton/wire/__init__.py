"""Pure ACP protocol: framing, JSON-RPC messages, budgets, negotiation and content.

Nothing in this package owns a subprocess, a file, a socket or a clock: it turns bytes into
messages and messages into bytes, and everything it needs (time included) is passed in.
"""
