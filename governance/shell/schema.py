"""The ``shell:`` section of the activity matrix: validation (pydantic) and compilation.

CLI side only (pydantic is heavy): ``compile_shell`` validates one file's section and returns a
plain, marshal-serialisable dict that ``governance.shell.analysis`` reads on the hot path;
``compile_layers`` lays a project's section over the packaged one (what it writes, nothing more).
Errors are :class:`ConfigError` naming the file and the key path
(``shell.commands.rm.patterns[1].targets``) with a fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from governance.errors import ConfigError
from governance.layering import APPEND, PREPEND, overlay, written

Names = str | list[str] | None


def _as_list(value: Names) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PatternModel(_Strict):
    """One pattern: conditions on the arguments -> the primitive of the act."""

    primitive: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    reason: str = ""
    subcommand: Names = Field(default=None, alias="sub")
    args: Names = None
    flags: Names = None
    text: Names = None
    targets: Literal["all", "last", "rest", "first", ""] = ""
    targets_all_with: list[str] = []
    target_options: list[str] = []
    folders: bool = False
    destination: bool = False
    no_args: bool = False
    unknown_sub: bool = False
    except_sub: Names = None
    unknown_args: bool = False
    # chmod: only a sweeping mode (governance.shell.modes)
    modes: bool = False
    unless: Names = None
    min_args: int = Field(default=0, ge=0, le=16)
    # the last argument (a copy's destination) matches one of these globs / none of them: the
    # direction of a transfer (aws s3 cp SRC s3://... uploads, aws s3 cp s3://... DIR downloads)
    last: Names = None
    not_last: Names = None
    into: bool = False
    # every target is output the project can build again: file-delete (governance.shell.generated)
    # "matches": what find -name PATTERN -delete matches (governance.shell.generated.matched)
    regenerable: bool | Literal["matches"] = False
    # a deploy: deploy-ENV by the environment its words name (governance.shell.deployment)
    deploy: bool = False
    environment: str = Field(default="", pattern=r"^[a-z0-9-]*$")
    # the files it writes are listed from what it reads (governance.shell.extraction)
    # `aside`: only that listing; the command's act comes from its other patterns
    aside: bool = False
    extracts: Literal["", "tar", "zip", "7z", "cpio", "patch", "git-apply", "git-am",
                      "git-stash", "git-checkout-index", "git-read-tree", "git-update-index",
                      "git-tree",
                      "git-config", "tree"] = ""


class RequestsModel(_Strict):
    """Where a fetching program's URLs are (``governance.shell.endpoint``)."""

    urls: Literal["all", "httpie", "host", "socat"] = "all"
    url_options: list[str] = []
    via: list[str] = []
    sockets: list[str] = []
    # options that name the HTTP method, and options whose value is a body (an implied POST):
    # governance.shell.methods
    methods: list[str] = []
    body_options: list[str] = []


class QueriesModel(_Strict):
    """Where a database client's statements are (``governance.shell.database``)."""

    language: Literal["sql", "redis", "mongo"] = "sql"
    code: list[str] = []
    files: list[str] = []
    positional: Literal["none", "after-first", "all", "scripts"] = "none"
    # the first positional argument is the database file (SQLite, DuckDB): a governance file
    # there is changed by any statement that is not a read (governance.shell.database)
    database: bool = False


class LaunchesModel(_Strict):
    """How a package launcher names what it fetches (``governance.shell.launchers``)."""

    sub: list[str] = []
    always: bool = False
    packages: list[str] = []
    accept: list[str] = []
    calls: list[str] = []
    local: Literal["", "node", "pinned"] = ""


class DefaultModel(_Strict):
    primitive: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    reason: str = ""


