"""Tamper evidence: the accepted version of every governance file, and how a hook tells a change
it did not record. May use the root modules only.
"""
