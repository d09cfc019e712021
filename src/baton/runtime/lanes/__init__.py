"""Process lanes: one long-lived agent child per runtime identity, and what polices it.

The child process and its stderr tail, the lane with its generations, routing of inbound
traffic to sessions, quarantine and fencing, profile-gated extensions per lane, Grok's review
lane, and passive reconciliation of what a dead Baton left behind.
"""
