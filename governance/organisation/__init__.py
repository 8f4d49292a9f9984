"""The organisation layer's distribution: signed bundles of the org's matrix, guardrails and SOPs,
pulled from the team's server, verified with the org's Ed25519 key and installed beside Claude Code's
managed settings (cold: the CLI only; the hook reads the installed files, never this package).

May use policy and the root modules.
"""
