"""GovernanceLayer: the one place that decides what a tool call may do in the current state.

Hot path: imports ``os`` and our small modules (``wildcard`` instead of ``fnmatch``), each where it
is first needed: a PostToolUse call, which only maps the tool and reads the state, never loads
``decision`` or ``shell``, nor ``wildcard`` unless a glob must be matched. Deciding
is a dictionary look-up:
``decide[state][primitive]`` was expanded from ``rules[primitive][STATE | _all_states]`` when the
matrix was compiled.
"""

from __future__ import annotations

from governance import system
from governance.policy import matrix as matrix_module
from governance.policy.state import StateView, read_state
from governance.project import sandbox_manifest_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from governance.policy.decision import Decision
    from governance.policy.secrets import Secrets
    from governance.shell import Act

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
# tools whose input is a command line, and the language it is read in (None: Bash)
SHELL_TOOLS: dict[str, str | None] = {"Bash": None, "PowerShell": "powershell"}
SECRET_READERS = {"Read": "file_path", "Grep": "path"}   # tools that show a file's content
READING = ("mcp-read", "memory-search")  # MCP primitives that only read: their paths may be ours
# The tool Claude Code calls for our ``type: "mcp_tool"`` hooks (``governance install --mcp-hooks``).
# The agent calling it itself would forge hook calls and ledger records: it is governance-admin,
# whatever the matrix says (as writes to our own installation are).
HOOK_SERVER = "governance-hooks"
HOOK_TOOL = "decide_tool_call"
HOOK_TOOL_NAME = f"mcp__{HOOK_SERVER}__{HOOK_TOOL}"


# An MCP tool's input: keys whose name says they hold a path (any depth), keys holding a
# command it runs, and how many values are looked at.
_MCP_PATH_WORDS = ("path", "file", "dir", "folder", "dest", "target", "source", "src", "output",
                   "location", "uri")
_MCP_COMMANDS = ("command", "cmd", "script", "shell", "shellcommand")
_MCP_VALUES = 256


def _keyed_values(value: Any, depth: int, budget: list[int]) -> Iterator[tuple[str, Any]]:
    """(key, value) for every value of a JSON object, nested objects and lists included (a list's
    items under the key that holds it), at most ``budget`` of them."""
    if depth > 8 or not isinstance(value, dict):
        return
    for key, item in value.items():
        for one in item if isinstance(item, list) else [item]:
            budget[0] -= 1
            if budget[0] < 0:
                return
            if isinstance(one, dict):
                yield from _keyed_values(one, depth + 1, budget)
            elif isinstance(key, str):
                yield key, one


def _outbound(act: Act) -> bool:
    """Whether an act sends something off the machine to the hosts it names: a request, or a
    name lookup (``dig NAME``: a read whose hosts the shell analysis named), which the taint
    rule checks against ``egress.allow``."""
    return act.hosts is not None and (act.primitive == "web-fetch" or (
        act.primitive == "shell-read" and bool(act.hosts)))


# the services on a cloud machine that hand out its credentials (AWS, ECS, GCP, Azure, Alibaba)
_METADATA_HOSTS = frozenset(("169.254.169.254", "169.254.170.2", "fd00:ec2::254",
                             "[fd00:ec2::254]", "metadata.google.internal", "metadata",
                             "100.100.100.200"))


def _metadata(acts: list[Act]) -> list[Act]:
    """``acts`` plus a ``secret-read`` for each request to a metadata service: what it answers
    is the machine's credentials (``curl 169.254.169.254/.../security-credentials/ROLE``)."""
    found = [act for act in acts if _outbound(act) and
             any(h.lower().rstrip(".") in _METADATA_HOSTS for h in act.hosts or ())]
    if not found:
        return acts
    from governance.shell import Act

    added = []
    for act in found:
        read = Act("secret-read", act.segment, "the request asks the cloud's metadata service, "
                                               "which hands out this machine's credentials")
        read.secrets = ["the metadata service's credentials"]
        added.append(read)
    return acts + added


def _match(name: str, pattern: str) -> bool:
    """``wildcard.match``, imported only for a name that starts with the pattern's literal part
    (what comes before its first ``*``, ``?`` or ``[``): most paths written share no prefix with
    any protected pattern, and the module is never loaded."""
    cut = min((k for k in (pattern.find("*"), pattern.find("?"), pattern.find("[")) if k >= 0),
              default=-1)
    if cut < 0:
        return name == pattern
    if not name.startswith(pattern[:cut]):
        return False
    from governance.policy.wildcard import match

    return match(name, pattern)

def _glob(name: str, pattern: str) -> bool:
    """``_match``, with a pattern such as ``*.mk`` (a ``*`` and a literal suffix) compared
    directly: it shares a prefix with every name, and the glob matcher would always load."""
    if pattern[:1] == "*" and not any(c in pattern[1:] for c in "*?["):
        return name.endswith(pattern[1:])
    return _match(name, pattern)


