"""``governance knowledge explain|stats|reindex``: what knowledge a call would get and why, how
knowledge has been used (from the ledger), and rebuilding the index after a change."""

from __future__ import annotations

import argparse
import json
from typing import Any

from governance.commands.options import project_option
from governance.errors import PayloadError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="knowledge_command", metavar="ACTION")
    sub.required = True
    explain = sub.add_parser("explain", help="what would be shown for a call, and why")
    explain.add_argument("call", help="TOOL JSON, e.g. 'Bash {\"command\": \"docker compose up\"}'")
    explain.add_argument("--state", help="decide in this state instead of the current one")
    explain.add_argument("--session", help="also say what this session has acknowledged")
    stats = sub.add_parser("stats", help="interceptions, injections, acknowledgments, lookup time")
    stats.add_argument("--since", help="2026-05-01, or an age such as 7d")
    reindex = sub.add_parser("reindex", help="rebuild the knowledge index now")
    project_option(explain, stats, reindex, as_json=True)


def run(args: argparse.Namespace) -> int:
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if args.knowledge_command == "reindex":
        from governance.knowledge.indexer import rebuild

        _index, summary = rebuild(project)
        if args.as_json:
            print(json.dumps(summary, indent=2))
        else:
            print(f"Knowledge index: {summary['sops']} SOPs, {summary['memories']} memories, "
                  f"{summary['keys']} keys, {summary['bytes']} bytes in {summary['seconds']:.2f} s")
            for problem in summary["problems"]:
                print(f"error: {problem}")
            if summary.get("not_stored"):
                print(f"warning: the index could not be stored: {summary['not_stored']}")
        return 1 if summary["problems"] else 0
    if args.knowledge_command == "stats":
        result = stats(project, args.since)
        if args.as_json:
            print(json.dumps(result, indent=2))
        else:
            _print_stats(result)
        return 0
    return _explain(args, project)


def _parse_call(text: str) -> tuple[str, dict[str, Any]]:
    tool, _, rest = text.strip().partition(" ")
    try:
        tool_input = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        raise PayloadError(f"the call's input is not JSON ({exc})",
                           fix="give TOOL then a JSON object: 'Bash {\"command\": \"ls\"}'") \
            from None
    if not tool or not isinstance(tool_input, dict):
        raise PayloadError("give a tool name and a JSON object",
                           fix="e.g. governance knowledge explain 'Bash {\"command\": \"ls\"}'")
    return tool, tool_input


