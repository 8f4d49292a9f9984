"""The session around the tool calls: the SessionStart and UserPromptSubmit briefing and the status line.

May use hook (payload reading), decisions, policy, ledger and the root modules.
"""
