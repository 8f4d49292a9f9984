"""The commands a message tells the user to run: how the cycle state changes and how an intent is
selected, named as they exist in the project at hand.

``governance state set`` / ``next`` and ``governance intent select`` work wherever governance is
installed, so every message names them. A project's own ``just`` recipes (only those whose body runs
``governance state``), the ``/cycle`` slash command and the MCP tool ``select_active_intent`` (only
when our decisions server is registered in ``.mcp.json``) are named where the project has them.
Finding out reads a few small files, so only a message actually produced asks (a deny, the session
briefing, ``doctor``); an allowed call never does. Hot path: ``os`` and our JSON codec.
"""

from __future__ import annotations

from governance import jsoncodec, system
from governance.project import read_bytes

STATE_SET = "`governance state set CYCLE PHASE WORK-ID`"
STATE_NEXT = "`governance state next`"
INTENT_SELECT = "`governance intent select ID`"
# The recipes our justfile has, and what a body must run to be one of them.
RECIPES = (("set-cycle", "state set"), ("next", "state next"))
# How a body names the CLI: the program (or its module), or a just expression such as our
# justfile's ``{{quote(gov)}}``.
CLI_NAMES = ("governance", "governance.commands.cli")
MCP_MODULES = ("governance.decisions.mcp_server", "governance.mcp_server")  # install.mcp_entry's
SELECT_TOOL = "select_active_intent"


def _text(path: str) -> str:
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return ""


def justfile(project: str) -> str | None:
    """The project's justfile (``justfile`` in any case, or ``.justfile``), as ``just`` finds it
    in the project folder, or None."""
    try:
        names = sorted(system.listdir(project))
    except OSError:
        return None
    for name in names:
        if name.lower() == "justfile" or name == ".justfile":
            path = system.join(project, name)
            if system.isfile(path):
                return path
    return None


def _recipes(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """``{name: (parameters, body lines)}`` of a justfile's recipes."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    body: list[str] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0] in " \t":
            if body is not None:
                body.append(line.strip())
            continue
        body = None
        head = line.strip().lstrip("@")
        if head.startswith(("#", "[")):
            continue
        end = 0
        while end < len(head) and (head[end].isalnum() or head[end] in "-_"):
            end += 1
        name, rest = head[:end], head[end:]
        if not name or rest.lstrip().startswith(":=") or ":" not in rest or \
                name in ("alias", "set", "export", "import", "mod"):
            continue
        params = rest.split(":", 1)[0].split()
        body = []
        found[name] = ([p for p in params if not p.startswith(("=", '"', "'"))], body)
    return found


def _is_cli(words: str) -> bool:
    """Whether the text before ``state ...`` on a recipe line ends with the governance CLI."""
    if words.endswith(CLI_NAMES):
        return True
    if words.endswith("}}"):  # a just expression: one that names the governance program
        expression = words[words.rfind("{{") + 2:-2]
        return "gov" in expression
    return False


def _runs(body: list[str], command: str) -> bool:
    """Whether a recipe body runs ``governance <command>`` (``state next``, ``state set``)."""
    for line in body:
        at = line.find(f" {command}")
        while at >= 0:
            if _is_cli(line[:at].rstrip()):
                return True
            at = line.find(f" {command}", at + 1)
    return False


def just_recipes(project: str) -> list[str]:
    """Our state recipes the project's own justfile has, as the user types them."""
    path = justfile(project)
    if path is None:
        return []
    recipes = _recipes(_text(path))
    named = []
    for name, command in RECIPES:
        params, body = recipes.get(name, ([], []))
        if not _runs(body, command):
            continue
        if name == "next":
            named.append("`just next`")
        elif len(params) == 1 and not params[0].startswith(("*", "+")):
            named.append("`just set-cycle CYCLE/PHASE/WORK-ID`")
        elif params:
            named.append("`just set-cycle CYCLE PHASE WORK-ID`")
    return named


def slash_cycle(project: str) -> bool:
    """Whether ``/cycle`` exists in Claude Code for the project: its ``.claude/commands/cycle.md``,
    or our plugin's, sets the state."""
    places = [system.join(project, ".claude", "commands", "cycle.md")]
    plugin = system.environ_get("CLAUDE_PLUGIN_ROOT")
    if plugin:
        places.append(system.join(plugin, "commands", "cycle.md"))
    return any("state set" in _text(place) for place in places)


def state_change(project: str | None) -> str:
    """How the user changes the cycle state, as a phrase that ends a sentence."""
    text = f"{STATE_SET} or {STATE_NEXT} from a terminal"
    if not project:
        return text
    recipes = just_recipes(project)
    if recipes:
        text += f", or this project's {' or '.join(recipes)}"
    if slash_cycle(project):
        text += ", or /cycle CYCLE/PHASE/WORK-ID in Claude Code"
    return text


def state_set(project: str | None) -> str:
    """The one command that sets a state (with the project's recipe for it, if any)."""
    recipes = [r for r in just_recipes(project) if "set-cycle" in r] if project else []
    return STATE_SET + (f" (or {recipes[0]})" if recipes else "")


def mcp_server(project: str) -> str | None:
    """The name under which the project's ``.mcp.json`` registers our decisions server (the one
    with ``select_active_intent``), or None."""
    try:
        data = jsoncodec.loads(_text(system.join(project, ".mcp.json")) or "{}")
    except (ValueError, RecursionError):
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return None
    for name, entry in servers.items():
        args = entry.get("args") if isinstance(entry, dict) else None
        if isinstance(args, list) and any(arg in MCP_MODULES for arg in args):
            return str(name)
    return None


def intent_select(project: str, what: str = "one") -> str:
    """How ``what`` (an intent) gets selected, as a clause: the agent's MCP tool where our server is
    registered, else the user's CLI."""
    server = mcp_server(project)
    if server is not None:
        return f"select {what} with the {SELECT_TOOL} tool (mcp__{server}__{SELECT_TOOL})"
    return f"ask the user to select {what} from a terminal ({INTENT_SELECT})"
