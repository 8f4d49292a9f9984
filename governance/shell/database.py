"""Database clients (``psql``, ``sqlite3``, ``mysql``, ``redis-cli``, ``mongosh`` ...): the
statements they run, wherever the command gives them, read by ``shell.queries``.

A command entry with ``queries:`` says where its statements are: ``code`` options (``psql -c``,
``mysql -e``), ``files`` options (``psql -f``, ``sqlite3 -init``), positional arguments
(``positional``: ``after-first`` for ``sqlite3 DB SQL``, ``all`` for ``redis-cli CMD ARGS``,
``scripts`` for ``mongosh file.js``); otherwise standard input (a here-doc, a here-string, a pipe,
``< FILE``). A file is read from disk (``shell.source``); files it includes (``\\i``, ``.read``,
``source``) too. Statements known only at run time (a variable, a decoder or download piped in, a
file that cannot be read) are ``shell-unknown``. Imported by ``shell.resolver`` for such entries.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

_MAX_INCLUDES = 8


def run(an: Walk, queries: dict[str, Any], base: str, argv: Argv, cmd: Simple | None,
        seg: str, depth: int) -> bool:
    """Add the acts of the statements ``base`` runs; whether any was found (else the caller
    adds its plain ``shell-execute``)."""
    language = queries["language"]
    reader = _Reader(an, base, seg, depth, cmd)
    given = False
    for option in queries["code"]:
        for value, raw in argv.values.get(option, ()):
            given = True
            reader.text(language, value, f"{base} {option} {raw}")
    for option in queries["files"]:
        for value, raw in argv.values.get(option, ()):   # redis-cli --eval FILE: a Lua script
            given = True
            reader.file("lua" if language == "redis" else language, value, raw, cmd)
    positional = queries["positional"]
    words = [value for value, _raw in argv.positionals]
    if positional == "after-first" and len(words) > 1:
        given = True
        for value, raw in argv.positionals[1:]:
            reader.text(language, value, f"{base} {raw}")
    elif positional == "all" and words:
        given = True
        if words[0] is None:
            reader.unknown(f"{base} runs a command named only at run time")
        else:
            reader.text(language, " ".join(w or "$ARG" for w in words), base)
    elif positional == "scripts":
        for value, raw in argv.positionals:
            if value is None or value.endswith((".js", ".mongodb")):
                given = True
                reader.file(language, value, raw, cmd)
    if not given and cmd is not None:
        reader.file(language, "-", "-", cmd)
    if queries.get("database") and argv.positionals:
        _database(an, queries, base, argv, cmd, seg)
    return reader.found > 0


# words of a statement that changes a database (SQL, and the SQLite shell's dot-commands that
# write or run statements from elsewhere)
_CHANGES = frozenset((
    "insert", "update", "delete", "replace", "drop", "create", "alter", "attach", "detach",
    "vacuum", "reindex", "truncate", "upsert", "merge", "copy", "import", "pragma", ".import",
    ".restore", ".load", ".read", ".shell", ".system", ".recover", ".clone", ".archive", ".ar"))


def _database(an: Walk, queries: dict[str, Any], base: str, argv: Argv, cmd: Simple | None,
              seg: str) -> None:
    """A database file that is a governance file (``.claude/governance/decisions.db``) is
    changed by a statement that is not a read: ``governance-admin``. Statements known only at
    run time, or read from a file, count as changing it; ``-readonly`` reads only."""
    path, raw = argv.positionals[0]
    if not an.protected(path, raw) or any(f in ("-readonly", "--readonly", "-safe")
                                          for f in argv.flags):
        return
    texts: list[str | None] = [v for option in queries["code"]
                               for v, _raw in argv.values.get(option, ())]
    texts += [v for v, _raw in argv.positionals[1:]]
    if any(argv.values.get(option) for option in queries["files"]):
        texts.append(None)
    if not texts and cmd is not None:
        kind, text = an.stdin_text(cmd)
        if kind != "none":
            texts.append(text if kind == "literal" else None)
    if any(t is None or _CHANGES & set(t.lower().replace(";", " ").replace("(", " ").split())
           for t in texts):
        an.add("governance-admin", seg, f"{base} changes {raw}, a governance-protected "
                                        "database: ask the user to make this change from a "
                                        "terminal")


class _Reader:
    __slots__ = ("an", "base", "cmd", "depth", "found", "includes", "seg")

    def __init__(self, an: Walk, base: str, seg: str, depth: int, cmd: Simple | None) -> None:
        self.an, self.base, self.seg, self.depth = an, base, seg, depth
        self.cmd = cmd                    # what standard input is: `.read /dev/stdin` reads it
        self.found = 0
        self.includes = 0

    def unknown(self, why: str) -> None:
        self.found += 1
        self.an.unknown(self.seg, why)

    def text(self, language: str, text: str | None, what: str) -> None:
        if text is None:
            self.unknown(f"{what}: the statements are known only at run time")
            return
        from governance.shell import queries

        an, base, seg = self.an, self.base, self.seg
        if language == "mongo":
            from governance.shell import streams

            streams.inline(an, "node", text, seg, self.depth)     # mongosh runs JavaScript
            found = queries.mongo(text)
        else:
            found = queries.redis(text) if language == "redis" else \
                queries.redis_script(text) if language == "lua" else queries.sql(text)
        for kind, detail in found:
            self.found += kind != "file"
            if kind == "destructive":
                an.add("destructive", seg, f"{base}: {detail}")
            elif kind == "shell":
                an.script(detail, self.depth + 1, seg)
            elif kind == "pipe":                   # \o |CMD: CMD reads what the queries print
                an.script(f'cat "$__query_output" | {detail}', self.depth + 1, seg)
            elif kind == "unknown":
                an.unknown(seg, f"{base}: {detail}")
            elif kind == "write":                  # .output FILE, .backup FILE, \o FILE
                an.target(detail, detail, seg, "file-write", f"{base} writes {detail}")
            elif kind == "read":                   # .import FILE TABLE: as a reader of FILE
                from governance.shell.words import quote

                an.script(f"cat -- {quote(detail)}", self.depth + 1, seg)
            elif kind == "attach" and an.protected(detail, detail) and (_CHANGES - {
                    "attach", "detach"}) & set(text.lower().replace(";", " ").replace(
                        "(", " ").split()):
                an.add("governance-admin", seg, f"{base} attaches {detail}, a governance-"
                                                "protected database, and changes data: ask the "
                                                "user to make this change from a terminal")
            elif kind == "file" and self.includes < _MAX_INCLUDES:   # \i FILE, .read FILE
                self.includes += 1
                self.file(language, detail, detail, self.cmd)

    def file(self, language: str, value: str | None, raw: str, cmd: Simple | None) -> None:
        """Statements read from a file, or from standard input when ``value`` is ``-``."""
        an, base = self.an, self.base
        if value in ("-", "/dev/stdin", "/dev/fd/0"):
            if cmd is None:
                return
            kind, text = an.stdin_text(cmd)
            if kind == "literal":
                self.text(language, text, f"{base} reading standard input")
                return
            if kind == "opaque":
                self.unknown(f"{base} runs statements piped in at run time")
                return
            if kind != "file" or text is None:
                return
            value = raw = text
        if value is None:
            self.unknown(f"{base} runs statements from a file named only at run time ({raw})")
            return
        known = an.file_text(value)
        if known is not None:
            self.text(language, known, f"{base} reading {raw}")
            return
        if value.startswith(("/dev/fd/", "/proc/self/fd/")):   # psql -f <(curl ...)
            self.unknown(f"{base} runs statements a process substitution writes at run time")
            return
        if an.wrote(value):
            self.unknown(f"{base} runs {raw}, written earlier in this command with content "
                         "known only at run time")
            return
        from governance.shell import source

        path = source.path_of(an, value)
        if path is None:
            return
        text = source.text_of(an, base, path, raw, self.seg)
        if text is not None:
            self.text(language, text, f"{base} reading {raw}")
