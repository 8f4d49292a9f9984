"""The resident governance server: CSTP (JSON-RPC 2.0) for other agents and Claude Code hooks over
HTTP, one process that stays up so a decision costs no interpreter start.

May use session, hook, knowledge, decisions, intent, policy, ledger, shell, telemetry (the
background OTLP export, started by ``daemon``) and the root modules.
"""
