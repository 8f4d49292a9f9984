"""``make [TARGET ...]``: the recipes a Makefile runs for the targets asked (the default goal when
none), and for their prerequisites, read from the Makefile on disk (or one written earlier in the
same command) and analysed as the shell commands they are.

Imported by ``shell.resolver`` when ``make`` runs. The Makefile's variables are expanded where they
are plain (``X = ...``, ``X := ...``, ``+=``, ``?=``, ``define``, ``NAME=value`` on the command
line, ``$@ $< $^ $*``); a function's result (``$(wildcard ...)``, ``$(call ...)``) is known only at
run time, and ``$(shell CMD)`` and ``X != CMD`` run CMD when the Makefile is read, so CMD is
analysed too. ``include`` is followed one level. ``$(eval ...)`` makes rules at run time: every
recipe in the file is then analysed.
"""

from __future__ import annotations

from governance import system
from governance.shell.source import path_of, run_text, text_of, written

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

UNKNOWN = '"$__make"'   # a value known only at run time, as the shell analysis reads it
NAMES = ("GNUmakefile", "makefile", "Makefile")
DEFAULTS = {"MAKE": "make", "CC": "cc", "CXX": "g++", "CPP": "cc -E", "RM": "rm -f", "AR": "ar",
            "AS": "as", "LD": "ld", "SHELL": "/bin/sh", "FC": "f77", "LEX": "lex", "YACC": "yacc",
            "INSTALL": "install", "MAKEFLAGS": "", "MFLAGS": "", "CURDIR": ""}
_VALUED = ("-I", "--include-dir", "-l", "--load-average", "-o", "--old-file", "--assume-old",
           "-W", "--what-if", "--new-file", "--assume-new", "--eval", "-E")
_MAX_TARGETS = 64


