"""Provider sessions: setting up a run's session on its lane (start, initialize, session/new or
attach, native settings and profile extensions, tools, the prompt's blocks)."""
