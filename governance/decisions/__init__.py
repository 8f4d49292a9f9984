"""Decision intelligence: the decision store, ranking and embeddings, calibration, guardrails,
``pre_action`` and the MCP server.

May use policy, ledger, shell and the root modules.
"""