class CommandModel(_Strict):
    with_value: list[str] = []
    # no pattern matched: the subcommand words are read by shell.lexicon (governance.shell.lexicon);
    # `destructive`: only its destructive verbs count (vault policy delete), any other keeps the
    # default; `remote`: every verb counts, and a read verb reads the provider's service over the
    # internet, which is the default act (aws s3 ls: web-fetch)
    lexicon: bool | Literal["destructive", "remote"] = False
    # no pattern matched and the lexicon found nothing: this act (aws: web-fetch), not
    # shell-execute
    default: DefaultModel | None = None
    requests: RequestsModel | None = None
    queries: QueriesModel | None = None
    launches: LaunchesModel | None = None
    selector: str = Field(default="", max_length=1)   # cargo +nightly: a toolchain, not a subcommand
    replace: bool = False
    runs: list[str] = []
    program: bool = False
    # the command installs a table of scheduled commands (crontab): each entry is analysed
    schedule: bool = False
    recipes: list[str] = []
    harmless: list[str] = []
    # options whose value may be a command the program runs: option (or "SUB OPTION", "+" for
    # `vim +CMD`, "*" for every argument) -> forms (governance.shell.embedded): "" a shell
    # line, "PREFIX" a shell line after PREFIX, "PREFIX@LANGUAGE" code, "@ssh" an ssh option,
    # "@ex" editor commands, "@exfile" a file of them (vim -S FILE)
    command_options: dict[str, str | list[str]] = {}
    # options after which the arguments, up to ";" or the end, are a command the program runs
    # (fd -x CMD ARGS, gdb --args PROG ARGS); "{}" and its kin stand for a file the program finds
    argv_options: list[str] = []
    # what the program reads on standard input, read by these forms (ed's commands: ["@ex"])
    input_forms: list[str] = []
    # subcommands whose next argument (or the value of the option named after a space) is code
    # in a language shell.inline reads: {runner: ruby} (rails runner CODE), {shell -c: python}
    code: dict[str, Literal["python", "node", "perl", "ruby", "php", "lua", "r", "julia",
                            "powershell"]] = {}
    # each subcommand's options as the program reads them: "-b=" takes a value, "--track=opt" one
    # given only after "=" (or the letter), "-q" none (governance.shell.rules, _read_option)
    options: dict[str, list[str]] = {}
    # options whose values are prose (a commit message): data, never read by a pattern
    messages: list[str] = []
    # the letters of words that start with "-" but are operands (chmod -x FILE: a mode), each
    # word "-" then these letters only
    dash_operands: str = Field(default="", pattern=r"^[A-Za-z0-9,+=]*$")
    patterns: list[PatternModel] = []

    @model_validator(mode="after")
    def _remote_has_a_default(self) -> CommandModel:
        if self.lexicon == "remote" and self.default is None:
            raise ValueError("`lexicon: remote` reads a read verb as the entry's default act: "
                             "add `default: {primitive: web-fetch, reason: ...}`")
        return self


class WrapperModel(_Strict):
    primitive: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]*$")
    reason: str = ""
    with_value: list[str] = []
    string_options: list[str] = []
    # the words split from a string option come before the remaining arguments (env -S 'A=1' CMD)
    string_argv: bool = False
    fetches: list[str] = []    # options whose value is a package fetched first (nix-shell -p)
    query_flags: list[str] = []
    alone_flags: list[str] = []   # only query when no command follows (sudo -k), else run it
    # the only options it takes, when the list is complete: any other is refused and nothing
    # runs (bash's `command -x`)
    only_options: list[str] | None = None
    stop: list[str] = []
    after: list[str] | None = None
    skip: int = Field(default=0, ge=0, le=8)
    no_options: bool = False
    no_argv: bool = False
    assignments: bool = False
    string: bool = False
    appends: bool = False
    default: str | None = None
    # runs a command built from its input (governance.shell.fanout)
    fanout: Literal["", "xargs", "parallel"] = ""
    # options whose value is the folder the wrapped command runs in (env -C DIR)
    chdir: list[str] = []
    # options whose value may be a command it runs (ssh -o ProxyCommand=CMD): as for commands
    command_options: dict[str, str | list[str]] = {}
    # options whose value is the program it runs with the arguments after `--`
    # (start-stop-daemon --exec PROG -- ARGS); a later one wins
    program_options: list[str] = []


class OutputModel(_Strict):
    """Where a program writes a file (``governance.shell.outputs``): the options that name it,
    the positional argument that is it (``2``: the second; ``-1``: the last, when there are two
    or more), or, with one of ``in_place``, every positional argument."""

    options: list[str] = []
    positional: int = Field(default=0, ge=-1, le=8)
    in_place: list[str] = []
    with_value: list[str] = []


