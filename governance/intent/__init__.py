"""Intents: declared tasks with an owned scope that mutations must happen under, selected per
session, and the trace that ties each change to its intent, session and ledger record.

May use policy, ledger, shell and the root modules.
"""
