"""Profile-gated protocol extensions: vendor contracts layered on stable ACP v1.

Each module implements one captured, versioned contract and is pure (no I/O, no clock):

- :mod:`baton.wire.extensions.grok`: ``grok-build-acp/session-models@v1`` (Grok Build's model
  catalog, ``session/set_model`` with ``_meta.reasoningEffort``, ``_x.ai/models/update``).
- :mod:`baton.wire.extensions.cursor`: ``cursor-agent-acp/parameterized-model-picker@v1``
  (``clientCapabilities._meta.parameterizedModelPicker``, ``cursor/list_available_models``).
- :mod:`baton.wire.extensions.claude`: ``claude-agent-acp/subagent-parent@v1`` (the parent link
  ``_meta.claudeCode.parentToolUseId`` of a subagent's tool calls).

Nothing here decides *whether* an extension applies: callers use these functions only for a
profile whose flag enables the contract (:attr:`baton.runtime.agents.profiles.Profile.
session_models_extension`, :attr:`~baton.runtime.agents.profiles.Profile.parameterized_model_picker`).
Every other profile ignores the non-standard fields these modules read.
"""
