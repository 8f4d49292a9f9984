"""What ``git`` runs from files: an alias from the git configuration (``!sh -c ...`` runs shell
commands, any other alias runs the git command it names) and the hooks a subcommand runs
(``git commit`` runs ``pre-commit``, ``commit-msg`` ...; ``git push`` runs ``pre-push``), from
``.git/hooks`` or the folder ``core.hooksPath`` names. Both are read when the hook decides and
analysed as if typed.

Imported by ``shell.resolver`` when git runs in a folder the analysis may read. The configuration
is read from the files themselves, never by running git: the user's (``~/.gitconfig``,
``$XDG_CONFIG_HOME/git/config``), the repository's (``.git/config``, ``config.worktree``), and the
files they ``include`` (one level). Reading happens only for an alias (a subcommand git does not
have), a subcommand that runs hooks, or one that runs a command a setting names
(``core.fsmonitor``, ``diff.external``, ``core.sshCommand``, filters, ...).
"""

from __future__ import annotations

from governance import system
from governance.shell.source import path_of, read, run_text, text_of, written
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

_COMMIT = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-rewrite",
           "pre-auto-gc", "reference-transaction")
_MERGE = ("pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge",
          "reference-transaction", "pre-auto-gc")
HOOKS = {
    "commit": _COMMIT, "merge": _MERGE,
    "pull": (*_MERGE, "pre-rebase", "post-rewrite", "post-checkout"),
    "push": ("pre-push", "reference-transaction"),
    "checkout": ("post-checkout", "reference-transaction"),
    "switch": ("post-checkout", "reference-transaction"),
    "rebase": ("pre-rebase", "post-rewrite", "post-checkout", "prepare-commit-msg",
               "reference-transaction"),
    "am": ("applypatch-msg", "pre-applypatch", "post-applypatch", "post-rewrite",
           "reference-transaction", "pre-auto-gc"),
    "cherry-pick": ("prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"),
    "revert": ("prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction"),
    "worktree": ("post-checkout",), "gc": ("pre-auto-gc",), "send-email": ("sendemail-validate",),
    "fetch": ("reference-transaction",), "reset": ("reference-transaction",),
    "branch": ("reference-transaction",), "tag": ("reference-transaction",),
    "update-ref": ("reference-transaction",), "stash": ("reference-transaction",),
}
SKIPPED = {"commit": ("pre-commit", "commit-msg"), "merge": ("pre-merge-commit", "commit-msg"),
           "push": ("pre-push",), "am": ("applypatch-msg", "pre-applypatch")}
# git's own commands: an alias of the same name is never used
_NAMES = (
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore "
    "check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone "
    "column commit commit-graph commit-tree config count-objects credential describe diff "
    "diff-files diff-index diff-tree difftool fast-export fast-import fetch fetch-pack "
    "filter-branch fmt-merge-msg for-each-ref format-patch fsck gc get-tar-commit-id grep gui "
    "hash-object help hook index-pack init instaweb interpret-trailers log ls-files ls-remote "
    "ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree "
    "mktag mktree mv name-rev notes pack-objects pack-refs prune pull push range-diff read-tree "
    "rebase reflog remote repack replace request-pull rerere reset restore rev-list rev-parse "
    "revert rm send-email shortlog show show-branch show-ref sparse-checkout stash status "
    "submodule switch symbolic-ref tag update-index update-ref var verify-commit verify-pack "
    "verify-tag version whatchanged worktree write-tree")
BUILTINS = frozenset(_NAMES.split())
_GLOBAL_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                  "--config-env", "--super-prefix", "--list-cmds")
_MAX_ALIASES = 10


def parse_config(text: str) -> list[tuple[str, str]]:
    """``(section[.subsection].name, value)`` pairs of a git configuration file, in order
    (section and name lower-cased; quotes, escapes, comments and continued lines as git reads
    them)."""
    out: list[tuple[str, str]] = []
    section = ""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k].strip()
        k += 1
        while line.endswith("\\") and not line.endswith("\\\\") and k < len(lines):
            line = line[:-1] + lines[k].strip()
            k += 1
        if line.startswith("["):
            end = line.find("]")
            if end < 0:
                continue
            head = line[1:end].strip()
            if '"' in head:
                name, _, sub = head.partition('"')
                section = name.strip().lower() + "." + sub.rstrip('"').replace('\\"', '"')
            else:
                section = head.lower()
            line = line[end + 1:].strip()
        if not line or line[0] in "#;":
            continue
        key, eq, raw = line.partition("=")
        out.append((f"{section}.{key.strip().lower()}", _value(raw) if eq else "true"))
    return out