_MAX_LISTED = 500   # entries of a folder a glob is matched against
# whose message shows when several acts decide alike: self-protection's, then a secret's, then
# any act the analysis named over the cautious "could not tell" ones
_PREFERRED = {"governance-admin": 2, "exfiltration": 1, "shell-unknown": -2, "shell-unlisted": -1}
_MAX_PROTECTED_FILES = 2000
_MAX_DEPTH = 16


def _paths_under(path: str, pattern: str | None, found: list[str], budget: list[int],
                 depth: int = 0) -> None:
    """Append ``path`` when it is a file, or the files below it when it is a folder (only those
    whose path matches ``pattern``, compared without regard to case, when given)."""
    if budget[0] <= 0:
        return
    try:
        info = system.lstat(path)
    except (OSError, ValueError):
        return
    budget[0] -= 1
    kind = info.st_mode & 0o170000
    if kind != 0o040000:
        if pattern is None or _match(path.lower(), pattern.lower()):
            found.append(path)
        return
    if depth >= _MAX_DEPTH:
        return
    try:
        names = sorted(system.listdir(path))
    except OSError:
        return
    for name in names:
        _paths_under(system.join(path, name), pattern, found, budget, depth + 1)


def _layers(cells: dict[str, Any], org_file: str) -> dict[str, Any]:
    """The organisation's cell and the lower layers' for one primitive in one state, and which
    holds (for the ledger and ``governance explain``)."""
    def cell(entry: Any) -> dict[str, str] | None:
        return None if entry is None else {"action": entry[0], "rule": entry[4], "file": entry[3]}

    floor, lower = cell(cells["floor"]), cell(cells["lower"])
    return {"org": floor, "project": lower,
            "winner": "org" if cells["in_force"] is not None and cells["in_force"][3] == org_file
            else "project"}


def _exec_act(segment: str, target: str) -> Act:
    from governance.shell import Act

    act = Act("exec-config", segment, f"{target} changes what later commands run "
                                      "(exec_config_paths)")
    act.targets = [target]
    return act


