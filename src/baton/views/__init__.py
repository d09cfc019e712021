"""The JSON documents both surfaces show: the CLI's ``--json`` output and the service's API
speak one contract, built here, below both (docs/architecture.md: the CLI and the service are
siblings that never import each other).

Modules, each with one document or one rule of the contract:

- :mod:`~baton.views.contract`: the contract itself: camelCase keys, ``schemaVersion``,
  records as JSON types.
- :mod:`~baton.views.run_ids`: a run named by its id or a unique prefix of it.
- :mod:`~baton.views.runs`: a run's row (`baton runs`) and its full record (`baton show`).
- :mod:`~baton.views.recovery`: what is known of a RECOVERY_REQUIRED run, and the run that
  attaches to its session (`baton recover`).
- :mod:`~baton.views.sessions`: conversations and the sessions of queued turns.
- :mod:`~baton.views.readiness`: each profile's readiness (`baton doctor`).
- :mod:`~baton.views.workers`: the fleet's workers (`baton workers`).
- :mod:`~baton.views.trajectory`: runs and sessions as ATIF trajectories and acp-jsonl
  (`baton export`), over :mod:`~baton.views.trajectory_steps` (a run's events folded into
  steps) and :mod:`~baton.views.run_record_events` (a run's normalized events from the
  store).

The package imports none of its modules itself, so a CLI verb pays only for the view it shows.
"""
