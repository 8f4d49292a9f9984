"""Python inline code read with the builtin ``_ast`` (imported only when there is code to read):
imports and aliases resolved, then every call mapped to what it does (see ``shell.inline``).
"""

from __future__ import annotations

from governance.shell.finding import MAX_DEPTH, RUNTIME, Finding, apply, strs, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast

    from governance.shell.finding import Item

_PY = {name: kind for kind, names in (
    ("sub", "subprocess.run subprocess.call subprocess.check_call subprocess.check_output subprocess.Popen"),
    ("cmd", "os.system os.popen subprocess.getoutput subprocess.getstatusoutput commands.getoutput "
            "commands.getstatusoutput asyncio.create_subprocess_shell pexpect.run pexpect.spawn"),
    ("pty", "pty.spawn"), ("aexec", "asyncio.create_subprocess_exec"), ("code", "exec eval compile"),
    ("dyn", "importlib.import_module importlib.__import__ __import__ getattr"),
    ("del", "os.remove os.unlink os.rmdir"), ("destroy", "shutil.rmtree os.removedirs"),
    ("move", "os.rename os.replace os.renames shutil.move"), ("chdir", "os.chdir"),
    ("open", "open io.open codecs.open"),
    ("copy", "shutil.copy shutil.copy2 shutil.copyfile shutil.copytree os.link os.symlink"),
    ("write", "os.truncate os.mkdir os.makedirs os.mkfifo os.chmod os.chown os.utime shutil.chown "
              "sqlite3.connect dbm.open shelve.open"),
    ("osopen", "os.open"), ("pkg", "pip.main ensurepip.bootstrap ensurepip._main")) for name in names.split()}
_ROOTS = (("net", words("urllib.request urllib.urlopen urllib2 urllib3 http.client httplib requests httpx "
                         "aiohttp ftplib smtplib telnetlib poplib imaplib xmlrpc.client paramiko webbrowser "
                         "pip._internal socket.socket socket.create_connection socket.getaddrinfo pycurl "
                         "socket.gethostbyname asyncio.open_connection websocket websockets")),
          ("opaque", words("ctypes cffi pickle.load pickle.loads marshal.load marshal.loads runpy dill "
                            "code.interact types.FunctionType types.CodeType")))
_BUILTINS = words("exec eval compile open __import__ getattr vars globals locals str __builtins__")
_SENSITIVE = words("os posix nt subprocess pty builtins __builtins__ shutil importlib ctypes asyncio "
                    "commands sys socket io")
_PATHS = words("pathlib.Path pathlib.PurePath pathlib.PosixPath pathlib.PurePosixPath")
_SAME = words("str os.fspath os.path.expanduser os.path.abspath os.path.realpath os.path.normpath")
_READ_FLAGS = words("O_RDONLY O_CLOEXEC O_NOFOLLOW O_DIRECTORY O_NONBLOCK O_NOCTTY") | _SENSITIVE
_COMMANDS = words("sub cmd pty aexec exec code")
_PATH_METHODS = {"write_text": "write", "write_bytes": "write", "unlink": "del", "symlink_to": "write",
                 "hardlink_to": "write", "touch": "write", "mkdir": "write", "chmod": "write",
                 "rmdir": "del", "rename": "move", "replace": "move", "open": "open"}


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


def children(node: ast.AST) -> list[ast.AST]:
    """A node's direct children (``ast.iter_child_nodes`` without importing ``ast``)."""
    out: list[ast.AST] = []
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _walk(node: ast.AST) -> list[ast.AST]:
    """Every node of a tree, breadth first (``ast.walk`` without importing ``ast``)."""
    out = [node]
    for item in out:
        out.extend(children(item))
    return out


def findings(code: str, depth: int = 0, names: dict[str, str] | None = None) -> list[Finding]:
    """What Python ``code`` does beyond computing; ``depth`` counts code evaluated by code."""
    if depth > MAX_DEPTH:
        return [Finding("shell-unknown", "the Python code nests evaluated code too deeply")]
    try:
        return _python(code, depth, names or {})
    except RecursionError:
        return [Finding("shell-unknown", "the Python code is nested too deeply to read")]


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
    if any(isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) for n in nodes):
        from governance.shell.python_walks import walks  # for f in os.walk(ROOT): os.remove

        py.out.extend(walks(py, nodes, ast))
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

    @staticmethod
    def children(node: ast.AST) -> list[ast.AST]:
        return children(node)

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
        if isinstance(node, ast.Subscript) and _norm(self.qual(node.value)) == "os.environ":
            return "~" if self.text(node.slice) == "HOME" else None   # os.environ["HOME"]
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
        if f in ("os.getcwd", "os.getcwdb"):
            return "."
        if f in ("os.getenv", "os.environ.get") and texts[:1] == ["HOME"]:
            return "~"
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
            items = [strs(items)] if kind == "aexec" else items[:1]
            kind = "argv"
        elif kind == "exec":                  # os.execv(path, argv), os.execl(path, arg0, *args) ...
            name = (q or "").rsplit(".", 1)[-1]
            rest: list[Item] = items[1:] if name.startswith("spawn") else items     # spawn*(mode, ...)
            if "v" in name or "posix" in name:
                vector = rest[1] if len(rest) > 1 and isinstance(rest[1], list) else [None, None]
                rest = [*rest[:1], *vector]
            elif name.endswith("e"):
                rest = rest[:-1]                                              # the environment
            kind, items = "argv", [strs(rest[:1] + rest[2:])]
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
        apply(self.out, "unknown" if kind == "opaque" else kind, items, reason,
              lambda code: findings(code, self.depth + 1, self.names), template)

