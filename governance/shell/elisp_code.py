"""Emacs Lisp (``emacs --batch --eval CODE``, ``emacs --script FILE``): read as forms, not with
patterns. Every list whose head is a function that runs a program or changes files is a
finding, with its literal string arguments (any other argument is a value known only at run
time): ``shell-command`` and the functions like it run a shell line, ``call-process``,
``process-file``, ``start-process`` and ``process-lines`` a program with its arguments,
``delete-directory`` (recursive: destructive), ``delete-file``, ``rename-file``, ``copy-file``,
``write-region``, ``with-temp-file`` and the others change files, ``cd`` changes the folder the
relative paths after it name, ``url-retrieve`` fetches. ``eval`` of a read string, ``load`` of a
file, ``funcall``/``apply`` of a name that is not a literal symbol are ``shell-unknown``. See
``shell.inline`` for what findings mean. No imports at load time.
"""

from __future__ import annotations

from governance.shell.finding import MAX_DEPTH, Finding, apply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.finding import Item


class Sym(str):
    """A symbol (``delete-file``, ``t``, ``nil``), kept apart from a string's value."""

    __slots__ = ()


# function -> (kind for finding.apply, the argument positions it reads)
_CALLS: dict[str, tuple[str, tuple[int, ...]]] = {
    "shell-command": ("cmd", (0,)), "shell-command-to-string": ("cmd", (0,)),
    "async-shell-command": ("cmd", (0,)), "call-process-shell-command": ("cmd", (0,)),
    "process-file-shell-command": ("cmd", (0,)), "compile": ("cmd", (0,)),
    "start-process-shell-command": ("cmd", (2,)), "start-file-process-shell-command": ("cmd", (2,)),
    "delete-file": ("del", (0,)), "make-directory": ("write", (0,)),
    "rename-file": ("move", (0, 1)), "copy-file": ("copy", (0, 1)),
    "copy-directory": ("copy", (0, 1)), "make-symbolic-link": ("copy", (0, 1)),
    "add-name-to-file": ("copy", (0, 1)), "write-file": ("write", (0,)),
    "with-temp-file": ("write", (0,)), "write-region": ("write", (2,)),
    "append-to-file": ("write", (2,)), "set-file-modes": ("write", (0,)),
    "url-retrieve": ("net", (0,)), "url-retrieve-synchronously": ("net", (0,)),
    "url-copy-file": ("net", (0,)),
}
# where the program is among the arguments, and where its own arguments start
_PROGRAMS = {"call-process": (0, 4), "process-file": (0, 4), "start-process": (2, 3),
             "start-file-process": (2, 3), "process-lines": (0, 1),
             "call-process-region": (2, 6)}
_UNKNOWN = ("eval", "load", "load-file", "funcall", "apply", "make-process", "require")


def findings(code: str, depth: int = 0) -> list[Finding]:
    out: list[Finding] = []
    if depth > MAX_DEPTH:
        return [Finding("shell-unknown", "the Emacs Lisp code nests evaluated code too deeply")]
    try:
        forms = _read(code)
    except ValueError:
        return [Finding("shell-unknown", "the Emacs Lisp code cannot be read")]
    for form in forms:
        _walk(form, out, depth)
    return out


def _walk(form: object, out: list[Finding], depth: int) -> None:
    if not isinstance(form, list) or not form:
        return
    head = form[0]
    if isinstance(head, Sym):
        _call(str(head), form[1:], out, depth)
    for item in form:
        _walk(item, out, depth)


def _call(name: str, args: list[object], out: list[Finding], depth: int) -> None:
    reason = f"the Emacs Lisp code calls {name}"
    if name in _CALLS:
        kind, positions = _CALLS[name]
        items: list[Item] = [_string(args[k]) if k < len(args) else None for k in positions]
        apply(out, kind, items, reason, lambda code: findings(code, depth + 1))
    elif name == "delete-directory":
        recursive = len(args) > 1 and not (isinstance(args[1], Sym) and args[1] == "nil")
        apply(out, "destroy" if recursive else "del", [_string(args[0]) if args else None],
              reason, lambda code: [])
    elif name in _PROGRAMS:
        at, start = _PROGRAMS[name]
        program = _string(args[at]) if len(args) > at else None
        apply(out, "argv", [program, [_string(a) for a in args[start:]]], reason,
              lambda code: [])
    elif name == "cd" or (name in ("setq", "setq-local") and len(args) > 1 and
                          args[0] == "default-directory"):
        where = args[0] if name == "cd" else args[1]
        apply(out, "chdir", [_string(where)], reason, lambda code: [])
    elif name in _UNKNOWN and not (name == "require" and args and _quoted_symbol(args[0])):
        out.append(Finding("shell-unknown", f"{reason}, which runs code known only at run time"))


def _string(form: object) -> str | None:
    """A literal string's value; ``(expand-file-name "X")`` and ``(concat "a" "b")`` of
    literals too; None for any other form."""
    if isinstance(form, str) and not isinstance(form, Sym):
        return form
    if isinstance(form, list) and form and isinstance(form[0], Sym):
        parts = [_string(f) for f in form[1:]]
        if form[0] == "concat" and all(p is not None for p in parts):
            return "".join(str(p) for p in parts)
        if form[0] in ("expand-file-name", "file-truename") and parts and parts[0] is not None:
            return parts[0] if len(parts) == 1 or parts[1] is None else \
                str(parts[1]).rstrip("/") + "/" + str(parts[0])
    return None


def _quoted_symbol(form: object) -> bool:
    return isinstance(form, list) and len(form) == 2 and form[0] == "quote"


def _read(code: str) -> list[object]:
    """The forms of the code: lists, strings (their values), symbols; ``'X`` is ``(quote X)``."""
    stack: list[list[object]] = [[]]
    i, n = 0, len(code)
    quotes: list[int] = []      # stack depths where a ' waits for its form
    while i < n:
        c = code[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == ";":
            while i < n and code[i] != "\n":
                i += 1
            continue
        if c in "'`":
            quotes.append(len(stack))
            i += 1
            continue
        if c == ",":
            i += 2 if code[i + 1:i + 2] == "@" else 1
            continue
        if c in "([":
            stack.append([])
            i += 1
            continue
        if c in ")]":
            if len(stack) == 1:
                raise ValueError("unbalanced")
            done = stack.pop()
            _put(stack, done, quotes)
            i += 1
            continue
        if c == '"':
            j, text = i + 1, []
            while j < n and code[j] != '"':
                if code[j] == "\\" and j + 1 < n:
                    text.append({"n": "\n", "t": "\t"}.get(code[j + 1], code[j + 1]))
                    j += 2
                    continue
                text.append(code[j])
                j += 1
            if j >= n:
                raise ValueError("unterminated string")
            _put(stack, "".join(text), quotes)
            i = j + 1
            continue
        j = i
        while j < n and code[j] not in " \t\r\n()[]\";'":
            j += 2 if code[j] == "\\" else 1
        word = code[i:j]
        _put(stack, Sym(word) if not _number(word) else None, quotes)
        i = j
    if len(stack) != 1:
        raise ValueError("unbalanced")
    return stack[0]


def _put(stack: list[list[object]], form: object, quotes: list[int]) -> None:
    while quotes and quotes[-1] == len(stack):
        quotes.pop()
        form = [Sym("quote"), form]
    stack[-1].append(form)


def _number(word: str) -> bool:
    return word.lstrip("+-").replace(".", "", 1).isdigit()
