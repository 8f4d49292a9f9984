"""The verb lexicon: what a program governance has no entry for does, read from its subcommand.

Hot path, loaded only for a program no ``shell.commands`` entry names, or one none of whose
patterns matched and whose entry says ``lexicon: true`` (every verb counts) or ``lexicon:
destructive`` (only destructive verbs count, ``vault policy delete``; any other keeps the entry's
default): ``terragrunt destroy``, ``eksctl delete cluster``, ``mix ecto.drop``, ``php artisan
migrate:fresh``, ``pixi global install``, ``ovsx publish``, ``ollama pull``. Imports only our
``shell.rules``.

The subcommand words are the first non-option words (at most ``shell.lexicon.words``), each also
read in its parts (``ecto.drop``, ``migrate:fresh``, ``delete-stack``, ``drop_table``,
``deleteStack``). The first word or part that ``shell.lexicon.verbs`` lists decides: a
``destructive``, ``vcs-push``, ``deploy``, ``web-fetch`` or ``package-install`` verb is that act;
a ``read`` verb (``list``, ``show``, ``get``, ``status``) is a read (``shell-read`` for a listed
program; an unlisted one stays ``shell-unlisted``), and a ``local`` verb (``build``, ``test``,
``serve``) ends the reading with no act; with ``lexicon: remote`` (the cloud CLIs) a read verb
reads the provider's service over the internet, and is the entry's default act (``aws s3 ls``:
``web-fetch``), except ``help`` and ``version``. With ``lexicon: destructive``, a read verb keeps the
entry's default (``op item list`` calls the service), while ``help``, ``version`` and a ``local``
verb as the first word work on this machine (``wrangler dev``: ``shell-execute``), and so do
options with no subcommand (``wrangler -v``: ``shell-read``). After a package namespace (``pub``,
``global``, ``deps``, ``plugin``: ``shell.lexicon.packages``), the verbs of
``shell.lexicon.package_verbs`` (``get``, ``remove``, ``uninstall`` ...) install or remove
packages; after a schema namespace (``db``, ``migrate``: ``shell.lexicon.schemas``), an install
or deploy verb is a migration and ends the reading (``flask db upgrade``). A destructive verb of
five letters or more glued to a noun is read too (``unregistervm``). The reading stops at a word
that is not a subcommand's: one that holds a path, a value (``=``), a capital first letter or a
digit, a file name (``reset.sh``: its last part is one of ``shell.lexicon.extensions``, or it
names a file in the folder the command runs in), or a known command right after ``--`` (``dotenv
-- rm -rf dist`` runs ``rm``, which is read as a command of its own); such a word right after an
option, before any subcommand, is the option's value and is passed over (``-p /prod``), and so
is the word after an option ``shell.lexicon.value_options`` says selects tests or names
(``pytest -k add``, ``ctest -R install``, ``--filter NAME``). A test runner (a name the
``local`` kind of ``shell.lexicon.kinds`` lists: ``jest -t install``) has no subcommand: its
words select tests and files. In a
program driven by options (no word before the option but option values), a long option that
starts with a destructive verb is read as that verb (``kafka-topics --bootstrap-server HOST
--delete``, ``--delete-config``), and so is a destructive verb inside an unlisted program's own
name (``kafka-delete-records``), except the verbs of ``NOT_ALONE`` (``--rm``, ``--reset``). A
help, version or dry-run option (``shell.harmless_flags``) means no act. A jar a runtime runs
(``java -jar jenkins-cli.jar -s URL delete-job x``) is a program without an entry: the words
after it are read as its subcommand.
"""

from __future__ import annotations

from governance.shell.rules import glob_match, harmless, known_name, parse_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

_WORD = "abcdefghijklmnopqrstuvwxyz0123456789._:-"
_SEPARATORS = ".:-_"


def parts(word: str) -> list[str]:
    """``ecto.drop`` -> ecto, drop; ``delete-stack`` -> delete, stack; ``deleteStack`` ->
    delete, stack (lower case)."""
    out: list[str] = []
    current = ""
    for i, ch in enumerate(word):
        if ch in _SEPARATORS:
            if current:
                out.append(current)
            current = ""
            continue
        if ch.isupper() and i and word[i - 1].islower():
            out.append(current)
            current = ""
        current += ch.lower()
    if current:
        out.append(current)
    return out


def _subcommand_like(word: str) -> bool:
    return bool(word) and "a" <= word[0] <= "z" and all(c in _WORD for c in word.lower())


