"""The report: figures aggregated from the ledger, the trace and the decision store as they are
read (one streamed pass, constant memory), and the self-contained HTML page they render to.

May use decisions, intent, policy, ledger and the root modules; the CLI and the server use it.
"""
