"""Shell analysis: one Bash ``command`` string -> the acts it performs.

Hot path: imports ``os`` and our small modules (``shell.parser`` for the syntax, ``shell.rules`` for
the patterns). ``analyse_command`` never raises and never returns an empty list: whatever cannot be
analysed (a parse failure, a size or depth limit, a command name known only at run time) becomes a
``shell-unknown`` act, plus a ``destructive`` act when its text looks destructive.

Every simple command is resolved through wrappers (``sudo``, ``env``, ``timeout``, ``xargs``,
``find -exec`` ...), nested shells and evaluators (``bash -c``, ``eval``, heredocs fed to a shell,
recursing to ``max_depth``) and inline interpreters, then matched against the ``shell.commands``
patterns of the compiled matrix. File targets (redirections, ``tee``, ``cp``, ``sed -i``,
``dd of=``, ``rm`` ...) are checked with ``is_protected`` and become ``governance-admin`` when
protected.
"""

from __future__ import annotations

from time import monotonic

from governance import system
from governance.shell import Act
from governance.shell.parser import LimitError, ParseError, Simple, parse
from governance.shell.resolver import expands, plain, resolve
from governance.shell.words import word_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

QUIET = ("shell-read",)
_GLOB_CHARS = "*?["


def _escaped(text: str) -> str:
    """Text that brace expansion leaves as it is (quoted, or the value of an expansion)."""
    return "".join("\\" + c if c in "\\{},." else c for c in text)


def _brace_fields(word: str) -> list[str | None] | None:
    """The words a bare brace pattern expands to, as bash expands it before anything else
    (``git {push,}`` is ``git push``; ``rm {-rf,src}`` is ``rm -rf src``); None when the word
    holds no pattern. Past ``MAX_WORDS`` words, a last word known only at run time."""
    from governance.shell.braces import MAX_WORDS, braces

    found = braces(word)
    if found == [word]:
        return None
    out: list[str | None] = [piece for piece in map(_unescaped, found)
                             if piece != ""]    # bash drops a word that expands to nothing
    if len(found) >= MAX_WORDS:
        out.append(None)
    return out


def _unescaped(text: str) -> str:
    out: list[str] = []
    k = 0
    while k < len(text):
        if text[k] == "\\" and k + 1 < len(text):
            k += 1
        out.append(text[k])
        k += 1
    return "".join(out)
_LOOKUPS = frozenset(("command", "which", "type", "whence", "where", "hash", "readlink",
                      "realpath"))
_MAX_SEGMENT = 500


def analyse_command(command: str, shell: dict[str, Any], *,
                    is_protected: Callable[[str], bool], cwd: str | None = None,
                    language: str | None = None) -> list[Act]:
    """The acts of one Bash command (never empty, never raises). ``cwd``: the folder the command
    runs in; the scripts, recipes and git hooks it runs are read from there (``shell.source``).
    Without it, no file is read. ``language``: the command is code of that language instead
    (``powershell``: Claude Code's PowerShell tool), read as inline code of it is."""
    try:
        limits = shell.get("limits") or {}
        max_length = limits.get("max_length", 16384)
        if len(command) > max_length:
            return _unknown(command, shell, f"the command is longer than {max_length} characters")
        analysis = _Analysis(shell, is_protected, limits)
        analysis.root = system.abspath(cwd) if cwd else None
        analysis.text = command
        if language is None:
            analysis.script(command, 0, None)
        else:
            analysis.inline(language, command, _clip(command), 0, runs=False)
        return analysis.finish(command)
    except ParseError as exc:
        return _unknown(command, shell, f"the command cannot be parsed ({exc})")
    except (LimitError, RecursionError) as exc:
        return _unknown(command, shell, f"the command exceeds an analysis limit ({exc})")
    except Exception as exc:  # never let an analysis bug become a silent allow or a crash
        return _unknown(command, shell, f"the analysis failed ({type(exc).__name__})")


# writes that may reach a device (shell.devices): disks, and the files that make the kernel stop
# or restart the machine at once
_DEVICES = ("/dev/", "/proc/sysrq-trigger", "/sys/power/")


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_SEGMENT else text[:_MAX_SEGMENT] + "..."


def _unknown(text: str, shell: dict[str, Any], why: str) -> list[Act]:
    acts = [Act("shell-unknown", _clip(text), f"{why}; it is treated as shell-unknown")]
    marker = destructive_marker(text, shell)
    if marker:
        acts.append(Act("destructive", _clip(text),
                        f"the command cannot be analysed and mentions {marker.strip()!r}"))
    return acts


# Inline code without one of these cannot do what ``shell.inline`` looks for, so neither that
# module nor the parser it needs (``_ast`` alone costs a hook call 2 ms, ``re`` more) is loaded.
# A superset, checked as plain text: a false alarm only costs the reading.
_TRIGGERS = {
    "python": ("os", "subprocess", "system", "exec", "eval", "compile", "socket", "url", "http",
               "request", "shutil", "pty", "Path", "path", "__", "import_module", "getattr",
               "setattr", "ctypes", "pickle", "marshal", "runpy", "asyncio", "webbrowser", "ftp",
               "smtp", "telnet", "paramiko", "pycurl", "websocket", "xmlrpc", "commands",
               "pexpect", "vars", "globals", "remove", "unlink", "rmtree", "rename", "replace",
               "copy", "move", "chmod", "mkdir", "symlink", "link", "touch", "spawn", "popen",
               "write", "codecs", "io.", "import io", "fileinput", "tempfile", "modules", "zip",
               "tar", "pip",
               "chr", "bytes", "'w", '"w', "'a", '"a', "'x", '"x', "+", "mode"),
    "awk": ("system", "|", ">", "getline", "inet"),
    "r": ("system", "shell", "pipe", "unlink", "remove", "delete", "create", "rename", "copy",
          "link", "chmod", "::", "url", "download", "socket", "GET", "POST", "PUT", "PATCH", "HEAD",
          "VERB", "source", "read", "load", "JSON", "eval", "call", "get", "fun", "Recall", ".C",
          ".E", ".I", ".P", "install", "packages"),
    "julia": ("`", "Cmd", "run", "success", "readchomp", "pipeline", "rm", "touch", "mkdir",
              "mkpath", "chmod", "chown", "write", "open", "mv", "cp", "link", "download",
              "request", "HTTP", "Sockets", "eval", "include", "ccall", "dlopen", "Pkg", "pkg"),
    "powershell": (" ", "-", ".", "&", ">", "Invoke", "iex", "iwr", "irm"),
    "tcl": ("exec", "open", "file", "socket", "http", "eval", "uplevel", "subst", "apply", "load",
            "interp", "$", "[", "{*}"),
    "elisp": ("process", "shell", "delete", "rename", "copy", "write", "url", "file", "cd",
              "eval", "load", "funcall", "apply", "directory", "compile", "symbolic", "append",
              "require"),
    "other": ("system", "exec", "spawn", "popen", "`", "qx", "%x", "open", "unlink", "rmdir",
              "rm", "tree", "remove", "delete", "write", "rename", "move", "copy", "cp", "http",
              "ocket", "Net", "LWP", "fetch", "curl", "URI", "url", "eval", "Function", "vm",
              "require", "import", "load", "ffi", "inet", "pty", "PTY", "child", "send", "call",
              "proc", "passthru", "shell", "ile", "os.", "io.", "os[", "process", "binding",
              "axios", "got", "request", "dgram", "tls", "net", "Open3", "IO", "Kernel", "$",
              "s/", "e}", "Tiny", "ftp", "smtp", "readpipe", "Deno", "Bun", "Gem", "CPAN",
              "cpanm", "destroy_", "delete_"),
}


