"""The policy: the activity matrix (format, schema, compiler, cache), the cycle state, the seal
(which accepted version of each is in force), the GovernanceLayer that maps a tool call to
primitives and decides it, and the decision it returns.

May use shell and the root modules.
"""