class InterpreterModel(_Strict):
    inline: list[str] = []
    eval: list[str] = []       # subcommands whose next argument is inline code (deno eval CODE)
    encoded: list[str] = []    # options whose value is encoded code (pwsh -EncodedCommand)
    module: list[str] = []
    with_value: list[str] = []


class TaskFilesModel(_Strict):
    """A task runner's files (governance.shell.taskfiles)."""

    files: list[str] = []
    options: list[str] = []          # options that name another file
    tasks: list[str] = []            # options that name the task to run
    positional: bool = False         # the task is named by an argument
    options_only: bool = False       # reads a file only when an option names it (cmake -P)
    default: str = ""                # the task run when none is named
    fallback: str = ""               # the block a task without its own block runs (tox)


class FinderModel(_Strict):
    exec: list[str] = []


class LexiconModel(_Strict):
    """Subcommand words of programs without an entry (``governance.shell.lexicon``)."""

    verbs: dict[str, list[str]] = {}      # primitive (or "read", "local") -> words
    packages: list[str] = []              # namespaces after which package_verbs install
    package_verbs: list[str] = []
    schemas: list[str] = []               # namespaces after which install/deploy verbs migrate
    extensions: list[str] = []            # `reset.sh` is a file name, not a subcommand
    # a remote URL given to these is data (governance.shell.remote)
    settings: list[str] = []              # subcommands that store it: git remote add URL
    message_options: list[str] = []       # options whose value is text: git commit -m URL
    value_options: list[str] = []         # options whose value is a selector: pytest -k add
    dependencies: list[str] = []          # package namespaces after which `get` fetches
    contextual: dict[str, str] = {}       # verb -> its act, only for a program of that kind
    kinds: dict[str, list[str]] = {}      # act -> program name globs (`*pm`, `git-*`)
    deployments: list[str] = []           # namespaces after which `redeploys` are a deploy
    redeploys: list[str] = []
    words: int = Field(default=4, ge=1, le=8)

    @field_validator("verbs")
    @classmethod
    def _primitives(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for primitive in value:
            if primitive not in ("read", "local") and not primitive.replace("-", "").isalnum():
                raise ValueError(f"{primitive!r} is not a primitive name, `read` or `local`")
        return value


class LimitsModel(_Strict):
    max_length: int = Field(default=16384, ge=1, le=1_000_000)
    max_nesting: int = Field(default=48, ge=1, le=200)
    max_words: int = Field(default=4000, ge=1, le=1_000_000)
    max_depth: int = Field(default=6, ge=0, le=20)
    max_seconds: float = Field(default=5, gt=0, le=20)


class ClientModel(_Strict):
    """A database client (``secret_flow.clients``): the options and variables that name the
    server it signs in to, and the variables it sends there (``PGPASSWORD``)."""
    host_options: list[str] = []
    host_env: list[str] = []
    sends_env: list[str] = []


class SecretFlowModel(_Strict):
    """Which programs name a secret file without showing it, print the environment, send
    their arguments out, or authenticate with a key file (docs/shell.md, "Secrets in commands")."""
    metadata: list[str] = []
    # program -> options with which its output carries no line of the files it reads (grep -c)
    metadata_options: dict[str, list[str]] = {}
    dumps: dict[str, list[str]] = {}
    sinks: list[str] = []
    credential_options: dict[str, list[str]] = {}
    default_hosts: dict[str, str] = {}
    secret_commands: dict[str, str] = {}
    # file-transfer clients' batch commands that send a local file (sftp <<< 'put .env')
    uploads: dict[str, list[str]] = {}
    # "program subcommand" -> options that point it at another owner (gh secret set: --repo)
    stores: dict[str, list[str]] = {}
    # database clients: what names the server they sign in to, and what they send it
    clients: dict[str, ClientModel] = {}


class ShellModel(_Strict):
    limits: LimitsModel = LimitsModel()
    read_only: list[str] = []
    safe_targets: list[str] = []
    harmless_flags: list[str] = []
    protected_markers: list[str] = []
    protected_probes: list[str] = []
    unknown_destructive_markers: list[str] = []
    risky_env: list[str] = []
    # variables whose value a program runs as a command: name -> "" (a shell line) or "|"
    # (less's `|CMD %s`) (governance.shell.embedded)
    command_env: dict[str, Literal["", "|"]] = {}
    local_hosts: list[str] = []
    build_folders: list[str] = []
    build_files: list[str] = []            # name patterns of generated files (*.pyc)
    block_devices: list[str] = []          # names under /dev/ that are disks (globs)
    deploy_environments: dict[str, list[str]] = {}
    lexicon: LexiconModel = LexiconModel()
    wrappers: dict[str, WrapperModel] = {}
    shells: list[str] = []
    evaluators: dict[str, Literal["eval", "source", "alias", "trap"]] = {}
    interpreters: dict[str, InterpreterModel] = {}
    modules: dict[str, str] = {}
    # a package a launcher runs (npx PKG) -> the command it installs, where the two differ
    # (governance.shell.launchers)
    package_bins: dict[str, str] = {}
    finders: dict[str, FinderModel] = {}
    task_files: dict[str, TaskFilesModel] = {}
    commands: dict[str, CommandModel] = {}
    outputs: dict[str, OutputModel] = {}
    output_options: list[str] = []
    output_words: list[str] = []
    secret_flow: SecretFlowModel = SecretFlowModel()

    @field_validator("unknown_destructive_markers", "protected_markers")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [v.lower() for v in value]


def _key(loc: tuple[Any, ...]) -> str:
    out = "shell"
    for item in loc:
        out += f"[{item}]" if isinstance(item, int) else f".{item}"
    return out


def _lean(rule: dict[str, Any]) -> dict[str, Any]:
    """A compiled pattern without the keys that hold their defaults (the hook decodes fewer
    bytes); ``shell.rules`` reads every key with ``.get``."""
    keep = ("primitive", "reason", "sub")
    return {k: v for k, v in rule.items() if k in keep or v not in (None, "", False, 0, [], ())}


def _options(items: list[str]) -> dict[str, int]:
    """An option table: ``-b=`` -> 1 (takes a value), ``--track=opt`` -> -1 (only an attached
    one), ``-q`` -> 0."""
    return {item.split("=", 1)[0]: 1 if item.endswith("=") else -1 if item.endswith("=opt")
            else 0 for item in items}     # "!": the list is complete (rules.COMPLETE)


def _flags(items: list[str]) -> dict[str, int]:
    """Options that take values: ``--set:2`` takes two (``just --set NAME VALUE``), ``-p:0`` only
    one attached to it (``mysql -pSECRET``; ``-p`` alone takes none), else one."""
    out: dict[str, int] = {}
    for item in items:
        name, _, count = item.rpartition(":")
        if name and count.isdigit():
            out[name] = int(count)
        else:
            out[item] = 1
    return out


def validate_section(section: dict[str, Any] | None, file: str) -> ShellModel:
    """One file's ``shell:`` section, validated; ConfigError names the file and the key."""
    if section is not None and not isinstance(section, dict):
        raise ConfigError("the shell section must be a mapping", file=file, key="shell",
                          fix="write `shell:` followed by indented keys (see docs/shell.md)")
    try:
        return ShellModel.model_validate(section or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{first['msg']} (got {first.get('input')!r})", file=file,
                          key=_key(tuple(first["loc"])),
                          fix="see docs/shell.md for the pattern format, then run "
                              "`governance validate`") from None


def compile_shell(section: dict[str, Any] | None, file: str) -> dict[str, Any]:
    """Validate one ``shell:`` section and return its compiled, marshal-safe form."""
    return _compile(validate_section(section, file))


# How shell sections combine (``governance.layering``): lists of names are joined, a command's
# patterns are tried before the lower layer's, everything else merges key by key (a key a layer
# does not write keeps the lower layer's value). ``replace: true`` on a command drops the lower
# layer's command of that name.
SHELL_LAYERING: dict[tuple[str, ...], str] = {
    **{(key,): APPEND for key in ("read_only", "safe_targets", "harmless_flags", "protected_markers",
                                  "protected_probes", "unknown_destructive_markers", "risky_env",
                                  "shells", "local_hosts", "build_folders", "build_files",
                                  "output_options",
                                  "output_words", "block_devices")},
    **{("secret_flow", key): APPEND for key in ("metadata", "sinks")},
    ("commands", "*", "patterns"): PREPEND,
    ("lexicon", "verbs", "*"): APPEND,
    **{("lexicon", key): APPEND for key in ("packages", "package_verbs", "schemas", "extensions",
                                            "settings", "message_options", "value_options",
                                            "dependencies",
                                            "deployments", "redeploys")},
    **{("commands", "*", key): APPEND for key in ("with_value", "runs", "recipes", "harmless")},
}


def merge_sections(sections: list[dict[str, Any]]) -> dict[str, Any]:
    """Sections as written (no defaults filled in), lowest first, laid over each other."""
    merged: dict[str, Any] = {}
    for section in sections:
        replaced = {name for name, command in (section.get("commands") or {}).items()
                    if isinstance(command, dict) and command.get("replace")}
        if replaced:
            merged = {**merged, "commands": {name: command for name, command in
                                             (merged.get("commands") or {}).items()
                                             if name not in replaced}}
        merged = overlay(merged, section, SHELL_LAYERING)
    return merged


def compile_layers(layers: Sequence[tuple[str, dict[str, Any] | None]]) -> dict[str, Any]:
    """The compiled form of several files' ``shell:`` sections, lowest first (the packaged
    default, then a project's); each is validated on its own, so an error names its file."""
    written_sections = [written(validate_section(section, file), by_alias=True)
                        for file, section in layers]
    return compile_shell(merge_sections(written_sections), layers[-1][0])


def _compile(model: ShellModel) -> dict[str, Any]:
    commands: dict[str, Any] = {}
    primitives: set[str] = set()
    for name, command in model.commands.items():
        patterns = []
        for pattern in command.patterns:
            sub = _as_list(pattern.subcommand)
            text = _as_list(pattern.text)
            patterns.append(_lean({
                "primitive": pattern.primitive,
                "reason": pattern.reason or _default_reason(name, sub, pattern.primitive),
                "sub": sub,
                "args": _as_list(pattern.args),
                "flags": _as_list(pattern.flags),
                "text": None if text is None else [t.lower() for t in text],
                "targets": pattern.targets,
                "targets_all_with": list(pattern.targets_all_with),
                "target_options": list(pattern.target_options),
                "folders": "deep" if pattern.folders else
                           "direct" if pattern.destination else "",
                "into": pattern.into,
                "regenerable": pattern.regenerable,
                "deploy": pattern.deploy,
                "environment": pattern.environment,
                "extracts": pattern.extracts,
                "aside": pattern.aside,
                "unless": _as_list(pattern.unless),
                "no_args": pattern.no_args,
                "unknown_sub": pattern.unknown_sub,
                "except_sub": _as_list(pattern.except_sub),
                "unknown_args": pattern.unknown_args,
                "modes": pattern.modes,
                "min_args": pattern.min_args,
                "last": _as_list(pattern.last), "not_last": _as_list(pattern.not_last),
                "sub_globs": [s for s in sub or () if "*" in s] or None,
            }))
            primitives.add(pattern.primitive)
            if pattern.deploy:
                primitives.update(f"deploy-{env}" for env in [*model.deploy_environments,
                                                              pattern.environment] if env)
        with_value = _flags(command.with_value)
        for pattern in command.patterns:     # an option that names a target takes a value
            with_value.update((o, 1) for o in pattern.target_options if not o.endswith("="))
        with_value.update((o, 1) for o in [*command.command_options, *command.recipes,
                                           *command.argv_options]
                          if o not in with_value and " " not in o and o not in ("+", "*"))
        if command.queries:
            with_value.update((o, 1) for o in [*command.queries.code, *command.queries.files]
                              if o not in with_value)
        if command.launches:
            with_value.update((o, 1) for o in [*command.launches.packages, *command.launches.calls]
                              if o not in with_value)
        requests = command.requests.model_dump() if command.requests else None
        if requests:
            with_value.update((o, 1) for o in [*requests["url_options"], *requests["sockets"],
                                               *requests["via"], *requests["methods"],
                                               *requests["body_options"]]
                              if o not in with_value)
        commands[name] = {"with_value": with_value, "patterns": patterns, "runs": list(command.runs),
                          "program": command.program, "schedule": command.schedule,
                          "harmless": list(command.harmless),
                          "recipes": list(command.recipes),
                          "command_options": _forms(command.command_options),
                          "input_forms": list(command.input_forms),
                          "code": dict(command.code),
                          "replace": command.replace}
        if command.options:
            commands[name]["options"] = {sub: _options(items)
                                         for sub, items in command.options.items()}
        if command.messages:
            commands[name]["messages"] = list(command.messages)
        if command.argv_options:
            commands[name]["argv_options"] = list(command.argv_options)
        if command.dash_operands:
            commands[name]["dash_operands"] = command.dash_operands
        if command.lexicon:
            commands[name]["lexicon"] = command.lexicon
        if command.default is not None:
            commands[name]["default"] = (command.default.primitive, command.default.reason or
                                         f"{name} matches its default {command.default.primitive}")
            primitives.add(command.default.primitive)
        if requests:
            commands[name]["requests"] = requests
        if command.queries:
            commands[name]["queries"] = command.queries.model_dump()
        if command.launches:
            commands[name]["launches"] = command.launches.model_dump()
        if command.selector:
            commands[name]["selector"] = command.selector
    wrappers: dict[str, Any] = {}
    for name, wrapper in model.wrappers.items():
        entry: dict[str, Any] = {
            "primitive": wrapper.primitive, "reason": wrapper.reason or f"{name} wraps a command",
            "with_value": _flags(wrapper.with_value),
            "string_options": _flags(wrapper.string_options),
            "fetches": _flags(wrapper.fetches),
            "query_flags": _flags(wrapper.query_flags), "stop": _flags(wrapper.stop),
            "alone_flags": _flags(wrapper.alone_flags),
            "after": wrapper.after, "skip": wrapper.skip, "no_options": wrapper.no_options,
            "no_argv": wrapper.no_argv, "assignments": wrapper.assignments,
            "string": wrapper.string, "appends": wrapper.appends, "default": wrapper.default,
            "string_argv": wrapper.string_argv,
            "chdir": _flags(wrapper.chdir),
        }
        if wrapper.program_options:
            entry["program_options"] = _flags(wrapper.program_options)
        if wrapper.command_options:
            entry["command_options"] = _forms(wrapper.command_options)
        if wrapper.fanout:
            entry["fanout"] = wrapper.fanout
        if wrapper.only_options is not None:
            entry["only_options"] = _flags(wrapper.only_options)
        wrappers[name] = entry
        if wrapper.primitive:
            primitives.add(wrapper.primitive)
    primitives |= {"shell-read", "shell-execute", "shell-unlisted", "shell-unknown",
                   "shell-background", "governance-admin", "code-exec", "file-write",
                   "file-delete", "destructive", "web-fetch", "local-request"}
    return {
        "limits": model.limits.model_dump(),
        "read_only": _flags(model.read_only),
        "safe_targets": _flags(model.safe_targets),
        "harmless_flags": list(model.harmless_flags),
        "protected_markers": list(model.protected_markers),
        "protected_probes": list(model.protected_probes),
        "unknown_destructive_markers": list(model.unknown_destructive_markers),
        "risky_env": _flags(model.risky_env),
        "command_env": dict(model.command_env),
        "local_hosts": [h.lower() for h in model.local_hosts],
        "build_folders": list(model.build_folders), "build_files": list(model.build_files),
        "block_devices": list(model.block_devices),
        "deploy_environments": {env: [w.lower() for w in names]
                                for env, names in model.deploy_environments.items()},
        "lexicon": _lexicon(model.lexicon, primitives),
        "wrappers": wrappers,
        "shells": _flags(model.shells),
        "evaluators": dict(model.evaluators),
        "interpreters": {name: {"inline": _flags(i.inline), "module": _flags(i.module),
                                "with_value": _flags(i.with_value), "eval": list(i.eval),
                                "encoded": list(i.encoded)}
                         for name, i in model.interpreters.items()},
        "modules": dict(model.modules),
        "package_bins": dict(model.package_bins),
        "finders": {name: {"exec": _flags(f.exec)} for name, f in model.finders.items()},
        "task_files": {name: t.model_dump() for name, t in model.task_files.items()},
        "commands": commands,
        "outputs": {name: {"options": _flags(o.options), "positional": o.positional,
                           "in_place": list(o.in_place),
                           "with_value": _flags([*o.with_value, *o.options])}
                    for name, o in model.outputs.items()},
        "output_options": _flags(model.output_options),
        "output_words": [w.lower() for w in model.output_words],
        "secret_flow": {"metadata": dict.fromkeys(model.secret_flow.metadata, 1),
                        "metadata_options": {k: list(v) for k, v in
                                             model.secret_flow.metadata_options.items()},
                        "dumps": {k: list(v) for k, v in model.secret_flow.dumps.items()},
                        "sinks": dict.fromkeys(model.secret_flow.sinks, 1),
                        "credential_options": {k: list(v) for k, v in
                                               model.secret_flow.credential_options.items()},
                        "default_hosts": {k: v.lower() for k, v in
                                          model.secret_flow.default_hosts.items()},
                        "secret_commands": _by_program(model.secret_flow.secret_commands),
                        "uploads": {k: list(v) for k, v in model.secret_flow.uploads.items()},
                        "stores": {k: list(v) for k, v in model.secret_flow.stores.items()},
                        "clients": {k: v.model_dump()
                                    for k, v in model.secret_flow.clients.items()}},
        "primitives": sorted(primitives),
    }


def _forms(options: dict[str, str | list[str]]) -> dict[str, list[str]]:
    """``command_options`` with each option's forms as a list."""
    return {option: [forms] if isinstance(forms, str) else list(forms)
            for option, forms in options.items()}


def _by_program(commands: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{"gh auth token": "GH_TOKEN"}`` as ``{"gh": {"gh auth token": "GH_TOKEN"}}``: a
    command's first word finds the lines to compare."""
    out: dict[str, dict[str, str]] = {}
    for line, name in commands.items():
        out.setdefault(line.split()[0], {})[" ".join(line.split())] = name.upper()
    return out


def _lexicon(lexicon: LexiconModel, primitives: set[str]) -> dict[str, Any]:
    """Word -> primitive (the first list that names a word keeps it), and the word lists."""
    verbs: dict[str, str] = {}
    for primitive, words in lexicon.verbs.items():
        for word in words:
            verbs.setdefault(word.lower(), primitive)
        if primitive not in ("read", "local"):
            primitives.add(primitive)
    primitives.update(lexicon.contextual.values())
    return {"verbs": verbs, "packages": _flags([w.lower() for w in lexicon.packages]),
            "package_verbs": _flags([w.lower() for w in lexicon.package_verbs]),
            "schemas": _flags([w.lower() for w in lexicon.schemas]),
            "extensions": _flags([w.lower() for w in lexicon.extensions]),
            "settings": _flags(lexicon.settings),
            "message_options": _flags(lexicon.message_options),
            "value_options": _flags(lexicon.value_options),
            "dependencies": _flags([w.lower() for w in lexicon.dependencies]),
            "contextual": {w.lower(): p for w, p in lexicon.contextual.items()},
            "kinds": {p: list(globs) for p, globs in lexicon.kinds.items()},
            "deployments": _flags([w.lower() for w in lexicon.deployments]),
            "redeploys": _flags([w.lower() for w in lexicon.redeploys]),
            "words": lexicon.words}


def _default_reason(name: str, sub: list[str] | None, primitive: str) -> str:
    what = f"{name} {sub[0]}" if sub else name
    return f"{what} matches a {primitive} pattern"


def load_default_shell(path: str | None = None) -> dict[str, Any]:
    """The compiled ``shell:`` section of the packaged matrix (or of ``path``)."""
    import yaml

    from governance.project import default_matrix_path

    file = path or default_matrix_path()
    try:
        with open(file, encoding="utf-8") as handle:
            document = yaml.safe_load(handle) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the matrix ({exc})", file=file,
                          fix="restore the file or run `governance validate`") from None
    return compile_shell(document.get("shell"), file)
