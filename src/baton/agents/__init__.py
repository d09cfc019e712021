"""Agents bundled with Baton.

:mod:`baton.agents.scripted` is a deterministic ACP v1 agent driven by a small command language
in its prompts: the embedded default for demos, the counterpart of the end-to-end tests and the
agent the benchmarks measure against.
"""
