"""Claude Code integration: our entries merged into settings files, session hooks, the status line,
slash commands and the MCP server registration.

May use decisions, policy, ledger, shell and the root modules.
"""
