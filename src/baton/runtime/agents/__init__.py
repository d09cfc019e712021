"""Agent setup: which agents exist and how to start them.

Profiles and their environment contracts, the user's config file, executable discovery,
readiness and the live check, the trusted tool declarations file, and the resolved launch of an
agent. Nothing here keeps a long-lived process: the lanes room starts and owns agent processes.
"""
