"""The compiled activity matrix, as the hook reads it.

Hot path: imports only ``os``, ``marshal`` and the builtin sha256. Each call reads the source files
(the packaged default and the project's override), hashes their bytes, and loads the compiled form
from ``<project>/.claude/governance/.cache/matrix-<hash>.marshal``. Only when no cache exists for
these exact bytes does it import the compiler (yaml + pydantic), validate and write the cache. A
matrix that fails validation is cached as an error too, so every later call reports the same error
quickly until the file is fixed; it is never replaced by defaults.
"""

from __future__ import annotations

import marshal
import os

from governance.errors import ConfigError
from governance.project import default_matrix_path, governance_dir, override_matrix_path

try:
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without the builtin module
    from hashlib import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CACHE_DIR = ".cache"
FORMAT = 3  # bump when the compiled form changes


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the activity matrix ({exc.strerror})", file=path,
                          fix="check the file's permissions") from None


def read_sources(project_dir: str) -> tuple[tuple[str, bytes], tuple[str, bytes] | None, str]:
    """The default and override sources with a content hash over both."""
    default_path = default_matrix_path()
    default_bytes = _read(default_path)
    if default_bytes is None:
        raise ConfigError("the packaged default activity matrix is missing", file=default_path,
                          fix="reinstall claude-governance or set GOVERNANCE_DEFAULT_MATRIX")
    override_path = override_matrix_path(project_dir)
    override_bytes = _read(override_path)
    digest = sha256(default_bytes)
    digest.update(b"\0override\0")
    if override_bytes is not None:
        digest.update(override_bytes)
    override = None if override_bytes is None else (override_path, override_bytes)
    return (default_path, default_bytes), override, digest.hexdigest()


def cache_path(project_dir: str, config_hash: str) -> str:
    return os.path.join(governance_dir(project_dir), CACHE_DIR,
                        f"matrix-f{FORMAT}-{config_hash[:32]}.marshal")


def load(project_dir: str) -> dict[str, Any]:
    """The compiled matrix for a project; raises ConfigError when it is invalid."""
    default, override, config_hash = read_sources(project_dir)
    path = cache_path(project_dir, config_hash)
    try:
        with open(path, "rb") as fh:
            cached = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        cached = None
    if not isinstance(cached, dict):
        cached = rebuild(project_dir, default, override, config_hash, path)
    error = cached.get("error")
    if error:
        raise ConfigError(error, file=cached.get("file"), key=cached.get("key"),
                          fix="run `governance validate` to see every problem")
    compiled: dict[str, Any] = cached
    return compiled


def rebuild(project_dir: str, default: tuple[str, bytes], override: tuple[str, bytes] | None,
            config_hash: str, path: str) -> dict[str, Any]:
    """Validate and compile the sources, then store the result (or the error) in the cache."""
    from governance.compiler import compile_matrix

    compiled, problems = compile_matrix(default, override, config_hash)
    if compiled is None:
        errors = [p for p in problems if p.level == "error"] or problems
        first = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        result: dict[str, Any] = {"error": f"at key {first.key}: {first.message}{more}",
                                  "file": first.file, "key": None}
    else:
        result = compiled
    write_cache(path, result)
    return result


def shell_cache_path(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, "shell-" + name[len("matrix-"):])


def load_shell(project_dir: str, compiled: dict[str, Any]) -> dict[str, Any] | None:
    """The compiled shell patterns, kept in a file of their own: only Bash calls need them."""
    shell = compiled.get("shell")
    if shell is not True:
        return shell if isinstance(shell, dict) else None
    path = shell_cache_path(cache_path(project_dir, compiled["config_hash"]))
    try:
        with open(path, "rb") as fh:
            loaded = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        default, override, config_hash = read_sources(project_dir)
        loaded = rebuild(project_dir, default, override, config_hash,
                         cache_path(project_dir, config_hash)).get("shell")
    return loaded if isinstance(loaded, dict) else None


def _dump(path: str, value: Any) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
            marshal.dump(value, fh)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_cache(path: str, value: dict[str, Any]) -> None:
    """Store a compiled matrix atomically (shell patterns apart); a read-only project simply keeps
    no cache."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith(".marshal") and os.path.join(folder, name) != path:
                os.unlink(os.path.join(folder, name))
        core = value
        if isinstance(value.get("shell"), dict):
            _dump(shell_cache_path(path), value["shell"])
            core = {**value, "shell": True}
        _dump(path, core)
    except OSError:
        pass
