"""Where the governed project and its governance files are, and what those files held.

Hot path: imports only ``os`` and ``marshal``. The project is found from the hook payload's
``cwd`` (walking up to the folder that holds ``.claude/``), then ``CLAUDE_PROJECT_DIR``, never from
the process's own working directory. The user's home ``~/.claude`` is user configuration, not a
project, so the walk never stops there. A compiled config is found again without reading its
sources through a memo keyed by their stat ``signature``.
"""

from __future__ import annotations

import marshal

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

GOVERNANCE_SUBDIR = system.join(".claude", "governance")
CACHE_SUBDIR = ".cache"
MATRIX_NAME = "activity_matrix.yaml"
GUARDRAILS_NAME = "guardrails.yaml"
# What the guardrail sources held when last compiled: {"key": content hash, "tool_rules": count}.
GUARDRAILS_MEMO = "guardrails-sources.marshal"
KNOWLEDGE_MEMO = "knowledge-sources.marshal"   # {"quiet": True}: no knowledge to consult
REVIEWS_STAMP = "decisions.reviewed"   # touched by each review of a decision
INTENTS_FOLDER = ".orchestration"       # the declared intents, versioned with the code
INTENTS_NAME = "active_intents.yaml"
# Present while Claude Code's sandbox is part of governance (what `governance sandbox on` added).
SANDBOX_MANIFEST = "sandbox.json"
SERVER_RECORD = "server.json"   # the resident server's pid and address (governance serve)


def read_bytes(path: str) -> bytes:
    """A whole file's bytes, read without the ``io`` stack (the hot path reads several small files).

    Raises ``OSError`` (``FileNotFoundError`` included) as ``open`` would.
    """
    fd = system.open(path, system.O_RDONLY | system.O_CLOEXEC)
    try:
        info = system.fstat(fd)
        regular = (info.st_mode & 0o170000) == 0o100000
        want = info.st_size + 1 if regular else 65536
        chunks = []
        while chunk := system.read(fd, want):
            chunks.append(chunk)
            if regular and len(chunk) < want:  # a regular file's short read is its end
                break
            want = 65536
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        system.close(fd)


def _home() -> str:
    return system.realpath(system.environ_get("HOME") or system.expanduser("~"))


def find_project(cwd: str | None, env: dict[str, str] | None = None) -> str:
    """Return the project root for a hook payload's ``cwd``.

    The first ancestor of ``cwd`` (itself included) holding a ``.claude`` folder wins, except the
    home folder; otherwise ``CLAUDE_PROJECT_DIR``; otherwise ``cwd`` itself. Raises ``ValueError``
    when neither ``cwd`` nor ``CLAUDE_PROJECT_DIR`` names an existing folder.
    """
    home = _home()
    if cwd and system.isabs(cwd) and system.isdir(cwd):
        here = system.realpath(cwd)
        while True:
            if here != home and system.isdir(system.join(here, ".claude")):
                return here
            parent = system.dirname(here)
            if parent == here:
                break
            here = parent
    declared = (system.environ_get if env is None else env.get)("CLAUDE_PROJECT_DIR")
    if declared and system.isdir(declared):
        return system.realpath(declared)
    if cwd and system.isabs(cwd) and system.isdir(cwd):
        return system.realpath(cwd)
    raise ValueError(
        f"no project folder: payload cwd {cwd!r} does not exist and CLAUDE_PROJECT_DIR is "
        f"{declared!r}"
    )


def project_from_cli(project: str | None) -> str:
    """Project root for a CLI command: ``--project``, else ``CLAUDE_PROJECT_DIR``, else the
    nearest ancestor of the current folder with ``.claude/``, else the current folder."""
    if project:
        return system.realpath(system.expanduser(project))
    return find_project(system.getcwd())


# Claude Code's managed settings folder, and the organisation's governance layer beside it. The
# places are fixed by the platform: never read from the project, the settings' ``env`` or any
# variable a session can set, so nothing the agent writes can move them.
MANAGED_DIRS = {"darwin": "/Library/Application Support/ClaudeCode"}
MANAGED_DIR_DEFAULT = "/etc/claude-code"
MANAGED_SETTINGS_NAME = "managed-settings.json"
ORG_SUBDIR = "governance"


