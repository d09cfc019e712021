"""Turns: one prompt from submission to its settled outcome, and what it produces.

The turn state machine, the per-run streaming buffer, normalized run events, native settings
and session controls, attachments, and the adapter from lanes and turns to the run store.
"""
