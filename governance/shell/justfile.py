"""``just [RECIPE [ARGS]] ...``: the recipes a justfile runs (the first recipe when none is named),
with their dependencies, read from the justfile on disk (the nearest ``justfile`` up from the
folder, or ``--justfile FILE``) and analysed as shell commands, or by their ``#!`` line as code.

Imported by ``shell.resolver`` when ``just`` runs. ``{{ ... }}`` is replaced by its value where it
is plain: a recipe's parameter (its argument or default), a variable set to strings joined with
``+`` or ``/``, ``justfile_directory()``, ``invocation_directory()``, ``quote(...)``; anything
else is known only at run time. A backtick in a variable runs its command when the justfile is
read, so that command is analysed too. ``import`` is followed one level.
"""

from __future__ import annotations

from governance import system
from governance.shell.source import find_up, path_of, run_text, text_of
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

UNKNOWN = '"$__just"'
NAMES = ("justfile", "Justfile", "JUSTFILE", ".justfile")
_VALUED = ("--shell", "--shell-arg", "--dotenv-path", "--dotenv-filename", "-E", "--chooser",
           "--color", "--dump-format", "--list-heading", "--list-prefix", "--timestamp-format",
           "--command", "-c")
_MAX_RECIPES = 64


class Recipe:
    __slots__ = ("body", "deps", "params")

    def __init__(self, params: list[tuple[str, str | None, bool]], deps: list[list[str]],
                 body: list[str]) -> None:
        self.params = params      # (name, default expression, variadic)
        self.deps = deps          # [name, argument expressions ...]
        self.body = body


def _split(text: str) -> list[str]:
    """Words, with quoted strings and parenthesised groups kept whole."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t":
            i += 1
            continue
        j = i
        depth = 0
        while j < n and (depth or text[j] not in " \t"):
            c = text[j]
            if c in "'\"`":
                end = text.find(c, j + 1)
                j = n if end < 0 else end + 1
                continue
            depth += 1 if c == "(" else -1 if c == ")" else 0
            j += 1
        out.append(text[i:j])
        i = j
    return out


def _colon(line: str) -> int:
    """The recipe header's colon: the first ``:`` outside quotes that is not ``:=``."""
    quote_char = ""
    for k, c in enumerate(line):
        if quote_char:
            quote_char = "" if c == quote_char else quote_char
        elif c in "'\"":
            quote_char = c
        elif c == ":" and line[k + 1:k + 2] != "=":
            return k
    return -1


