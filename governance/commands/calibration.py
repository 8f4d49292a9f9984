"""``governance calibration``: how well stated confidence matched reviewed outcomes."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="only this agent's decisions (default: all agents)")
    parser.add_argument("--category", help="only this category")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--project", help="project folder (default: found from the current one)")


def _line(label: str, figures: dict[str, object]) -> str:
    if not figures["sample_size"]:
        return f"{label:14} no reviewed decisions"
    return (f"{label:14} n={figures['sample_size']:<5} accuracy={figures['accuracy']:<7} "
            f"brier={figures['brier']:<7} {figures['tendency']}")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.decisions.calibration import report_from_sums
    from governance.decisions.store import DecisionStore
    from governance.project import project_from_cli

    store = DecisionStore.for_project(project_from_cli(args.project))
    try:
        report = report_from_sums(store.calibration_sums(args.agent, args.category),
                                  args.category)
    finally:
        store.close()
    report["agent_id"] = args.agent
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(_line(args.category or "overall", report["overall"]))
    for category, figures in report["categories"].items():
        print(_line(category, figures))
    print(report["overall"]["suggestion"])
    return 0
