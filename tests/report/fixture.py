"""A small project whose report is known by hand: 24 ledger records (written by the real writer,
``ledger.chain.append``), 3 trace records (``intent.trace.append``) and 8 decisions in the real
decision store. test_figures.py states every figure, computed by hand from the lists below.
"""

from __future__ import annotations

import calendar
import time
from pathlib import Path
from typing import Any

DAY1, DAY2 = "2026-05-01", "2026-05-02"
SESSION, OTHER = "sess-0001", "sess-0002"
MATRIX = {"file": "activity_matrix.yaml"}


def _pre(ts: str, call: str, action: str, primitive: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "ts": ts, "event": "PreToolUse", "session": SESSION, "tool_use_id": call, "tool": "Bash",
        "primitive": primitive, "primitives": [primitive], "action": action,
        "rule": {**MATRIX, "key": f"rules.{primitive}.DO"}, "reason": "", "state": "DO",
        "decision": {"allow": "none", "warn": "none", "ask": "ask"}.get(action, "deny")}
    record.update(extra)
    return record


def _bash(command: str, action: str, primitive: str, reason: str = "") -> dict[str, Any]:
    return {"acts": [{"action": action, "primitive": primitive, "reason": reason,
                      "segment": command}], "reason": reason}


def _post(ts: str, call: str, outcome: str = "success", **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"ts": ts, "event": "PostToolUseFailure" if outcome != "success"
                              else "PostToolUse", "session": SESSION, "tool_use_id": call,
                              "tool": "Bash", "primitive": "shell-execute", "state": "DO",
                              "outcome": outcome}
    record.update(extra)
    return record


def _knowledge(outcome: str, items: list[str], cache: str, lookup: float,
               **extra: Any) -> dict[str, Any]:
    sops = [{"name": i[4:], "sections": ["gotchas"], "why": ["the command word"]}
            for i in items if i.startswith("sop:")]
    found: dict[str, Any] = {"level": "strict", "threshold": 0.5, "cache": cache,
                             "lookup_ms": lookup, "outcome": outcome, "sops": sops,
                             "memories": [], "risk": "routine"}
    if outcome == "acknowledged":
        found["acknowledged"] = items
    else:
        found["items"] = items
    found.update(extra)
    return found


PUSH = "Pushing publishes work: push only from CHECK or DONE."
SCOPE = ("/p/notes.txt is outside the scope of intent WORK-1 (src/auth/). Stay inside it, ask the "
         "user to select another intent, or ask the user to widen the scope.")
NO_INTENT = "No intent is active, and this project requires one for every change."
BYPASS = "incident 42: registry down"

