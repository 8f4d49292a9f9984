"""What holds credentials, as the matrix's ``secrets`` and ``egress`` sections say (docs/secrets.md).

Asked by the layer (the Read and Grep tools, WebFetch) and by the shell analysis through its path
guard: whether a path is a secret file (``path``), a variable a secret one (``variable``), whether
a secret belongs to a host (``owns``: sending it there is its use), and whether a tainted session
may still reach a host (``egress``). Hot path: the root modules and the layer's own path forms.
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

Kinds = tuple[frozenset[str], frozenset[str], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _glob(name: str, pattern: str) -> bool:
    """fnmatch (``*`` crosses folders), with ``*SUFFIX`` and a pattern's literal head compared
    directly: the general matcher is loaded only for a name that could match."""
    if pattern[:1] == "*" and not any(c in pattern[1:] for c in "*?["):
        return name.endswith(pattern[1:])
    cut = min((k for k in (pattern.find("*"), pattern.find("?"), pattern.find("[")) if k >= 0),
              default=-1)
    if cut < 0:
        return name == pattern
    if not name.startswith(pattern[:cut]):
        return False
    if cut == len(pattern) - 1 and pattern[cut] == "*":
        return True                       # HEAD*: every name that starts so
    from governance.policy.wildcard import match

    return match(name, pattern)


def host_matches(host: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether ``host`` (any case, a trailing dot or port dropped) matches one of ``patterns``."""
    name = host.lower().rstrip(".")
    if name.startswith("[") and "]" in name:
        name = name[1:name.index("]")]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return bool(name) and any(_glob(name, p) for p in patterns)


class Secrets:
    """The compiled ``secrets`` section, asked with the paths and names of one call."""

    __slots__ = ("place", "places", "project_dir", "root", "spec")

    def __init__(self, spec: dict[str, Any], project_dir: str, root: Callable[[], str],
                 place: Callable[[str], str | None]) -> None:
        """``root``: the project's real path in lower case; ``place``: a ``~/`` or ``$VAR/``
        pattern as an absolute path (both resolved once per call, by the layer)."""
        self.spec = spec
        self.project_dir = project_dir
        self.root = root
        self.place = place
        self.places: dict[str, list[tuple[str, str, str]]] = {}   # key -> (head, place, pattern)

    # --- files ---------------------------------------------------------------------------------
    def path(self, path: str, cwd: str | None = None) -> str | None:
        """The ``secrets.paths`` pattern that ``path`` (as written, and where it leads when it
        exists) matches, unless a ``not_paths`` pattern matches it too; None when it is no secret
        file. Compared without regard to case."""
        if not path or "\0" in path:
            return None
        joined = system.located(cwd or self.project_dir, path)
        literal = system.normpath(joined).lower()
        found = self._kind("paths", literal)
        if found is not None and self._kind("not_paths", literal) is None:
            return found
        try:
            info = system.lstat(joined)
        except (OSError, ValueError):
            return None
        real = system.realpath(joined).lower()   # an exception's name does not hide a link's
        found = self._kind("paths", real) if real != literal else None   # target
        if found is not None and self._kind("not_paths", real) is None:
            return found
        if info.st_nlink > 1 and info.st_mode & 0o170000 == 0o100000:   # a hard link
            return self._inodes().get((info.st_dev, info.st_ino))
        return None

    def _inodes(self) -> dict[tuple[int, int], str]:
        """(device, inode) -> pattern of the secret files that can be listed: the places
        outside the project (a folder's files for ``DIR/*``) and the secret names at the
        project's root. Looked at only for a file with more than one name."""
        found: dict[tuple[int, int], str] = {}
        candidates: list[tuple[str, str]] = []
        for _head, _place, pattern in self._places("paths"):
            place = system.expanduser(pattern) if pattern.startswith("~/") else pattern
            if not place.startswith("/"):
                continue          # $VAR/...: matched by name, not listed
            folder, _, rest = place.rpartition("/")
            if rest == "*" and not any(c in folder for c in "*?["):
                try:
                    candidates += [(system.join(folder, n), pattern)
                                   for n in system.listdir(folder)[:200]]
                except OSError:
                    continue
            elif not any(c in place for c in "*?["):
                candidates.append((place, pattern))
        names = self.spec["paths"][0]
        candidates += [(system.join(self.project_dir, n), str(n)) for n in sorted(names)]
        for where, pattern in candidates:
            try:
                info = system.stat(where)
            except (OSError, ValueError):
                continue
            found.setdefault((info.st_dev, info.st_ino), pattern)
        return found

    def glob(self, pattern: str) -> str | None:
        """The ``secrets.paths`` pattern a search glob (Grep's ``glob``: ``.env*``, ``*.pem``)
        may select: a secret file name it matches, or a secret name pattern it is itself."""
        name = pattern.rsplit("/", 1)[-1].lower()
        if not name or self._kind("not_paths", name) is not None:
            return None
        names, _rels, name_globs, _rel_globs, _elsewhere = self.spec["paths"]
        for known in sorted(names):
            if _glob(known, name):
                return str(known)
        for known in name_globs:
            if known == name or _glob(name, known) or _glob(known.replace("*", "x"), name):
                return str(known)
        return None

    def folder(self, path: str, cwd: str | None = None, direct: bool = False) -> str | None:
        """The ``secrets.paths`` pattern of a secret place outside the project that a search of
        the folder ``path`` reaches (``~/.ssh`` holds ``~/.ssh/*``, ``~/.aws`` holds
        ``~/.aws/credentials``, the home holds both); else None. ``direct``: only a place right
        in the folder (what an archive or a copy of it holds by name: not the home's)."""
        joined = system.located(cwd or self.project_dir, path)
        for full in dict.fromkeys((system.normpath(joined).lower(),
                                   system.realpath(joined).lower())):
            inside = full.rstrip("/") + "/"
            for _head, place, pattern in self._places("paths"):
                if place.startswith(inside) and not (direct and "/" in place[len(inside):]):
                    return pattern
        return None

    def _kind(self, key: str, full: str) -> str | None:
        names: frozenset[str]
        rels: frozenset[str]
        name_globs: tuple[str, ...]
        rel_globs: tuple[str, ...]
        names, rels, name_globs, rel_globs, _elsewhere = self.spec[key]
        root = self.root()
        name = full.rsplit("/", 1)[-1]
        if name in names:
            return name
        for pattern in name_globs:
            if _glob(name, pattern):
                return pattern
        rel = full[len(root) + 1:] if full.startswith(root + "/") else None
        if rel is not None:
            if rel in rels:
                return rel
            for pattern in rel_globs:
                if _glob(rel, pattern):
                    return pattern
        for head, place, pattern in self._places(key):
            if full.startswith(head) and (full == place if head == place else
                                          _glob(full, place)):
                return pattern
        return None

    def _places(self, key: str) -> list[tuple[str, str, str]]:
        found = self.places.get(key)
        if found is None:
            found = self.places[key] = []
            for pattern in self.spec[key][4]:
                place = self.place(pattern) if pattern.startswith(("~/", "$")) else pattern
                if place is not None:
                    head = place.partition("*")[0].partition("?")[0].partition("[")[0]
                    found.append((head, place, pattern))
        return found

    # --- variables -----------------------------------------------------------------------------
    def variable(self, name: str) -> bool:
        """Whether an environment variable of this name holds a secret (``secrets.variables``,
        less ``not_variables``)."""
        upper = name.upper()
        exact, globs = self.spec["variables"]
        named = upper in exact
        if not named and not any(_glob(upper, p) for p in globs):
            return False
        exact, globs = self.spec["not_variables"]   # a name listed itself beats an exception's glob
        return upper not in exact and (named or not any(_glob(upper, p) for p in globs))

    # --- hosts ---------------------------------------------------------------------------------
    def owns(self, secret: str, host: str) -> bool:
        """Whether ``secret`` (a variable's name, or the ``secrets.paths`` pattern of a file)
        belongs to ``host``: sending it there is its use (``secrets.owners``, first match)."""
        for pattern, hosts in self.spec["owners"]:
            if pattern == secret.lower() or _glob(secret.upper(), pattern):
                return host_matches(host, hosts)
        return False

    def egress(self, host: str) -> bool:
        """Whether a session that read a secret may still reach ``host`` (``egress.allow``)."""
        return host_matches(host, self.spec["egress"])


