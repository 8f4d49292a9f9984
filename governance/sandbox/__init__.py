"""The OS backstop: Claude Code's own Bash sandbox, configured by governance and driven by the state.

May use install (the settings file), policy (which states close the network) and the root. The hook
reads only the manifest's presence (``project.sandbox_manifest_path``), never this package.
"""