def managed_dir() -> str:
    """Where Claude Code reads managed settings on this platform."""
    import sys

    return MANAGED_DIRS.get(sys.platform, MANAGED_DIR_DEFAULT)


def managed_settings_path() -> str:
    return system.join(managed_dir(), MANAGED_SETTINGS_NAME)


def org_dir() -> str:
    """The organisation's layer: its activity matrix, guardrails, SOPs and bundle state."""
    return system.join(managed_dir(), ORG_SUBDIR)


def org_matrix_path() -> str:
    return system.join(org_dir(), MATRIX_NAME)


def org_key_path() -> str:
    """The organisation's Ed25519 public key (installed with ``install --managed``), which a
    pulled bundle must be signed with."""
    return system.join(org_dir(), "org-key.pub")


def org_bundle_state_path() -> str:
    """What the last verified bundle held: its version and its files' hashes."""
    return system.join(org_dir(), "bundle.json")


def governance_dir(project_dir: str) -> str:
    return system.join(project_dir, GOVERNANCE_SUBDIR)



def read_record(path: str) -> dict[str, Any] | None:
    """The JSON object a process recorded about itself at ``path`` (the server's, the sandbox
    proxy's); None when it is missing, unreadable or not an object."""
    from governance import jsoncodec

    try:
        with open(path, "rb") as fh:
            found = jsoncodec.loads(fh.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def intents_path(project_dir: str) -> str:
    """The declared intents: ``<project>/.orchestration/active_intents.yaml``."""
    return system.join(project_dir, INTENTS_FOLDER, INTENTS_NAME)


def override_matrix_path(project_dir: str) -> str:
    return system.join(project_dir, GOVERNANCE_SUBDIR, MATRIX_NAME)


def sandbox_manifest_path(project_dir: str) -> str:
    return system.join(project_dir, GOVERNANCE_SUBDIR, SANDBOX_MANIFEST)


def cache_file(project_dir: str, name: str) -> str:
    """A file in the project's compiled-config cache (``.claude/governance/.cache``)."""
    return system.join(project_dir, GOVERNANCE_SUBDIR, CACHE_SUBDIR, name)


def signature(paths: Sequence[str]) -> tuple[tuple[object, ...], ...] | None:
    """What identifies the files' bytes without reading them: path, size, mtime, ctime and inode
    of each (any write changes the ctime, a replacement the inode); a missing file is its path
    alone. None when a file cannot even be stat'ed. Take it *before* reading the files, so a write
    in between leaves a memo that no longer matches rather than one that lies."""
    seen: list[tuple[object, ...]] = []
    for path in paths:
        try:
            st = system.stat(path)
        except FileNotFoundError:
            seen.append((path,))
            continue
        except OSError:
            return None
        seen.append((path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(seen)


def recall(memo_path: str, seen: object) -> object:
    """The value remembered in ``memo_path`` for files with this ``signature``; None when the
    memo is missing, unreadable or was written for other bytes."""
    if seen is None:
        return None
    try:
        memo = marshal.loads(read_bytes(memo_path))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if isinstance(memo, dict) and memo.get("signature") == seen:
        return memo.get("value")
    return None


def temp_path(path: str) -> str:
    """A temp file's name beside ``path``, unique to this process and thread (the resident server
    decides on several threads)."""
    from _thread import get_ident

    return f"{path}.{system.getpid()}-{get_ident()}.tmp"


def replace_file(path: str, data: bytes, mode: int = 0o600, sync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically: a temp file beside it, then ``system.replace``. Raises
    ``OSError`` (the temp file removed) when it cannot."""
    temp = temp_path(path)
    try:
        fd = system.open(temp, system.O_WRONLY | system.O_CREAT | system.O_TRUNC, mode)
        try:
            system.write(fd, data)
            if sync:
                system.fsync(fd)
        finally:
            system.close(fd)
        system.replace(temp, path)
    except OSError:
        try:
            system.unlink(temp)
        except OSError:
            pass
        raise


def remember(memo_path: str, seen: object, value: object) -> None:
    """Store ``value`` for files with this ``signature`` (atomically; a read-only project simply
    keeps no memo)."""
    if seen is None:
        return
    try:
        system.makedirs(system.dirname(memo_path), mode=0o700, exist_ok=True)
        replace_file(memo_path, marshal.dumps({"signature": seen, "value": value}))
    except OSError:
        pass


def package_root() -> str:
    """The folder that holds the ``governance`` package (the checkout, or site-packages)."""
    return system.dirname(system.dirname(system.abspath(__file__)))


def installed_version() -> str:
    """claude-governance's version: the installed distribution's, else the checkout's
    ``pyproject.toml`` (a bare checkout run without installing), else ``"unknown"``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("claude-governance")
    except PackageNotFoundError:
        pass
    import tomllib

    try:
        with open(system.join(package_root(), "pyproject.toml"), "rb") as handle:
            found = tomllib.load(handle).get("project", {}).get("version")
    except (OSError, tomllib.TOMLDecodeError):
        return "unknown"
    return found if isinstance(found, str) else "unknown"


def packaged_config(name: str, env_var: str) -> str:
    """A packaged default config file: ``$env_var``, else the installed copy
    (``governance/defaults``), else the checkout's ``config/``."""
    explicit = system.environ_get(env_var)
    if explicit:
        return explicit
    here = system.dirname(system.abspath(__file__))
    installed = system.join(here, "defaults", name)
    if system.exists(installed):
        return installed
    return system.join(system.dirname(here), "config", name)


def default_matrix_path() -> str:
    return packaged_config(MATRIX_NAME, "GOVERNANCE_DEFAULT_MATRIX")


def default_guardrails_path() -> str:
    return packaged_config(GUARDRAILS_NAME, "GOVERNANCE_DEFAULT_GUARDRAILS")


def knowledge_sources(project_dir: str) -> list[str]:
    """Where knowledge comes from: the packaged and the project's ``knowledge.yaml``, the
    organisation's, the project's and the user's SOP folders (the first five), the memory store
    with its WAL file, and the stamp the decision store touches when a decision is reviewed
    (reviewed patterns are memories)."""
    base = system.join(project_dir, GOVERNANCE_SUBDIR)
    return [packaged_config("knowledge.yaml", "GOVERNANCE_DEFAULT_KNOWLEDGE"),
            system.join(base, "knowledge.yaml"),
            system.join(org_dir(), "sops"),
            system.join(project_dir, ".claude", "sops"),
            system.join(system.expanduser("~"), ".claude", "sops"),
            system.join(base, "knowledge.db"), system.join(base, "knowledge.db-wal"),
            system.join(base, REVIEWS_STAMP)]


def override_guardrails_path(project_dir: str) -> str:
    return system.join(project_dir, GOVERNANCE_SUBDIR, GUARDRAILS_NAME)


def org_guardrails_path() -> str:
    return system.join(org_dir(), GUARDRAILS_NAME)


def guardrails_sources(project_dir: str) -> tuple[str, str, str]:
    """The guardrail files, lowest first: the packaged default, the project's, the
    organisation's (whose rules a project can neither redefine nor disable)."""
    return (default_guardrails_path(), override_guardrails_path(project_dir),
            org_guardrails_path())


def installation_paths(python: str | None = None) -> list[str]:
    """Our installation, which the agent may not change: the package, the hook scripts, the
    packaged default configs, the interpreter's venv, the interpreter itself and its standard
    library (every hook imports from it before any of our code runs), and Claude Code's managed
    settings folder with the organisation's layer. Absolute and resolved where they exist."""
    import sys

    interpreter = system.abspath(python or sys.executable)
    prefix = system.dirname(system.dirname(interpreter))
    venv = system.isfile(system.join(prefix, "pyvenv.cfg"))
    root = package_root()
    hooks = system.join(root, "hooks")
    paths = [system.join(root, "governance"), hooks if system.isdir(hooks) else "",
             default_matrix_path(), default_guardrails_path(), prefix if venv else "",
             interpreter,  # resolved: the binary a venv's symlink runs
             *standard_library(interpreter), *interpreter_files(interpreter), managed_dir()]
    resolved = [system.realpath(path) if system.exists(path) else path for path in paths if path]
    return list(dict.fromkeys(resolved))


def interpreter_files(interpreter: str) -> list[str]:
    """Files the interpreter loads before its standard library, there or not: the zipped
    library first on ``sys.path`` (``lib/python311.zip``: one put there is imported before
    anything else) and the shared library the binary links (``lib/libpython3.11.so*``)."""
    import sys

    real = system.realpath(interpreter)
    if real == system.realpath(sys.executable):
        bases = list(dict.fromkeys([sys.base_prefix, sys.base_exec_prefix]))
        major, minor = sys.version_info[0], sys.version_info[1]
    else:
        name = system.basename(real)
        if not name.startswith("python") or "." not in name:
            return []
        try:
            major, minor = (int(part) for part in name[6:].split(".")[:2])
        except ValueError:
            return []
        bases = [system.dirname(system.dirname(real))]
    found: list[str] = []
    for base in bases:
        for lib in dict.fromkeys(["lib", getattr(sys, "platlibdir", "lib"), "lib64"]):
            folder = system.join(base, lib)
            found.append(system.join(folder, f"python{major}{minor}.zip"))
            shared = f"libpython{major}.{minor}"
            found += [system.join(folder, f"{shared}.so"), system.join(folder, f"{shared}.so.1.0"),
                      system.join(folder, f"{shared}.dylib")]
    return list(dict.fromkeys(found))


def standard_library(interpreter: str) -> list[str]:
    """The folders the interpreter's standard library is imported from (``lib/pythonX.Y`` and
    its platform twin under the base installation): this interpreter's own, else the one beside
    the binary ``interpreter`` resolves to, named by its version (``python3.11``)."""
    import sys

    real = system.realpath(interpreter)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if real == system.realpath(sys.executable):
        bases = [sys.base_prefix, sys.base_exec_prefix]
        libs = list(dict.fromkeys(["lib", getattr(sys, "platlibdir", "lib")]))
    else:
        name = system.basename(real)
        if not name.startswith("python") or "." not in name:
            return []
        version = name
        bases, libs = [system.dirname(system.dirname(real))], ["lib", "lib64"]
    found = [system.join(base, lib, version) for base in bases for lib in libs]
    return [path for path in dict.fromkeys(found) if system.isdir(path)]


def ensure_dir(path: str) -> None:
    """Create ``path`` (mode 0700) and its parents if missing."""
    system.makedirs(path, mode=0o700, exist_ok=True)


def open_private_db(path: str, schema: str, version: int) -> sqlite3.Connection:
    """One of the project's SQLite stores: created owner-only (0600: it may name internals, like
    the ledger), write-ahead logged, in autocommit mode (transactions are explicit), and given
    ``schema`` whenever its ``user_version`` is not ``version``."""
    import sqlite3

    ensure_dir(system.dirname(path) or ".")
    fresh = not system.exists(path)
    db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    if fresh:
        system.chmod(path, 0o600)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if db.execute("PRAGMA user_version").fetchone()[0] != version:
        db.executescript(f"BEGIN IMMEDIATE; {schema} PRAGMA user_version={version}; COMMIT;")
    return db


def enable_site_packages() -> None:
    """Make the interpreter's site-packages importable in a hook started with ``-S``.

    Only the cold path needs it (validating and compiling a changed config with yaml and pydantic).
    """
    import sys

    if not sys.flags.no_site or any(p.endswith("site-packages") for p in sys.path):
        return
    import site

    site.main()  # what -S skipped: the venv's pyvenv.cfg, its site-packages and .pth files


def require_config_libraries(what: str) -> None:
    """Raise an actionable ConfigError when yaml or pydantic cannot be imported (e.g. a plugin's
    hooks run by a ``python3`` that does not have claude-governance's dependencies)."""
    import sys

    enable_site_packages()
    try:
        import pydantic  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as exc:
        from governance.errors import ConfigError

        raise ConfigError(
            f"reading {what} needs PyYAML and pydantic, which {sys.executable} cannot import "
            f"({exc})",
            fix=f"run `{sys.executable} -m pip install pyyaml pydantic`, or install claude-governance "
                "into a venv and register it with `governance install --project DIR`") from None