def read(an: Walk, base: str, fields: list[str | None], raws: list[str],
         with_value: dict[str, Any] | None = None) -> tuple[str, str, str] | None:
    """(primitive, word, verb) for the command's subcommand words, None when none is a verb
    (or a read verb comes first). ``primitive`` is ``read`` for a read verb. ``with_value``:
    the options a listed program's entry says take a value (their values are not words)."""
    shell = an.shell
    lexicon = shell.get("lexicon") or {}
    verbs = lexicon.get("verbs") or {}
    if not verbs:
        return None
    with_value = with_value or {}
    argv = parse_argv(fields[1:], raws[1:], with_value)
    if harmless(argv, list(shell.get("harmless_flags", ()))):
        return None
    packages = lexicon.get("packages") or {}
    package_verbs = lexicon.get("package_verbs") or {}
    extensions = lexicon.get("extensions") or {}
    limit = lexicon.get("words", 4)
    messages = lexicon.get("message_options") or {}
    selectors = lexicon.get("value_options") or {}
    contextual = lexicon.get("contextual") or {}
    kind = _kind(lexicon.get("kinds") or {}, base)
    if kind == "local":
        return None               # pytest -k install: a test runner's words select tests
    deployments = lexicon.get("deployments") or {}
    namespace = ""
    in_packages = ended = in_schema = in_deployments = False
    schemas = lexicon.get("schemas") or {}
    seen = 0
    commanded = False
    n = len(fields)
    skip = 0
    for k in range(1, n):
        word = fields[k]
        if skip:
            skip -= 1
            continue
        if word is None:
            return None
        if word == "--":
            ended = True
            continue
        if word.startswith("-"):
            skip = int(with_value.get(word, 0) or word in selectors
                       or prose(word, fields[k + 1] if k + 1 < n else None, messages)) \
                if "=" not in word else 0
            verb = _option_verb(verbs, word) if not commanded else None
            if verb is not None:       # kafka-topics --delete, kafka-configs --delete-config
                return _found(an, "destructive", word, verb)
            continue          # bd update X --notes TEXT: the text is data
        if fields[k - 1] in _PROGRAM_FILES and word.lower().endswith(".jar"):
            seen, commanded = 0, False    # java -jar jenkins-cli.jar delete-job: the jar's words
            continue
        after_option = str(fields[k - 1]).startswith("-")
        if after_option and not commanded and not _subcommand_like(word):
            continue                  # -p /prod: the option's value, not a subcommand
        # a word right after an option may be its value; any other is a subcommand, after which
        # options are the subcommand's (restic unlock --remove-all)
        commanded = commanded or not after_option
        seen += 1
        if seen > limit or not _subcommand_like(word):
            return None
        pieces = parts(word)
        if "." in word and pieces[-1] in extensions:
            return None
        if ended and fields[k - 1] == "--" and known_name(shell, word):
            return None       # dotenv -- rm -rf dist: a command line, read as one
        for verb in [word.lower(), *pieces] if len(pieces) > 1 else pieces:
            if in_packages and verb in package_verbs:
                if verbs.get(verb) == "read" and namespace not in lexicon.get("dependencies", {}):
                    return _found(an, "read", word, verb)      # velero plugin get: a list
                return _found(an, "package-install", word, verb)
            if in_deployments and verb in lexicon.get("redeploys", {}):
                return _found(an, "deploy", word, verb)   # wrangler deployments rollback
            if verb in contextual and contextual[verb] != kind:
                continue      # flipt flag update: not a package manager, no act
            primitive = verbs.get(verb) or contextual.get(verb)
            if in_schema and primitive in _MIGRATING:
                return None           # flask db upgrade: a migration, not a package
            if primitive == "local":
                return "local", word, verb   # wrangler dev: work on this machine
            if primitive is None and len(pieces) == 1 and len(verb) > 5:
                primitive = _glued(verbs, verb)    # unregistervm, deleteall
            if primitive is not None:
                return _found(an, primitive, word, verb)
            if verb in packages:
                in_packages = True
                namespace = verb
            in_schema = in_schema or verb in schemas
            in_deployments = in_deployments or verb in deployments
    return None


_MIGRATING = ("package-install", "deploy")
# options that name the program a runtime runs (java -jar FILE.jar): its words are read after it
_PROGRAM_FILES = ("-jar",)
# destructive verbs that as an option or inside a name usually mean something else (--rm, --reset)
NOT_ALONE = ("reset", "fresh", "rollback", "downgrade", "release", "rm", "del", "prune")