class Justfile:
    __slots__ = ("commands", "dir", "env", "exprs", "first", "recipes")

    def __init__(self, folder: str, invocation: str) -> None:
        self.dir = folder
        self.env: dict[str, str | None] = {"__justfile_directory": folder,
                                           "__invocation_directory": invocation}
        self.exprs: dict[str, str] = {}
        self.recipes: dict[str, Recipe] = {}
        self.first: str | None = None
        self.commands: list[str] = []        # backticks run when the justfile is read

    def read(self, text: str, imports: list[str] | None) -> None:
        lines = text.split("\n")
        k = 0
        while k < len(lines):
            line = lines[k].rstrip()
            k += 1
            if not line or line[0] in " \t" or line.startswith(("#", "[")):
                continue
            word = line.split(None, 1)[0]
            if word in ("set", "mod", "mod?"):
                continue
            if word in ("import", "import?"):
                if imports is not None:
                    imports.append(line.split(None, 1)[1].strip().strip("'\""))
                continue
            if word == "alias" and ":=" in line:
                name, _, target = line[5:].partition(":=")
                self.exprs["alias " + name.strip()] = target.strip()
                continue
            colon = _colon(line)
            if ":=" in line and (colon < 0 or line.index(":=") < colon):
                name, _, expr = line.partition(":=")
                name = name.split()[-1] if name.split() else ""
                self.exprs[name] = expr.strip()
                continue
            if colon < 0:
                continue
            head = _split(line[:colon].lstrip("@"))
            if not head:
                continue
            params = []
            for param in head[1:]:
                variadic = param[:1] in "+*"
                pname, eq, default = param.lstrip("+*$").partition("=")
                params.append((pname, default if eq else ("''" if param[:1] == "*" else None),
                               variadic))
            deps = [_split(d.strip("()")) for d in _split(line[colon + 1:].split("#", 1)[0])
                    if d != "&&"]
            body: list[str] = []
            while k < len(lines) and (not lines[k].strip() or lines[k][:1] in " \t"):
                body.append(lines[k].strip())
                k += 1
            while body and not body[-1]:
                body.pop()
            self.recipes[head[0]] = Recipe(params, [d for d in deps if d], body)
            if self.first is None:
                self.first = head[0]

    # --- values ------------------------------------------------------------------------------
    def value(self, expr: str, env: dict[str, str | None], depth: int = 0) -> str | None:
        """A just expression's value when it is plain (strings, names, ``+``, ``/``, a few
        functions), else None."""
        expr = expr.strip()
        if depth > 8 or not expr:
            return None if depth > 8 else ""
        parts = _operands(expr)
        if parts is None:
            return None
        out = ""
        for op, term in parts:
            value = self._term(term, env, depth)
            if value is None:
                return None
            out = value if not op else out + value if op == "+" else out.rstrip("/") + "/" + value
        return out

    def _term(self, term: str, env: dict[str, str | None], depth: int) -> str | None:
        if term[:1] in "'\"":
            return term[1:-1].replace("\\n", "\n").replace('\\"', '"') if len(term) > 1 else None
        if term[:1] == "`":
            self.commands.append(term.strip("`"))
            return None
        if term.endswith(")") and "(" in term:
            name, _, args = term[:-1].partition("(")
            if name in ("justfile_directory", "source_directory"):
                return self.dir
            if name in ("invocation_directory", "invocation_directory_native"):
                return self.env["__invocation_directory"]
            if name in ("justfile", "source_file"):
                return system.join(self.dir, "justfile")
            if name == "quote":
                inner = self.value(args, env, depth + 1)
                return None if inner is None else quote(inner)
            if name == "":
                return self.value(args, env, depth + 1)
            return None
        if term in env:
            return env[term]
        if term in self.exprs:
            value = self.value(self.exprs[term], env, depth + 1)
            env[term] = value
            return value
        return None

    def interpolate(self, line: str, env: dict[str, str | None]) -> str:
        out: list[str] = []
        i = 0
        while True:
            j = line.find("{{", i)
            if j < 0:
                out.append(line[i:])
                return "".join(out)
            if line.startswith("{{{{", j):
                out.append(line[i:j] + "{{")
                i = j + 4
                continue
            end = line.find("}}", j)
            if end < 0:
                out.append(line[i:])
                return "".join(out)
            value = self.value(line[j + 2:end], env)
            out.append(line[i:j] + (UNKNOWN if value is None else value))
            i = end + 2


def _operands(expr: str) -> list[tuple[str, str]] | None:
    """``a + 'b' / c`` -> [("", "a"), ("+", "'b'"), ("/", "c")]; None for ``if`` and the like."""
    out: list[tuple[str, str]] = []
    op = ""
    i, n = 0, len(expr)
    while i < n:
        if expr[i] in " \t":
            i += 1
            continue
        if expr[i] in "+/" and out and not op:
            op = expr[i]
            i += 1
            continue
        j = i
        depth = 0
        while j < n and (depth or expr[j] not in " \t+/"):
            c = expr[j]
            if c in "'\"`":
                end = expr.find(c, j + 1)
                j = n if end < 0 else end + 1
                continue
            depth += 1 if c == "(" else -1 if c == ")" else 0
            j += 1
        term = expr[i:j]
        if term in ("if", "else", "==", "!=", "=~", "&&", "||") or (out and not op):
            return None
        out.append((op, term))
        op = ""
        i = j
    return out


