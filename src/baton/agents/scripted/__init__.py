"""The bundled scripted agent: a deterministic ACP v1 agent driven by its prompts.

Run it as ``baton agent scripted [FLAGS]`` or ``python -m baton.agents.scripted [FLAGS]``. Each
prompt is a script in a small command language (:mod:`baton.agents.scripted.script`), or plain
text it echoes back. Flags and profiles (:mod:`baton.agents.scripted.options`,
:mod:`baton.agents.scripted.profiles`) choose what initialize and session/new advertise, so one
agent can impersonate the adapters Baton was qualified against. docs/scripted-agent.md is the
reference.

Only the standard library, orjson and :mod:`baton.wire` are needed to run it.
"""

from baton.agents.scripted.app import build_parser, main, run, serve
from baton.agents.scripted.flags import add_arguments, options_from_namespace
from baton.agents.scripted.options import AgentOptions
from baton.agents.scripted.profiles import PROFILE_NAMES, profile_options
from baton.agents.scripted.script import COMMAND_SPECS, Command, Script, ScriptError, parse_prompt

__all__ = [
    "COMMAND_SPECS",
    "PROFILE_NAMES",
    "AgentOptions",
    "Command",
    "Script",
    "ScriptError",
    "add_arguments",
    "build_parser",
    "main",
    "options_from_namespace",
    "parse_prompt",
    "profile_options",
    "run",
    "serve",
]