def worth_reading(language: str, code: str) -> bool:
    """Whether inline code may do more than compute (see ``_TRIGGERS``)."""
    return any(t in code for t in _TRIGGERS.get(language, _TRIGGERS["other"]))


def destructive_marker(text: str, shell: dict[str, Any]) -> str | None:
    lowered = text.lower()
    for marker in shell.get("unknown_destructive_markers", ()):
        if marker in lowered:
            return str(marker)
    return None


_STARTUP = ("BASH_ENV", "ENV")
_ARITH_PLAIN = " \t\n0123456789+-*/%()<>=!&|^~?:,"   # arithmetic of numbers alone
_HOOKS = frozenset(("PROMPT_COMMAND", "BASH_CMDS", "BASH_ALIASES"))   # and PS0 .. PS4
_UNKNOWN = object()  # what a file held before this command appended to it
_FRESH = object()    # the file was written afresh


class _Later:
    """A file's text, worked out only when the command reads the file back."""

    __slots__ = ("before", "cmd", "from_stdin", "vars")

    def __init__(self, cmd: Simple, variables: dict[str, str | None], before: object,
                 from_stdin: bool) -> None:
        self.cmd = cmd
        self.vars = variables
        self.before = before          # _FRESH, or what the text was appended to
        self.from_stdin = from_stdin


def _temporary_name(args: list[str]) -> str | None:
    """A stand-in for the name ``mktemp ARGS`` prints: its template (``X`` kept) in the folder
    ``-p``/``--tmpdir`` names, else ``$TMPDIR``, else ``/tmp``; None for options it does not
    know, or a template that names its own folder with ``-t``."""
    folder: str | None = None
    template: str | None = None
    in_tmpdir = False      # -t, -p, --tmpdir: the template is a name in the temporary folder
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "-p" and k + 1 < len(args):
            folder, in_tmpdir, k = args[k + 1], True, k + 2
            continue
        if arg.startswith("--tmpdir"):
            folder, in_tmpdir = arg.partition("=")[2] or None, True
        elif arg.startswith("-p") and len(arg) > 2:
            folder, in_tmpdir = arg[2:], True
        elif arg == "-t":
            in_tmpdir = True
        elif arg in ("-d", "--directory", "-q", "--quiet", "-u", "--dry-run") or arg.startswith("--suffix="):
            pass
        elif arg.startswith("-") or template is not None:
            return None
        else:
            template = arg
        k += 1
    if template is not None and not in_tmpdir:
        return template       # mktemp x.XXX: a name in the folder the command is in
    name = template or "tmp.XXXXXXXXXX"
    if "/" in name:
        return name
    base = folder or system.environ_get("TMPDIR") or "/tmp"
    return system.join(base.rstrip("/") or "/", name)


def _stack_index(arg: str | None, size: int) -> int | None:
    """The entry of the folder stack (the current folder first) that ``+N`` or ``-N`` names
    (``dirs -v`` numbering), or None when there is none."""
    if arg is None or arg[:1] not in "+-" or not arg[1:].isdigit():
        return None
    n = int(arg[1:])
    spot = n if arg[0] == "+" else size - 1 - n
    return spot if 0 <= spot < size else None


