"""``governance org pull|keygen|sign|publish|status``: the organisation layer, distributed as signed bundles.

``pull URL`` installs the bundle the team's server serves (root: it writes beside Claude Code's
managed settings); ``keygen`` and ``sign`` are for the admin or the server that issues bundles;
``publish BUNDLE --server URL`` puts a signed bundle on the team's server (an admin token), which
serves it at ``/org/bundle``; ``status`` shows what is installed.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

ENDPOINT = "/org/bundle"
NOTHING = "nothing was published"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    pull = sub.add_parser("pull", help="fetch the organisation's signed bundle, verify it against "
                                       "the installed public key and install it (needs root)")
    pull.add_argument("url", metavar="URL", help="the bundle's http(s) URL, or file:///PATH for "
                                                 "an offline copy")
    keygen = sub.add_parser("keygen", help="make the organisation's Ed25519 key pair (for the "
                                           "admin or the team server)")
    keygen.add_argument("--private", required=True, metavar="OUT",
                        help="where to write the private key (PEM, mode 0600; keep it secret)")
    keygen.add_argument("--public", required=True, metavar="OUT",
                        help="where to write the public key (PEM), which each machine installs "
                             "with `governance install --managed --org-key FILE`")
    sign = sub.add_parser("sign", help="bundle and sign the organisation files found in DIR")
    sign.add_argument("dir", metavar="DIR", help="a folder with activity_matrix.yaml, "
                                                 "guardrails.yaml and sops/*.ai.sop (any of them)")
    sign.add_argument("--key", required=True, metavar="PRIVATE",
                      help="the private key `governance org keygen` wrote")
    sign.add_argument("--version", required=True, type=int, metavar="N",
                      help="the bundle's version: above every version issued before")
    sign.add_argument("-o", "--output", required=True, metavar="BUNDLE",
                      help="where to write the signed bundle (JSON)")
    publish = sub.add_parser("publish", help="publish a signed bundle on the team's server, "
                                             "which serves it at /org/bundle (admin token)")
    publish.add_argument("bundle", metavar="BUNDLE",
                         help="the signed bundle `governance org sign` wrote")
    publish.add_argument("--server", required=True, metavar="URL",
                         help="the server's address, like http://127.0.0.1:8765")
    publish.add_argument("--token", help="an admin token of the server (default: "
                                         "$GOVERNANCE_SERVER_TOKEN)")
    show = sub.add_parser("status", help="the installed bundle's version and files, and the "
                                         "organisation key's fingerprint")
    show.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    if args.action == "pull":
        from governance.organisation.pull import pull

        print(pull(args.url).describe(args.url))
        return 0
    if args.action == "keygen":
        return keygen(args.private, args.public)
    if args.action == "sign":
        return sign(args.dir, args.key, args.version, args.output)
    if args.action == "publish":
        return publish(args.bundle, args.server, args.token)
    return status(args.json)


def keygen(private_path: str, public_path: str) -> int:
    from governance.organisation import bundle

    private, public = bundle.generate()
    _create(private_path, private, 0o600)
    try:
        _create(public_path, public, 0o644)
    except BaseException:
        os.unlink(private_path)
        raise
    key = bundle.load_public_key(public, public_path)
    print(f"Wrote the private key to {private_path} (0600: keep it on the server that signs) and "
          f"the public key to {public_path} ({bundle.fingerprint(key)}).\n"
          f"Install the public key on each machine: sudo governance install --managed --org-key "
          f"{public_path}")
    return 0


def _create(path: str, data: bytes, mode: int) -> None:
    from governance.organisation.bundle import BundleError

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except FileExistsError:
        raise BundleError("the file already exists; a key is never overwritten", file=path,
                          fix="move it away first, or name another file") from None
    except OSError as exc:
        raise BundleError(f"the file cannot be created ({exc.strerror})", file=path,
                          fix="name a file in a folder you may write") from None
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
    finally:
        os.close(fd)


def sign(folder: str, key_path: str, version: int, output: str) -> int:
    from governance.organisation import bundle
    from governance.project import replace_file

    files = collect(folder)
    try:
        with open(key_path, "rb") as handle:
            key = bundle.load_private_key(handle.read(), key_path)
    except OSError as exc:
        raise bundle.BundleError(f"the private key cannot be read ({exc.strerror})", file=key_path,
                                 fix="pass the private key `governance org keygen` wrote") from None
    document = bundle.sign(bundle.build(files, version), key)
    try:
        replace_file(output, bundle.dumps(document), mode=0o644)
    except OSError as exc:
        raise bundle.BundleError(f"the bundle cannot be written ({exc.strerror})", file=output,
                                 fix="name a file in a folder you may write") from None
    print(f"Signed version {version} of {', '.join(sorted(files))} into {output} with key "
          f"{bundle.fingerprint(key.public_key())}.")
    return 0


def collect(folder: str) -> dict[str, bytes]:
    """The organisation files in ``folder``: activity_matrix.yaml, guardrails.yaml, sops/*.ai.sop."""
    from governance.organisation.bundle import ALLOWED, BundleError, check_name

    names = [name for name in ("activity_matrix.yaml", "guardrails.yaml")
             if os.path.isfile(os.path.join(folder, name))]
    sops = os.path.join(folder, "sops")
    if os.path.isdir(sops):
        names += [check_name(f"sops/{entry}", sops) for entry in sorted(os.listdir(sops))
                  if entry.endswith(".ai.sop")]
    if not names:
        raise BundleError(f"no organisation file here ({ALLOWED})", file=folder,
                          fix="pass the folder that holds the organisation's files")
    files = {}
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            files[name] = handle.read()
    return files


def publish(path: str, server: str, token: str | None) -> int:
    """PUT the bundle at ``path`` to ``server``'s ``/org/bundle`` with an admin token."""
    from urllib.parse import urlsplit

    from governance.ledger import client
    from governance.organisation.bundle import BundleError

    token = client.token(token, BundleError, consequence=NOTHING,
                         fix=f"pass an admin token with --token or {client.TOKEN_ENV} (the "
                             "server's own, or one `governance token add --role admin` minted)")
    parts = client.address(server, BundleError)
    url = f"{client.root(parts)}{parts.path.rstrip('/')}"
    if not url.endswith(ENDPOINT):
        url += ENDPOINT
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise BundleError(f"the bundle cannot be read ({exc.strerror})", file=path,
                          fix="pass the file `governance org sign -o BUNDLE` wrote") from None
    remote = client.Client(parts, token, BundleError, url=url, consequence=NOTHING)
    try:
        answer = remote.send("PUT", urlsplit(url).path, data)
    finally:
        remote.close()
    status, found = answer.status, answer.document()
    if not isinstance(found, dict):
        found = {"error": str(found)[:200]}
    if status == 200:
        if found.get("outcome") == "already published":
            print(f"Version {found.get('version')} of the organisation bundle was already "
                  f"published on {url}; nothing changed.")
        else:
            print(f"Published the organisation bundle version {found.get('version')} (issued "
                  f"{found.get('issued')}) on {url}.\nEach machine installs it with: sudo "
                  f"governance org pull {url}")
        return 0
    if status == 401:
        raise BundleError(f"the server {url} refused the token (401); nothing was published",
                          fix=f"pass an admin token of that server with --token or {client.TOKEN_ENV}")
    if status == 403:
        raise BundleError(f"the server {url} refused to publish (403: {found.get('error')}); "
                          "nothing was published",
                          fix=found.get("fix") or "publish with an admin token (`governance token "
                                                  "add --agent NAME --role admin`) or the server's own")
    raise BundleError(f"the server {url} refused the bundle ({status}: {found.get('error')})",
                      file=path, fix=found.get("fix") or "see the server's errors.log")


def status(as_json: bool) -> int:
    from governance.organisation.installed import status as report_status

    report = report_status()
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(describe(report))
    found = report["bundle"]
    drift = found is not None and any(v != "ok" for v in found["files"].values())
    return 1 if drift or report["problem"] else 0


def describe(report: dict[str, Any]) -> str:
    lines = [f"Organisation layer: {report['org_dir']}"]
    lines.append(f"Key: {report['key']}" if report["key"] else f"Key: none usable ({report['key_problem']})")
    found = report["bundle"]
    if report["problem"]:
        lines.append(f"Bundle: unreadable ({report['problem']})")
    elif found is None:
        lines.append("Bundle: none installed (install one with `sudo governance org pull URL`)")
    else:
        lines.append(f"Bundle: version {found['version']}, issued {found['issued']}, from "
                     f"{found['source']}, installed {found['installed']} (signed by {found['key']})")
        for name, how in found["files"].items():
            lines.append(f"  {name}: {how}" + ("" if how == "ok" else
                                                " (pull the bundle again to put it back)"))
    return "\n".join(lines)
