"""Ledger records shaped like the hook's, for the ledger tests."""

from __future__ import annotations

from typing import Any


def pre_record(i: int, **extra: Any) -> dict[str, Any]:
    """A PreToolUse record shaped like the hook's."""
    record: dict[str, Any] = {
        "event": "PreToolUse", "session": "sess-0001", "tool_use_id": f"toolu_{i:04d}",
        "tool": "Bash", "primitive": "shell-execute", "primitives": ["shell-execute"],
        "action": "allow", "rule": {"file": "activity_matrix.yaml",
                                    "key": "rules.shell-execute.DO"},
        "reason": f"call {i} is allowed in DO", "state": "DO", "cycle": "implementation-cycle",
        "phase": "DO", "work_item": "WORK-7", "state_source": "state-file",
        "config_hash": "c" * 64, "input_sha256": "d" * 64, "decision": "none",
        "duration_ms": 1.0 + i % 7,
    }
    record.update(extra)
    return record
