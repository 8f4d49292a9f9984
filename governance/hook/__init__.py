"""A hook process from stdin to stdout: reading the payload, deciding, answering Claude Code, recording.

The hot path. May use policy, decisions, ledger, shell and the root modules; imports nothing heavy.
"""
