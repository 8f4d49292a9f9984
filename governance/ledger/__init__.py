"""The audit ledger: hash-chained append, redaction of secrets, reading, verification and reports.

May use the root modules only.
"""
