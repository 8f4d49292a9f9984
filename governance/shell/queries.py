"""Queries a database client runs, read as statements: SQL (a splitter aware of quotes, comments
and dollar quoting, then each statement's verb), Redis commands and MongoDB shell code.

``sql(text)``, ``redis(text)``, ``redis_script(lua)`` and ``mongo(code)`` list what the text does
beyond reading and writing rows:
``("destructive", why)`` for ``DROP``, ``TRUNCATE``, ``DELETE``/``UPDATE`` without ``WHERE`` (or
with an always-true one), ``ALTER ... DROP``, Redis ``FLUSHALL``/``FLUSHDB``/``DEL``/``UNLINK``,
Mongo ``dropDatabase()``, ``.drop()``, ``deleteMany({})``; ``("shell", command)`` for a command
the client runs on this machine (psql ``\\!``, sqlite ``.shell``, ``COPY ... PROGRAM``);
``("pipe", command)`` for a command fed the query output (``\\o |cmd``); ``("file", path)``
for a file of statements it includes (``\\i``, ``.read``); ``("unknown", why)`` for statements
built at run time (``EXECUTE`` of a non-literal, Redis ``EVALSHA``). Imported by
``shell.database`` only; no imports at load time.
"""

from __future__ import annotations

_CONTROL = ("BEGIN", "DECLARE", "THEN", "ELSE", "LOOP", "ATOMIC", "DO")
_DESTROY_REDIS = ("FLUSHALL", "FLUSHDB", "DEL", "UNLINK", "SWAPDB", "SHUTDOWN")
_MONGO_EMPTY = ("deleteMany", "remove", "updateMany", "replaceMany")


def statements(text: str) -> list[str]:
    """The statements of SQL text, split at ``;`` outside quotes, comments and ``$tag$`` bodies;
    comments dropped, a dollar-quoted body kept as it is. Client commands (a line starting with
    a backslash or, in sqlite and duckdb, a dot) are statements of their own."""
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)
    start_of_line = True
    while i < n:
        c = text[i]
        if start_of_line and not "".join(cur).strip() and c in "\\.":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j].strip())
            i = j
            continue
        start_of_line = c == "\n" or (start_of_line and c in " \t\r")
        if (c == "-" and text.startswith("--", i)) or (c == "#" and not "".join(cur).strip()):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            cur.append(" ")
            continue
        if c in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != '"':
                    j += 2
                    continue
                if text[j] == c:
                    if text[j + 1:j + 2] == c:
                        j += 2
                        continue
                    break
                j += 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c == "$":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if j < n and text[j] == "$" and not text[i + 1:j].isdigit():
                tag = text[i:j + 1]
                end = text.find(tag, j + 1)
                end = n if end < 0 else end + len(tag)
                cur.append(text[i:end])
                i = end
                continue
        if c == ";":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return [s for s in out if s]


def _tokens(statement: str) -> list[tuple[str, int]]:
    """Words and literals of a statement with their parenthesis depth (words upper-cased)."""
    out: list[tuple[str, int]] = []
    depth, i, n = 0, 0, len(statement)
    while i < n:
        c = statement[i]
        if c in "'\"`$":
            j = _literal_end(statement, i)
            out.append((statement[i:j], depth))
            i = j
        elif c == "(":
            depth += 1
            i += 1
        elif c == ")":
            depth = max(0, depth - 1)
            i += 1
        elif c.isalnum() or c == "_":
            j = i
            while j < n and (statement[j].isalnum() or statement[j] in "_."):
                j += 1
            out.append((statement[i:j].upper(), depth))
            i = j
        elif c.isspace() or c == ",":
            i += 1
        else:
            j = i
            while j < n and statement[j] in "=<>!|":
                j += 1
            out.append((statement[i:max(j, i + 1)], depth))
            i = max(j, i + 1)
    return out


def _literal_end(text: str, i: int) -> int:
    c = text[i]
    if c == "$":
        j = i + 1
        while j < len(text) and (text[j].isalnum() or text[j] == "_"):
            j += 1
        if j < len(text) and text[j] == "$":
            end = text.find(text[i:j + 1], j + 1)
            return len(text) if end < 0 else end + j + 1 - i
        return j
    j = text.find(c, i + 1)
    while j > 0 and text[j + 1:j + 2] == c:
        j = text.find(c, j + 2)
    return len(text) if j < 0 else j + 1


def _unquote(token: str) -> str | None:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1].replace(token[0] * 2, token[0])
    if token.startswith("$") and token.endswith("$") and token.count("$") >= 4:
        tag = token[:token.index("$", 1) + 1]
        return token[len(tag):-len(tag)]
    return None