_KEY_WORDS = ("token", "key", "secret", "pass", "pwd", "auth", "cred", "session", "sig")
_GENERIC = ("secret", "bearer")   # the screen's kinds that need no provider shape


def unquoted(text: str) -> str:
    """``text`` with its ``%XX`` escapes decoded (as a URL's reader would), twice over."""
    for _ in range(2):
        if "%" not in text:
            break
        out = bytearray()
        raw = text.encode("utf-8", "surrogatepass")
        k = 0
        while k < len(raw):
            pair = raw[k + 1:k + 3]
            if raw[k] == 0x25 and len(pair) == 2 and all(chr(c) in "0123456789abcdefABCDEF"
                                                         for c in pair):
                out.append(int(pair, 16))
                k += 3
            else:
                out.append(raw[k])
                k += 1
        text = out.decode("utf-8", "replace")
    return text


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeio" else "a"


def _random(value: str) -> bool:
    """Whether a value looks generated (a token), not a word: long, of mixed kinds of
    characters."""
    kinds = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    return len(value) >= 16 and kinds >= 2 and not value.isalpha()


def url_secrets(url: str) -> list[str]:
    """What in a URL is shaped like a secret: a provider's key format, a JWT, a private key (the
    ledger's redaction screen), or a generated value in a key-like parameter (``?token=...``),
    also once ``%XX`` escapes are decoded. Words (``?apikey=demo``, ``/wiki/Credentials:X``) are
    not."""
    from governance.ledger.redaction import kinds

    found: list[str] = []
    for text in dict.fromkeys((url, unquoted(url))):
        screened = kinds(text)
        found += [f"{article(k)} {k} value" for k in screened if k not in _GENERIC]
        query = text.partition("?")[2].partition("#")[0]
        for pair in query.split("&"):
            name, _, value = pair.partition("=")
            if any(w in name.lower() for w in _KEY_WORDS) and _random(value):
                found.append(f"a generated value in the {name[:40]} parameter")
        if "bearer" in screened or "secret" in screened:
            for part in text.replace("?", "/").replace("&", "/").split("/"):
                head, sep, value = part.partition(":")
                if sep and any(w in head.lower() for w in _KEY_WORDS) and _random(value):
                    found.append(f"a generated value after {head[:40]}")
    return list(dict.fromkeys(found))