RECORDS: list[dict[str, Any]] = [
    # 1
    {"ts": f"{DAY1}T09:00:00.000Z", "event": "StateChange", "from": "", "to": "c/DO/WORK-1",
     "state": "DO", "decision": "none"},
    # 2, 3: an allowed call and its result
    _pre(f"{DAY1}T09:01:00.000Z", "t1", "allow", "shell-execute", duration_ms=2.0,
         **_bash("ls", "allow", "shell-execute")),
    _post(f"{DAY1}T09:01:05.000Z", "t1", duration_ms=1.0),
    # 4, 5: two pushes denied
    _pre(f"{DAY1}T09:02:00.000Z", "t2", "block", "vcs-push", duration_ms=5.0,
         **_bash("git push --force origin main", "block", "vcs-push", PUSH)),
    _pre(f"{DAY1}T10:15:00.000Z", "t3", "block", "vcs-push", duration_ms=4.0,
         **_bash("git push origin main", "block", "vcs-push", PUSH)),
    # 6, 7: an ask the user approved (its result follows); 8: an ask without a result
    _pre(f"{DAY1}T10:20:00.000Z", "t4", "ask", "destructive", duration_ms=3.0,
         **_bash("rm -rf src", "ask", "destructive", "This command destroys data.")),
    _post(f"{DAY1}T10:21:00.000Z", "t4", duration_ms=1.0),
    _pre(f"{DAY1}T10:30:00.000Z", "t5", "ask", "destructive", duration_ms=3.0,
         **_bash("rm -rf build2", "ask", "destructive", "This command destroys data.")),
    # 9, 10: a sub-agent's warned fetch, which failed
    _pre(f"{DAY1}T11:00:00.000Z", "t6", "warn", "network", tool="WebFetch", duration_ms=2.0,
         agent_id="ag-1", agent_type="Explore"),
    _post(f"{DAY1}T11:00:30.000Z", "t6", "failure", tool="WebFetch", duration_ms=0.5,
          agent_id="ag-1", agent_type="Explore", error="timed out"),
    # 11, 12, 13: strict knowledge holds a call, its retry acknowledges it and runs
    _pre(f"{DAY2}T08:00:00.000Z", "t7", "allow", "shell-execute",
         knowledge=_knowledge("blocked", ["sop:docker-deploy"], "built", 4.0),
         **_bash("docker compose up -d", "allow", "shell-execute")),
    _pre(f"{DAY2}T08:01:00.000Z", "t8", "allow", "shell-execute",
         knowledge=_knowledge("acknowledged", ["sop:docker-deploy"], "hit", 1.0),
         **_bash("docker compose up -d", "allow", "shell-execute")),
    _post(f"{DAY2}T08:01:30.000Z", "t8"),
    # 14, 15: held again, never retried (ignored)
    _pre(f"{DAY2}T08:10:00.000Z", "t9", "allow", "shell-execute",
         knowledge=_knowledge("blocked", ["sop:k8s", "mem:m1"], "hit", 2.0),
         **_bash("kubectl apply -f deploy.yaml", "allow", "shell-execute")),
    {"ts": f"{DAY2}T08:30:00.000Z", "event": "KnowledgeIgnored", "session": SESSION,
     "tool": "Bash", "items": ["sop:k8s", "mem:m1"], "blocked_at": 1.0, "decision": "none"},
    # 16, 17, 18: a bypass, a call shown under it, the bypass switched off
    {"ts": f"{DAY2}T09:00:00.000Z", "event": "KnowledgeBypass", "bypass": "on", "minutes": 30,
     "reason": BYPASS, "until": 2.0, "by": "alice", "decision": "none"},
    _pre(f"{DAY2}T09:05:00.000Z", "t10", "allow", "shell-execute",
         knowledge=_knowledge("bypassed", ["sop:docker-deploy"], "stale", 3.0,
                              bypass={"reason": BYPASS, "until": 2.0}),
         **_bash("docker compose up -d", "allow", "shell-execute")),
    {"ts": f"{DAY2}T09:40:00.000Z", "event": "KnowledgeBypass", "bypass": "off",
     "was_on": True, "decision": "none"},
    # 19, 20: changes refused by require_intent; 21, 22: one allowed under the intent
    _pre(f"{DAY2}T10:00:00.000Z", "t11", "block", "file-write", tool="Write", intent="WORK-1",
         rule={**MATRIX, "key": "settings.require_intent"}, reason=SCOPE),
    _pre(f"{DAY2}T10:05:00.000Z", "t12", "block", "file-write", tool="Edit",
         rule={**MATRIX, "key": "settings.require_intent"}, reason=NO_INTENT),
    _pre(f"{DAY2}T10:10:00.000Z", "t13", "allow", "file-write", tool="Write", intent="WORK-1"),
    _post(f"{DAY2}T10:10:01.000Z", "t13", tool="Write", primitive="file-write"),
    # 23, 24: another session in EXPLORE, where governance found its files changed
    _pre(f"{DAY2}T11:00:00.000Z", "t14", "block", "file-write", tool="Write", session=OTHER,
         state="EXPLORE", reason="Writing files is not allowed in EXPLORE.",
         unaccepted=["matrix"]),
    _pre(f"{DAY2}T11:05:00.000Z", "t15", "allow", "shell-execute", session=OTHER,
         state="EXPLORE", tampered=["intents.marshal"], duration_ms=2.0,
         **_bash("git status", "allow", "shell-execute")),
]

# (timestamp, intent, file, first line, last line)
TRACE = [(f"{DAY1}T12:00:00Z", None, "c.py", 1, 4),
         (f"{DAY2}T10:10:02Z", "WORK-1", "a.py", 1, 10),
         (f"{DAY2}T10:12:00Z", "WORK-1", "b.py", 5, 6)]

# (category, confidence, outcome, agent, state, created)
DECISIONS = [("deploy", 0.9, "success", "planner", "DO", f"{DAY1}T09:00:00"),
             ("deploy", 0.8, "failure", "planner", "DO", f"{DAY1}T10:00:00"),
             ("deploy", 0.3, "partial", "planner", "DO", f"{DAY1}T11:00:00"),
             ("testing", 0.65, "success", "reviewer", "DO", f"{DAY2}T09:00:00"),
             ("testing", 0.1, "failure", "planner", "CHECK", f"{DAY2}T10:00:00"),
             ("testing", 0.5, "abandoned", "planner", "DO", f"{DAY2}T11:00:00"),
             ("deploy", 0.7, None, "planner", "DO", f"{DAY1}T08:00:00"),
             ("testing", 0.2, None, "planner", "DO", f"{DAY2}T12:00:00")]


def epoch(iso: str) -> float:
    return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%S")))


def write(project: Path) -> Path:
    """Write the ledger, the trace and the decision store into ``project``; returns it."""
    from governance.decisions.store import DecisionStore
    from governance.intent import trace
    from governance.ledger import chain
    from governance.project import governance_dir

    gov = governance_dir(str(project))
    for record in RECORDS:
        chain.append(gov, dict(record))
    for stamp, intent, name, first, last in TRACE:
        entry = trace.record(str(project), name, [{"start_line": first, "end_line": last,
                                                   "content_hash": "sha256:0"}],
                             intent=intent or "", session=SESSION, tool="Edit",
                             tool_use_id="", ledger_hash="")
        entry["timestamp"] = stamp
        trace.append(str(project), entry)
    store = DecisionStore.for_project(str(project))
    try:
        for number, (category, confidence, outcome, agent, state, created) in enumerate(DECISIONS):
            found = store.record({"description": f"decision {number} about {category}",
                                  "category": category, "stakes": "medium",
                                  "confidence": confidence, "reasons": [], "tags": [],
                                  "pattern": "", "context": {}}, agent, {"state": state},
                                 now=epoch(created))
            if outcome:
                store.review(found["id"], outcome, now=epoch(created) + 3600)
    finally:
        store.close()
    return project
