"""``governance memory add|list|show|rm|import|export``: the project's memories (knowledge shown
before the tool calls they apply to; see docs/knowledge.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

CATEGORIES = ("process", "technical", "security", "gotchas", "credentials")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="store a memory")
    add.add_argument("text", help="what the agent should know, in a sentence or two")
    add.add_argument("--category", action="append", required=True, choices=CATEGORIES,
                     help="category (repeatable)")
    add.add_argument("--confidence", type=float, default=0.8,
                     help="how sure the team is, 0..1 (default 0.8)")
    add.add_argument("--source", default="user", help="where it comes from (default: user)")
    listing = sub.add_parser("list", help="memories, newest first")
    listing.add_argument("--category", choices=CATEGORIES)
    listing.add_argument("--search", help="only memories whose text contains this")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--decisions", action="store_true",
                         help="also the memories made of reviewed decisions' patterns")
    show = sub.add_parser("show", help="one memory")
    show.add_argument("memory_id", metavar="ID")
    remove = sub.add_parser("rm", help="remove a memory")
    remove.add_argument("memory_id", metavar="ID")
    imported = sub.add_parser("import", help="add memories from a JSONL file: our export, or the "
                                             "MCP memory server's memory.jsonl")
    imported.add_argument("file")
    imported.add_argument("--category", action="append", choices=CATEGORIES,
                          help="category for lines that name none (default: technical)")
    imported.add_argument("--confidence", type=float,
                          help="confidence for lines that give none (default 0.7)")
    export = sub.add_parser("export", help="every memory as JSONL")
    export.add_argument("file", nargs="?", help="write here (default: standard output)")
    for command in (add, listing, show, remove, imported, export):
        command.add_argument("--project", help="project folder (default: found from the "
                                               "current one)")
    for command in (add, listing, show, imported):
        command.add_argument("--json", dest="as_json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.knowledge.memory import MemoryInputError, MemoryStore, check
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    action = args.memory_command
    if action in ("list", "show"):
        return _read(args, project)
    if action == "export":
        from governance.knowledge.memory import export_lines

        if not MemoryStore.exists(project):
            lines: list[str] = []
        else:
            with MemoryStore.for_project(project) as store:
                lines = list(export_lines(store))
        text = "".join(line + "\n" for line in lines)
        if args.file:
            try:
                with open(args.file, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise MemoryInputError(f"cannot write the export ({exc.strerror})",
                                       file=args.file, fix="give a path in a writable folder") \
                    from None
            print(f"Exported {len(lines)} memories to {args.file}")
        else:
            sys.stdout.write(text)
        return 0
    result: dict[str, Any]
    if action == "add":
        text, categories, confidence = check(args.text, args.category, args.confidence)
        with MemoryStore.for_project(project) as store:
            memory_id = store.add(text, categories, confidence, args.source)
        result = {"added": [memory_id] if memory_id else [], "skipped": 0 if memory_id else 1}
        said = f"Added {memory_id}" if memory_id else "The same text is already a memory"
    elif action == "rm":
        if not MemoryStore.exists(project):
            raise MemoryInputError(f"no memory {args.memory_id} (the project has no memories)",
                                   fix="see `governance memory list`")
        with MemoryStore.for_project(project) as store:
            removed = store.remove(args.memory_id)
        if not removed:
            hint = " (memories made of reviewed decisions change with their reviews)" \
                if args.memory_id.startswith("dec-") else ""
            raise MemoryInputError(f"no memory {args.memory_id}{hint}",
                                   fix="see `governance memory list`")
        result = {"removed": args.memory_id}
        said = f"Removed {args.memory_id}"
    else:
        from governance.knowledge.memory import read_import

        if args.confidence is not None:
            check("x", ["technical"], args.confidence)
        items = read_import(args.file, args.category, args.confidence)
        with MemoryStore.for_project(project) as store:
            added, skipped = store.add_many(items)
        result = {"added": added, "skipped": skipped}
        said = f"Imported {len(added)} memories from {args.file} ({skipped} already there)"
    summary = _after_change(project, action, result)
    if getattr(args, "as_json", False):
        print(json.dumps({**result, "index": summary}, indent=2))
    else:
        print(said)
        print(f"Knowledge index: {summary['sops']} SOPs, {summary['memories']} memories "
              f"({summary['seconds']:.2f} s)")
    return 0


def _after_change(project: str, action: str, result: dict[str, Any]) -> dict[str, Any]:
    """Bring the index up to date now, by a delta when it can (the next call should not pay for
    it), and record the change."""
    from governance.knowledge.increment import refresh
    from governance.ledger import chain
    from governance.project import governance_dir

    _index, summary = refresh(project)
    ids = result.get("added") or ([result["removed"]] if "removed" in result else [])
    chain.append(governance_dir(project), {
        "event": "KnowledgeChange", "change": f"memory-{action}", "memories": ids[:100],
        "count": len(ids), "decision": "none"})
    return summary


def _read(args: argparse.Namespace, project: str) -> int:
    import json

    from governance.knowledge.memory import Memory, MemoryInputError, MemoryStore, decision_memories

    memories: list[Memory] = []
    if MemoryStore.exists(project):
        with MemoryStore.for_project(project) as store:
            if args.memory_command == "show":
                found = store.get(args.memory_id)
                memories = [found] if found else []
            else:
                memories = store.list(args.category, args.search, args.limit)
    if args.memory_command == "show" and not memories:
        memories = [m for m in decision_memories(project) if m.id == args.memory_id]
        if not memories:
            raise MemoryInputError(f"no memory {args.memory_id}",
                                   fix="see `governance memory list --decisions`")
    if args.memory_command == "list" and args.decisions:
        memories += [m for m in decision_memories(project)
                     if (not args.category or args.category in m.categories)
                     and (not args.search or args.search.lower() in m.text.lower())]
    if args.as_json:
        print(json.dumps([m.as_json() for m in memories] if args.memory_command == "list"
                         else memories[0].as_json(), indent=2, ensure_ascii=False))
        return 0
    if not memories:
        print("No memories. Add one with: governance memory add TEXT --category CATEGORY")
    for m in memories:
        item = m.as_json()
        print(f"{m.id}  {item['created_at']}  {','.join(m.categories)}  confidence "
              f"{m.confidence:.2f}  source {m.source}")
        print(f"    {m.text}")
    return 0