def _option_verb(verbs: dict[str, str], word: str) -> str | None:
    """The destructive verb a long option starts with (``--delete``, ``--delete-config``)."""
    if not word.startswith("--"):
        return None
    pieces = parts(word[2:].split("=", 1)[0])
    if pieces and verbs.get(pieces[0]) == "destructive" and pieces[0] not in NOT_ALONE:
        return pieces[0]
    return None


def _name_verb(verbs: dict[str, str], base: str) -> str | None:
    """The destructive verb inside an unlisted program's own name (``kafka-delete-records``)."""
    pieces = parts(base)
    return next((p for p in pieces[1:] if verbs.get(p) == "destructive" and p not in NOT_ALONE),
                None)
# read verbs about the program itself, not the service it calls
_ABOUT = ("help", "version")


def prose(option: str | None, value: str | None, messages: dict[str, int]) -> bool:
    """Whether ``value`` is the text of a message option (``shell.lexicon.message_options``): a
    long one (``--notes TEXT``), or a short one given a sentence (``-m "a b"``; ``-m`` alone means
    other things to other programs: ``gsutil -m``)."""
    if option not in messages:
        return False
    return option.startswith("--") or (value is not None and " " in value)


def _kind(kinds: dict[str, list[str]], base: str) -> str | None:
    """The act a program's name says it is for (``shell.lexicon.kinds``: ``*pm`` installs
    packages, ``git-*`` publishes), or None."""
    name = base.rsplit("/", 1)[-1].lower()
    return next((act for act, globs in kinds.items()
                 if any(glob_match(g, name) for g in globs)), None)


def _glued(verbs: dict[str, str], word: str) -> str | None:
    """A destructive verb of five letters or more glued to a noun (``unregistervm``)."""
    return next(("destructive" for verb, primitive in verbs.items()
                 if primitive == "destructive" and len(verb) >= 5 and word.startswith(verb)),
                None)


def _found(an: Walk, primitive: str, word: str, verb: str) -> tuple[str, str, str] | None:
    if primitive != "read" and _names_file(an, word):
        return None           # `ansible-lint deploy`: a folder the command is given
    return primitive, word, verb


def _names_file(an: Walk, word: str) -> bool:
    from governance.shell.source import path_of

    path = path_of(an, word)
    if path is None:
        return False
    from governance import system

    return system.lexists(path)


def apply(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
          listed: dict[str, Any] | None, only: str | None = None) -> bool:
    """Add the act the subcommand words read as; whether one was added (a read verb adds
    ``shell-read`` for a listed program, and nothing for an unlisted one, which stays
    ``shell-unlisted``). ``only``: the one primitive that counts (``lexicon: destructive``)."""
    found = read(an, base, fields, raws, listed["with_value"] if listed else None)
    if found is None and only is not None and all(f is not None and f.startswith("-")
                                                  for f in fields[1:]):
        an.add("shell-read", seg, f"{base} without a subcommand prints its help or version")
        return True                                       # wrangler -v, fastly
    if found is None and listed is None:
        verb = _name_verb((an.shell.get("lexicon") or {}).get("verbs") or {}, base)
        found = None if verb is None else ("destructive", base, verb)
    if found is None:
        return False
    primitive, word, verb = found
    if only is not None and primitive != only:
        first = next((f for f in fields[1:] if f is not None and not f.startswith("-")), None)
        if (primitive == "local" and word == first) or verb in _ABOUT:  # wrangler dev, fastly help
            an.add("shell-read" if verb in _ABOUT else "shell-execute", seg,
                   f"{base} {word}: the subcommand works on this machine (shell.lexicon)")
            return True
        return False
    if primitive == "local":
        return False
    said = f"its subcommand {word!r}" + (f" ({verb!r})" if verb != word.lower() else "")
    head = f"{base} {word}: the subcommand" if listed else \
        f"{base} is not a command governance knows; {said}"
    if primitive == "read":
        if listed and listed.get("lexicon") == "remote" and verb not in _ABOUT:
            act, reason = listed["default"]   # aws s3 ls: a read of the provider's service
            an.add(act, seg, f"{head} reads the service over the internet ({reason})")
        elif listed:
            an.add("shell-read", seg, f"{head} reads as a read")
        return listed is not None
    why = f"{head} reads as {primitive} (shell.lexicon)"
    if primitive == "deploy":
        from governance.shell.deployment import primitive as deploy

        primitive, env = deploy(an.shell, {}, list(fields[1:]))
        why = f"{head} reads as a deploy (shell.lexicon): {env}"
    an.add(primitive, seg, why)
    return True