def run(an: Walk, base: str, fields: list[str | None], seg: str, depth: int) -> None:
    """Analyse the recipes ``just`` runs (see the module's docstring)."""
    invocation = path_of(an, ".")
    if invocation is None:
        return
    file_arg: str | None = ""
    folder: str | None = None
    args: list[str | None] = []
    sets: dict[str, str | None] = {}
    i, n = 1, len(fields)
    while i < n:
        arg = fields[i]
        nxt = fields[i + 1] if i + 1 < n else None
        if arg in ("-f", "--justfile"):
            file_arg, i = nxt, i + 2
        elif arg in ("-d", "--working-directory"):
            folder, i = nxt, i + 2
        elif arg == "--set":
            if nxt is not None:
                sets[nxt] = fields[i + 2] if i + 2 < n else None
            i += 3
        elif arg in _VALUED:
            i += 2
        elif arg is not None and arg.startswith("-") and not args:
            i += 1
        elif arg is not None and "=" in arg and not args and arg.split("=", 1)[0].isidentifier():
            name, _, value = arg.partition("=")
            sets[name] = value
            i += 1
        else:
            args.append(arg)
            i += 1
    if file_arg is None:
        an.unknown(seg, f"{base} reads a justfile named only at run time")
        return
    text = an.file_text(file_arg) if file_arg else None
    path = path_of(an, file_arg) if file_arg else find_up(invocation, NAMES)
    if path is None:
        return
    if text is None:
        text = text_of(an, base, path, system.basename(path), seg)
        if text is None:
            return
    home = system.dirname(path)
    if folder:
        home = system.normpath(system.join(invocation, system.expanduser(folder)))
    just = Justfile(system.dirname(path), invocation)
    imports: list[str] = []
    just.read(text, imports)
    for name in imports[:8]:
        extra = system.join(just.dir, system.expanduser(name))
        more = text_of(an, base, extra, name, seg) if system.isfile(extra) else None
        if more is not None:
            just.read(more, None)
    just.env.update(sets)
    label = system.basename(path)
    for name in list(just.exprs):
        if not name.startswith("alias "):
            just.value(name, just.env)         # a backtick runs when the justfile is read
    for command in just.commands:
        run_text(an, command, None, f"{label}, read by {base}", seg, depth, home)
    for name, env in _calls(just, args):
        recipe = just.recipes[name]
        lines = [just.interpolate(line, env) for line in recipe.body]
        if lines and lines[0].startswith("#!"):
            text = "\n".join(lines)
        else:
            text = "\n".join(line.lstrip("@-") for line in lines if not line.startswith("#"))
        if text.strip():
            run_text(an, text, None, f"the recipe {name} of {label}", seg, depth, home)


def _calls(just: Justfile, args: list[str | None]) -> list[tuple[str, dict[str, str | None]]]:
    """The recipes run, each with its parameters' values: the ones named (each taking its
    arguments), or the first one, and their dependencies."""
    todo: list[tuple[str, list[str | None]]] = []
    i = 0
    while i < len(args):
        name = args[i]
        if name is None:                            # a recipe named at run time: any of them
            todo += [(r, []) for r in just.recipes]
            break
        name = just.exprs.get("alias " + name, name)
        recipe = just.recipes.get(name)
        if recipe is None:
            break
        count = len(recipe.params)
        if recipe.params and recipe.params[-1][2]:
            count = len(args)
        todo.append((name, args[i + 1:i + 1 + count]))
        i += 1 + count
    if not args and just.first is not None:
        todo.append((just.first, []))
    out: list[tuple[str, dict[str, str | None]]] = []
    seen: set[str] = set()
    while todo and len(out) < _MAX_RECIPES:
        name, values = todo.pop(0)
        recipe = just.recipes.get(name)
        if recipe is None or name in seen:
            continue
        seen.add(name)
        env = dict(just.env)
        for k, (param, default, variadic) in enumerate(recipe.params):
            if variadic:
                rest = values[k:]
                env[param] = None if None in rest else " ".join(str(v) for v in rest)
            elif k < len(values):
                env[param] = values[k]
            else:
                env[param] = None if default is None else just.value(default, env)
        out.append((name, env))
        for dep in recipe.deps:
            todo.append((dep[0], [just.value(a, env) for a in dep[1:]]))
    return out
