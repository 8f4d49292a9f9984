"""``governance serve``: the resident server (CSTP for agents, hooks over HTTP), its status, its
stop, its token and its OpenAPI description."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from governance.commands.options import project_option

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    project_option(parser, as_json=True)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", type=int, default=None,
                       help="TCP port on the host (default 8765; 0 picks a free one)")
    where.add_argument("--socket", metavar="PATH", help="listen on a unix socket instead")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; anything but loopback also "
                             "needs --allow-remote)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow binding a non-loopback address (other machines could then "
                             "try the token)")
    parser.add_argument("--rate", type=float, default=20.0,
                        help="CSTP calls per second per agent (default 20; 0: no limit)")
    parser.add_argument("--burst", type=int, default=60,
                        help="CSTP calls an agent may make at once before the rate applies "
                             "(default 60)")
    parser.add_argument("--detach", action="store_true",
                        help="start in the background and return once it answers")
    parser.add_argument("--database", metavar="URL",
                        help="keep decisions in this PostgreSQL database (default: "
                             "$GOVERNANCE_DATABASE_URL; without one, the project's SQLite file)")
    parser.add_argument("--migrate", action="store_true",
                        help="apply the database's pending schema migrations first (without it "
                             "the server refuses a database with migrations pending)")
    parser.add_argument("--ship-ledger", action="store_true",
                        help="with a team database: record the project's ledger in the "
                             "database's central copy as it grows (as `governance ledger ship` "
                             "does, every half second)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="is the server up, and where")
    what.add_argument("--stop", action="store_true", help="stop the server (SIGTERM)")
    what.add_argument("--token", action="store_true",
                      help="print the bearer token (made if there is none)")
    what.add_argument("--openapi", action="store_true",
                      help="print the OpenAPI description of the HTTP surface")


def _listen_args(args: argparse.Namespace) -> list[str]:
    words = ["--host", args.host, "--rate", str(args.rate), "--burst", str(args.burst)]
    if args.socket:
        words += ["--socket", os.path.abspath(args.socket)]
    elif args.port is not None:
        words += ["--port", str(args.port)]
    if args.allow_remote:
        words.append("--allow-remote")
    if args.ship_ledger:
        words.append("--ship-ledger")
    return words


def _detach(project: str, args: argparse.Namespace) -> int:
    from governance.project import ensure_dir, governance_dir
    from governance.server import daemon

    if daemon.status(project)["running"]:
        print(f"Already running: {daemon.read_record(project) or {}}")
        return 0
    gov = governance_dir(project)
    ensure_dir(gov)
    log = os.path.join(gov, "server.log")
    from governance.install.settings import module_command

    with open(log, "ab") as out:   # isolated: never the working folder's files (module_command)
        child = subprocess.Popen(
            [*module_command("governance.commands", sys.executable), "serve", "--project",
             project, *_listen_args(args)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if child.poll() is not None:
            print(f"governance: error: the server stopped at start (exit {child.returncode}); "
                  f"see {log}", file=sys.stderr)
            return 1
        found = daemon.status(project)
        if found["running"] and found.get("pid") == child.pid:
            print(f"Server up at {found['url']} (pid {child.pid}); log: {log}")
            return 0
        time.sleep(0.05)
    print(f"governance: error: the server did not answer within 15 s; see {log}",
          file=sys.stderr)
    return 1


def _database(args: argparse.Namespace) -> None:
    """With a database URL: migrate it (``--migrate``) or refuse it while migrations are pending,
    then hand it to the server's processes (``GOVERNANCE_DATABASE_URL``, never their command
    line, which other users can read)."""
    from governance.errors import StorageError
    from governance.storage.database import ENV, database_url, masked, require_driver

    url = database_url(args.database)
    if url is None:
        if args.ship_ledger:
            raise StorageError("--ship-ledger records the ledger in a team database, and none "
                               "was given", fix=f"add --database postgresql://... (or set {ENV}), "
                                                "or ship to a server with `governance ledger "
                                                "ship --server URL`")
        return
    require_driver()
    from governance.storage import migration

    if args.migrate:
        done = migration.migrate(url)
        if done:
            print(f"Applied {', '.join(done)} to {masked(url)}.", flush=True)
    found = migration.status(url)
    if found["pending"]:
        raise StorageError(f"the decision database {found['url']} has migrations pending: "
                           f"{', '.join(found['pending'])}",
                           fix=f"run `governance db migrate --database {found['url']}`, or "
                               f"start the server with --migrate")
    os.environ[ENV] = url


def run(args: argparse.Namespace) -> int:
    from governance.errors import GovernanceError
    from governance.project import project_from_cli
    from governance.server import daemon

    project = project_from_cli(args.project)
    if args.openapi:
        from governance.server.openapi import document

        print(json.dumps(document(), indent=2, sort_keys=True))
        return 0
    if args.token:
        from governance.server import credential

        print(credential.load_or_create(project))
        return 0
    if args.status:
        found = daemon.status(project)
        if args.as_json:
            print(json.dumps(found, indent=2))
        elif found["running"]:
            print(f"running at {found['url']} (pid {found['pid']}, up {found['uptime_s']} s)")
        else:
            print(f"not running: {found['why']}")
        return 0 if found["running"] else 3
    if args.stop:
        print(daemon.stop(project))
        return 0
    if args.host not in LOOPBACK and not args.socket:
        if not args.allow_remote:
            raise GovernanceError(f"--host {args.host} is not a loopback address",
                                  fix="bind 127.0.0.1 (the default), or add --allow-remote if "
                                      "other machines must reach the server")
        print(f"WARNING: listening on {args.host}: other machines can reach this server; only "
              f"the bearer token keeps them out.", file=sys.stderr)
    _database(args)
    if args.detach:
        return _detach(project, args)
    listen = daemon.Listen(host=args.host, port=daemon.DEFAULT_PORT if args.port is None
                           else args.port, socket_path=os.path.abspath(args.socket)
                           if args.socket else None)
    return daemon.serve(project, listen, rate=args.rate, burst=args.burst,
                        ship_ledger=args.ship_ledger,
                        announce=lambda text: print(text, flush=True))
