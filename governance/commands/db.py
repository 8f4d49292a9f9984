"""``governance db``: the decision store's schema. ``status`` says which engine holds the decisions
and at which schema version; ``migrate`` applies a PostgreSQL database's pending migrations (under
an advisory lock: two at once apply each migration once). A SQLite store migrates itself when it is
opened, so ``migrate`` has nothing to do there.

The database is ``--database``, else ``GOVERNANCE_DATABASE_URL``, else the project's SQLite file.
Exit 0; 3 when ``status`` finds migrations pending; 1 when the database cannot be reached.
"""

from __future__ import annotations

import argparse
from typing import Any

from governance.commands.options import project_option


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="db_command", metavar="ACTION")
    actions.required = True
    status = actions.add_parser("status", help="the engine, its schema version and what is "
                                               "pending (exit 3 when migrations are pending)")
    migrate = actions.add_parser("migrate", help="apply the pending migrations (PostgreSQL)")
    for each in (status, migrate):
        each.add_argument("--database", metavar="URL",
                          help="a PostgreSQL URL (default: $GOVERNANCE_DATABASE_URL; without "
                               "one, the project's SQLite file)")
    project_option(status, migrate, as_json=True)


def _sqlite(project: str) -> dict[str, Any]:
    from governance.decisions.store import db_path
    from governance.storage.sqlite import SCHEMA_VERSION, schema_version

    path = db_path(project)
    return {"engine": "sqlite", "path": path, "version": schema_version(path),
            "latest": SCHEMA_VERSION, "pending": []}


def run(args: argparse.Namespace) -> int:
    import json

    from governance.project import project_from_cli
    from governance.storage.database import database_url, require_driver

    url = database_url(args.database)
    if url is None:
        found = _sqlite(project_from_cli(args.project))
        if args.db_command == "migrate":
            found["message"] = (f"SQLite stores migrate themselves when opened (schema version "
                                f"{found['latest']}); nothing to do")
        if args.as_json:
            print(json.dumps(found, indent=2))
        elif args.db_command == "migrate":
            print(found["message"])
        else:
            have = found["version"]
            print(f"engine: sqlite\nstore: {found['path']}\nschema version: "
                  + (f"{have} (current)" if have == found["latest"] else
                     "none yet (made at first use)" if have is None else
                     f"{have} (version {found['latest']} is given at the next open)"))
        return 0
    require_driver()
    from governance.storage import migration

    if args.db_command == "migrate":
        done = migration.migrate(url)
        found = migration.status(url)
        if args.as_json:
            print(json.dumps({**found, "applied_now": done}, indent=2))
        elif done:
            print(f"Applied {', '.join(done)} to {found['url']}; schema version "
                  f"{found['version']}.")
        else:
            print(f"{found['url']} is up to date at schema version {found['version']}.")
        return 0
    found = migration.status(url)
    if args.as_json:
        print(json.dumps(found, indent=2))
    else:
        print(f"engine: postgresql\ndatabase: {found['url']}\nschema version: "
              f"{found['version']} (this claude-governance ships {found['latest']})")
        if found["pending"]:
            print(f"pending: {', '.join(found['pending'])} "
                  f"(run `governance db migrate --database {found['url']}`)")
        for name in found["changed"]:
            print(f"WARNING: {name} changed since it was applied (migrations are forward only: "
                  f"add a new one instead)")
    return 3 if found["pending"] else 0