class _Analysis:
    __slots__ = ("acts", "budget", "check", "checked", "cwd", "deadline", "dirs", "doubts",
                 "files", "flow", "ifs", "integers", "level", "limits", "listed", "loops",
                 "made_temporary", "mounts", "names", "oldpwd", "opened", "origin", "procs",
                 "prose", "reads", "root", "runtime", "scope", "seen", "segments", "shell",
                 "sockets", "text", "vars")

    def __init__(self, shell: dict[str, Any], is_protected: Callable[[str], bool],
                 limits: dict[str, Any]) -> None:
        self.shell = shell
        self.check = is_protected
        self.checked: dict[str, bool] = {}    # path -> protected, for a path named again
        self.limits = limits
        self.acts: list[Act] = []
        self.seen: dict[tuple[str, str], Act] = {}
        self.vars: dict[str, str | None] = {}
        self.files: dict[str, object] = {}  # written earlier in this command: path -> text
        self.procs: dict[int, int] = {}       # a process substitution -> its /dev/fd number
        self.cwd: str | None = ""
        self.oldpwd: str | None = None        # cd -: the folder before (before this command: unknown)
        self.dirs: list[str | None] = []      # pushd's folder stack below the current folder
        self.ifs = False                      # IFS was changed: unquoted expansions split unknowably
        self.text = ""                        # the whole command, for destructive-looking text
        self.segments: dict[str, Any] | None = None   # its commands by text, parsed once
        self.budget = [limits.get("max_words", 4000)]
        self.deadline = monotonic() + limits.get("max_seconds", 5)   # then it is shell-unknown
        self.made_temporary: set[str] = set()   # names $(mktemp) gave, in temporary folders
        self.root: str | None = None          # the folder the command runs in: files are read
        self.origin = ""                      # the file being analysed, named in each act's reason
        self.level = 0                        # how many files deep (a script a script runs)
        self.reads = [1024 * 1024, 48]        # bytes and files the analysis may still read
        self.prose: list[str] = []            # message text (git commit -m TEXT): mentions, not acts
        self.doubts: list[tuple[str, str, str]] = []   # what unknown() found, for the markers
        self.names: Any = None                # functions, aliases, copies ... (``shell.names``)
        self.listed = [4000]                  # folder entries globs may still read
        self.loops: dict[str, list[str]] = {}   # for NAME in WORDS: the values NAME takes
        # a container's folder -> the folder of this machine mounted there (docker run -v
        # "$PWD:/w" IMG CMD), while CMD is read
        self.mounts: dict[str, str] = {}
        self.scope: list[str | None] = []     # the folder before `env -C DIR CMD` ran CMD there
        self.flow: Any = None                 # what carries a secret so far (``shell.secrets``)
        self.sockets: dict[str, str] = {}     # exec 3<>/dev/tcp/HOST/PORT: descriptor -> HOST
        self.opened: dict[str, str] = {}      # exec 3< FILE: descriptor -> FILE
        self.runtime: set[str] = set()        # variables holding text read at run time (read x)
        self.integers: set[str] = set()       # declare -i n: what n is given is arithmetic

    # --- acts ------------------------------------------------------------------------------------
    def add(self, primitive: str, segment: str, reason: str) -> None:
        key = (primitive, segment)
        if key not in self.seen:
            if self.origin:
                reason = f"{reason} (in {self.origin})"
            act = self.seen[key] = Act(primitive, _clip(segment), reason)
            self.acts.append(act)

    def resolve(self, fields: list[str | None], globs: list[bool], raws: list[str], cmd: Simple,
                seg: str, depth: int) -> None:
        """Resolve an argument vector to the command that really runs (``shell.resolver``)."""
        resolve(self, fields, globs, raws, cmd, seg, depth)

    def plain(self, base: str, fields: list[str | None], raws: list[str], seg: str,
              depth: int = 0, cmd: Simple | None = None) -> None:
        """Match a command that wraps nothing against the patterns (``shell.resolver``)."""
        plain(self, base, fields, raws, seg, depth, cmd)

    def unknown(self, segment: str, why: str) -> None:
        """Something only known at run time; destructive when the command's text looks it."""
        self.add("shell-unknown", segment, why)
        self.doubts.append((segment, why, self.origin))

    def finish(self, command: str) -> list[Act]:
        wanted = getattr(self.check, "exec_config", None) if self.files else None
        if wanted is not None:
            written = self._written_texts(wanted)
            if written:
                from governance.shell import planted  # echo 'rm -rf .claude' >> ~/.bashrc

                planted.check(self, written, self._primitives_of)
        text = self.text
        for raw in self.prose:       # the text of messages is not what the command does
            text = text.replace(raw, " ", 1)
        for segment, why, origin in self.doubts:
            marker = destructive_marker(text or segment, self.shell)
            if marker:
                self.origin = origin
                self.add("destructive", segment, f"{why}, and it mentions {marker.strip()!r}")
        acts = self.acts
        loud = [a for a in acts if a.primitive not in QUIET]
        if loud:
            return loud
        if acts:
            return [acts[0]]
        return [Act("shell-read", _clip(command.strip()), "the command runs nothing of interest")]

    # --- scripts and commands --------------------------------------------------------------------
    def script(self, text: str, depth: int, outer: str | None) -> None:
        if depth > self.limits.get("max_depth", 6):
            raise LimitError("nested shells too deep")
        cmds = parse(text, self.limits.get("max_nesting", 48), 0, self.budget)
        defined = len(self.names.defined) if self.names is not None else 0
        self.commands(cmds, depth, outer)
        if self.names is not None and len(self.names.defined) > defined:
            from governance.shell.names import settle  # functions this text defined, not called

            settle(self, defined)

    def commands(self, cmds: list[Simple], depth: int, outer: str | None) -> None:
        for cmd in cmds:
            self.command(cmd, depth, outer)

    def nested(self, word_parts: list[Any], depth: int, outer: str | None, seg: str = "") -> None:
        for part in word_parts:
            if part[3]:
                self.commands(part[3], depth, outer)
            if part[0] in ("arith", "param") and (part[0] == "param" or part[1].strip(
                    _ARITH_PLAIN)):                # $((x)), ${!x}, ${a[i]}: bash evaluates
                from governance.shell import evaluated

                if part[0] == "arith":
                    evaluated.arithmetic(self, part[1], seg or outer or "", depth)
                else:
                    evaluated.param(self, part[1], seg or outer or "", depth)

    def command(self, cmd: Simple, depth: int, outer: str | None) -> None:
        if monotonic() > self.deadline:
            raise LimitError(f"the analysis took longer than {self.limits.get('max_seconds', 5)} s")
        seg = outer if outer is not None else cmd.segment
        if cmd.function is not None:             # f() { ...; }: read when f is called
            from governance.shell.names import define

            define(self, cmd, depth)
            return
        for _, value in cmd.assigns:
            self.nested(value.parts, depth, outer, seg)
        for word in cmd.words:
            self.nested(word.parts, depth, outer, seg)
        for word in cmd.inert:
            self.nested(word.parts, depth, outer, seg)
        for redir in cmd.redirs:
            if redir.target is not None:
                self.nested(redir.target.parts, depth, outer, seg)
            if redir.body_subs:
                self.commands(redir.body_subs, depth, outer)
            if redir.expands and redir.body is not None and ("$((" in redir.body or "${" in
                                                             redir.body or "$[" in redir.body):
                from governance.shell.evaluated import heredoc

                heredoc(self, redir.body, seg, depth)   # cat <<EOF ... $((x)) ... EOF
        if cmd.words:
            risky = self.shell.get("risky_env", {})
            commands = self.shell.get("command_env", {})
            for name, word in cmd.assigns:
                if name in commands:           # GIT_EDITOR=CMD git commit: git runs CMD
                    from governance.shell.embedded import env_value

                    env_value(self, name, commands[name], self.expand_one(word.parts), seg, depth)
                if name in risky:
                    self.add("code-exec", seg, f"setting {name} makes the command load other code")
                if name in _HOOKS or name[:2] == "PS":
                    self._evaluated(name, word, seg, depth)
                if name in _STARTUP:           # BASH_ENV=FILE bash -c ...: FILE runs first
                    from governance.shell.programs import startup

                    startup(self, self.expand_one(word.parts), word_text(word), seg, depth)
            fields, globs, raws = self.expand_words(cmd.words)
            enclosing, self.scope = self.scope, []
            resolve(self, fields, globs, raws, cmd, seg, depth)
            if self.scope:                     # env -C DIR, git -C DIR: for this command only
                self.cwd = self.scope[0]
            self.scope = enclosing
            if fields and fields[0] is not None and fields[0].rsplit("/", 1)[-1] == "tee":
                for target in fields[1:]:          # echo CMD | tee s.sh: s.sh holds CMD
                    if target is not None and not target.startswith("-"):
                        self.remember_stdin(target, cmd)
        else:
            if cmd.loop:                       # for f in .claude/settings*.json: f is each
                from governance.shell.loops import bind_loop

                bind_loop(self, cmd.loop, cmd.inert)
                if getattr(self.check, "secret_path", None) is not None:
                    from governance.shell.secrets import loop  # for l in $(cat .env)

                    loop(self, cmd.loop)
            for name, value in cmd.assigns:
                parts = value.parts
                if name in self.shell.get("command_env", {}):   # PAGER=CMD; ...; git log
                    from governance.shell.embedded import env_value

                    env_value(self, name, self.shell["command_env"][name], self.expand_one(parts),
                              seg, depth)
                if parts and parts[0][0] == "arr":   # a=(curl -s URL): the elements joined
                    from governance.shell.streams import array

                    self.vars[name] = array(self, str(parts[0][1]))
                else:
                    self.vars[name] = self.expand_one(parts)
                if self.runtime or self.vars[name] is None:   # read x; y=$x: y is run-time text
                    from governance.shell.evaluated import filled

                    filled(self, name, self.vars[name], parts)
                if name in _HOOKS or name in self.integers or "[" in word_text(value).partition(
                        "=")[0] or name[:2] == "PS":
                    self._evaluated(name, value, seg, depth)
                if self.flow is not None or self.origin or expands(word_text(value)):
                    from governance.shell.secrets import assign  # X=$(cat .env)

                    assign(self, name, word_text(value))
                self.ifs = self.ifs or name == "IFS"
                if name == "PATH" and value.text is not None:    # PATH=bin:$PATH
                    from governance.shell.names import add_path

                    add_path(self, str(value.text[value.start:value.end]))
            if cmd.assigns or cmd.inert:
                self.add("shell-read", seg, "sets variables or tests values")
        self.redirections(cmd, seg)
        if cmd.background:
            self.add("shell-background", seg, "'&' runs the command in the background")

    def _evaluated(self, name: str, value: Any, seg: str, depth: int) -> None:
        """An assignment bash evaluates: ``a[i]=v`` and ``declare -i n; n=V`` (arithmetic),
        ``PS1=``/``PROMPT_COMMAND=`` (run), ``BASH_CMDS[ls]=P``/``BASH_ALIASES[ls]=C`` (what
        the name ``ls`` runs) (``shell.evaluated``)."""
        from governance.shell import evaluated

        raw = word_text(value)
        head, _, text = raw.partition("=")
        if "[" in head and name not in _HOOKS:
            evaluated.arithmetic(self, head[head.index("[") + 1:head.rindex("]")], seg, depth)
        if name in self.integers:
            evaluated.arithmetic(self, text, seg, depth)
        if name in ("BASH_CMDS", "BASH_ALIASES"):
            evaluated.table_entry(self, name, head, value.parts, seg)
        elif evaluated.hooked(name):
            evaluated.hook(self, name, self.expand_one(value.parts), text, seg, depth)

    def redirections(self, cmd: Simple, seg: str) -> None:
        for redir in cmd.redirs:
            op = redir.op
            if op in (">", ">>", ">|", "&>", "&>>", "<>") or op == ">&":
                target = redir.target
                if target is None:
                    continue
                value = self.expand_one(target.parts)
                raw = word_text(target)
                if op == ">&" and value is not None and value in self.sockets:
                    self.add("web-fetch", seg, f"redirection >&{value} writes to the network "
                                               f"connection to {self.sockets[value]}")
                    self.seen[("web-fetch", seg)].hosts = [self.sockets[value]]
                    continue
                if op == ">&" and (value is None or value.isdigit() or value == "-"):
                    continue
                if value is not None and value.startswith(("/dev/tcp/", "/dev/udp/")):
                    self.add("web-fetch", seg, f"redirection {op} to {raw} opens a network "
                                               "connection")
                    host = value.split("/")[3] or "?" if value.count("/") >= 3 else "?"
                    self.seen[("web-fetch", seg)].hosts = [host]
                    if redir.fd is not None and (not cmd.words or word_text(
                            cmd.words[0]) == "exec"):    # exec 3<>/dev/tcp/...: open for later
                        self.sockets[redir.fd] = host
                    continue
                self.target(value, raw, seg, "file-write", f"redirection {op} writes to {raw}",
                            replaces=op in (">", ">|", "&>"))
                self.remember_file(value, cmd, append=op in (">>", "&>>"))
            elif op in ("<", "<&") and redir.target is not None:
                value = self.expand_one(redir.target.parts)
                if op == "<" and redir.fd is not None and value is not None and len(
                        cmd.words) == 1 and word_text(cmd.words[0]) == "exec":
                    self.opened[redir.fd] = value     # exec 3< .env: read later through <&3
                if not cmd.words and getattr(self.check, "secret_path", None) is not None:
                    from governance.shell.secrets import compound  # while ...; done < .env

                    compound(self, value, word_text(redir.target), seg, cmd)
                if value is not None and value.startswith(("/dev/tcp/", "/dev/udp/")):
                    self.add("web-fetch", seg, f"redirection {op} from {word_text(redir.target)} "
                                               "opens a network connection")
                    self.seen[("web-fetch", seg)].hosts = [value.split("/")[3] or "?"]

    # --- what flows through files and pipes ------------------------------------------------------
    def _key(self, value: str) -> str:
        path = system.expanduser(value)
        if self.cwd and not system.isabs(path):
            path = system.join(self.cwd, path)
        return system.normpath(path)

    def remember_file(self, value: str | None, cmd: Simple, append: bool) -> None:
        """What a redirection wrote (a script written and run in the same command). The text is
        worked out only if the file is read later in the command (``file_text``)."""
        if value is None or not cmd.words:
            return
        key = self._key(value)
        before = self.files.get(key, _UNKNOWN) if append else _FRESH
        self.files[key] = _Later(cmd, dict(self.vars), before, from_stdin=False)

    def remember_stdin(self, value: str, cmd: Simple) -> None:
        """``tee FILE``: the file holds what the command reads."""
        self.files[self._key(value)] = _Later(cmd, dict(self.vars), _FRESH, from_stdin=True)

    def file_text(self, value: str | None) -> str | None:
        """The text of a file written earlier in this command, when it is known."""
        if value is None:
            return None
        key = self._key(value)
        entry = self.files.get(key)
        if isinstance(entry, _Later):
            entry = self.files[key] = self._settle(entry)
        return entry if isinstance(entry, str) else None

    def _written_texts(self, wanted: Callable[[str], bool]) -> list[tuple[str, str, str]]:
        """(path, the text this command wrote there, the segment that wrote it) of the files
        ``wanted`` that a redirection or a program's standard input wrote, when the text is
        known (an append's own text, whatever the file held before)."""
        found: list[tuple[str, str, str]] = []
        for path, entry in list(self.files.items()):
            if not isinstance(entry, _Later) or not wanted(path):
                continue
            fresh = _Later(entry.cmd, entry.vars, _FRESH, entry.from_stdin)
            text = self._settle(fresh)
            if text is not None:
                found.append((path, text, entry.cmd.segment))
        return found

    def _primitives_of(self, text: str) -> list[tuple[str, str]]:
        """What a command line does, by an analysis of its own from the same folder."""
        sub = _Analysis(self.shell, self.check, self.limits)
        sub.root, sub.text = self.root, text
        try:
            sub.script(text, 1, None)
        except (ParseError, LimitError, RecursionError):
            return []
        return [(act.primitive, act.reason) for act in sub.acts]

    def _settle(self, later: _Later) -> str | None:
        current, self.vars = self.vars, later.vars   # as the variables were when it was written
        try:
            if later.from_stdin:
                kind, read = self.stdin_text(later.cmd)
                text = read if kind == "literal" else None
            else:
                text = self.output_of(later.cmd)
        finally:
            self.vars = current
        if later.before is _FRESH:
            return text
        before = later.before
        if isinstance(before, _Later):
            before = self._settle(before)
        return before + text if isinstance(before, str) and text is not None else None

    def written(self, value: str | None) -> None:
        """A file this command writes with content it cannot know (a download, code's write)."""
        if value is not None:
            self.files.setdefault(self._key(value), None)

    def wrote(self, value: str | None) -> bool:
        """Whether this command wrote the file earlier (its text known or not)."""
        return value is not None and self._key(value) in self.files



    def output_of(self, cmd: Simple) -> str | None:
        from governance.shell import streams

        return streams.output_of(self, cmd)

    def stdin_text(self, cmd: Simple) -> tuple[str, str | None]:
        from governance.shell import streams

        return streams.stdin_text(self, cmd)

    def inline(self, language: str, code: str, seg: str, depth: int, runs: bool = True) -> None:
        """Inline code (``python -c``, a script fed on stdin ...): ``code-exec``, and what it does
        beyond computing when it may (``shell.streams.inline``). ``runs`` False: the code is a
        tool's own command (PowerShell), whose primitive the tool mapping gives."""
        if language != "awk" and runs:   # an awk program is a filter, not a program of its own
            self.add("code-exec", seg, f"runs {language} code")
        if language == "python" and "governance" in code:
            from governance.shell.source import imports_governance

            if imports_governance(code):
                self.add("governance-admin", seg, "the Python code imports governance's own "
                         "package: ask the user to run it from a terminal")
        if worth_reading(language, code):
            from governance.shell import streams

            streams.inline(self, language, code, seg, depth)
        names = getattr(self.check, "may_name_secret", None)
        if names is not None and (language != "awk" or "ENVIRON" in code) and (
                "env" in code.lower() or names(code)):
            from governance.shell import secrets  # os.environ, process.env, open(".env")

            secrets.inline(self, language, code, seg)

    def positional_secrets(self, raws: list[str]) -> dict[str, list[str] | None] | None:
        """``$0`` ``$1`` ... given the words ``raws`` (a call, ``sh -c TEXT NAME ARGS``, ``set
        --``) hold the secrets those carry (``shell.secrets.arguments``); what they held
        before, or None when no word could carry one."""
        if self.flow is None and not any("$" in r or "`" in r for r in raws):
            return None
        from governance.shell.secrets import POSITIONAL, arguments

        state = self.flow
        before = {k: (state.vars.get(k) if state is not None else None) for k in POSITIONAL}
        arguments(self, raws)
        return before

    def restore_secrets(self, before: dict[str, list[str] | None]) -> None:
        """The secrets of variables as :meth:`positional_secrets` found them."""
        state = self.flow
        if state is None:
            return
        for name, labels in before.items():
            if labels is None:
                state.vars.pop(name, None)
            else:
                state.vars[name] = labels

    # --- words -----------------------------------------------------------------------------------
    def expand_one(self, parts: list[Any]) -> str | None:
        out: list[str] = []
        for kind, value, _quoted, subs in parts:
            if kind == "lit":
                out.append(value)
                continue
            known = self.part_value(kind, value, subs)
            if known is None:
                return None
            out.append(known)
        return "".join(out)

    def part_value(self, kind: str, value: str, subs: list[Simple] | None) -> str | None:
        if kind == "var":
            if value.endswith(("[@]", "[*]")):
                return self.vars.get(value[:-3])
            if value == "PWD" and value not in self.vars:   # "$PWD"/.mcp.json: the folder now
                return self.folder()
            if value == "HOME" and value not in self.vars:  # the home Claude Code gives both
                return system.expanduser("~")
            return self.vars.get(value) if value else None
        if kind == "param" and not subs:        # ${a[1]}, ${!ref}, ${p,,}, ${X:-d} ...
            from governance.shell.parameters import name_of
            from governance.shell.parameters import value as parameter

            secret = getattr(self.check, "secret_variable", None)
            if secret is not None and secret(name_of(value)):
                return None              # ${GITHUB_TOKEN:-x}: the secret flow's to follow
            return parameter(value, self.vars, system.environ_get)
        if kind == "proc":
            return self.substituted(subs)
        if kind == "arr":                            # local a=(x y): the elements joined
            from governance.shell.streams import array

            return array(self, value)
        if kind == "sub" and subs and len(subs) == 1 and not subs[0].words and len(
                subs[0].redirs) == 1 and subs[0].redirs[0].op == "<" and \
                subs[0].redirs[0].target is not None:       # $(< name.txt): the file's text
            from governance.shell.streams import disk_text

            text = disk_text(self, self.expand_one(subs[0].redirs[0].target.parts))
            return None if text is None else text.rstrip("\n")
        if kind == "sub" and subs and len(subs) == 1 and subs[0].words and \
                word_text(subs[0].words[0]) == "ls":
            from governance.shell.listing import given  # $(ls -d .c*)

            return given(self, subs[0])
        if kind == "sub" and subs and len(subs) == 1 and subs[0].words and \
                word_text(subs[0].words[0]) == "cat":      # $(cat dirs.txt): the file's text
            text = self.output_of(subs[0])
            return None if text is None else text.rstrip("\n")
        if kind == "sub" and subs and len(subs) == 1:
            return self.echo_value(subs[0])
        if kind == "sub" and subs and len(subs) == 2 and subs[1].piped_from is subs[0] and \
                subs[0].words and word_text(subs[0].words[0]) == "ls":
            from governance.shell.listing import names  # $(ls -a | grep '^.env$')

            return names(self, subs[0], subs[1])
        return None

    def substituted(self, subs: list[Simple] | None) -> str:
        """The path bash gives a process substitution (``/dev/fd/63``, ``/dev/fd/62`` ...); what
        ``<(echo SQL)`` writes there is known as a file written earlier is (``file_text``)."""
        if not subs:
            return "/dev/fd/63"
        number = self.procs.setdefault(id(subs[-1]), 63 - len(self.procs))
        path = f"/dev/fd/{number}"
        if path not in self.files:
            self.files[path] = _Later(subs[-1], dict(self.vars), _FRESH, from_stdin=False)
        return path

    def echo_value(self, cmd: Simple) -> str | None:
        """The output of ``$(echo ...)`` / ``$(printf ...)`` with known arguments, else None."""
        if cmd.redirs or cmd.assigns or not cmd.words:
            return None
        fields = [self.expand_one(w.parts) for w in cmd.words]
        if any(f is None for f in fields):
            return None
        words: list[str] = [f for f in fields if f is not None]
        if words == ["pwd"]:
            return self.folder()
        if words == ["git", "rev-parse", "--show-toplevel"]:   # cd "$(git rev-parse ...)"
            return self.work_tree_top()
        if words[0] == "mktemp":                # d=$(mktemp -d): a new name in a temp folder
            made = _temporary_name(words[1:])
            if made is not None and system.isabs(made):
                self.made_temporary.add(system.normpath(made))
            return made
        if len(words) == 2 and words[0] in ("dirname", "basename") and words[1][:1] != "-":
            path = words[1].rstrip("/") or "/"        # cd "$(dirname .claude/settings.json)"
            return (system.dirname(path) or ".") if words[0] == "dirname" else \
                path.rsplit("/", 1)[-1]
        if words[0] == "echo" and not any("\\" in w for w in words):
            args = words[1:]
            while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
                args = args[1:]
            return " ".join(args)
        if words[0] == "printf" and len(words) >= 2 and "%" not in words[1] and \
                "\\" not in words[1]:
            return words[1]
        if words[0] in ("echo", "printf"):      # escapes and formats, as bash decodes them
            from governance.shell import escapes

            text = escapes.echo(words[1:], portable=True) if words[0] == "echo" else \
                escapes.printf_command(words[1:])
            return None if text is None else text.rstrip("\n")
        if words[0] in _LOOKUPS:                # $(command -v git), $(which curl)
            from governance.shell.names import lookup

            return lookup(self, words)
        return None

    def work_tree_top(self) -> str | None:
        """What ``git rev-parse --show-toplevel`` prints in the folder the command is in now: the
        nearest folder above it that holds ``.git``; None when not known (a folder known only at
        run time, ``GIT_DIR`` or ``GIT_WORK_TREE`` set, no work tree)."""
        here = self.folder()
        if here is None or any(name in self.vars or system.environ_get(name)
                               for name in ("GIT_DIR", "GIT_WORK_TREE")):
            return None
        return system.work_tree(here)

    def expand_words(self, words: list[Any]) -> tuple[list[str | None], list[bool], list[str]]:
        """Fields after expansion (None where only known at run time), per field whether an
        unquoted glob or brace pattern makes it uncertain, and per field the word's source text."""
        fields: list[str | None] = []
        globs: list[bool] = []
        raws: list[str] = []
        for word in words:
            raw = word_text(word)
            current: list[str] | None = []
            glob = False
            brace = False
            marked: list[str] = []      # the word for brace expansion: only bare braces count
            pending_split: list[str] = []
            for kind, value, quoted, subs in word.parts:
                if kind == "lit":
                    if not quoted and (any(c in value for c in _GLOB_CHARS) or
                                       ("{" in value and ("," in value or ".." in value))):
                        glob = True
                    brace = brace or (not quoted and "{" in value)
                    if current is not None:
                        current.append(value)
                        marked.append(value.replace("\\", "\\\\") if not quoted
                                      else _escaped(value))
                    continue
                if quoted and kind == "var" and value[:1] == "@" and self.names is not None and \
                        self.names.args is not None:      # "$@" in a function: a word each
                    from governance.shell.names import spread

                    current, pending_split = spread(self.names.args, current, pending_split,
                                                    value)
                    continue
                known = self.part_value(kind, value, subs)
                if known is None or (self.ifs and not quoted and kind != "proc"):
                    current = None
                    continue
                if (not quoted or (kind == "var" and (value == "@" or value.endswith("[@]")))
                        ) and kind != "proc" and (" " in known or "\t" in known or
                                                  "\n" in known):  # "$@", "${a[@]}": a word each
                    pieces = known.split()
                    if not pieces:
                        continue
                    if current is not None:
                        current.append(pieces[0])
                        pending_split.append("".join(current))
                    else:
                        pending_split.append("\x00")
                    pending_split.extend(pieces[1:-1])
                    current = [pieces[-1]] if len(pieces) > 1 else []
                    continue
                if current is not None:
                    current.append(known)
                    marked.append(_escaped(known))
            if brace and current is not None and not pending_split:
                expanded = _brace_fields("".join(marked))
                if expanded is not None:
                    fields.extend(expanded)
                    for field in expanded:
                        globs.append(field is not None and any(c in field for c in _GLOB_CHARS))
                        raws.append(raw)
                    continue
            for piece in pending_split:
                if piece != "\x01":                 # "\x01": "$@" of no arguments
                    fields.append(None if piece == "\x00" else piece)
                    globs.append(glob)
                    raws.append(raw)
            if current == [] and pending_split[-1:] == ["\x01"]:
                continue
            fields.append(None if current is None else "".join(current))
            globs.append(glob)
            raws.append(raw)
        return fields, globs, raws

    # --- targets ---------------------------------------------------------------------------------
    def _mounted(self, value: str) -> str:
        """A container's path as the path on this machine that is mounted there."""
        for inside, outside in sorted(self.mounts.items(), key=lambda m: -len(m[0])):
            inside = inside.rstrip("/") or "/"
            if value == inside or value.startswith(inside.rstrip("/") + "/"):
                return outside.rstrip("/") + value[len(inside.rstrip("/")):]
        return value

    def target(self, value: str | None, raw: str, seg: str, primitive: str, reason: str,
               folder: bool | str = False, replaces: bool = False) -> None:
        """A file the act writes or deletes. ``folder``: the target may be a folder, and is
        protected when it holds a protected path anywhere ("deep": ``rm -r .``) or is itself the
        folder of one ("direct": ``tar -x -C .claude``). ``replaces``: a write puts new content
        in place of the file's (``>``, ``cp``), not added to it or edited."""
        safe = self.shell.get("safe_targets", {})
        if value is not None and (value in safe or value.startswith("/dev/fd/")):
            return
        if self.mounts and value is not None and value.startswith("/"):
            value = self._mounted(value)      # /w/.claude/settings.json in a container
        self.add(primitive, seg, reason)
        act = self.seen[(primitive, seg)]
        where = self.where(value)
        act.targets = [*(act.targets or ()), where]
        if ".git" in where and ("/.git/refs/" in "/" + where or where.endswith(
                (".git/HEAD", ".git/packed-refs"))):     # echo ref: refs/heads/x > .git/HEAD
            from governance.shell.worktree import REFS_MOVED

            self.vars[REFS_MOVED] = "1"
        bare = raw.replace('"', "").replace("'", "")   # cp img "/dev/sd$X", > ${D:-/dev/sda}
        device = where if where.startswith(_DEVICES) else bare[bare.find("/dev/"):].split(
            "}", 1)[0] if "/dev/" in bare and (value is None or bare.startswith("/dev/")) else ""
        if device and primitive != "destructive":   # cat img > /dev/sda overwrites a disk
            from governance.shell.devices import written

            written(self, device, seg, reason)
        if (primitive == "file-delete" or (replaces and primitive == "file-write")) and \
                value is not None:
            self._lost(value, where, seg, primitive == "file-delete")
        if value is None and primitive in ("file-write", "file-delete", "destructive"):
            self._listed(raw, seg)
        if self.protected(value, raw) or (folder and self.holds_protected(
                value, direct=folder == "direct")):
            self.add("governance-admin", seg,
                     f"{raw} is a governance-protected file: ask the user to make this change "
                     "from a terminal")
        elif value is not None and self.names is not None and self.names.links:
            self._linked(value, raw, seg, folder)

    def _linked(self, value: str, raw: str, seg: str, folder: bool | str) -> None:
        """A target reached through a link this command made (``ln -s . l && rm
        l/.claude/settings.json``, ``cp -al .claude c && echo > c/settings.json``): protected
        when where it leads is (``shell.copies``)."""
        from governance.shell.copies import through_link

        led = through_link(self, value)
        if led is None:
            return
        if led != "?" and not system.isabs(led) and self.root:
            led = system.normpath(system.join(self.root, led))   # keys: from where it started
        if led == "?":
            hit = self._ends_protected(value.split("/", 1)[1]) if "/" in value else False
        else:
            hit = self.protected(led, led) or bool(folder and self.holds_protected(
                led, direct=folder == "direct"))
        if hit:
            self.add("governance-admin", seg,
                     f"{raw} leads through a link this command made to "
                     f"{'a folder known only at run time' if led == '?' else led}, where a "
                     "governance-protected file is: ask the user to make this change from a "
                     "terminal")

    def _listed(self, raw: str, seg: str) -> None:
        """A target a search lists at run time (``grep -rl X . | xargs sed -i``, ``rm
        $(find . -name settings.json)``): a governance file it may list makes the write or
        delete ``governance-admin`` (:mod:`governance.shell.searches`)."""
        if getattr(self.check, "protected_files", None) is None:
            return
        from governance.shell.searches import listed_governance
        from governance.shell.trees import sources

        bare = raw.strip('"')
        texts = sources(self, raw) or ([bare] if bare.startswith(("$(", "`")) else [])
        for text in texts:
            found = listed_governance(self, text)
            if found is not None:
                self.add("governance-admin", seg,
                         f"{raw.lstrip(chr(0))} is what `{text.strip()}` lists, which may name "
                         f"{found}, a governance-protected file")
                return

    def _lost(self, value: str, where: str, seg: str, delete: bool) -> None:
        """A file outside the project deleted or overwritten: ``destructive``, as nothing
        restores it (:mod:`governance.policy.recovery`)."""
        lost = getattr(self.check, "lost", None)
        if lost is None:
            return
        if where == "?":
            path = system.expanduser(value)
            if not system.isabs(path):
                if self.cwd is None or not any(c in path for c in _GLOB_CHARS):
                    return
                path = system.join(self.cwd, path) if self.cwd else path
            if "\0" in path or "{" in path:
                return
            where = path
        why = lost(where, delete)
        if why is not None:
            self.add("destructive", seg, why)

    def where(self, value: str | None) -> str:
        """A target as a path: absolute, or relative to the call's working directory; "?" when
        it cannot be named (a run-time value, a glob, after a ``cd`` to an unknown folder)."""
        if value is None or any(c in value for c in _GLOB_CHARS):
            return "?"
        path = system.expanduser(value)
        if system.isabs(path):
            return system.normpath(path)
        if self.cwd is None:
            return "?"
        return system.normpath(system.join(self.cwd, path)) if self.cwd else path

    def is_protected(self, path: str) -> bool:
        known = self.checked.get(path)
        if known is None:
            known = self.checked[path] = self.check(path)
        return known

    def protected(self, value: str | None, raw: str) -> bool:
        if value is not None and ("{" in value or any(c in value for c in _GLOB_CHARS)):
            from governance.shell.expansion import pattern_protected  # .cl*/gov*/state.json

            found = pattern_protected(self, value)
            if found is not None:
                return found
        if value is None and (self.loops or raw[:1] == "\0"):   # rm "$f" in a loop, xargs rm
            from governance.shell.loops import loop_protected

            if loop_protected(self, raw):
                return True
        text = raw if value is None else value
        if value is None and "$" in raw:     # docs/notes-$(date +%F).md: a name, not a folder
            from governance.shell.expansion import runtime_protected

            found = runtime_protected(self, raw)
            if found is not None:
                return found
        if value is None or any(c in value for c in _GLOB_CHARS) or self.cwd is None:
            lowered = text.lower()
            if any(m in lowered for m in self.shell.get("protected_markers", ())):
                return True
            if value is None:
                return False
            if self.cwd is None and self._ends_protected(value):
                return True
        if text.startswith("~+/") or text == "~+":
            text = self._here(text)
        elif text.startswith("/proc/") and self.folder():   # /proc/self/cwd is the shell's folder
            text = system.located(str(self.folder()), text)
        path = system.expanduser(text)
        if self.is_protected(path):
            return True
        if self.cwd and not system.isabs(path):
            return self.is_protected(system.normpath(system.join(self.cwd, path)))
        return False

    def _ends_protected(self, value: str) -> bool:
        """A relative path read from a folder known only at run time (``cd "$D" && rm
        settings.json``) that is the end of a protected file's path, or a folder on one."""
        files = getattr(self.check, "protected_files", None)
        if files is None or system.isabs(value) or value[:1] == "~":
            return False
        tail = system.normpath(value)
        if tail in (".", "..") or tail.startswith("../"):
            return False
        found = files("/")
        if any(path.endswith("/" + tail) or "/" + tail + "/" in path for path in found):
            return True
        for folder in {system.dirname(path) for path in found}:   # settings.local.json, new
            if self.is_protected(system.join(folder, tail)) and \
                    not self.is_protected(system.join(folder, "\x01")):
                return True       # a folder all of whose files are protected: those there only
        return False

    def holds_protected(self, value: str | None, direct: bool = False) -> bool:
        """A known folder target that contains a protected path (``rm -r .claude``); with
        ``direct``, only one that is the folder of a protected path itself."""
        if value is None:
            return False
        if "{" in value or any(c in value for c in _GLOB_CHARS):
            from governance.shell.expansion import pattern_holds

            return pattern_holds(self, value, direct)
        folder = system.expanduser(self._here(value))
        for probe in self.shell.get("protected_probes", ()):
            if direct and "/" in probe:
                continue
            path = system.join(folder, probe)
            if self.is_protected(path):
                return True
            if self.cwd and not system.isabs(path) and \
                    self.is_protected(system.normpath(system.join(self.cwd, path))):
                return True
        return False

    def _here(self, text: str) -> str:
        """``~+`` (bash's ``$PWD``) as the folder the command is in, when known."""
        if (text == "~+" or text.startswith("~+/")) and self.folder():
            return str(self.folder()) + text[2:]
        return text

    def folder(self) -> str | None:
        """The folder the command is in now (its own ``cd``s followed), absolute; None when it
        is not known."""
        if self.root is None or self.cwd is None:
            return None
        return system.normpath(system.join(self.root, system.expanduser(self.cwd)))

    def enter(self, value: str | None) -> None:
        """``env -C DIR CMD``: CMD runs in DIR; the folder is restored after the command."""
        if not self.scope:
            self.scope = [self.cwd]
        before = self.oldpwd
        self.change_dir(["cd", value])
        self.oldpwd = before

    def change_dir(self, fields: list[str | None]) -> None:
        """``cd``, ``pushd`` and ``popd``: the folder later words are read from, with the
        previous folder (``cd -``) and the folder stack (``pushd +N``, ``popd``) as bash keeps
        them. One that started before this command is not known: going back to it makes the
        folder unknown."""
        verb = str(fields[0]).rsplit("/", 1)[-1] if fields and fields[0] else "cd"
        args = [f for f in fields[1:] if f is None or f == "-" or not f.startswith("-")
                or (verb != "cd" and f[1:].isdigit())]
        stay = verb != "cd" and "-n" in fields[1:]     # pushd -n DIR, popd -n: the stack only
        ring: list[str | None] = [self.cwd, *self.dirs]
        if verb == "popd":
            spot = _stack_index(args[0] if args else "+0", len(ring))
            if spot is None or len(ring) < 2:
                return                                 # bash refuses: the folder stays
            if spot == 0 and not stay:
                self.cwd = ring[1]
                self.dirs = ring[2:]
            else:
                del ring[spot if spot else 1]
                self.dirs = ring[1:]
            return
        if verb == "pushd" and (not args or (args[0] is not None and args[0][:1] in "+-"
                                             and args[0][1:].isdigit())):
            spot = _stack_index(args[0] if args else "+1", len(ring))
            if spot is None or len(ring) < 2:
                return
            ring = ring[spot:] + ring[:spot]           # pushd +N: the stack turned
            self.oldpwd, self.cwd, self.dirs = self.cwd, ring[0], ring[1:]
            return
        target: str | None
        if not args:
            target = system.expanduser("~")
        elif args[0] == "-":
            target = self.oldpwd                       # cd -: the folder before
        elif args[0] is None or self.cwd is None:
            target = None
        else:
            value = system.expanduser(args[0])
            target = system.normpath(system.join(self.cwd, value)) if self.cwd else value
        if verb == "pushd":
            if stay:
                self.dirs = [target, *self.dirs]
                return
            self.dirs = [self.cwd, *self.dirs]
        self.oldpwd, self.cwd = self.cwd, target