class PathGuard:
    """What the shell analysis asks about paths: whether one is protected (a call), and, for
    archives, patches and git plumbing that write files it must list, the call's folder
    (``base``), whether a folder holds a protected place (``holds``) and whether a path is an
    ``exec_config_paths`` file (``exec_config``)."""

    __slots__ = ("base", "layer", "real_places", "secret_files")

    def __init__(self, layer: GovernanceLayer, base: str) -> None:
        self.layer = layer
        self.base = base
        self.secret_files: dict[str, str | None] = {}   # path -> secret_path(path), once
        self.real_places: tuple[str, str] | None = None  # the project and the home, real

    def __call__(self, path: str) -> bool:
        return self.layer.is_protected(path, self.base)

    def holds(self, folder: str) -> bool:
        return self.layer.holds_protected(folder, self.base)

    def exec_config(self, path: str) -> bool:
        return self.layer.is_exec_config(path, self.base)

    def lost(self, path: str, delete: bool) -> str | None:
        """Why deleting (``delete``) or overwriting ``path`` (absolute; a glob pattern is
        matched now) loses a file nothing restores, or None (:mod:`governance.policy.recovery`)."""
        from governance.policy import recovery

        path = system.located(self.base, path)
        if self.real_places is None:
            self.real_places = (system.realpath(self.layer.project_dir), system.realpath(
                system.environ_get("HOME") or system.expanduser("~")))
        root, home = self.real_places
        if any(c in path for c in "*?["):
            return recovery.lost_pattern(path, root, home, delete=delete)
        return recovery.lost(path, root, home, delete=delete)

    def protected_files(self, folder: str) -> list[str]:
        """The protected files that exist at or below ``folder`` (the ``protected_paths``
        places, not the installation), absolute, at most ``_MAX_PROTECTED_FILES``: what a
        command that acts on every file it finds below ``folder`` may reach."""
        return self.layer.protected_files(folder, self.base)

    def secret_path(self, path: str) -> str | None:
        """The ``secrets.paths`` pattern ``path`` matches (a secret file, or a folder whose
        every file is one, such as ``~/.ssh``), else None. A path holding no literal part of any
        pattern, as written and where it leads, is neither: the shell analysis asks this of
        every argument, and the matcher is not loaded for it."""
        if path in self.secret_files:
            return self.secret_files[path]
        found = self.secret_files[path] = self._secret_path(path)
        return found

    def _secret_path(self, path: str) -> str | None:
        cut = min((k for k in (path.find("*"), path.find("?"), path.find("[")) if k >= 0),
                  default=-1)
        if cut >= 0:                     # cat ~/.ssh/id_*, head ~/.ssh/*, cat .env*: a pattern
            return self._secret_pattern(path, cut)
        lowered = path.lower().rstrip("/") + "/"
        if not self._screen("paths", lowered):
            joined = system.located(self.base, path)
            try:
                info = system.lstat(joined)
            except (OSError, ValueError):
                return None
            folder = info.st_mode & 0o170000 == 0o040000   # tar c ~/.aws: what it holds
            if not folder and not self._screen("paths", system.realpath(joined).lower() + "/"):
                return None
        secrets = self.layer.secrets()
        if secrets is None:
            return None
        return secrets.path(path, self.base) or secrets.folder(path, self.base, direct=True)

    def _secret_pattern(self, path: str, cut: int) -> str | None:
        """The secret a glob the shell expands names: the files it matches now in its folder
        (as the shell will expand it; a leading ``*`` skips dot files), each asked as a path;
        where the folder cannot be listed, a secret file name the pattern may match."""
        secrets = self.layer.secrets()
        if secrets is None:
            return None
        folder, _, name = path.rpartition("/")
        if any(c in folder for c in "*?["):
            return secrets.glob(name)
        where = system.join(self.base, system.expanduser(folder or "."))
        try:
            names = system.listdir(where)[:_MAX_LISTED]
        except (OSError, ValueError):
            return None       # no folder: the pattern matches nothing, the shell passes it on
        from governance.policy.wildcard import match

        for entry in names:
            if (entry[:1] != "." or name[:1] == ".") and match(entry, name):
                found = secrets.path(system.join(where, entry), self.base)
                if found is not None:
                    return found
        return None

    def secret_variable(self, name: str) -> bool:
        """Whether the environment variable ``name`` holds a secret."""
        if not self._screen("variables", name.upper()):
            return False
        secrets = self.layer.secrets()
        return secrets is not None and secrets.variable(name)

    def may_name_secret(self, text: str) -> bool:
        """Whether ``text`` (inline code) holds a literal part of a secret file's pattern."""
        return self._screen("paths", text.lower())

    def names_secret(self, word: str) -> bool:
        """Whether a plain word may be part of a secret variable's name (``KEY``, ``TOKEN``):
        what a filter of printed variables (``env | grep WORD``) may keep."""
        upper = word.upper()
        hints = ((self.layer.matrix.get("secrets") or {}).get("hints") or {}).get("variables")
        return self._screen("variables", upper) or hints is None or any(upper in h for h in hints)

    def _screen(self, key: str, text: str) -> bool:
        """Whether ``text`` holds the longest literal part of one ``secrets`` pattern (a name or
        path that holds none can match no pattern; ``compiler.secret_hints``). False without a
        ``secrets`` section; True for a compiled form without the hints."""
        spec = self.layer.matrix.get("secrets")
        if not spec:
            return False
        hints = (spec.get("hints") or {}).get(key)
        return hints is None or any(h in text for h in hints)

    @staticmethod
    def shaped(text: str) -> list[str]:
        """The kinds of secret-shaped values in ``text``: a provider's key format, a JWT, a
        private key (the ledger's redaction screen), or a generated value in a key-like URL
        parameter; not a word next to a key-like name (``?apikey=demo``)."""
        from governance.policy.secrets import url_secrets

        return url_secrets(text)

    @staticmethod
    def redact(text: str) -> str:
        """``text`` with its secret-shaped values masked."""
        from governance.ledger.redaction import redact

        return redact(text)

    def owns(self, secret: str, host: str) -> bool:
        """Whether ``secret`` (a variable's name, a secret file's pattern) belongs to ``host``."""
        secrets = self.layer.secrets()
        return secrets is not None and secrets.owns(secret, host)


