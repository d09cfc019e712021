"""Rows of a run store at schema version 4, shared by the migration tests of both backends."""

from __future__ import annotations

#: One row in every table that references a run, at schema version 4, around two runs: one
#: completed, one cancelled while queued by a Baton before version 5 (INTERRUPTED with
#: QUEUED_RUN_CANCELLED, never prompted).
VERSION_4_ROWS = (
    "INSERT INTO runs (id, status, prompt_text, policy, unattended, created_at, updated_at, "
    "owner, started_at, ended_at) VALUES "
    "('run-done', 'COMPLETED', 'hi', 'ask', 0, 't1', 't1', '1:2@host-a', 't1', 't2'), "
    "('run-gone', 'INTERRUPTED', 'later', 'ask', 0, 't3', 't3', '1:2@host-b', 't3', 't4')",
    "UPDATE runs SET error_code = 'QUEUED_RUN_CANCELLED', stop_reason = 'cancelled' "
    "WHERE id = 'run-gone'",
    "INSERT INTO items (run_id, seq, kind, content, coalesced_events, created_at) "
    "VALUES ('run-done', 1, 'text', '{\"text\": \"ok\"}', 1, 't1')",
    "INSERT INTO interactions (id, run_id, request_id, tool_call, offered, state, created_at) "
    "VALUES ('int-1', 'run-done', '7', '{}', '[]', 'PENDING', 't1')",
    "INSERT INTO observations (session_id, run_id, kind, payload, recorded_at) "
    "VALUES (NULL, 'run-done', 'PROVIDER_REPORTED', '{}', 't1')",
    "INSERT INTO conversations (id, name, profile, env_keys, cwd, settings, capabilities, "
    "status, active_run_id, setup_run_id, created_at, last_used_at, updated_at) VALUES "
    "('conv-1', 'fix', 'claude', '[]', '/w', '{}', '{}', 'IDLE', NULL, 'run-done', 't', 't', 't')",
    "INSERT INTO conversation_runs (conversation_id, seq, run_id) VALUES ('conv-1', 1, 'run-done')",
    "INSERT INTO fleet_submissions (run_id, queue, request, submitted_at) "
    "VALUES ('run-gone', 'default', '{}', 't3')",
    "INSERT INTO run_events (run_id, seq, event) VALUES ('run-done', 0, '{}')",
)
