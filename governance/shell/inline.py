"""Inline code (``python -c``, ``node -e``, ``perl -e`` ...): what it does beyond computing.

``findings(language, code)`` reports running a command (``shell``, with a literal ``command`` or
``argv`` for the caller to analyse as Bash; ``shell-unknown`` when the command, or code evaluated, is
known only at run time), network access (``web-fetch``), deleting (``file-delete``; ``destructive``
for trees) and writing (``file-write``), with the literal ``path`` when known. Code that only
computes or prints yields ``[]``, whatever its strings say. A program with a literal name and
run-time arguments also yields a ``shell`` template with ``"$__inline"`` for the run-time parts.

Nothing is imported at load time (hot path). Python is parsed with ``ast`` (imported then): imports
and aliases (``import os as o``, ``from os import system as s``, ``from os import *``,
``s = os.system``), ``__import__``, ``importlib.import_module``, ``getattr(os, 'system')``,
``sys.modules['os']``, ``vars(os)[..]`` and ``os.__dict__[..]`` are resolved (a name built from
pieces is also ``shell-unknown``); a literal given to ``exec``/``eval``/``compile`` is analysed as
Python; ``ctypes``, ``pickle``/``marshal`` loads, ``runpy`` and a runner used uncalled
(``map(os.system, x)``, ``class A: r = os.system``) are ``shell-unknown``. Paths are literal when
built from constants (``Path('a') / 'b'``, ``os.path.join``, ``Path.home()``, a name assigned once).

Node, Perl, Ruby, PHP, awk and Lua are scanned (``re``, imported then): a lexer drops comments and
turns literals into tokens (backticks, ``qx``, ``%x`` into command tokens, ``qw``/``%w`` into lists,
interpolated strings into run-time values), then the idioms of ``_RULES`` are matched on the result,
so a call spelled inside a string is no call. An argument is literal when it is one token or a
``[...]`` list of tokens; a variable, a concatenation or a call is run-time.

Limits: no data flow beyond names assigned once (``for c in ["ls"]: os.system(c)`` is unknown); an
alias keeps its sensitive meaning when rebound; methods of values of unknown type are missed (but
``Path`` writers and deleters, ``loop.subprocess_*``). The scanners know no grammar: regular
expression literals are guessed from the preceding character; heredocs, nested template literals
and formats are not lexed; escapes are simplified; aliases (``local e = os.execute``: unknown) and
receivers are not resolved. Node's ``exec``/``spawn`` count only in code that mentions
``child_process``, where a computed member call (``cp[m](x)``) or a renamed one is unknown and
``re.exec(s)`` reads as a call. Arguments are read up to 500 characters after the call.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Sequence
    from typing import NamedTuple

    Item = str | None | list[str | None]      # an argument: literal, run-time (None) or a list

    class Finding(NamedTuple):
        primitive: str
        reason: str
        command: str | None = None
        argv: tuple[str, ...] | None = None
        path: str | None = None
else:
    class Finding(tuple):
        """The NamedTuple above, without importing ``typing``."""

        __slots__ = ()
        _fields = ("primitive", "reason", "command", "argv", "path")

        def __new__(cls, primitive, reason, command=None, argv=None, path=None):
            return tuple.__new__(cls, (primitive, reason, command, argv, path))

        def __repr__(self):
            return "Finding(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=True)) + ")"

    for _i, _field in enumerate(Finding._fields):
        setattr(Finding, _field, property(lambda self, _i=_i: self[_i]))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


RUNTIME = "$__inline"
_LABEL = {"python": "Python", "node": "Node", "perl": "Perl", "ruby": "Ruby", "php": "PHP", "awk": "awk",
          "lua": "Lua"}
_PY = {name: kind for kind, names in (
    ("sub", "subprocess.run subprocess.call subprocess.check_call subprocess.check_output subprocess.Popen"),
    ("cmd", "os.system os.popen subprocess.getoutput subprocess.getstatusoutput commands.getoutput "
            "commands.getstatusoutput asyncio.create_subprocess_shell pexpect.run pexpect.spawn"),
    ("pty", "pty.spawn"), ("aexec", "asyncio.create_subprocess_exec"), ("code", "exec eval compile"),
    ("dyn", "importlib.import_module importlib.__import__ __import__ getattr"),
    ("del", "os.remove os.unlink os.rmdir"), ("destroy", "shutil.rmtree os.removedirs"),
    ("move", "os.rename os.replace os.renames shutil.move"), ("open", "open io.open codecs.open"),
    ("copy", "shutil.copy shutil.copy2 shutil.copyfile shutil.copytree os.link os.symlink"),
    ("write", "os.truncate os.mkdir os.makedirs os.mkfifo os.chmod os.chown os.utime shutil.chown"),
    ("osopen", "os.open")) for name in names.split()}
_ROOTS = (("net", _words("urllib.request urllib.urlopen urllib2 urllib3 http.client httplib requests httpx "
                         "aiohttp ftplib smtplib telnetlib poplib imaplib xmlrpc.client paramiko webbrowser "
                         "pip._internal socket.socket socket.create_connection socket.getaddrinfo pycurl "
                         "socket.gethostbyname asyncio.open_connection websocket websockets")),
          ("opaque", _words("ctypes cffi pickle.load pickle.loads marshal.load marshal.loads runpy dill "
                            "code.interact types.FunctionType types.CodeType")))
_BUILTINS = _words("exec eval compile open __import__ getattr vars globals locals str __builtins__")
_SENSITIVE = _words("os posix nt subprocess pty builtins __builtins__ shutil importlib ctypes asyncio "
                    "commands sys socket io")
_PATHS = _words("pathlib.Path pathlib.PurePath pathlib.PosixPath pathlib.PurePosixPath")
_SAME = _words("str os.fspath os.path.expanduser os.path.abspath os.path.realpath os.path.normpath")
_READ_FLAGS = _words("O_RDONLY O_CLOEXEC O_NOFOLLOW O_DIRECTORY O_NONBLOCK O_NOCTTY") | _SENSITIVE
_COMMANDS = _words("sub cmd pty aexec exec code")
_PATH_METHODS = {"write_text": "write", "write_bytes": "write", "unlink": "del", "symlink_to": "write",
                 "hardlink_to": "write", "touch": "write", "mkdir": "write", "chmod": "write",
                 "rmdir": "del", "rename": "move", "replace": "move", "open": "open"}


def findings(language: str, code: str) -> list[Finding]:
    """What inline code does beyond computing. language is one of "python", "node", "perl", "ruby",
    "php", "awk", "lua" (others: return [])."""
    return list(dict.fromkeys(_findings(language, code, 0, {})))


def _findings(language: str, code: str, depth: int, names: dict[str, str]) -> list[Finding]:
    if language not in _LABEL:
        return []
    if depth > 6:
        return [Finding("shell-unknown", f"the {_LABEL[language]} code nests evaluated code too deeply")]
    try:
        return _python(code, depth, names) if language == "python" else _scan(language, code, depth)
    except RecursionError:
        return [Finding("shell-unknown", f"the {_LABEL[language]} code is nested too deeply to read")]


def _run_cmd(out: list[Finding], value: Item, reason: str, template: str | None = None) -> None:
    if isinstance(value, list):
        _run_argv(out, value, reason)
    elif value is None:
        out.append(Finding("shell-unknown", reason + " with a command known only at run time"))
        if template:
            out.append(Finding("shell", reason, command=template))
    elif value.strip():
        out.append(Finding("shell", reason, command=value))


def _run_argv(out: list[Finding], values: list[str | None], reason: str) -> None:
    if not values or values[0] is None:
        out.append(Finding("shell-unknown", reason + " with a program known only at run time"))
    elif None in values:
        out.append(Finding("shell-unknown", reason + " with arguments known only at run time"))
        out.append(Finding("shell", reason, command=" ".join(
            f'"{RUNTIME}"' if v is None else v if v and all(c.isalnum() or c in "-_./=:,+@%" for c in v)
            else "'" + v.replace("'", "'\\''") + "'" for v in values)))
    else:
        out.append(Finding("shell", reason, argv=tuple(v or "" for v in values)))


def _file(out: list[Finding], kind: str, value: Item, reason: str) -> None:
    primitive = {"del": "file-delete", "destroy": "destructive"}.get(kind, "file-write")
    out.append(Finding(primitive, reason, path=value if isinstance(value, str) else None))


def _apply(out: list[Finding], kind: str, items: list[Item], reason: str, lang: str = "python",
           depth: int = 0, names: dict[str, str] | None = None, template: str | None = None) -> None:
    """Report a call of ``kind`` with the arguments ``items`` (Python and the scanners share this)."""
    first, more = (items[0] if items else None), (items[1] if len(items) > 1 else None)
    if kind == "cmd" or (kind == "list" and len(items) == 1):
        _run_cmd(out, first, reason, template)
    elif kind == "list":                      # system LIST
        _run_argv(out, _flat(items), reason)
    elif kind == "argv":                      # spawn(program, [args])
        head = first if isinstance(first, list) else [first]
        _run_argv(out, _strs(head) + (more if isinstance(more, list) else []), reason)
    elif kind == "eval":
        out.extend(_findings(lang, first, depth + 1, names or {}) if isinstance(first, str) else
                   [Finding("shell-unknown", reason + " on code known only at run time")])
    elif kind in ("net", "unknown"):
        out.append(Finding("web-fetch", reason) if kind == "net" else
                   Finding("shell-unknown", reason + " (what it runs is known only at run time)"))
    elif kind in ("del", "destroy", "write", "dels"):     # dels: every argument is a path
        for value in _flat(items) if kind == "dels" else first if isinstance(first, list) else [first]:
            _file(out, kind.rstrip("s"), value, reason)
    elif kind in ("move", "copy"):
        _file(out, "write", more, reason)
        if kind == "move":
            _file(out, "del", first, reason)
    elif kind == "open" and len(items) > 1 and not (isinstance(more, str) and all(c not in more for c in
                                                                                  "wax+")):
        _file(out, "write", first, reason)      # open(path, mode): a literal mode without w, a, x, + reads


def _strs(items: Sequence[Item]) -> list[str | None]:
    return [i if isinstance(i, str) else None for i in items]


def _flat(items: list[Item]) -> list[str | None]:
    return [v for i in items for v in (i if isinstance(i, list) else [i])]


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        out = part if part.startswith("/") or not out else out.rstrip("/") + "/" + part
    return out


def _norm(q: str | None) -> str | None:
    for prefix, to in (("builtins.", ""), ("__builtins__.", ""), ("posix.", "os."), ("nt.", "os.")):
        if q is not None and q.startswith(prefix):
            return to + q[len(prefix):]
    return q


def _py_kind(q: str | None) -> str | None:
    if q is not None and q.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
        return "exec"
    for kind, roots in _ROOTS:
        if q is not None and any(q == r or q.startswith(r + ".") for r in roots):
            return kind
    return _PY.get(q or "")


def _walk(node: ast.AST) -> list[ast.AST]:
    """Every node of a tree, breadth first (``ast.walk`` without importing ``ast``)."""
    out = [node]
    for item in out:
        for field in item._fields:
            value = getattr(item, field, None)
            if isinstance(value, list):
                out.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                out.append(value)
    return out


def _python(code: str, depth: int, names: dict[str, str]) -> list[Finding]:
    # The node classes come from the builtin ``_ast``: importing ``ast`` itself (contextlib, enum,
    # functools) would cost more than the whole hook call.
    global ast
    import _ast as ast

    try:
        nodes = _walk(compile(code, "<inline>", "exec", ast.PyCF_ONLY_AST))
    except (SyntaxError, ValueError, MemoryError, RecursionError, TypeError):
        return []
    py = _Py(depth, names)
    for node in nodes:                        # a name stored more than once is no constant
        name = node.id if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else \
            node.arg if isinstance(node, ast.arg) else ""
        py.stores[name] = py.stores.get(name, 0) + 1
    binds = [n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))]
    py.called = {n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for bind in binds + binds:                # twice: a binding may use one walked later
        py.bind(bind)
    for call in nodes:
        if isinstance(call, ast.Call):
            py.skip.add(id(call.func))
            py.call(call)
    for ref in nodes:                         # a runner used uncalled: map(os.system, ...)
        if isinstance(ref, (ast.Name, ast.Attribute)) and isinstance(ref.ctx, ast.Load) and \
                id(ref) not in py.skip and _py_kind(q := _norm(py.qual(ref))) in _COMMANDS:
            py.unknown(f"passes {q} around uncalled")
    return py.out


class _Py:
    """One Python tree: its bindings (imports, aliases, constants), then its calls."""

    def __init__(self, depth: int, names: dict[str, str]) -> None:
        self.depth, self.names, self.stars = depth, dict(names), list[str]()
        self.stores: dict[str, int] = {}
        self.consts: dict[str, str] = {}
        self.paths: set[str] = set()
        self.skip: set[int] = set()
        self.called: set[str] = set()
        self.out: list[Finding] = []

    def unknown(self, reason: str) -> None:
        self.out.append(Finding("shell-unknown", "the Python code " + reason))

    def bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                self.names[a.asname or root] = a.name if a.asname else root
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                if a.name == "*":
                    self.stars.append(node.module or "")
                else:
                    self.names[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Assign):
            text, q = self.text(node.value), _norm(self.qual(node.value))
            for t in node.targets:
                if not isinstance(t, ast.Name):
                    continue
                if self.pathish(node.value):
                    self.paths.add(t.id)
                if text is not None and self.stores.get(t.id) == 1:
                    self.consts[t.id] = text
                elif q is not None and (_py_kind(q) or q.split(".")[0] in _SENSITIVE or q in _PATHS):
                    self.names[t.id] = q
                    if t.id in self.called:   # s = os.system; s(..): the call is read, not the alias
                        self.skip.add(id(node.value))

    def qual(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (``os.system``), resolving imports."""
        if isinstance(node, ast.Name):
            star = [q for m in self.stars if _py_kind(q := f"{m}.{node.id}") or q in _PATHS]
            return self.names.get(node.id) or next(iter(star), node.id if node.id in _BUILTINS else None)
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and node.args and _py_kind(f := _norm(self.qual(node.func))) == "dyn":
            if f != "getattr":
                return self.lookup("", node.args[0], f or "")
            return self.lookup(self.qual(node.args[0]), node.args[1], f) if len(node.args) > 1 else None
        if isinstance(node, ast.Subscript):
            inner, base = node.value, None
            if isinstance(inner, ast.Attribute) and inner.attr == "__dict__":
                base = self.qual(inner.value)
            elif isinstance(inner, ast.Call) and self.qual(inner.func) in ("vars", "globals", "locals"):
                base = self.qual(inner.args[0]) if inner.args else ""
            elif self.qual(inner) in ("sys.modules", "__builtins__"):
                base = ""
            return self.lookup(base, node.slice, "a subscript")
        return None

    def lookup(self, base: str | None, key: ast.AST, how: str) -> str | None:
        """``base.key`` (the module ``key`` when ``base`` is empty), for a sensitive base."""
        if base is None or (base and base.split(".")[0] not in _SENSITIVE):
            return None
        name = self.text(key)
        if name is None or not isinstance(key, ast.Constant):
            self.unknown(f"looks up a name {'built from pieces' if name else 'known only at run time'} "
                         f"({how})")
        return None if name is None else f"{base}.{name}" if base else self.names.get(name, name)

    def text(self, node: ast.AST | None) -> str | None:
        """The string (or path) an expression always has, else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            return node.value if isinstance(node.value, str) else node.value.decode("utf-8", "replace")
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        parts = [self.text(v) for v in node.values] if isinstance(node, ast.JoinedStr) else \
            [self.text(node.left), self.text(node.right)] if isinstance(node, ast.BinOp) else \
            [self.text(a) for a in node.args] if isinstance(node, ast.Call) and not node.keywords else [None]
        texts = [p for p in parts if p is not None]
        if len(texts) < len(parts):
            return None
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            return "".join(texts)
        if isinstance(node, ast.BinOp):
            return _join(texts) if isinstance(node.op, ast.Div) else None
        f = _norm(self.qual(node.func)) if isinstance(node, ast.Call) else None
        if f in _PATHS or f == "os.path.join":
            return _join(texts) if texts else "."
        if f in ("pathlib.Path.home", "pathlib.Path.cwd"):
            return "~" if f.endswith("home") else "."
        return texts[0] if f in _SAME and len(texts) == 1 else None

    def item(self, node: ast.AST) -> Item:
        """A literal list or tuple as a list, anything else as ``text``."""
        return [self.text(e) for e in node.elts] if isinstance(node, ast.List | ast.Tuple) else \
            self.text(node)

    def pathish(self, node: ast.AST) -> bool:
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, ast.Div) and self.pathish(node.left)
        if isinstance(node, ast.Name):
            return node.id in self.paths
        f = self.qual(node.func) if isinstance(node, ast.Call) else None
        return f is not None and (f in _PATHS or f.rsplit(".", 1)[0] in _PATHS)

    def template(self, node: ast.AST | None) -> str | None:
        """A command string with RUNTIME for its run-time parts (f-strings, ``+``)."""
        if isinstance(node, ast.JoinedStr):
            return "".join(RUNTIME if (t := self.text(v)) is None else t for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return (self.template(node.left) or RUNTIME) + (self.template(node.right) or RUNTIME)
        return self.text(node)

    def call(self, node: ast.Call) -> None:
        q = _norm(self.qual(node.func))
        kind, args, reason = _py_kind(q), list(node.args), f"the Python code calls {q}"
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if kind is None and isinstance(node.func, ast.Attribute):
            attr, recv = node.func.attr, node.func.value
            reason = f"the Python code calls .{attr}()"
            if attr in ("subprocess_shell", "subprocess_exec"):      # loop.subprocess_shell(factory, cmd)
                kind, args = ("cmd" if attr == "subprocess_shell" else "aexec"), args[1:]
            elif attr in _PATH_METHODS and (self.pathish(recv) or "_" in attr or attr == "unlink"):
                kind, args = _PATH_METHODS[attr], [recv, *args]
        if kind == "dyn":
            self.qual(node)                   # reports a name known only at run time
        if kind in (None, "dyn") or any(isinstance(a, ast.Starred) for a in args):
            return self.unknown(f"calls {q} with unpacked arguments") if kind in _COMMANDS else None
        args = args or [v for k in ("args", "path", "file", "src") if (v := kw.get(k)) is not None][:1]
        if len(args) == 1 and "dst" in kw:
            args.append(kw["dst"])
        first, items = (args[0] if args else None), [self.item(a) for a in args]
        template = self.template(first)
        if kind == "sub":                     # subprocess.run(args, shell=, executable=)
            shell = kw.get("shell")
            on = shell is not None and not (isinstance(shell, ast.Constant) and not shell.value)
            if isinstance(first, ast.Call) and _norm(self.qual(first.func)) == "shlex.split" and first.args:
                on, template, items = True, self.template(first.args[0]), [self.text(first.args[0])]
            head = items[0] if items else None
            if isinstance(head, list) and head and "executable" in kw and not on:
                head[0] = self.text(kw["executable"])
            kind = "cmd" if on or head is None else "argv"
            items = [head[0] if head else None] if on and isinstance(head, list) else items[:1]
        elif kind in ("pty", "aexec"):
            items = [_strs(items)] if kind == "aexec" else items[:1]
            kind = "argv"
        elif kind == "exec":                  # os.execv(path, argv), os.execl(path, arg0, *args) ...
            name = (q or "").rsplit(".", 1)[-1]
            rest: list[Item] = items[1:] if name.startswith("spawn") else items     # spawn*(mode, ...)
            if "v" in name or "posix" in name:
                vector = rest[1] if len(rest) > 1 and isinstance(rest[1], list) else [None, None]
                rest = [*rest[:1], *vector]
            elif name.endswith("e"):
                rest = rest[:-1]                                              # the environment
            kind, items = "argv", [_strs(rest[:1] + rest[2:])]
        elif kind == "code":
            if isinstance(first, ast.Call) and _norm(self.qual(first.func)) == "compile":
                return None                   # exec(compile(...)): the compile call is read itself
            kind = "eval"
        elif kind in ("open", "osopen"):
            mode = args[1] if len(args) > 1 else kw.get("mode", kw.get("flags"))
            text = self.text(mode) if mode is not None else "r"
            leaves = [n.attr if isinstance(n, ast.Attribute) else self.names.get(n.id, n.id)
                      if isinstance(n, ast.Name) else n.value for n in _walk(mode or ast.Constant(0))
                      if isinstance(n, (ast.Attribute, ast.Name, ast.Constant))]
            if (kind == "open" and all(c not in (text or "w") for c in "wax+")) or (
                    kind == "osopen" and all(leaf in _READ_FLAGS or leaf == 0 for leaf in leaves)):
                return None                   # a read-only mode, or os.open flags without writing ones
            kind = "write"
        _apply(self.out, "unknown" if kind == "opaque" else kind, items, reason, "python", self.depth,
               self.names, template)


# --- the scanner: Node, Perl, Ruby, PHP, awk, Lua ------------------------------------------------------
_LEX = {  # the constructs opening literals and comments; interpolation in non-plain quotes; block end
    "node": (r"(?P<bc>/\*)|(?P<lc>//)|(?P<q>['\"`])|(?P<re>/)", r"\$\{", "*/"),
    "perl": (r"(?P<lc>(?<![$\\])#)|(?P<q>['\"`])|(?P<re>/)|(?P<ql>(?<![\w$@%&>:-])(?:q[qxwr]?|m|s|tr|y)"
             r"(?=[/|!#{(\[<'\"~^%:@+]))", r"(?<!\\)[$@][\w{:$]", ""),
    "ruby": (r"(?P<bc>^=begin\b)|(?P<lc>#)|(?P<q>['\"]|(?<!:)`)|(?P<re>/)|(?P<ql>(?<![\w)\]}])%[qQwWiIxs]?"
             r"(?=[^\w\s]))", r"(?<!\\)#[{@$]", "\n=end"),
    "php": (r"(?P<bc>/\*)|(?P<lc>//|#)|(?P<q>['\"`])", r"(?<!\\)\$[\w{]|\{\$", "*/"),
    "awk": (r"(?P<lc>#)|(?P<q>\")|(?P<re>/)", "", ""),
    "lua": (r"(?P<long>(?:--)?\[=*\[)|(?P<lc>--)|(?P<q>['\"])", "", ""),
}
_OPS = {  # a quote: p plain (no interpolation), x a command, w a word list, r a pattern (no value)
    "'": "p", "`": "x", "q": "p", "qx": "x", "qw": "pw", "qr": "r", "m": "r", "s": "r", "tr": "r", "y": "r",
    "/": "r", "%q": "p", "%x": "x", "%w": "pw", "%W": "w", "%i": "pw", "%I": "w", "%s": "p"}
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_PREFIX = {"<P>": r"(?<![\w$@%&>:])", "<R>": r"(?<![\w.:@$])", "<H>": r"(?<![\w$>:])"}
_RULES = {  # kind pattern: a match ends where the call's arguments start
    "node": r"""cmd (?<![\w$])(?:execSync|exec)(?=\s*\()
argv (?<![\w$])(?:spawnSync|spawn|execFileSync|execFile)(?=\s*\()
eval (?<![\w$.])(?:eval|Function)(?=\s*\()|\bvm\.(?:runIn\w*Context|compileFunction|Script)\b
require (?<![\w$.])(?:require|import)(?=\s*\()|\b(?:from|import)(?=\s*\x00)
unknown \bprocess\.(?:binding|dlopen|_linkedBinding)\b
cpref (?<![\w$])(?:execSync|exec|spawnSync|spawn|execFileSync|execFile)\b(?!\s*[(,}])
cpref \[[^\[\]\n]*\]\s*(?=\()
net (?<![\w$])fetch(?=\s*\()|\bXMLHttpRequest\b|\bWebSocket\b
net \b(?:https?|http2|net|tls|dgram)\.(?:get|request|connect|createConnection|createSocket)\b
write (?<![\w$])(?:writeFileSync|appendFileSync|createWriteStream|truncateSync|mkdirSync|chmodSync)\b
write \.(?:writeFile|appendFile|truncate|mkdir|chmod)\b
move (?<![\w$])renameSync\b|\.rename\b
copy (?<![\w$])(?:copyFileSync|cpSync|symlinkSync|linkSync)\b|\.(?:copyFile|cp|symlink)\b
rm (?<![\w$])(?:unlinkSync|rmdirSync|rmSync)\b|\.(?:unlink|rmdir|rm)\b
destroy (?<![\w$.])rimraf(?:\.sync)?(?=\s*\()
open (?<![\w$])openSync\b|\bfs\.open\b""",
    "perl": r"""list <P>(?:CORE::)?(?:system|exec)\b(?!\s*(?:=>|\}))
cmd <P>readpipe\b
perlopen <P>open\b
eval <P>eval\b(?!\s*\{)
dels <P>(?:unlink|rmdir)\b
destroy <P>(?:File::Path::)?(?:rmtree|remove_tree)\b
move <P>(?:File::Copy::)?(?:move|mv)\b|<P>rename\b
copy <P>(?:File::Copy::)?(?:copy|cp)\b|<P>(?:symlink|link)\b
write <P>(?:mkdir|truncate)\b
net \b(?:LWP|HTTP::Tiny|IO::Socket|Net::(?:HTTP|FTP|SMTP|Ping|SSH2?|Telnet|POP3|IMAP\w*)|Socket)\b
net \b(?:Mojo::UserAgent|WWW::Mechanize)\b|<P>socket(?=\s*\()""",
    "ruby": r"""list (?:\b(?:Kernel|Process)\.|<R>)(?:system|exec|spawn)\b(?![?!:])
cmd \bIO\.popen\b
list \bPTY\.spawn\b|\bOpen3\.\w+
pipe (?:\bKernel\.|<R>)open\b|\bIO\.(?:read|readlines|foreach|write|binread)\b
open (?:\bKernel\.|<R>)open\b|\bFile\.(?:open|new)\b
eval (?:(?<![\w:@$])(?:instance_eval|class_eval|module_eval)|<R>eval)\b(?!\s*(?:\{|do\b))
unknown \b(?:__send__|public_send|send|method)\s*\(?\s*:(?:system|exec|spawn|eval|popen|open|`)
destroy \bFileUtils\.(?:rm_rf|rm_r|rmtree|remove_dir|remove_entry(?:_secure)?)\b
del \b(?:File|Dir)\.(?:delete|unlink|rmdir)\b|\bFileUtils\.(?:rm|rm_f|rmdir|remove|remove_file)\b
write \b(?:File|IO)\.(?:write|binwrite)\b|\bFileUtils\.(?:touch|mkdir_p|mkdir|makedirs)\b|\bDir\.mkdir\b
move \bFile\.rename\b|\bFileUtils\.(?:mv|move)\b
copy \bFileUtils\.(?:cp|copy|cp_r|ln|ln_s|ln_sf|install|copy_file)\b|\bFile\.(?:symlink|link)\b
net \b(?:Net::(?:HTTP|FTP|SMTP|Telnet|SSH|POP3|IMAP)|URI\.open|TCPSocket|UDPSocket|Socket)\b
net \b(?:HTTParty|Faraday|RestClient|Excon|Typhoeus)\b
require <R>require\b""",
    "php": r"""cmd <H>(?:system|exec|shell_exec|passthru|popen|proc_open)(?=\s*\()
argv <H>pcntl_exec(?=\s*\()
eval <H>(?:eval|assert)(?=\s*\()
unknown <H>create_function(?=\s*\()
phpcall <H>(?:call_user_func(?:_array)?|forward_static_call(?:_array)?|array_map|array_walk|usort)(?=\s*\()
phpcall <H>register_shutdown_function(?=\s*\()
phpvar \$\w+(?=\s*\()
net <H>(?:curl_init|curl_exec|fsockopen|pfsockopen|stream_socket_client|socket_connect)(?=\s*\()
net <H>(?:ftp_connect|ftp_ssl_connect|mail|get_headers|dns_get_record)(?=\s*\()
url <H>(?:file_get_contents|fopen|file|readfile|copy|simplexml_load_file)(?=\s*\()
del <H>(?:unlink|rmdir)(?=\s*\()
phprec \bRecursiveDirectoryIterator\b
write <H>(?:file_put_contents|touch|mkdir|chmod|chown|chgrp)(?=\s*\()
open <H>fopen(?=\s*\()
move <H>rename(?=\s*\()
copy <H>(?:copy|symlink|link)(?=\s*\()""",
    "awk": r"""cmd (?<![\w$])system(?=\s*\()""",
    "lua": r"""cmd \b(?:os\.execute|io\.popen)\b
del \bos\.remove\b
move \bos\.rename\b
open \bio\.open\b
eval (?<![\w.:])(?:loadstring|load)\b
unknown (?<![\w.:])(?:dofile|loadfile)\b|\bpackage\.loadlib\b|\bffi\.C\b|\b(?:os|io)\s*\[
require (?<![\w.:])require\b
net \b(?:socket\.(?:http|tcp|udp|connect|dns)|http\.request|ssl\.https)\b"""}
_NET_MODULES = _words("http https http2 net tls dgram axios node-fetch undici got request ws superagent "
                      "needle open-uri net/http net/https net/ftp net/smtp socket httparty faraday "
                      "rest-client excon socket.http ssl.https http.request copas.http")
_PHP_SHELL = _words("system exec shell_exec passthru popen proc_open pcntl_exec")


def _scan(lang: str, code: str, depth: int) -> list[Finding]:
    import re

    text, lits = _lex(lang, code)
    label, out = _LABEL[lang], list[Finding]()
    gate = lang != "node" or "child_process" in text or any(v and "child_process" in v for v in lits)
    closures = set(re.findall(r"(\$\w+)\s*=\s*(?:static\s+)?(?:function|fn)\b", text))
    for line in _RULES[lang].splitlines():
        kind, pattern = line.split(" ", 1)
        for key, prefix in _PREFIX.items():
            pattern = pattern.replace(key, prefix)
        for m in re.finditer(pattern, text, re.M):
            items, end = _items(text, m.end(), lits)
            first = items[0] if items else None
            if kind == "require":
                kind_ = "unknown" if not isinstance(first, str) else \
                    "net" if first.removeprefix("node:") in _NET_MODULES else ""
            elif kind == "phpcall":           # call_user_func('system', ..)
                kind_ = "unknown" if first in _PHP_SHELL else ""
            elif kind == "phpvar":            # $f(..): unknown unless $f = function/fn
                kind_ = "" if m.group() in closures else "unknown"
            elif kind == "rm":
                kind_ = "destroy" if "recursive" in text[m.end():end] else "del"
            elif kind == "url":
                kind_ = "net" if str(first).lower().startswith(("http:", "https:", "ftp:", "ftps:")) else ""
            elif kind == "phprec":
                kind_ = "destroy" if re.search(_PREFIX["<H>"] + r"(?:unlink|rmdir)\s*\(", text) else ""
                items = []
            elif kind == "pipe":              # open("|cmd")
                kind_, items = ("cmd" if str(first).startswith("|") else ""), [str(first)[1:]]
            elif kind == "perlopen":
                kind_, items = _perl_open(items)
            else:
                kind_ = "" if kind in ("cmd", "argv", "list", "cpref") and not gate else \
                    "unknown" if kind == "cpref" else kind
            _apply(out, kind_, items, f"the {label} code calls {m.group().strip()}", lang, depth)
    for m in re.finditer(r"\x01(\d+)\x01", text):
        _run_cmd(out, lits[int(m.group(1))], f"the {label} code runs a command in backticks")
    if lang == "awk":
        _awk(out, text, lits)
    return out


def _perl_open(items: list[Item]) -> tuple[str, list[Item]]:
    """open(F, MODE, TARGET, ...) or open(F, EXPR): the kind and arguments of what it does."""
    mode = items[1] if len(items) > 1 else ""
    if not isinstance(mode, str):
        return "unknown", []
    if len(items) > 2:
        writes = mode.strip()[:1] in (">", "+")
        return ("list", items[2:]) if "|" in mode else ("write", items[2:3]) if writes else ("", [])
    spec = mode.strip()
    if spec[:1] == "|" or (spec[-1:] == "|" and spec not in ("-|", "|-")):
        return "cmd", [spec.strip("|").strip()]
    writes = spec[:1] == ">" or spec[:2] in ("+<", "+>")
    return ("write", [spec.lstrip("+<>").strip()]) if writes else ("", [])


def _awk(out: list[Finding], text: str, lits: list[str | None]) -> None:
    import re

    for m in re.finditer(r"(?<!\|)\|&?\s*getline\b", text):    # "cmd" | getline: a literal operand
        before = text[max(0, m.start() - 99):m.start()].rstrip()
        tok = re.search(r"\x00(\d+)\x00$", before)
        literal = tok and not re.search(r"[\w$)\]\x00]\s*$", before[:tok.start()])
        _run_cmd(out, lits[int(tok.group(1))] if tok and literal else None,
                 "the awk program reads the output of a command")
    for m in re.finditer(r"(?<![\w$])printf?\b", text):        # print ... | "cmd", print ... > "file"
        statement, depth = re.split(r"[;\n}]", text[m.end():m.end() + 500], maxsplit=1)[0], 0
        for j, c in enumerate(statement):
            depth += (c in "([") - (c in ")]")
            if depth == 0 and c in "|>" and "|" not in (statement[j + 1:j + 2], statement[j - 1:j]):
                value = _value(statement[j + 1:].lstrip(">&"), lits)
                if c == ">":
                    _file(out, "write", value, "the awk program writes to a file")
                elif not (value or "").startswith("/inet"):
                    _run_cmd(out, value, "the awk program pipes its output to a command")
                break
    if any(v and "/inet" in v for v in lits):
        out.append(Finding("web-fetch", "the awk program opens a network connection (/inet)"))


def _lex(lang: str, code: str) -> tuple[str, list[str | None]]:
    """``code`` without comments, each literal replaced by ``\\0N\\0`` (a command by ``\\1N\\1``, a
    word list by ``[\\0N\\0,...]``), and the literals' values (None: run-time)."""
    import re

    opener, interp, block_end = _LEX[lang]
    out, lits, last, i = list[str](), list[str | None](), "", 0

    def token(value: str | None, flags: str) -> str:
        if "w" in flags:
            return "[" + ",".join(token(w, "") for w in (value or "").split()) + "]"
        lits.append(value)
        mark = "\x01" if "x" in flags and lang != "node" else "\x00"
        return f"{mark}{len(lits) - 1}{mark}"

    while (m := re.compile(opener, re.M).search(code, i)) is not None:
        chunk, kind, op, i = code[i:m.start()], m.lastgroup, m.group(), m.end()
        out.append(chunk)
        last = chunk.rstrip()[-1:] or last
        if kind in ("bc", "lc"):
            j = code.find(block_end if kind == "bc" else "\n", i)
            i = len(code) if j < 0 else j + (len(block_end) if kind == "bc" else 0)
        elif kind == "long":                  # Lua [[...]], [==[...]==], --[[ comment ]]
            close = "]" + "=" * op.count("=") + "]"
            j = code.find(close, i) % (len(code) + 1)
            out.append("" if op[0] == "-" else token(code[i:j], "p"))
            i = j + len(close)
        elif kind == "re" and not (last in "(,=:;!&|?{}[~+-*%<>^" or re.search(
                r"(?<![\w$])(?:split|grep|if|unless|and|or|not|return|when|while|map)\s*$",
                code[max(0, m.start() - 12):m.start()])):
            out.append(op)                    # a division, not a pattern
            last = op
            continue
        else:
            delim, i = (code[i:i + 1], i + 1) if kind == "ql" else (op, i)
            raw, i = _delimited(code, i, delim)
            if op in ("s", "tr", "y"):        # s/a/b/flags, s{a}{b}flags
                if delim in _PAIRS:
                    i = len(code) - len(code[i:].lstrip())
                    delim, i = code[i:i + 1], i + 1
                second, i = _delimited(code, i, delim)
                modifiers = re.match(r"[a-z]*", code[i:])
                if op == "s" and modifiers and "e" in modifiers.group():    # s/../code/e runs the code
                    code = code[:i] + ";" + second + ";" + code[i + modifiers.end():]
            flags = _OPS.get(op, "")
            live = "p" not in flags and interp and re.search(interp, raw)
            out.append(token(None if "r" in flags or live else _unescape(raw, "p" in flags), flags))
        last = "\x00"
    out.append(code[i:])
    return "".join(out), lits


def _delimited(code: str, i: int, delim: str) -> tuple[str, int]:
    """The text from ``i`` to the closing ``delim`` (nesting when it is a bracket), and the end."""
    close, depth, j = _PAIRS.get(delim, delim), 0, i
    while j < len(code):
        c = code[j]
        if c == close and depth == 0:
            return code[i:j], j + 1
        depth += (c == delim and close != delim) - (c == close)
        j += 2 if c == "\\" else 1
    return code[i:], len(code)


def _unescape(raw: str, plain: bool) -> str:
    import re

    if plain or "\\" not in raw:
        return raw.replace("\\\\", "\\").replace("\\'", "'")
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), raw, flags=re.S)


def _items(text: str, i: int, lits: list[str | None]) -> tuple[list[Item], int]:
    """The arguments of the call whose name ends at ``i`` (literal, None or a list), and their end."""
    import re

    i = len(text) - len(text[i:].lstrip(" \t"))
    paren = text.startswith("(", i)
    stop = None if paren else re.compile(r"[;\n}]|\s(?:or|and|if|unless|then|do)\b|\|\||&&").search(text, i)
    items: list[Item] = []
    n, depth, start = min(stop.start() if stop else len(text), i + 500), 0, i + paren
    j = start
    while j < n and (depth or text[j] not in ")]}"):
        depth += (text[j] in "([{") - (text[j] in ")]}")
        if text[j] == "," and depth == 0:
            items.append(_item(text[start:j], lits))
            start = j + 1
        j += 1
    if text[start:j].strip() or items:
        items.append(_item(text[start:j], lits))
    return items, j


def _item(raw: str, lits: list[str | None]) -> Item:
    s = raw.strip()
    return [_value(p, lits) for p in s[1:-1].split(",") if p.strip()] if s[:1] == "[" and s[-1:] == "]" \
        else _value(s, lits)


def _value(raw: str, lits: list[str | None]) -> str | None:
    s = raw.strip()
    return lits[int(s[1:-1])] if len(s) > 2 and s[0] == s[-1] == "\x00" and s[1:-1].isdigit() else None