def _value(raw: str) -> str:
    out: list[str] = []
    quoted = False
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


class Repository:
    """Where git runs: the work tree, the git folder, and its configuration as read."""

    __slots__ = ("common", "config", "gitdir", "worktree")

    def __init__(self, worktree: str, gitdir: str) -> None:
        self.worktree = worktree
        self.gitdir = gitdir
        common = gitdir
        try:
            with open(system.join(gitdir, "commondir"), encoding="utf-8") as handle:
                common = system.normpath(system.join(gitdir, handle.read(4096).strip()))
        except OSError:
            pass
        self.common = common
        self.config: list[tuple[str, str, str]] | None = None    # (key, value, file)

    def settings(self, an: Walk) -> list[tuple[str, str, str]]:
        if self.config is None:
            self.config = []
            home = system.expanduser("~")
            xdg = system.environ_get("XDG_CONFIG_HOME") or system.join(home, ".config")
            for path in (system.join(xdg, "git", "config"), system.join(home, ".gitconfig"),
                         system.join(self.common, "config"),
                         system.join(self.gitdir, "config.worktree")):
                self._read(an, path, 0)
        return self.config

    def _read(self, an: Walk, path: str, level: int) -> None:
        if not system.isfile(path):
            return
        kind, text = read(an, path)
        if kind != "text":
            return
        assert self.config is not None
        for key, value in parse_config(text):
            if level == 0 and key.startswith(("include.", "includeif.")) and \
                    key.endswith(".path"):
                include = system.expanduser(value)
                self._read(an, system.join(system.dirname(path), include), level + 1)
            self.config.append((key, value, path))

    def get(self, an: Walk, key: str) -> tuple[str, str] | None:
        """The last value of ``key`` (lower-case) and the file it is in."""
        found = None
        for k, value, path in self.settings(an):
            if k == key:
                found = (value, path)
        return found


def _repository(start: str, fields: list[str | None]) -> Repository | None:
    gitdir = worktree = None
    i = 1
    while i < len(fields):
        arg = fields[i]
        value = fields[i + 1] if i + 1 < len(fields) else None
        if arg in ("-C", "--git-dir", "--work-tree") and value is not None:
            path = system.normpath(system.join(start, system.expanduser(value)))
            if arg == "-C":
                start = path
            elif arg == "--git-dir":
                gitdir = path
            else:
                worktree = path
        if arg is not None and arg.startswith(("--git-dir=", "--work-tree=")):
            path = system.normpath(system.join(start, arg.split("=", 1)[1]))
            gitdir, worktree = (path, worktree) if arg[2] == "g" else (gitdir, path)
        elif arg is None or not arg.startswith("-"):
            break
        i += 2 if arg in _GLOBAL_VALUED else 1
    if gitdir is not None:
        return Repository(worktree or start, gitdir)
    folder = start
    for _ in range(64):
        dot = system.join(folder, ".git")
        if system.isdir(dot):
            return Repository(worktree or folder, dot)
        if system.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as handle:
                    line = handle.read(4096).strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return Repository(worktree or folder,
                                  system.normpath(system.join(folder, line[7:].strip())))
            return None
        parent = system.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _subcommand(fields: list[str | None]) -> int:
    i = 1
    while i < len(fields):
        arg = fields[i]
        if arg is None or not arg.startswith("-"):
            return i
        i += 2 if arg in _GLOBAL_VALUED else 1
    return i


def _label(repo: Repository, path: str) -> str:
    for folder in (repo.worktree, system.expanduser("~")):
        if path.startswith(folder + system.sep):
            return ("~/" if folder != repo.worktree else "") + path[len(folder) + 1:]
    return path


