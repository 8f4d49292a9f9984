"""``governance token``: per-agent credentials of the resident server. ``add`` mints a token for
one agent with a role (``agent``, ``reviewer``, ``admin``) and prints it once, as its last line;
``list`` shows agent, role, scope, created, expires and revoked (never a token or its hash);
``revoke`` ends every live token of an agent.

``--project P`` (a folder or a project id as storage computes it) scopes a new token to P; without
it the token is team-wide. The tokens live in the team database (``--database``, else
``GOVERNANCE_DATABASE_URL``), else in the project's ``.claude/governance/tokens.json``.
Exit 0; 1 when nothing matched ``revoke`` or the store cannot be read.
"""

from __future__ import annotations

import argparse
import os
import time

from governance.server.identity import DEFAULT_EXPIRY, ROLES, Token, Tokens


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="token_command", metavar="ACTION")
    actions.required = True
    add = actions.add_parser("add", help="mint a token; it is printed once, as the last line")
    add.add_argument("--agent", required=True, help="the agent's name (what audit, rate limits "
                                                    "and calibration key on)")
    add.add_argument("--role", required=True, choices=list(ROLES),
                     help="agent: preAction, checkGuardrails, query, record; reviewer: also "
                          "reviewDecision; admin: everything")
    add.add_argument("--expires", default=DEFAULT_EXPIRY,
                     help=f"30d, 12h, 45m or never (default: {DEFAULT_EXPIRY})")
    revoke = actions.add_parser("revoke", help="revoke every live token of an agent")
    revoke.add_argument("--agent", required=True)
    listed = actions.add_parser("list", help="the tokens: agent, role, scope, created, expires, "
                                             "revoked (never the token)")
    listed.add_argument("--json", dest="as_json", action="store_true", help="print JSON")
    for each in (add, revoke, listed):
        each.add_argument("--project", metavar="P",
                          help="a project folder or id: the scope of a new token (default: "
                               "team-wide) and, without a database, whose tokens.json")
        each.add_argument("--database", metavar="URL",
                          help="a PostgreSQL URL (default: $GOVERNANCE_DATABASE_URL; without "
                               "one, the project's tokens.json)")


def _where(project: str | None, database: str | None) -> tuple[Tokens, str | None]:
    """The token store and the scope ``--project`` names (None: team-wide)."""
    from governance.project import project_from_cli
    from governance.server.identity import tokens_for
    from governance.storage.database import PROJECT_ID, database_url, project_id

    url = database_url(database)
    scope: str | None = None
    folder = project_from_cli(None)
    if project is not None:
        if os.path.isdir(project):
            folder = project_from_cli(project)
            scope = project_id(folder)
        elif PROJECT_ID.fullmatch(project):
            scope = project
        else:
            from governance.server.identity import IdentityError

            raise IdentityError(f"--project {project!r} is neither a folder nor a project id",
                                fix="give the project's folder, or its id as "
                                    "`governance db status` shows it")
    if url is not None:
        from governance.storage.database import require_driver

        require_driver()
    return tokens_for(folder, url), scope


def _when(moment: float | None) -> str:
    return "never" if moment is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(moment))


def _public(token: Token) -> dict[str, object]:
    return {"agent": token.agent, "role": token.role, "scope": token.project_id or "team",
            "created": _when(token.created_at), "expires": _when(token.expires_at),
            "revoked": None if token.revoked_at is None else _when(token.revoked_at)}


def run(args: argparse.Namespace) -> int:
    from governance.server.identity import mint

    tokens, scope = _where(args.project, args.database)
    if args.token_command == "add":
        secret, row = mint(tokens, args.agent, args.role, scope, args.expires)
        print(f"Minted a {row.role} token for {row.agent!r} ({scope or 'team-wide'}), expires "
              f"{_when(row.expires_at)}. It is shown once, below; only its hash is kept.")
        print(secret)
        return 0
    if args.token_command == "revoke":
        count = tokens.revoke(args.agent, time.time())
        print(f"Revoked {count} token(s) of {args.agent!r}." if count else
              f"No live token of {args.agent!r}; see `governance token list`.")
        return 0 if count else 1
    rows = [_public(t) for t in tokens.all()]
    if args.as_json:
        import json

        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for each in rows:
            print(f"{each['agent']}\t{each['role']}\t{each['scope']}\tcreated "
                  f"{each['created']}\texpires {each['expires']}"
                  + (f"\trevoked {each['revoked']}" if each["revoked"] else ""))
        if not rows:
            print("No tokens; mint one with `governance token add --agent NAME --role agent`.")
    return 0
