"""Human-readable views of ledger records: the ``log`` table, the ``explain`` story and the
``stats`` summary. Scripts use ``--json`` instead. Not on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], max_width: int = 60) -> str:
    """A plain-text table with a header rule; cells are clipped to ``max_width``."""
    cells = [[clip(str(c), max_width) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in cells]
    return "\n".join(out)


def _verdict(rec: dict[str, Any]) -> str:
    if rec.get("event") == "PreToolUse":
        return str(rec.get("action", ""))
    if "outcome" in rec:
        return str(rec["outcome"])
    if rec.get("event") == "StateChange":
        return f"-> {rec.get('to', '')}"
    return ""


def log_table(records: Sequence[dict[str, Any]]) -> str:
    rows = []
    for rec in records:
        ts = str(rec.get("ts", ""))
        rows.append([ts[:19].replace("T", " "), str(rec.get("session", ""))[:8],
                     str(rec.get("event", "")).replace("ToolUse", ""), rec.get("tool", "") or "",
                     rec.get("primitive", "") or "", rec.get("state", "") or "", _verdict(rec),
                     rec.get("tool_use_id", "") or "",
                     rec.get("reason", "") or rec.get("error", "") or ""])
    return table(["time (UTC)", "session", "event", "tool", "primitive", "state", "action",
                  "tool_use_id", "reason"], rows)


def _field(lines: list[str], label: str, value: Any) -> None:
    if value not in (None, "", [], {}):
        lines.append(f"  {label:<16} {value}")


def explain_text(found: dict[str, Any]) -> str:
    lines = [f"tool call {found['tool_use_id']}"]
    for rec in found["decisions"]:
        rule = rec.get("rule") or {}
        lines.append(f"\ndecision (PreToolUse, seq {rec.get('seq')}, {rec.get('ts')})")
        _field(lines, "tool", rec.get("tool"))
        _field(lines, "primitive", rec.get("primitive"))
        if rec.get("primitives") and rec.get("primitives") != [rec.get("primitive")]:
            _field(lines, "primitives", ", ".join(rec["primitives"]))
        _field(lines, "action", rec.get("action"))
        _field(lines, "answer", rec.get("decision"))
        _field(lines, "redirect to", rec.get("redirect_to"))
        if rule:
            _field(lines, "rule", f"{rule.get('key', '')} in {rule.get('file', '')}")
        layers = rec.get("layers")
        if isinstance(layers, dict):
            for name, title in (("org", "organisation"), ("project", "project")):
                cell = layers.get(name)
                if isinstance(cell, dict):
                    _field(lines, f"{title} layer", f"{cell.get('action')} by {cell.get('rule')} "
                           f"in {cell.get('file')}")
            _field(lines, "in force", "the organisation's layer (a project cannot loosen it)"
                   if layers.get("winner") == "org" else "the project's layers (at least as "
                   "strict as the organisation's)")
        _field(lines, "tool mapping", rec.get("map_rule"))
        _field(lines, "reason", rec.get("reason"))
        state = "/".join(str(rec.get(k)) for k in ("cycle", "phase", "work_item") if rec.get(k))
        _field(lines, "state", f"{rec.get('state', '')}" + (f" ({state})" if state else "")
               + (f", from {rec['state_source']}" if rec.get("state_source") else ""))
        for act in rec.get("acts") or []:
            _field(lines, "act", f"{act.get('primitive')}: {clip(act.get('segment', ''), 70)}"
                   + (f" ({act['reason']})" if act.get("reason") else ""))
        _field(lines, "session", rec.get("session"))
        _field(lines, "agent", rec.get("agent_type") or rec.get("agent_id"))
        _field(lines, "config hash", rec.get("config_hash"))
        _field(lines, "input sha256", rec.get("input_sha256"))
        _field(lines, "hook took", f"{rec.get('duration_ms')} ms")
    for rec in found["results"]:
        lines.append(f"\nresult ({rec.get('event')}, seq {rec.get('seq')}, {rec.get('ts')})")
        _field(lines, "outcome", rec.get("outcome"))
        _field(lines, "error", rec.get("error"))
        _field(lines, "response sha256", rec.get("response_sha256"))
        _field(lines, "tool took", f"{rec['tool_duration_ms']} ms"
               if "tool_duration_ms" in rec else None)
        _field(lines, "state", rec.get("state"))
    if not found["results"] and found["decisions"]:
        lines.append("\nno result recorded (the call was denied, is still running, or was "
                     "interrupted before PostToolUse)")
    return "\n".join(lines)


def stats_text(summary: dict[str, Any]) -> str:
    out = [f"{summary['records']} records, {summary['first'] or '-'} .. {summary['last'] or '-'}"]

    def counts(title: str, data: dict[str, int]) -> None:
        if data:
            out.extend(["", table([title, "count"], list(data.items()))])

    counts("event", summary["events"])
    counts("primitive", summary["primitives"])
    counts("action", summary["actions"])
    counts("state", summary["states"])
    counts("outcome", summary["outcomes"])
    counts("session (denials)", summary["denials_per_session"])
    if summary["hook_duration_ms"]:
        rows = [[event, v["count"], f"{v['p50']:.2f}", f"{v['p95']:.2f}", f"{v['p99']:.2f}"]
                for event, v in summary["hook_duration_ms"].items()]
        out.extend(["", table(["hook duration (ms)", "count", "p50", "p95", "p99"], rows)])
    return "\n".join(out)