class GovernanceLayer:
    def __init__(self, project_dir: str, matrix: dict[str, Any] | None = None) -> None:
        self.project_dir = project_dir
        self.matrix = matrix if matrix is not None else matrix_module.load(project_dir)
        self._state: StateView | None = None
        self._installed: list[str] | None = None
        self._real_root: str | None = None
        self._inodes: set[tuple[int, int]] | None = None
        self._places: dict[str, str | None] = {}   # exec_config_paths patterns, resolved once
        self._exec_elsewhere: list[tuple[str, str]] | None = None   # (literal head, place)
        self._home_dir: str | None = None
        self._protected: list[str] | None = None    # protected_paths, ~/ resolved, lower case
        self.session: str | None = None   # the call's session: its taint (policy.taint)
        self._secrets: Secrets | None = None
        self._taint: list[str] | bool | None = False   # False: not read yet

    # --- state -------------------------------------------------------------------------------
    def get_activity_state(self) -> StateView:
        if self._state is None:
            self._state = read_state(self.project_dir, self.matrix)
        return self._state

    def blocked_primitives(self, state: str) -> list[str]:
        summary = self.matrix["summary"].get(state)
        return list(summary["blocked"]) if summary else []

    def summary(self, state: str) -> dict[str, list[str]]:
        return dict(self.matrix["summary"].get(state, {}))

    # --- mapping -----------------------------------------------------------------------------
    def map_tool_to_primitive(self, tool_name: str, tool_input: dict[str, Any] | None = None,
                              cwd: str | None = None) -> str:
        """The primitive of a tool call (for Bash, the most restrictive of its acts)."""
        acts, _ = self.acts_for(tool_name, tool_input or {}, cwd)
        if len(acts) == 1:
            return acts[0].primitive
        from governance.policy.decision import SEVERITY
        state = self.get_activity_state().state
        return max(acts, key=lambda a: (SEVERITY[self._rule(a.primitive, state)[0]],
                                        _PREFERRED.get(a.primitive, 0))).primitive

    def tool_primitive(self, tool_name: str) -> tuple[str, str]:
        """(primitive, mapping key) from the tools: section; ``unknown`` when nothing matches."""
        exact = self.matrix["tools_exact"].get(tool_name)
        if exact is not None:
            return exact[0], exact[2]
        for pattern, primitive, _file, key in self.matrix["tools_glob"]:
            if _match(tool_name, pattern):
                return primitive, key
        return "unknown", "default_action"

    def acts_for(self, tool_name: str, tool_input: dict[str, Any],
                 cwd: str | None = None) -> tuple[list[Act], str]:
        from governance.shell import Act

        if tool_name == HOOK_TOOL_NAME:
            return [Act("governance-admin", tool_name, "calls the governance hooks' own tool")], \
                "protected_paths"
        primitive, map_key = self.tool_primitive(tool_name)
        if tool_name in FILE_TOOLS:
            target = tool_input.get(FILE_TOOLS[tool_name])
            if isinstance(target, str) and self.is_protected(target, cwd):
                return [Act("governance-admin", target, "writes a governance-protected file")], \
                    "protected_paths"
            if isinstance(target, str) and self.is_exec_config(target, cwd):
                found = [Act(primitive, target), _exec_act(target, target)]
                return found + self._planted(target, tool_input, cwd), map_key
        if tool_name in SHELL_TOOLS:
            return self._with_taint(self._shell_acts(tool_input, cwd, primitive,
                                                     SHELL_TOOLS[tool_name])), map_key
        if tool_name in SECRET_READERS and self.matrix.get("secrets"):
            act = self._secret_read(tool_name, tool_input, cwd)
            if act is not None:
                return [Act(primitive), act], map_key
        if tool_name == "WebFetch" and self.matrix.get("secrets"):
            return self._web_fetch(tool_input, primitive), map_key
        if tool_name.startswith("mcp__") and self.matrix.get("secrets"):   # a fetch server's url
            for key in ("url", "uri", "endpoint"):
                value = tool_input.get(key)
                if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
                    found = self._web_fetch(tool_input, "web-fetch", key)
                    found[0].primitive = primitive
                    extra = [a for a in found[1:] if a.primitive == "exfiltration"]
                    if not extra and self.taint():
                        extra = self._mcp_tainted(found[0], value)
                    if extra:
                        return [found[0], *extra], map_key
        if tool_name.startswith("mcp__") and primitive not in READING:
            target = self._mcp_target(tool_name, tool_input, cwd)
            if target is not None:
                return [Act("governance-admin", target, f"{tool_name} touches a governance-"
                                                        "protected file")], "protected_paths"
        return [Act(primitive)], map_key

    # --- secrets (docs/secrets.md) -------------------------------------------------------------
    def secrets(self) -> Secrets | None:
        """The matrix's ``secrets`` and ``egress`` sections, asked for this call."""
        found = self._secrets
        if found is None and self.matrix.get("secrets"):
            from governance.policy.secrets import Secrets

            found = self._secrets = Secrets(self.matrix["secrets"], self.project_dir,
                                            self._root, self._place)
        return found

    def taint(self) -> list[str] | None:
        """What taints this call's session (the secrets it read), or None."""
        found = self._taint
        if found is False:
            from governance.policy import taint

            found = self._taint = taint.read(self.project_dir, self.session) \
                if self.session else None
        return found if isinstance(found, list) else None

    def _secret_read(self, tool_name: str, tool_input: dict[str, Any],
                     cwd: str | None) -> Act | None:
        """A ``secret-read`` act when Read reads a secret file, or Grep searches one (its path,
        a secret folder such as ``~/.ssh``, or a glob naming a secret file)."""
        from governance.shell import Act

        secrets = self.secrets()
        if secrets is None:
            return None
        key = SECRET_READERS[tool_name]
        target = tool_input.get(key)
        found = None
        if isinstance(target, str) and target:
            found = secrets.path(target, cwd) or secrets.folder(target, cwd)
        glob = tool_input.get("glob") if tool_name == "Grep" else None
        if found is None and isinstance(glob, str) and glob:
            found = secrets.glob(glob)
            target = glob
        if found is None:
            return None
        act = Act("secret-read", str(target), f"{tool_name} reads {target}, which holds "
                                              f"credentials (secrets.paths: {found})")
        act.secrets = [found]
        return act

    def _web_fetch(self, tool_input: dict[str, Any], primitive: str,
                   key: str = "url") -> list[Act]:
        """WebFetch (and an MCP tool given a URL): exfiltration when the URL holds a value shaped
        like a secret, or when the session read a secret and the host is not on
        ``egress.allow``. The host is read from the URL with its secrets redacted (a key in a
        host name is not repeated)."""
        from governance.ledger.redaction import redact
        from governance.policy.secrets import unquoted, url_secrets
        from governance.shell import Act
        from governance.shell.endpoint import host_of

        url = tool_input.get(key)
        acts = [Act(primitive)]
        if not isinstance(url, str):
            return acts
        shaped = url_secrets(url)
        shown = redact(unquoted(url)) if shaped else url
        host = host_of(shown) or "?"
        if shaped and host != "?" and "redacted" in host:
            host = "?"
        acts[0].hosts = [host]
        if shaped:
            act = Act("exfiltration", shown, f"the URL carries {', '.join(shaped)} (shaped like "
                                             f"a secret) to {host}")
            act.secrets, act.hosts = shaped, [host]
            acts.append(act)
        return self._with_taint(acts)

    def _mcp_tainted(self, act: Act, url: str) -> list[Act]:
        """An MCP tool's request to a URL, while the session is tainted: as WebFetch's."""
        from governance.shell import Act

        probe = Act("web-fetch", url)
        probe.hosts = act.hosts
        return [a for a in self._with_taint([probe]) if a.primitive == "exfiltration"]

    def _with_taint(self, acts: list[Act]) -> list[Act]:
        """``acts`` plus an ``exfiltration`` act for each request to a host outside
        ``egress.allow`` (or to a host known only at run time) while the session is tainted,
        and a ``secret-read`` act for a request to a cloud's metadata service."""
        if not any(_outbound(act) for act in acts):
            return acts
        acts = _metadata(acts)
        secrets = self.secrets()
        sources = self.taint() if secrets is not None else None
        if secrets is None or not sources:
            return acts
        added: list[Act] = []
        for act in acts:
            if not _outbound(act):
                continue
            outside = [h for h in act.hosts or () if h == "?" or not secrets.egress(h)]
            if outside:
                from governance.shell import Act

                found = Act("exfiltration", act.segment,
                            f"this session read {', '.join(sources[:3])}"
                            f"{' and more' if len(sources) > 3 else ''}; a request to "
                            f"{', '.join(outside)} (not on egress.allow) could carry it out")
                found.secrets, found.hosts = list(sources), outside
                added.append(found)
        return acts + added if added else acts

    def _mcp_target(self, tool_name: str, tool_input: dict[str, Any],
                    cwd: str | None) -> str | None:
        """The first protected path among an MCP tool's path arguments, at any depth: a server's
        own ``mcp_paths`` list when it has one; else the common names and every key whose name
        says it holds a path (``filePath``, ``pathname``, ``args.path``, ``files[].path``), or a
        command the tool runs (``command``, ``cmd``, ``script``) that the shell analysis finds
        writing one."""
        spec = self.matrix.get("mcp_paths") or {}
        server = tool_name.split("__")[1] if tool_name.count("__") >= 2 else ""
        own = spec.get("servers", {}).get(server)   # a server's own list is all its paths
        keys = own or spec.get("keys", ())
        budget = [_MCP_VALUES]
        for key, value in _keyed_values(tool_input, 0, budget):
            lowered = key.lower().replace("_", "").replace("-", "")
            if isinstance(value, str) and lowered in _MCP_COMMANDS and not own:
                if self._command_protected(value, cwd):
                    return value
                continue
            if key not in keys and (own or not any(w in lowered for w in _MCP_PATH_WORDS)):
                continue
            if isinstance(value, str) and value and self.is_protected(
                    value[7:] if value.startswith("file://") else value, cwd):
                return value
        return None

    def _command_protected(self, command: str, cwd: str | None) -> bool:
        """Whether a shell command an MCP tool runs writes a governance-protected file (the
        acts Bash's command would have)."""
        return any(a.primitive == "governance-admin"
                   for a in self._shell_acts({"command": command}, cwd, "mcp-call"))

    def _planted(self, target: str, tool_input: dict[str, Any], cwd: str | None) -> list[Act]:
        """A file tool writing a file that runs what it holds later (a git hook, ``.bashrc``,
        ``package.json``'s scripts): ``governance-admin`` when the text it writes holds a
        command that changes governance (``shell.planted``)."""
        from governance.shell import Act
        from governance.shell.planted import commands

        texts = [tool_input.get(key) for key in ("content", "new_string")]
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            texts += [e.get("new_string") for e in edits if isinstance(e, dict)]
        base = cwd or self.project_dir
        path = system.realpath(system.located(base, target))
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                continue
            for line in commands(path, text)[:64]:
                for act in self._shell_acts({"command": line}, cwd, "shell-execute"):
                    if act.primitive == "governance-admin":
                        return [Act("governance-admin", target,
                                    f"writes into {target}, which runs it later, a command that "
                                    f"changes governance ({act.reason})")]
        return []

    def _shell_acts(self, tool_input: dict[str, Any], cwd: str | None, primitive: str,
                    language: str | None = None) -> list[Act]:
        from governance.shell import Act

        command = tool_input.get("command")
        acts: list[Act] = []
        shell = matrix_module.load_shell(self.project_dir, self.matrix)
        if shell and isinstance(command, str):
            from governance.shell.analysis import analyse_command

            base = cwd or self.project_dir
            acts = list(analyse_command(command, shell, is_protected=PathGuard(self, base),
                                        cwd=base, language=language))
            if self.matrix.get("exec_config"):
                acts = self._with_exec_config(acts, base)
        if tool_input.get("dangerouslyDisableSandbox") is True and system.exists(
                sandbox_manifest_path(self.project_dir)):
            acts.insert(0, Act("sandbox-escape", "dangerouslyDisableSandbox: true",
                               "asks to run outside the sandbox, which governance makes mandatory"))
        if tool_input.get("run_in_background") is True:
            acts.insert(0, Act("shell-background", "run_in_background: true",
                               "runs in the background"))
        return acts or [Act(primitive, command if isinstance(command, str) else "")]

    def _with_exec_config(self, acts: list[Act], base: str) -> list[Act]:
        """``acts`` plus an ``exec-config`` act for each segment that writes a file of
        ``exec_config_paths`` (a redirection, ``tee``, ``sed -i``, ``cp``, ``mv``, ``chmod`` ...:
        the targets the shell analysis names)."""
        added: list[Act] = []
        seen: set[str] = set()
        for act in acts:
            if act.targets is None or act.primitive in ("file-delete", "governance-admin"):
                continue
            for target in act.targets:
                if target != "?" and act.segment not in seen and \
                        self.is_exec_config(target, base):
                    seen.add(act.segment)
                    added.append(_exec_act(act.segment, target))
        return acts + added if added else acts

    def is_exec_config(self, path: str, cwd: str | None = None) -> bool:
        """True when writing ``path`` changes what a later command does: an ``exec_config_paths``
        pattern (a file name in any folder of the project, a path relative to the project,
        ``~/...``, ``$XDG_CONFIG_HOME/...`` or absolute). Compared without regard to case."""
        patterns = self.matrix.get("exec_config")
        if not patterns:
            return False
        if "\0" in path:
            return True
        base = cwd or self.project_dir
        full = system.realpath(system.located(base, path)).lower()
        root = self._root()
        rel = full[len(root) + 1:] if full.startswith(root + system.sep) else None
        name = full.rsplit(system.sep, 1)[-1]
        names, rels, name_globs, rel_globs, _elsewhere = self.matrix["exec_config_kinds"]
        if rel is not None and (name in names or rel in rels or
                                any(_glob(name, p) for p in name_globs) or
                                any(_glob(rel, p) for p in rel_globs)):
            return True
        for head, place in self._exec_places():
            if full.startswith(head) and (full == place if head == place else _glob(full, place)):
                return True
        return False

    def _exec_places(self) -> list[tuple[str, str]]:
        """The ``exec_config_paths`` patterns outside the project as absolute paths, each with its
        literal head (what comes before a glob character): resolved once per call."""
        found = self._exec_elsewhere
        if found is None:
            found = self._exec_elsewhere = []
            for pattern in self.matrix["exec_config_kinds"][4]:
                place = self._place(pattern) if pattern.startswith(("~/", "$")) else pattern
                if place is not None:
                    head = place.partition("*")[0].partition("?")[0].partition("[")[0]
                    found.append((head, place))
        return found

    def _root(self) -> str:
        root = self._real_root
        if root is None:
            root = self._real_root = system.realpath(self.project_dir).lower()
        return root

    def _place(self, pattern: str) -> str | None:
        """An ``exec_config_paths`` pattern under the home (``~/``) or a folder named by an
        environment variable (``$XDG_CONFIG_HOME/``, else ``~/.config``), as an absolute path;
        resolved once per call (a call checks every target of every segment against it)."""
        if pattern in self._places:
            return self._places[pattern]
        place = self._places[pattern] = self._resolve_place(pattern)
        return place

    def _resolve_place(self, pattern: str) -> str | None:
        if pattern.startswith("~/"):
            return self._home() + pattern[1:]
        name, _, rest = pattern[1:].partition("/")
        folder = system.environ_get(name.upper())
        if not folder and name == "xdg_config_home":
            folder = system.join(self._home(), ".config")
        if not folder:
            return None
        return system.realpath(folder).lower() + "/" + rest

    def holds_protected(self, folder: str, cwd: str | None = None) -> bool:
        """True when ``folder`` is a protected place, or holds one anywhere below it (the project
        root holds ``.claude/settings.json``, the home ``~/.claude/settings.json``): what an
        archive or a patch that cannot be listed may overwrite when extracted there."""
        if "\0" in folder:
            return True
        base = cwd or self.project_dir
        full = system.realpath(system.located(base, folder)).lower()
        if self.is_protected(full):
            return True
        inside = full.rstrip(system.sep) + system.sep
        for place in self.protected_places():
            cut = min((k for k in (place.find("*"), place.find("?"), place.find("["))
                       if k >= 0), default=len(place))
            literal = system.realpath(place[:cut].rstrip(system.sep) or system.sep).lower()
            if literal == full or literal.startswith(inside):
                return True
        return False

    def is_protected(self, path: str, cwd: str | None = None) -> bool:
        """True when ``path`` is a governance file the agent may not change: a ``protected_paths``
        glob (relative to the project, absolute, or ``~/`` for the user's home) or a part of our
        installation, or another name (a hard link) of a protected file. Compared without regard
        to case, as a case-insensitive file system would (``.CLAUDE/settings.json`` is the same
        file there). A path holding a NUL names no file the system can open: it counts as
        protected rather than be left unchecked."""
        if "\0" in path:
            return True
        base = cwd or self.project_dir
        real = system.realpath(system.located(base, path))
        full = real.lower()
        for place in self._installation():
            if full == place or full.startswith(place + system.sep):
                return True
        root = self.project_dir.lower()
        rel = full[len(root) + 1:] if full.startswith(root + system.sep) else None
        patterns = self._protected
        if patterns is None:
            patterns = self._protected = [
                self._home() + p[1:] if p.startswith("~/") else p
                for p in (q.lower() for q in self._protected_patterns())]
        for pattern in patterns:
            if system.isabs(pattern):
                if _match(full, pattern):
                    return True
            elif rel is not None and _match(rel, pattern):
                return True
        return self._hard_link(real)

    def _hard_link(self, real: str) -> bool:
        """Whether ``real`` is an existing file with more than one name whose device and inode
        are a protected file's (``ln .claude/governance/state.json s.json``). One ``stat``; the
        protected files are looked at only for a file that has other names."""
        try:
            info = system.stat(real)
        except (OSError, ValueError):
            return False
        if info.st_nlink < 2 or (info.st_mode & 0o170000) != 0o100000:
            return False
        found = self._inodes
        if found is None:
            found = self._inodes = self._protected_inodes()
        return (info.st_dev, info.st_ino) in found

    def protected_files(self, folder: str, cwd: str | None = None) -> list[str]:
        """``PathGuard.protected_files``."""
        top = system.realpath(system.located(cwd or self.project_dir, folder))
        inside = top.rstrip(system.sep) + system.sep
        found: list[str] = []
        budget = [_MAX_PROTECTED_FILES]
        for place in self.protected_places()[:len(self._protected_patterns())]:
            cut = min((k for k in (place.find("*"), place.find("?"), place.find("["))
                       if k >= 0), default=-1)
            literal = system.realpath(place if cut < 0 else
                                      place[:cut].rsplit(system.sep, 1)[0] or system.sep)
            if literal == top or literal.startswith(inside):
                start = literal
            elif top.startswith(literal.rstrip(system.sep) + system.sep):
                start = top
            else:
                continue
            pattern = None if cut < 0 else system.realpath(place[:cut]) + place[cut:]
            _paths_under(start, pattern, found, budget)
        return list(dict.fromkeys(found))

    def _protected_inodes(self) -> set[tuple[int, int]]:
        """(device, inode) of every existing protected file (``protected_paths``; our
        installation is not walked), bounded to ``_MAX_PROTECTED_FILES`` files."""
        found: set[tuple[int, int]] = set()
        for path in self.protected_files(system.sep):
            try:
                info = system.stat(path)
            except (OSError, ValueError):
                continue
            if (info.st_mode & 0o170000) == 0o100000:
                found.add((info.st_dev, info.st_ino))
        return found

    def _installation(self) -> list[str]:
        found = self._installed
        if found is None:
            known = self.matrix.get("installation")   # resolved when the matrix was compiled
            if not isinstance(known, list):
                from governance.project import installation_paths

                known = installation_paths()
            found = self._installed = [str(p).lower() for p in known]
        return found

    def _home(self) -> str:
        home = self._home_dir
        if home is None:
            home = self._home_dir = system.realpath(
                system.environ_get("HOME") or system.expanduser("~")).lower()
        return home

    def _protected_patterns(self) -> list[str]:
        """``protected_paths``, and where Claude Code keeps its configuration in another folder
        (``CLAUDE_CONFIG_DIR``, in the environment Claude Code gave the hook), each
        ``~/.claude/...`` and ``~/.claude.json`` pattern there too."""
        patterns: list[str] = self.matrix["protected"]
        folder = system.environ_get("CLAUDE_CONFIG_DIR")
        if not folder or not system.isabs(folder):
            return patterns
        folder = system.normpath(folder)
        moved = [folder + (p[len("~/.claude"):] if p.startswith("~/.claude/")
                           else "/.claude.json")
                 for p in patterns if p.startswith("~/.claude/") or p == "~/.claude.json"]
        return patterns + moved

    def protected_places(self) -> list[str]:
        """Every place the agent may not change, spelled out for a person (``governance doctor``)."""
        from governance.project import installation_paths

        places = []
        for pattern in self._protected_patterns():
            if pattern.startswith("~/"):
                places.append(system.join(system.expanduser("~"), pattern[2:]))
            elif system.isabs(pattern):
                places.append(pattern)
            else:
                places.append(system.join(self.project_dir, pattern))
        return places + installation_paths()
    def _rule(self, primitive: str, state: str) -> tuple[str, str, str, str, str]:
        entry = self.matrix["decide"].get(state, {}).get(primitive)
        if entry is None:
            return (self.matrix["default_action"], "", "", self.matrix["default_file"],
                    "default_action")
        return tuple(entry)

    def check_activity(self, primitive: str, state: StateView | str | None = None,
                       context: dict[str, Any] | None = None) -> Decision:
        """The decision for one primitive in a state (the current state when not given)."""
        from governance.policy.decision import Decision

        if state is None:
            view = self.get_activity_state()
        elif isinstance(state, str):
            view = StateView(state, source="given")
        else:
            view = state
        action, message, redirect_to, rule_file, rule_key = self._rule(primitive, view.state)
        context = context or {}
        decision = Decision(action, primitive, view, rule_file, rule_key, message, redirect_to,
                            tool=str(context.get("tool_name", "")))
        org_file = self.matrix.get("org_file")
        if org_file:
            if rule_file == org_file:
                decision.layer = "org"
            cells = self.matrix["org_cells"].get(view.state, {}).get(primitive)
            if cells is not None:
                decision.layers = _layers(cells, org_file)
        if primitive == "skill-invoke" and action not in ("block", "redirect"):
            self._check_skill(decision, context.get("tool_input") or {})
        return decision

    def _check_skill(self, decision: Decision, tool_input: dict[str, Any]) -> None:
        restriction = self.matrix["skills"].get(decision.state.state)
        skill = tool_input.get("skill") or tool_input.get("name") or tool_input.get("command")
        if not restriction or not isinstance(skill, str):
            return
        blocked = any(_match(skill, p) for p in restriction["blocked"])
        allowed = restriction["allowed"]
        if not blocked and allowed is not None:
            blocked = not any(_match(skill, p) for p in allowed)
        if blocked:
            decision.action = "block"
            decision.message = restriction["message"].replace("{skill}", skill)
            decision.rule_file = restriction["file"]
            decision.rule_key = restriction["key"]
            decision.segment = skill

    def decide(self, tool_name: str, tool_input: dict[str, Any], cwd: str | None = None) -> Decision:
        """The decision for a whole tool call: the most restrictive of its acts."""
        from governance.policy.decision import SEVERITY

        acts, map_key = self.acts_for(tool_name, tool_input, cwd)
        view = self.get_activity_state()
        context = {"tool_name": tool_name, "tool_input": tool_input}
        best: Decision | None = None
        records = []
        for act in acts:
            decision = self.check_activity(act.primitive, view, context)
            decision.segment = decision.segment or act.segment
            record: dict[str, Any] = {"primitive": act.primitive, "segment": act.segment,
                                      "reason": act.reason, "action": decision.action}
            if act.targets is not None:
                record["targets"] = act.targets
            if act.secrets is not None:
                record["secrets"] = act.secrets
            if act.hosts is not None:
                record["hosts"] = act.hosts
            records.append(record)
            if best is None or SEVERITY[decision.action] > SEVERITY[best.action] or (
                    SEVERITY[decision.action] == SEVERITY[best.action]
                    and _PREFERRED.get(act.primitive, 0) > _PREFERRED.get(best.primitive, 0)):
                best = decision  # on a tie, the most specific act's message shows
        assert best is not None
        best.acts = records
        best.map_rule = map_key
        return best