def _explain(args: argparse.Namespace, project: str) -> int:
    from governance.knowledge import lookup
    from governance.knowledge.acknowledgment import Session
    from governance.knowledge.enforcement import strict_for
    from governance.policy.layer import GovernanceLayer
    from governance.policy.state import StateView

    tool, tool_input = _parse_call(args.call)
    layer = GovernanceLayer(project)
    if args.state:
        if args.state not in layer.matrix["states"]:
            raise PayloadError(f"unknown state {args.state!r}",
                               fix=f"use one of {', '.join(layer.matrix['states'])}")
        layer._state = StateView(args.state, source="given")
    decision = layer.decide(tool, tool_input, None)
    from governance.knowledge.indexer import current, rebuild_index

    index, cache = current(project)
    try:
        settings = index.header["settings"]
        primitives = {a["primitive"] for a in decision.acts} | {decision.primitive}
        args_ = (project, tool, tool_input, None, decision.acts, primitives, decision.state.state)
        found = lookup.find(index, *args_, explain=True)
        if found.stale:    # a matched SOP changed since the index was built
            index.close()
            index, cache = rebuild_index(project), "built"
            found = lookup.find(index, *args_, explain=True)
    finally:
        index.close()
    skipped = list(index.header["problems"])     # SOPs that do not parse
    ctx = found.context
    acknowledged: set[str] = set()
    if args.session:
        with Session(project, args.session) as state:
            acknowledged = {k for k in state.acks if state.acknowledged(k)}
    items = [("sop:" + s["name"], s) for s in found.sops] + \
        [("mem:" + m["id"], m) for m in found.memories]
    if decision.denies:
        would = "none: the matrix denies this call, knowledge is not consulted"
    elif settings["level"] == "disabled":
        would = "none: knowledge is disabled"
    elif not items:
        would = "none: no SOP or memory applies"
    elif any(strict_for(settings, i[1]["categories"]) and i[0] not in acknowledged for i in items):
        would = "block once (strict): the retry of the same call acknowledges it"
    else:
        would = "inject into the model's context (advisory)"
    result = {
        "tool": tool, "state": decision.state.state, "matrix": decision.action,
        "level": settings["level"], "risk": found.risk, "threshold": found.threshold,
        "cache": cache, "words": sorted(ctx.words), "commands": ctx.commands,
        "hosts": sorted(ctx.hosts), "ports": sorted(ctx.ports),
        "names": {k: sorted(v) for k, v in ctx.names.items()}, "detected_by": found.why,
        "sops": [{"name": s["name"], "path": s["path"], "why": s["why"],
                  "sections": sorted(s["sections"]), "categories": s["categories"]}
                 for s in found.sops],
        "memories": [{"id": m["id"], "confidence": m["confidence"], "why": m["why"],
                      "categories": m["categories"], "text": m["text"]}
                     for m in found.memories],
        "would": would, "acknowledged": sorted(acknowledged), "skipped_sops": skipped}
    if args.as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"Call:      {tool} {json.dumps(tool_input)[:200]}")
    print(f"State:     {result['state']}  matrix: {decision.action}  knowledge level: "
          f"{settings['level']}")
    print(f"Risk:      {found.risk} (memories need confidence >= {found.threshold:g})")
    print(f"Words:     {' '.join(ctx.commands) or '-'}"
          + (f"   hosts: {', '.join(sorted(ctx.hosts))}" if ctx.hosts else "")
          + (f"   ports: {', '.join(sorted(ctx.ports))}" if ctx.ports else ""))
    print("Detected:")
    for name, why in sorted(found.why.items()):
        print(f"  {name:<28} by {why}")
    print("SOPs:" if found.sops else "SOPs:      none apply")
    for s in found.sops:
        print(f"  {s['name']} ({s['path']}): {', '.join(sorted(s['sections']))}")
        print(f"      applies because of: {'; '.join(s['why'])}")
    print("Memories:" if found.memories else "Memories:  none apply")
    for m in found.memories:
        print(f"  {m['id']} confidence {m['confidence']:.2f} ({', '.join(m['categories'])}) "
              f"shares: {', '.join(m['why'])}")
        print(f"      {m['text'][:200]}")
    print(f"Would:     {would}")
    if skipped:
        many = len(skipped) > 1
        print(f"Skipped:   {len(skipped)} SOP{'s' if many else ''} that "
              f"{'do' if many else 'does'} not parse (never shown until fixed; "
              "governance validate checks again):")
        for problem in skipped:
            print(f"  {problem}")
    return 0


def stats(project: str, since: str | None = None) -> dict[str, Any]:
    """Knowledge figures from the ledger's records (counted by ``governance.report``, as the
    report counts them)."""
    from governance.ledger.reader import parse_time
    from governance.project import governance_dir
    from governance.report.figures import knowledge_stats

    try:
        start = parse_time(since) if since else ""
    except ValueError as exc:
        raise PayloadError(f"--since: {exc}", fix="give a date such as 2026-05-01 or an age "
                                                  "such as 7d") from None
    return knowledge_stats(governance_dir(project), start)


def _print_stats(result: dict[str, Any]) -> None:
    print(f"Calls consulted:     {result['consulted']}  (with knowledge: "
          f"{result['with_knowledge']})")
    print(f"Injected (advisory): {result['injected']}   repeats not shown again: "
          f"{result['repeat']}")
    rate = result["acknowledgment_rate"]
    print(f"Blocked (strict):    {result['blocked']}   acknowledged: {result['acknowledged']}"
          f"   rate: {'-' if rate is None else f'{rate:.0%}'}   ignored: {result['ignored']}")
    print(f"Bypass:              {result['bypassed']} calls shown under a bypass, "
          f"{result['bypass_switches']} switches")
    if result["lookup_ms"]:
        t = result["lookup_ms"]
        print(f"Lookup time:         p50 {t['p50']:.2f} ms  p95 {t['p95']:.2f} ms  "
              f"p99 {t['p99']:.2f} ms")
    hit = result["cache_hit_rate"]
    print(f"Index:               {result['cache']['hit']} hits, {result['cache']['built']} "
          f"rebuilt, {result['cache']['stale']} stale   hit rate "
          f"{'-' if hit is None else f'{hit:.0%}'}")
    if result["errors"]:
        print(f"Not consulted (errors): {result['errors']}")
    for name, count in list(result["sops"].items())[:10]:
        print(f"  SOP {name}: {count} calls")