def sql(text: str, depth: int = 0) -> list[tuple[str, str]]:
    """What SQL text does beyond reading and writing rows (see the module's docstring)."""
    found: list[tuple[str, str]] = []
    if "\\gexec" in text:                     # psql runs every value the query returns as SQL
        found.append(("unknown", "psql \\gexec runs SQL the query builds at run time"))
    for statement in statements(text):
        if statement[0] in "\\.":
            found.extend(_client_command(statement))
            continue
        found.extend(_statement(statement, depth))
    return found


def _statement(statement: str, depth: int) -> list[tuple[str, str]]:
    toks = _tokens(statement)
    top = [t for t, d in toks if d == 0]
    short = " ".join(statement.split())[:80]
    found: list[tuple[str, str]] = []
    for k, (tok, _d) in enumerate(toks):       # function bodies and DO blocks run too
        if tok.startswith("$") and depth < 4:
            body = _unquote(tok)
            if body:
                found.extend(sql(body, depth + 1))
        elif tok in ("EXECUTE", "EXEC", "SP_EXECUTESQL"):
            found.extend(_execute([t for t, _d in toks[k + 1:k + 4]], depth, short))
    if not top:
        return found
    while top[0] in _CONTROL or (top[0] in ("IF", "ELSIF", "WHILE", "FOR", "WHEN") and (
            "THEN" in top or "LOOP" in top)):          # statements inside a procedure's body
        if top[0] in _CONTROL:
            top = top[1:]
        else:
            top = top[min(top.index(w) for w in ("THEN", "LOOP") if w in top) + 1:]
        if not top:
            return found
    if top[0] == "PREPARE" and "AS" in top:            # PREPARE p AS DELETE FROM t
        top = top[top.index("AS") + 1:] or ["AS"]
    elif top[0] == "PREPARE" and "FROM" in top:        # MySQL: PREPARE s FROM 'SQL' | @variable
        source = top[top.index("FROM") + 1:][:1]
        literal = _unquote(source[0]) if source else None
        found.extend(sql(literal, depth + 1) if literal is not None and depth < 4 else
                     [("unknown", f"the SQL prepares a statement built at run time ({short})")])
        return found
    if top[0] == "EXPLAIN" and "ANALYZE" in top[1:3]:  # EXPLAIN ANALYZE runs the statement
        top = top[1 + top[1:3].index("ANALYZE") + 1:] or ["EXPLAIN"]
    verb = top[0]
    if verb == "WITH":
        verb = next((t for t in top[1:] if t in ("DELETE", "UPDATE", "INSERT", "SELECT", "MERGE")),
                    verb)
    if verb in ("DROP", "TRUNCATE") or (verb == "ALTER" and "DROP" in top) or \
            (verb in ("DELETE", "UPDATE") and not _filtered(toks, verb)):
        what = f"{verb} without WHERE" if verb in ("DELETE", "UPDATE") else \
            "ALTER ... DROP" if verb == "ALTER" else verb
        found.append(("destructive", f"the SQL runs {what}, which destroys data ({short})"))
    if verb == "ATTACH":                              # ATTACH [DATABASE] 'FILE' AS name
        name = next((_unquote(t) for t in top[1:3] if t != "DATABASE"), None)
        found.append(("attach", name) if name else
                     ("unknown", f"the SQL attaches a database named at run time ({short})"))
    if verb == "COPY" and "PROGRAM" in top:
        program = next((_unquote(t) for t in top[top.index("PROGRAM") + 1:][:1]), None)
        found.append(("shell", program) if program is not None else
                     ("unknown", f"COPY runs a program known only at run time ({short})"))
    return found


def _execute(following: list[str], depth: int, short: str) -> list[tuple[str, str]]:
    """``EXECUTE 'SQL'`` runs the literal; ``EXECUTE v``, ``EXECUTE 'a' || b``, ``EXECUTE
    format(...)`` and ``EXEC(@sql)`` run SQL built at run time. ``EXECUTE name`` at the top level
    runs a prepared statement; ``EXECUTE FUNCTION``/``PROCEDURE``/``ON`` are not calls."""
    rest = following[1:] if following[:1] == ["IMMEDIATE"] else following
    nxt = rest[0] if rest else ""
    literal = _unquote(nxt)
    found = sql(literal, depth + 1) if literal is not None and depth < 4 else []
    if literal is not None and "||" not in rest[1:2]:
        return found
    if nxt in ("FUNCTION", "PROCEDURE", "ON", "AS", "") or (
            depth == 0 and nxt[:1].isalpha() and nxt not in ("FORMAT", "CONCAT")):
        return found
    return [*found, ("unknown", f"the SQL executes a statement built at run time ({short})")]


