"""The ACP v2 draft codec (schema of @agentclientprotocol/sdk 2.4.0), pure like the rest of
:mod:`baton.wire`: initialize and capabilities, methods and their params, and the decoding of
v2 session updates and permission requests into the normalized shape the runtime reads.

Callers above layer 1 use :mod:`baton.wire.codec`, never this package directly.
"""
