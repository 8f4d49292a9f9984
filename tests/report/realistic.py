"""A week of a team's work, for the report's screenshot (docs/report.png) and the browser test:
about 700 ledger records in three sessions and a sub-agent, written by the real writer
(``ledger.chain.append``), the trace of the changes made under two intents, and 60 decisions in
the real decision store, some reviewed. Deterministic (a seeded generator).

Run ``python -m tests.report.realistic DIR`` to write the project into DIR.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from tests.report.fixture import epoch

START = "2026-05-04"
DAYS = 7
MATRIX = "/home/dev/shop-api/.claude/governance/activity_matrix.yaml"
SESSIONS = ("5e55a0d1-de70-4c1a-9a11-0000000000a1", "5e55a0d1-de70-4c1a-9a11-0000000000b2",
            "5e55a0d1-de70-4c1a-9a11-0000000000c3")

# (weight, tool, primitive, command or file, action in DO, reason)
CALLS: list[tuple[int, str, str, str, str, str]] = [
    (30, "Bash", "shell-execute", "pytest -q tests/billing", "allow", ""),
    (14, "Read", "file-read", "src/billing/invoice.py", "allow", ""),
    (12, "Edit", "file-write", "src/billing/invoice.py", "allow", ""),
    (8, "Bash", "shell-read", "git diff --stat", "allow", ""),
    (5, "WebFetch", "network", "https://docs.stripe.com/api", "warn",
     "Network access is logged in DO; prefer the vendored docs."),
    (4, "Bash", "vcs-push", "git push origin main", "block",
     "Pushing publishes work: push only from CHECK or DONE."),
    (2, "Bash", "vcs-push", "git push --force origin main", "block",
     "Pushing publishes work: push only from CHECK or DONE."),
    (3, "Bash", "package-install", "pip install requests==2.32.3", "ask",
     "Installing a package changes the environment: the user must confirm it."),
    (3, "Bash", "destructive", "rm -rf migrations/old", "ask",
     "This command destroys data or history: the user must confirm it."),
    (2, "Bash", "secret-read", "cat .env.production", "block",
     "Reading a secret is not allowed: .env.production holds credentials."),
    (2, "Bash", "shell-execute", "docker compose up -d", "allow", ""),
    (1, "Bash", "shell-execute", "kubectl rollout restart deploy/billing", "allow", ""),
]
STATE_RULES = {"EXPLORE": {"file-write": ("block", "Writing files is not allowed in EXPLORE: "
                                                   "design first.")},
               "CHECK": {"vcs-push": ("allow", "")}}
SOPS = {"docker compose up -d": "docker-deploy", "kubectl rollout restart deploy/billing":
        "k8s-rollout"}


def _state(day: int, hour: int) -> str:
    if hour < 10:
        return "EXPLORE" if day % 3 == 0 else "DO"
    return "CHECK" if hour >= 17 else "DO"


def ledger_records(rng: random.Random) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    weights = [c[0] for c in CALLS]
    call = 0
    acknowledged: set[str] = set()
    for day in range(DAYS):
        date = f"2026-05-{4 + day:02d}"
        for hour in range(9, 19):
            if day in (5, 6) and hour > 12:          # a quiet weekend
                continue
            state = _state(day, hour)
            for minute in sorted(rng.sample(range(60), rng.randint(3, 8))):
                _w, tool, primitive, target, action, reason = rng.choices(CALLS, weights)[0]
                action, reason = STATE_RULES.get(state, {}).get(primitive, (action, reason))
                call += 1
                session = SESSIONS[(day + hour // 4) % len(SESSIONS)]
                ts = f"{date}T{hour:02d}:{minute:02d}:{rng.randint(0, 59):02d}.{call % 1000:03d}Z"
                record: dict[str, Any] = {
                    "ts": ts, "event": "PreToolUse", "session": session,
                    "tool_use_id": f"toolu_01{call:020d}", "tool": tool, "primitive": primitive,
                    "primitives": [primitive], "action": action, "reason": reason,
                    "rule": {"file": MATRIX, "key": f"rules.{primitive}.{state}"},
                    "state": state, "cycle": "implementation-cycle", "phase": state,
                    "work_item": "WORK-64", "decision": {"block": "deny", "ask": "ask"}.get(
                        action, "none"), "duration_ms": round(rng.lognormvariate(1.2, 0.5), 3)}
                if tool == "Bash":
                    record["acts"] = [{"action": action, "primitive": primitive,
                                       "reason": reason, "segment": target}]
                if tool == "WebFetch" and rng.random() < 0.5:
                    record.update(agent_id="a91c", agent_type="Explore")
                if tool in ("Edit", "Write") and state == "DO":
                    intent = "WORK-64" if day < 4 else "WORK-71"
                    if rng.random() < 0.08:
                        record.update(action="block", decision="deny", rule={
                            "file": MATRIX, "key": "settings.require_intent"}, reason=(
                                f"/home/dev/shop-api/src/payments/refund.py is outside the scope "
                                f"of intent {intent} (src/billing/). Stay inside it, or ask the "
                                "user to widen the scope."))
                    record["intent"] = intent
                sop = SOPS.get(target)
                if sop and action == "allow":
                    records.extend(_knowledge(rng, record, sop, acknowledged,
                                              bypassed=day == 5 and hour < 12))
                if day == 2 and hour == 15 and minute < 10:
                    record["unaccepted"] = ["matrix"]
                records.append(record)
                if record["event"] != "PreToolUse" or record["action"] == "block":
                    continue
                if record["action"] == "ask" and rng.random() < 0.35:
                    continue                           # the user said no: no result
                failed = rng.random() < 0.06
                records.append({
                    "ts": ts[:17] + f"{min(59, int(ts[17:19]) + 1):02d}.500Z",
                    "event": "PostToolUseFailure" if failed else "PostToolUse",
                    "session": session, "tool_use_id": record["tool_use_id"], "tool": tool,
                    "primitive": primitive, "state": state,
                    "outcome": "failure" if failed else "success",
                    "duration_ms": round(rng.lognormvariate(0.6, 0.4), 3),
                    **({"agent_id": record["agent_id"], "agent_type": record["agent_type"]}
                       if "agent_id" in record else {})})
        if day == 5:
            records.append({"ts": f"{date}T08:55:00.000Z", "event": "KnowledgeBypass",
                            "bypass": "on", "minutes": 180, "reason": "registry outage INC-2291",
                            "by": "maria", "decision": "none"})
            records.append({"ts": f"{date}T11:58:00.000Z", "event": "KnowledgeBypass",
                            "bypass": "off", "was_on": True, "decision": "none"})
    records.sort(key=lambda r: r["ts"])
    return records


def _knowledge(rng: random.Random, record: dict[str, Any], sop: str, acknowledged: set[str],
               bypassed: bool) -> list[dict[str, Any]]:
    """What strict knowledge does to ``record`` (a call a SOP applies to): held the first time in
    a session, then acknowledged by the retry (or left, and later counted as ignored), shown
    without holding under the bypass; records to add before ``record`` is appended."""
    key = f"{record['session']}:{sop}"
    item = f"sop:{sop}"
    base = {"cache": "hit", "level": "strict", "lookup_ms": round(rng.uniform(0.2, 2), 3),
            "risk": "elevated", "sops": [{"name": sop, "sections": ["gotchas", "preflight"],
                                          "why": ["the command word"]}]}
    if bypassed:
        record["knowledge"] = {**base, "outcome": "bypassed", "items": [item],
                               "bypass": {"reason": "registry outage INC-2291", "until": 0}}
        return []
    if key in acknowledged:
        record["knowledge"] = {**base, "outcome": "repeat"}
        return []
    held = {**record, "tool_use_id": record["tool_use_id"] + "h", "decision": "deny",
            "knowledge": {**base, "outcome": "blocked", "items": [item]}}
    if rng.random() < 0.25:           # never retried: the block is counted as ignored
        record.clear()
        record.update(ts=held["ts"][:14] + "59:59.999Z", event="KnowledgeIgnored",
                      session=held["session"], tool=held["tool"], items=[item],
                      decision="none")
        return [held]
    acknowledged.add(key)
    record["knowledge"] = {**base, "outcome": "acknowledged", "acknowledged": [item]}
    return [held]


def decisions(rng: random.Random) -> list[tuple[str, float, str | None, str, str]]:
    """(category, confidence, outcome, agent, created): a planner a little overconfident."""
    found = []
    for number in range(60):
        category = ("deploy", "testing", "architecture", "dependencies")[number % 4]
        confidence = round(rng.uniform(0.35, 0.98), 2)
        truth = confidence - (0.3 if category == "deploy" else 0.02)
        outcome: str | None = ("success" if rng.random() < truth else
                               rng.choice(("failure", "partial")))
        if number >= 48:
            outcome = None
        created = f"2026-05-{4 + number % DAYS:02d}T{9 + number % 9:02d}:{number % 60:02d}:00"
        found.append((category, confidence, outcome, "planner" if number % 3 else "reviewer",
                      created))
    return found


def write(project: Path) -> Path:
    from governance.decisions.store import DecisionStore
    from governance.intent import trace
    from governance.ledger import chain
    from governance.project import governance_dir

    rng = random.Random(20260504)
    gov = governance_dir(str(project))
    for record in ledger_records(rng):
        chain.append(gov, record)
    for number in range(80):
        intent = ("WORK-64", "WORK-71", None)[0 if number < 44 else 1 if number < 72 else 2]
        first = rng.randint(1, 300)
        entry = trace.record(str(project), f"src/billing/module_{number % 9}.py", [
            {"start_line": first, "end_line": first + rng.randint(0, 40),
             "content_hash": "sha256:0"}], intent=intent or "", session=SESSIONS[0],
            tool="Edit", tool_use_id="", ledger_hash="")
        entry["timestamp"] = f"2026-05-{4 + number % DAYS:02d}T{10 + number % 8:02d}:00:00Z"
        trace.append(str(project), entry)
    store = DecisionStore.for_project(str(project))
    try:
        for number, (category, confidence, outcome, agent, created) in enumerate(decisions(rng)):
            found = store.record({
                "description": f"{category}: choice {number} for the billing service",
                "category": category, "stakes": ("low", "medium", "high")[number % 3],
                "confidence": confidence, "reasons": [], "tags": [], "pattern": "",
                "context": {}}, agent, {"state": "DO"}, now=epoch(created))
            if outcome:
                store.review(found["id"], outcome, now=epoch(created) + 86400)
    finally:
        store.close()
    return project


if __name__ == "__main__":
    target = Path(sys.argv[1]).resolve()
    (target / ".claude").mkdir(parents=True, exist_ok=True)
    print(write(target))