def _filtered(toks: list[tuple[str, int]], verb: str) -> bool:
    """Whether a DELETE or UPDATE has a WHERE that is not always true (``shell.conditions``)."""
    words = [t for t, _d in toks]
    at = words.index(verb) if verb in words else 0
    level = toks[at][1] if toks else 0
    where = next((k for k in range(at, len(toks)) if toks[k] == ("WHERE", level)), None)
    if where is None:
        return False
    end = next((k for k in range(where + 1, len(toks)) if toks[k][1] < level or (
        toks[k][1] == level and toks[k][0] in ("ORDER", "LIMIT", "RETURNING"))), len(toks))
    condition = toks[where + 1:end]
    if not condition:
        return False
    from governance.shell.conditions import always_true

    return not always_true(condition)

def _client_command(line: str) -> list[tuple[str, str]]:
    """psql and mysql backslash commands, sqlite and duckdb dot commands."""
    head, _, rest = line.partition(" ")
    rest = rest.strip()
    if head in ("\\!", ".shell", ".system", ".sh") or (head.startswith("\\!") and len(head) > 2):
        command = (head[2:] + " " + rest).strip() if head.startswith("\\!") else rest
        return [("shell", command)] if command else []
    if head in ("\\o", "\\out", "\\g", ".output", ".once") and rest.startswith("|"):
        return [("pipe", rest[1:].strip())]      # the command reads the query's output
    if head in ("\\copy",) and " program " in f" {rest.lower()} ":
        lowered = rest.lower()
        program = _unquote(rest[lowered.index(" program ") + 9:].strip().split(" ")[0])
        return [("shell", program)] if program else [("unknown", "\\copy runs a program")]
    if head in (".read", ".import") and rest.strip("'\"").startswith("|"):   # .read '|cmd'
        return [("shell", rest.strip("'\"")[1:].strip().rsplit(" ", 1)[0] if head == ".import"
                 else rest.strip("'\"")[1:].strip()),
                ("unknown", f"sqlite {head} reads the output of a command")]
    if head in ("\\i", "\\ir", "\\include", "\\include_relative", ".read", "\\.", "source"):
        return [("file", rest.strip("'\""))]
    words = [w.strip("'\"") for w in rest.split()]
    if head in ("\\o", "\\out", ".output", ".once", ".save", ".backup", ".excel") and words and \
            not words[-1].startswith("-"):
        return [("write", words[-1])]            # .output FILE, .backup [DB] FILE: written
    if head in (".import", "\\copy") and words:   # .import FILE TABLE: a file read
        plain = [w for w in words if not w.startswith("-")]
        name = (plain[0] if plain else "") if head == ".import" else next(
            (words[k + 1] for k in range(len(words) - 1) if words[k].lower() == "from"), "")
        return [("read", name)] if name and name.lower() not in ("stdin", "pstdin") else []
    return []


def redis(text: str) -> list[tuple[str, str]]:
    """Redis commands, one a line (as ``redis-cli`` reads them)."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        verb = parts[0].upper()
        if verb in _DESTROY_REDIS or (verb in ("SCRIPT", "FUNCTION") and parts[1:2] and
                                      parts[1].upper() == "FLUSH"):
            found.append(("destructive", f"redis {verb} deletes data"))
        elif verb == "CONFIG" and [p.upper() for p in parts[1:3]] in (["SET", "DIR"],
                                                                     ["SET", "DBFILENAME"]):
            found.append(("destructive", "redis CONFIG SET dir/dbfilename writes files elsewhere"))
        elif verb in ("EVAL", "EVAL_RO"):
            body = line.split(None, 1)[1] if len(parts) > 1 else ""
            found.extend(redis_script(body))
        elif verb in ("EVALSHA", "EVALSHA_RO", "FCALL", "FCALL_RO"):
            found.append(("unknown", f"redis {verb} runs a stored script governance cannot read"))
    return found


def redis_script(body: str) -> list[tuple[str, str]]:
    """An ``EVAL`` script: the commands its ``redis.call``/``redis.pcall`` name."""
    found: list[tuple[str, str]] = []
    for chunk in body.split("call(")[1:]:
        arg = chunk.lstrip()
        quote = arg[:1]
        if quote not in ("'", '"'):
            found.append(("unknown", "the Redis script calls a command named at run time"))
        else:
            found.extend(redis(arg[1:].split(quote, 1)[0]))
    return found


def mongo(code: str) -> list[tuple[str, str]]:
    """MongoDB shell code: database and collection drops, deletes and updates of every document."""
    found: list[tuple[str, str]] = []
    squeezed = "".join(code.split())
    for marker in (".dropDatabase(", ".drop(", ".dropIndexes(", "dropDatabase:", "drop:",
                   '"dropDatabase"', "'dropDatabase'"):
        if marker in squeezed:
            found.append(("destructive", f"the MongoDB code calls {marker.strip(':(')}"))
    for method in _MONGO_EMPTY:
        for empty in (f".{method}()", f".{method}({{}})", f".{method}({{}},"):
            if empty in squeezed:
                found.append(("destructive", f"the MongoDB code calls {method} on every document"))
    return found