def run(an: Walk, fields: list[str | None], seg: str, depth: int) -> list[str | None] | None:
    """Analyse what a git command runs from files; returns the argument vector an alias expands
    to (``["git", "version"]`` after a shell alias, which runs no git command), else None."""
    start = path_of(an, ".")
    if start is None:
        return None
    original = fields
    repo: Repository | None = None
    for _hop in range(_MAX_ALIASES):
        i = _subcommand(fields)
        sub = fields[i] if i < len(fields) else None
        if sub is None:
            return None if fields is original else fields
        if sub.lower() in BUILTINS:
            break
        if repo is None:
            repo = _repository(start, fields) or Repository(start, system.join(start, ".git"))
        alias = repo.get(an, "alias." + sub.lower())
        if alias is None:
            break
        value, path = alias
        origin = f"the git alias {sub} in {_label(repo, path)}"
        if value.startswith("!"):
            rest = " ".join(quote(str(f)) if f is not None else '"$__arg"'
                            for f in fields[i + 1:])
            run_text(an, f"{value[1:]} {rest}".strip(), None, origin, seg, depth,
                     repo.worktree)
            return [fields[0], "version"]
        words = _words(an, value)
        if words is None:
            an.unknown(seg, f"{origin} cannot be read")
            return [fields[0], "version"]
        fields = [*fields[:i], *words, *fields[i + 1:]]
    else:
        an.unknown(seg, "git aliases name each other too many times")
        return [fields[0], "version"]
    if repo is None:
        repo = _repository(start, fields)
    if repo is not None:
        _settings(an, repo, fields, seg, depth)
    _hooks(an, repo, start, fields, seg, depth)
    return None if fields is original else fields


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Settings whose value is a command git runs, read from the configuration files, and the
# subcommands that run it. Claude Code's Bash tool gives git no terminal, so git starts no pager
# (core.pager, pager.*); a setting git's -c gives on the command line is read by
# ``shell.programs.git_config``.
_INDEX = _names(
    "status diff add commit checkout switch restore reset stash merge rebase pull cherry-pick "
    "revert rm mv ls-files grep clean describe am apply update-index worktree submodule "
    "difftool mergetool sparse-checkout blame annotate")
_NETWORK = _names("fetch pull push clone ls-remote remote submodule archive fetch-pack "
                  "send-pack request-pull")
_DIFFS = _names("diff log show stash format-patch range-diff difftool blame annotate grep "
                "add whatchanged")
_MERGES = _names("merge pull rebase cherry-pick revert stash am checkout switch")
_SIGNS = _names("commit tag merge rebase cherry-pick revert am log show verify-commit "
                "verify-tag push pull")
_EDITS = _names("commit tag merge rebase notes revert cherry-pick am")
_PATCHES = _names("add checkout reset stash restore")
_MESSAGE = ("-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit")
_RUN = {"core.fsmonitor": _INDEX, "diff.external": _DIFFS, "core.sshcommand": _NETWORK,
        "core.askpass": _NETWORK, "core.gitproxy": _NETWORK, "credential.helper": _NETWORK,
        "uploadpack.packobjectshook": _NETWORK, "gpg.program": _SIGNS,
        "core.editor": _EDITS, "sequence.editor": frozenset(("rebase",)),
        "interactive.difffilter": _PATCHES}
_NAMED = {("filter", "clean"): _INDEX | {"clone", "archive"},
          ("filter", "smudge"): _INDEX | {"clone", "archive"},
          ("filter", "process"): _INDEX | {"clone", "archive"},
          ("diff", "textconv"): _DIFFS, ("diff", "command"): _DIFFS,
          ("merge", "driver"): _MERGES, ("credential", "helper"): _NETWORK,
          ("remote", "uploadpack"): _NETWORK, ("remote", "receivepack"): _NETWORK,
          ("remote", "vcs"): _NETWORK, ("gpg", "program"): _SIGNS,
          ("difftool", "cmd"): frozenset(("difftool",)),
          ("mergetool", "cmd"): frozenset(("mergetool",))}


def _used_by(key: str) -> frozenset[str]:
    """The subcommands that run a setting's command (none: a setting that runs nothing)."""
    found = _RUN.get(key)
    if found is not None:
        return found
    if key.startswith("sendemail."):
        return frozenset(("send-email",))
    if key.count(".") >= 2:
        return _NAMED.get((key.split(".", 1)[0], key.rsplit(".", 1)[1]), frozenset())
    return frozenset()


def _settings(an: Walk, repo: Repository, fields: list[str | None], seg: str,
              depth: int) -> None:
    """The commands the configuration files give the settings this subcommand runs
    (``core.fsmonitor`` for ``git status``, ``diff.external`` for ``git diff``, ...), analysed
    as if typed: a file written earlier, by this command or another, plants what runs."""
    i = _subcommand(fields)
    sub = str(fields[i]) if i < len(fields) and fields[i] is not None else ""
    if not sub:
        return
    args = [f for f in fields[i + 1:] if f is not None]
    for key, value, path in repo.settings(an):
        if sub not in _used_by(key):
            continue
        if key in ("core.editor", "sequence.editor") and not _edits(sub, args):
            continue
        command = _command(key, value)
        if command and not _sample(system.join(repo.worktree, system.expanduser(command))):
            run_text(an, command, None, f"the git setting {key} in {_label(repo, path)}", seg,
                     depth, repo.worktree)