class Makefile:
    """What a Makefile says: variables, rules (target -> [(prerequisites, recipe lines)]), pattern
    rules, the first target, and commands run while it is read."""

    __slots__ = ("eval", "first", "patterns", "rules", "shells", "vars")

    def __init__(self) -> None:
        self.vars: dict[str, str] = {}
        self.rules: dict[str, list[tuple[list[str], list[str]]]] = {}
        self.patterns: list[tuple[str, list[str], list[str]]] = []
        self.first: str | None = None
        self.shells: list[str] = []      # $(shell CMD) and X != CMD outside recipes
        self.eval = False                # $(eval ...): rules made at run time

    # --- expansion ---------------------------------------------------------------------------
    def expand(self, text: str, auto: dict[str, str], outer: dict[str, str | None],
               depth: int = 0) -> str:
        if "$" not in text:
            return text
        if depth > 8:
            return UNKNOWN
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c != "$" or i + 1 >= n:
                out.append(c)
                i += 1
                continue
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt in "({":
                close = ")" if nxt == "(" else "}"
                level, j = 1, i + 2
                while j < n and level:
                    if text[j] == nxt:
                        level += 1
                    elif text[j] == close:
                        level -= 1
                    j += 1
                out.append(self._reference(text[i + 2:j - 1], auto, outer, depth))
                i = j
                continue
            out.append(self._reference(nxt, auto, outer, depth))
            i += 2
        return "".join(out)

    def _reference(self, inner: str, auto: dict[str, str], outer: dict[str, str | None],
                   depth: int) -> str:
        head, _, rest = inner.replace("\t", " ").partition(" ")
        if rest and head == "shell":
            self.shells.append(self.expand(rest, auto, outer, depth + 1))
            return UNKNOWN
        if rest and head == "eval":
            self.eval = True
            return ""
        if rest or ":" in inner or "," in inner:
            return UNKNOWN       # a function or a substitution reference: computed at run time
        name = self.expand(inner, auto, outer, depth + 1)
        if name in auto:
            return auto[name]
        if name in self.vars:
            return self.expand(self.vars[name], auto, outer, depth + 1)
        if name in outer:                        # exported earlier in the same Bash command
            value = outer[name]
            return UNKNOWN if value is None else value
        return DEFAULTS.get(name, "")

    # --- reading -----------------------------------------------------------------------------
    def read(self, text: str, outer: dict[str, str | None], include: list[str] | None) -> None:
        """Read a Makefile's text; ``include`` collects the files it includes (None: no more)."""
        lines = text.replace("\\\r\n", "\\\n").split("\n")
        current: list[list[str]] = []     # the recipe lists of the rule being read
        define: tuple[str, list[str]] | None = None
        k = 0
        while k < len(lines):
            line = lines[k]
            k += 1
            if define is not None:
                if line.strip() == "endef":
                    self.vars[define[0]] = "\n".join(define[1])
                    define = None
                else:
                    define[1].append(line)
                continue
            if line.startswith("\t") and current:
                while line.endswith("\\") and k < len(lines):    # the shell joins the lines
                    line = line + "\n" + lines[k].removeprefix("\t")
                    k += 1
                for recipe in current:
                    recipe.append(line[1:])
                continue
            while line.endswith("\\") and k < len(lines):
                line = line[:-1] + " " + lines[k].strip()
                k += 1
            stripped = line.split("#", 1)[0].strip()
            if not stripped:
                continue
            word = stripped.split(None, 1)[0]
            if word in ("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "vpath",
                        "unexport", ".RECIPEPREFIX"):
                continue
            if word in ("include", "-include", "sinclude"):
                names = self.expand(stripped.split(None, 1)[1] if " " in stripped else "",
                                    {}, outer).split()
                if include is None:
                    self.eval = True             # included twice deep: read no further
                else:
                    include.extend(names)
                continue
            if word == "define" or (word in ("export", "override") and " define " in
                                    f" {stripped} "):
                define = (stripped.split()[-1].rstrip("=:!?+ "), [])
                continue
            current = self._statement(stripped, outer)

    def _statement(self, line: str, outer: dict[str, str | None]) -> list[list[str]]:
        colon, equal = line.find(":"), line.find("=")
        assign = equal >= 0 and (colon < 0 or equal < colon or line[colon:colon + 2] == ":=" or
                                 line[colon:colon + 3] == "::=")
        if assign:
            left, value = line[:equal], line[equal + 1:].strip()
            op = left[-1:] if left[-1:] in ":?+!" else ""
            words = left.rstrip(":?+!").split()
            if not words:
                return []
            name = words[-1]
            if op == "!":
                self.shells.append(self.expand(value, {}, outer))
                self.vars[name] = UNKNOWN
            elif op == "+":
                self.vars[name] = f"{self.vars.get(name, '')} {value}".strip()
            elif op == "?":
                self.vars.setdefault(name, value)
            else:
                self.vars[name] = self.expand(value, {}, outer) if op == ":" else value
            if "$(shell" in value or "${shell" in value:
                self.expand(value, {}, outer)
            if "$(eval" in value:
                self.eval = True
            return []
        if colon < 0:
            if "$(" in line or "${" in line:
                self.expand(line, {}, outer)        # a bare $(eval ...) or $(shell ...)
            return []
        left, right = line[:colon], line[colon + 1:].lstrip(":")
        targets = self.expand(left, {}, outer).split()
        inline = ""
        if ";" in right:
            right, inline = right.split(";", 1)
        if "=" in right:                     # target: VAR = value (a target-specific variable)
            self._statement(right.strip(), outer)
            return []
        prereqs = [p for p in self.expand(right, {}, outer).split() if p != "|"]
        recipes: list[list[str]] = []
        for target in targets:
            recipe = [inline.strip()] if inline.strip() else []
            recipes.append(recipe)
            if "%" in target:
                self.patterns.append((target, prereqs, recipe))
                continue
            self.rules.setdefault(target, []).append((prereqs, recipe))
            if self.first is None and not target.startswith("."):
                self.first = target
        return recipes

    # --- what runs ---------------------------------------------------------------------------
    def recipes_for(self, goals: list[str | None]) -> list[tuple[str, list[str]]]:
        """(target, expanded recipe lines) for the goals and everything they depend on."""
        if self.eval or None in goals:
            goals = [*self.rules, *(p for p, _, _ in self.patterns)]
        out: list[tuple[str, list[str]]] = []
        seen: set[str] = set()
        todo = [g for g in goals if g is not None]
        while todo and len(seen) < _MAX_TARGETS:
            target = todo.pop(0)
            if target in seen:
                continue
            seen.add(target)
            rules = [(p, r, "") for p, r in self.rules.get(target, ())]
            if not any(r for _, r, _ in rules):
                rules += [(p, r, stem) for pattern, p, r in self.patterns
                          if (stem := _stem(pattern, target)) is not None]
            for prereqs, recipe, stem in rules:
                prereqs = [p.replace("%", stem) for p in prereqs]
                auto = {"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs),
                        "+": " ".join(prereqs), "*": stem, "?": " ".join(prereqs)}
                lines = [self.expand(line.lstrip(" \t@-+"), auto, {}) for line in recipe]
                if lines:
                    out.append((target, lines))
                todo.extend(prereqs)
        return out


def _stem(pattern: str, target: str) -> str | None:
    if pattern == target:
        return ""
    head, _, tail = pattern.partition("%")
    if target.startswith(head) and target.endswith(tail) and len(target) >= len(head) + len(tail):
        return target[len(head):len(target) - len(tail)]
    return None


