"""Agent child processes: spawned in their own process group, stderr drained, shut down for sure.

The lowest room of the runtime: agent setup (discovery probes, the live check) and lanes both
start children through it, and it knows nothing of sessions or turns.
"""