def _command(key: str, value: str) -> str | None:
    """The shell command a git setting's value runs (None: none): ``!`` helpers run
    the rest; a credential helper that is a plain
    name is ``git credential-NAME``; ``core.fsmonitor`` may be a boolean (git's own daemon)."""
    value = value.strip()
    if not value:
        return None
    if key.startswith("credential.") and not value.startswith("!") and "/" not in \
            value.split(None, 1)[0]:
        return None            # git credential-NAME: git's own helpers (store, cache, manager)
    if key == "core.fsmonitor" and value.lower() in _BOOLEANS:
        return None
    return value[1:] if value.startswith("!") else value


_BOOLEANS = ("true", "false", "yes", "no", "on", "off", "1", "0")


# where git keeps the sample hooks it copies into every new repository
_TEMPLATES = ("/usr/share/git-core/templates/hooks", "/usr/local/share/git-core/templates/hooks",
              "/opt/homebrew/share/git-core/templates/hooks",
              "/Library/Developer/CommandLineTools/usr/share/git-core/templates/hooks")


def _sample(path: str, text: str | None = None) -> bool:
    """Whether ``path`` holds one of git's own sample hooks, as git installed it (the
    ``fsmonitor-watchman`` hook ``core.fsmonitor`` names, a ``pre-commit`` copied from its
    sample): git's code, not the agent's, whatever it runs."""
    name = system.basename(path)
    if text is None:
        if not system.isfile(path):
            return False
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(65536)
        except OSError:
            return False
    for folder in _TEMPLATES:
        sample = system.join(folder, name + ".sample")
        if system.isfile(sample):
            try:
                with open(sample, encoding="utf-8", errors="replace") as handle:
                    if handle.read(65536) == text:
                        return True
            except OSError:
                continue
    return False


def _edits(sub: str, args: list[str]) -> bool:
    """Whether a subcommand opens the editor: a commit or tag without its message given, an
    interactive rebase, a merge or revert that is not told --no-edit."""
    if sub == "rebase":
        return any(a in ("-i", "--interactive") or (a.startswith("-") and not
                   a.startswith("--") and "i" in a[1:]) for a in args)
    if sub == "tag" and not any(a in ("-a", "--annotate", "-s", "--sign", "-e", "--edit") or
                                a.startswith("-u") for a in args):
        return False
    return not any(a in _MESSAGE or a.startswith(("--message=", "--file=", "-m", "-F"))
                   for a in args)


def _words(an: Walk, value: str) -> list[str | None] | None:
    from governance.shell.parser import ParseError, parse

    try:
        cmds = parse(value, 8, 0, [256])
    except ParseError:
        return None
    if len(cmds) != 1:
        return None
    return [an.expand_one(w.parts) for w in cmds[0].words]


def _hooks(an: Walk, repo: Repository | None, start: str, fields: list[str | None], seg: str,
           depth: int) -> None:
    i = _subcommand(fields)
    sub = fields[i] if i < len(fields) else None
    names = HOOKS.get(sub or "")
    if sub == "hook":               # git hook run [--ignore-missing] NAME [-- ARGS]: that hook
        named = [f for f in fields[i + 1:] if f is None or not f.startswith("-")]
        if named[:1] != ["run"] or len(named) < 2:
            return
        if named[1] is None:
            an.unknown(seg, "git hook run runs a hook named only at run time")
            return
        names = (str(named[1]),)
    if not names:
        return
    args = [f for f in fields[i + 1:] if f is not None]
    if "--no-verify" in args or (sub == "commit" and any(
            a.startswith("-") and not a.startswith("--") and "n" in a[1:] for a in args)):
        names = tuple(n for n in names if n not in SKIPPED.get(str(sub), ()))
    if repo is None:
        repo = _repository(start, fields)
        if repo is None:
            return
    configured = repo.get(an, "core.hookspath")
    if "git-core.hookspath" in an.vars:     # set earlier in this command (-c, git config)
        given = an.vars["git-core.hookspath"]
        if given is None:
            an.unknown(seg, f"git {sub} runs hooks from a folder known only at run time")
            return
        configured = (given, "")
    if configured is not None and configured[0]:
        folder = system.join(repo.worktree, system.expanduser(configured[0]))
    else:
        folder = system.join(repo.common, "hooks")
    try:
        present = set(system.listdir(folder))
    except OSError:
        present = set()
    for name in names:
        path = system.join(folder, name)
        if written(an, path) is None and (name not in present or not system.access(
                path, system.X_OK) or not system.isfile(path)):
            continue         # a hook this command wrote runs whatever its mode says now
        label = _label(repo, path)
        text = text_of(an, f"git {sub}", path, f"the {name} hook {label}", seg)
        if text is not None and not (written(an, path) is None and _sample(path, text)):
            run_text(an, text, None, f"the {name} hook {label}", seg, depth, repo.worktree)