def _options(fields: list[str | None]) -> tuple[list[str | None], list[str | None],
                                                list[str | None], dict[str, str]]:
    files: list[str | None] = []
    dirs: list[str | None] = []
    goals: list[str | None] = []
    overrides: dict[str, str] = {}
    i, n = 1, len(fields)
    while i < n:
        arg = fields[i]
        nxt = fields[i + 1] if i + 1 < n else None
        if arg is None:
            goals.append(None)
        elif arg in ("-f", "--file", "--makefile", "-C", "--directory"):
            (files if arg[:2] == "-f" or arg.startswith("--f") or arg.startswith("--m")
             else dirs).append(nxt)
            i += 1
        elif arg.startswith(("--file=", "--makefile=", "--directory=")):
            (dirs if arg.startswith("--d") else files).append(arg.split("=", 1)[1])
        elif arg[:2] in ("-f", "-C") and len(arg) > 2:
            (files if arg[:2] == "-f" else dirs).append(arg[2:])
        elif arg in _VALUED or (arg in ("-j", "--jobs") and nxt is not None and nxt.isdigit()):
            i += 1
        elif arg.startswith("-"):
            pass
        elif "=" in arg:
            name, _, value = arg.partition("=")
            overrides[name.rstrip(":")] = value
        else:
            goals.append(arg)
        i += 1
    return files, dirs, goals, overrides


STDIN = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _evals(fields: list[str | None]) -> list[str | None]:
    """The makefile text given with ``--eval TEXT``, ``--eval=TEXT``, ``-E TEXT``, ``-ETEXT``."""
    out: list[str | None] = []
    for k in range(1, len(fields)):
        arg = fields[k]
        if arg is None:
            continue
        if arg in ("--eval", "-E"):
            out.append(fields[k + 1] if k + 1 < len(fields) else "")
        elif arg.startswith("--eval="):
            out.append(arg[7:])
        elif arg.startswith("-E") and len(arg) > 2:
            out.append(arg[2:])
    return out


def run(an: Walk, base: str, fields: list[str | None], seg: str, depth: int,
        stdin: str | None = None) -> None:
    """Analyse the recipes ``make`` runs (see the module's docstring)."""
    files, dirs, goals, overrides = _options(fields)
    folder = path_of(an, ".")
    for d in dirs:
        folder = None if d is None or folder is None else system.normpath(
            system.join(folder, system.expanduser(d)))
    if folder is None:
        if an.root is not None:
            an.unknown(seg, f"{base} runs in a folder known only at run time")
        return
    makefile = Makefile()
    outer = dict(an.vars)
    include: list[str] = []
    for text in _evals(fields):       # make --eval TEXT: read before the Makefiles
        if text is None:
            an.unknown(seg, f"{base} --eval reads makefile text known only at run time")
            return
        makefile.read(text, outer, include)
    evaluated = list(makefile.rules)  # their recipes may run whatever the goal: all are read
    names = files or [n for n in NAMES if system.isfile(system.join(folder, n)) or
                       written(an, system.join(folder, n))][:1]
    for name in names:
        if name is None:
            an.unknown(seg, f"{base} reads a Makefile named only at run time")
            return
        text = an.file_text(name) if not dirs else None
        if name in STDIN:                   # make -f /dev/stdin <<< RULES
            name, text = "-", stdin
        if text is None:
            if name == "-":
                an.unknown(seg, f"{base} reads its Makefile from standard input")
                return
            path = system.join(folder, system.expanduser(name))
            if an.wrote(name) and not dirs:
                an.unknown(seg, f"{base} runs recipes known only at run time")
                return
            text = text_of(an, base, path, name, seg)
            if text is None:
                continue
        makefile.read(text, outer, include)
    for name in include[:8]:
        path = system.join(folder, name)
        text = text_of(an, base, path, name, seg) if system.isfile(path) else None
        if text is not None:
            makefile.read(text, outer, None)
    if makefile.first is None and not makefile.rules and not makefile.shells:
        return
    makefile.vars.update(overrides)       # NAME=value on the command line wins
    label = names[0] if names else "Makefile"
    for command in makefile.shells:
        run_text(an, command, None, f"{label}, read by {base}", seg, depth, folder)
    if not goals:
        goals = [makefile.vars.get(".DEFAULT_GOAL", "").strip() or makefile.first]
    goals = [*goals, *(t for t in evaluated if t not in goals)]
    for target, lines in makefile.recipes_for(goals):
        run_text(an, "\n".join(lines), None, f"the recipe {target} of {label}", seg, depth,
                 folder)
    if makefile.eval:
        an.unknown(seg, f"{label} makes rules at run time ($(eval ...) or a nested include)")
